/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the parts of the DNS proxy (dns-proxy.h) share: the proxy, its queries and its TCP
 * connections. An Upstream (a UDP socket to one server) is dns-upstream.c's own. */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include "bpfd/dns-cache.h"
#include "bpfd/dns-packet.h"
#include "bpfd/dns-proxy.h"

#define UPSTREAM_TIMEOUT_USEC (3U * 1000000U)
#define DNS_MAX 65535U

typedef struct Query Query;
typedef struct TcpConn TcpConn;
typedef struct Upstream Upstream;

struct DnsProxy {
        FilteredCgroup *cgroup;
        unsigned slot;
        uint32_t addr;                  /* network order */
        uint16_t port6;                 /* the IPv6 side on [::1], network order; 0 = none */
        int udp_fd, tcp_fd, udp6_fd, tcp6_fd;
        sd_event_source *udp_io, *tcp_io, *udp6_io, *tcp6_io;
        Nameserver servers[RESOLV_CONF_MAX_SERVERS];
        unsigned n_servers;
        Upstream *upstream[RESOLV_CONF_MAX_SERVERS];    /* the one new UDP queries use */
        uint64_t rtt_usec[RESOLV_CONF_MAX_SERVERS];     /* recent answer times (moving average) */
        uint16_t ids[64];               /* random query ids, taken from the end */
        unsigned n_ids;
        bool can_inject;                /* udp_fd carries NET_DNS_MARK */
        Query *queries;
        unsigned n_queries;
        TcpConn *conns;
        unsigned n_conns;
        DnsCache cache;
};

struct TcpConn {
        DnsProxy *proxy;
        TcpConn *next;
        int fd;
        sd_event_source *io, *timer;
        uint8_t in[2 + DNS_MAX];
        size_t in_len;
        uint8_t *out;
        size_t out_len, out_sent;
        Query *pending;
};

struct Query {
        DnsProxy *proxy;
        Query *next;
        DnsQuestion q;
        uint8_t *msg;                   /* the query as the sandbox sent it */
        size_t size;
        bool tcp;
        bool inject;                    /* UDP, dropped on the fast path: answered as from... */
        uint32_t inject_from;           /* ... this resolver (network order) */
        int reply_fd;                   /* UDP: the proxy socket it came in on */
        struct sockaddr_storage client; /* UDP: where to answer */
        socklen_t client_len;
        TcpConn *conn;                  /* TCP: where to answer */
        unsigned server;
        Upstream *up;                   /* UDP: the socket the query went out on */
        uint16_t up_id;                 /* UDP: its id there */
        uint64_t sent_usec;
        int fd;                         /* TCP: a connection of its own */
        sd_event_source *io, *timer;
        uint8_t *buf;                   /* TCP upstream: framed query out, then framed answer in */
        size_t buf_len, buf_done;
        bool receiving;
        DnsCachedAddress addrs[DNS_CACHE_ADDRESSES];   /* from the answer, for the cache */
        size_t n_addrs;
        uint32_t min_ttl;
};

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U;
}

/* dns-proxy.c */
/* A query from the sandbox (sent by `pid`, `comm`, when known). Returns 1 when an answer was
 * written to `reply` right away (NXDOMAIN, or from the cache), 0 when it was forwarded, <0
 * to drop it. */
int handle_query(DnsProxy *p, bool tcp, const uint8_t *msg, size_t size, uint32_t pid, const char *comm,
                 Query **ret_query, uint8_t *reply, size_t reply_size, size_t *ret_reply_len);
/* Sends a UDP query upstream; its answer goes to `client` (through reply_fd, unless the query
 * is one the fast path left to the proxy). */
void forward_udp(Query *q, const void *client, socklen_t client_len, int reply_fd);
/* The next server, or SERVFAIL when there is none. */
void query_fail(Query *q);
/* 0: delivered; -EBADMSG: not an answer to this query (ignore it, keep waiting on UDP). */
int query_answer(Query *q, const uint8_t *answer, size_t size);

/* dns-upstream.c */
/* Sends the query to its server (q->server): UDP on the shared socket, TCP on a connection
 * of its own; the answer or the timeout ends it through query_answer or query_fail. */
int query_start(Query *q);
void query_stop_upstream(Query *q);
void upstream_busy_poll(Upstream *u);
Upstream *upstream_free(Upstream *u);

/* dns-fastpath.c */
/* Sends a DNS message to a socket of the sandbox as if `from` (a resolver on loopback,
 * port 53) had sent it. */
int fastpath_inject(DnsProxy *p, uint32_t from, const struct sockaddr_in *to, const uint8_t *msg,
                    size_t size);

/* dns-bind.c */
/* The proxy's listening sockets: a UDP and TCP pair on the first free address 127.53.X.Y
 * port 53 (the slot), and another on a port of [::1] (the IPv6 side, which may be missing:
 * -errno then, and nothing is set). */
int proxy_bind4(DnsProxy *p);
int proxy_bind6(DnsProxy *p);
/* Closes them and gives the slot back. */
void proxy_unbind(DnsProxy *p);
