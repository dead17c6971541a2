/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* One filtering DNS forwarder per sandbox, on its own address 127.53.X.Y port 53, where the
 * BPF programs send every port-53 datagram and connection of that sandbox. The address says
 * which sandbox asks: UDP carries no credentials, but each sandbox can only reach its own.
 *
 * A name the rules mention is forwarded to the system's resolver; the addresses of the
 * answer are put into the sandbox's allow map *before* the answer is passed on, so that the
 * connect() that follows finds them. Any other name gets REFUSED at once.
 *
 * UDP queries go upstream through one connected socket per server and proxy (replaced
 * every UPSTREAM_SOCKET_USES queries), under a random id of ours: the kernel takes answers
 * only from the server's address and port, and an answer must carry the id of a query
 * waiting on that socket and repeat its question. TCP queries get a connection each.
 *
 * On the fast path (NET_LAYER_DNS_DIRECT, scudo-net.bpf.c) the sandbox's UDP queries go to a
 * resolver on loopback as they are, and the proxy only sees what the BPF programs drop for
 * it (dns_proxy_handle_dropped): queries they would not let go, answers they could not
 * read. It answers those to the sandbox's socket itself, from its own UDP socket but with
 * the resolver's address as the source (IP_PKTINFO; any 127.0.0.0/8 address is this host's,
 * and the socket is bound to port 53), so that the socket, connected to the resolver, takes
 * it. Its datagrams are marked NET_DNS_MARK, which the ingress program lets pass unread. */

#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "bpfd/dns-cache.h"
#include "bpfd/dns-packet.h"
#include "bpfd/manager.h"
#include "util/log.h"
#include "util/macro.h"

#define UPSTREAM_TIMEOUT_USEC (3U * 1000000U)
#define TCP_IDLE_USEC (10U * 1000000U)
#define MAX_QUERIES 256U
#define MAX_CONNS 32U
#define DNS_MAX 65535U
/* Queries sent through one upstream UDP socket, and its age, before the next query gets a
 * fresh one (and with it a fresh random source port): reusing a socket saves five system
 * calls per query, rotating it keeps a port from living long enough to be found out. */
#define UPSTREAM_SOCKET_USES 64U
#define UPSTREAM_SOCKET_USEC (10U * 1000000U)
/* How long to poll for an answer before going back to epoll; see upstream_busy_poll(). */
#define BUSY_POLL_USEC 100U

typedef struct Query Query;
typedef struct TcpConn TcpConn;
typedef struct Upstream Upstream;

/* A connected UDP socket to one server, shared by the queries of one proxy. Connected, so
 * the kernel only passes up datagrams from that server's address and port; an answer is
 * then matched to its query by a random id of ours (the sandbox's own id is put back before
 * the answer goes out) and by its question. */
struct Upstream {
        DnsProxy *proxy;
        unsigned server;
        int fd;
        sd_event_source *io;
        unsigned uses;                  /* queries sent through it */
        uint64_t opened_usec;
        unsigned pending;               /* queries waiting for their answer on it */
        bool retired;                   /* takes no new query; freed once pending is 0 */
};

struct DnsProxy {
        Sandbox *sandbox;
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

static void *mfree(void *p) {
        free(p);
        return NULL;
}

static void conn_free(TcpConn *c);
static void conn_resume(TcpConn *c);
static int query_start(Query *q);

uint32_t dns_proxy_address(DnsProxy *p) {
        return p->addr;
}

uint16_t dns_proxy_port6(DnsProxy *p) {
        return p->port6;
}

static Upstream *upstream_free(Upstream *u) {
        if (!u)
                return NULL;
        if (u->proxy->upstream[u->server] == u)
                u->proxy->upstream[u->server] = NULL;
        sd_event_source_disable_unref(u->io);
        safe_close(u->fd);
        free(u);
        return NULL;
}

/* No new query goes out on it; it stays open for the answers still expected. */
static void upstream_retire(Upstream *u) {
        if (u->proxy->upstream[u->server] == u)
                u->proxy->upstream[u->server] = NULL;
        u->retired = true;
        if (u->pending == 0)
                upstream_free(u);
}

static void upstream_release(Upstream *u) {
        assert(u->pending > 0);
        u->pending--;
        if (u->retired && u->pending == 0)
                upstream_free(u);
}

static void query_stop_upstream(Query *q);

static Query *query_free(Query *q) {
        DnsProxy *p;

        if (!q)
                return NULL;
        p = q->proxy;
        for (Query **i = &p->queries; *i; i = &(*i)->next)
                if (*i == q) {
                        *i = q->next;
                        p->n_queries--;
                        break;
                }
        if (q->conn && q->conn->pending == q)
                q->conn->pending = NULL;
        query_stop_upstream(q);
        free(q->msg);
        free(q);
        return NULL;
}

static void query_stop_upstream(Query *q) {
        if (q->up) {
                upstream_release(q->up);
                q->up = NULL;
        }
        q->io = sd_event_source_disable_unref(q->io);
        q->timer = sd_event_source_disable_unref(q->timer);
        q->fd = safe_close(q->fd);
        q->buf = mfree(q->buf);
        q->buf_len = q->buf_done = 0;
        q->receiving = false;
}

static int conn_send(TcpConn *c, const uint8_t *msg, size_t size) {
        uint8_t *out;

        out = malloc(size + 2);
        if (!out)
                return -ENOMEM;
        out[0] = (uint8_t) (size >> 8);
        out[1] = (uint8_t) size;
        memcpy(out + 2, msg, size);
        free(c->out);
        c->out = out;
        c->out_len = size + 2;
        c->out_sent = 0;
        /* Write from the io handler, which waits for EPOLLOUT if the client reads slowly. */
        return sd_event_source_set_io_events(c->io, EPOLLOUT);
}

/* Sends a DNS message to a socket of the sandbox as if `from` (a resolver on loopback,
 * port 53) had sent it. */
static int inject(DnsProxy *p, uint32_t from, const struct sockaddr_in *to, const uint8_t *msg, size_t size) {
        union {
                struct cmsghdr align;
                uint8_t buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
        } control = {};
        struct in_pktinfo pi = { .ipi_spec_dst.s_addr = from };
        struct iovec iov = { .iov_base = (void *) msg, .iov_len = size };
        struct msghdr mh = {
                .msg_name = (void *) to,
                .msg_namelen = sizeof(*to),
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof(control.buf),
        };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof(pi));
        memcpy(CMSG_DATA(c), &pi, sizeof(pi));
        return sendmsg(p->udp_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? negative_errno() : 0;
}

/* Hands an answer (or our own error reply) to whoever asked, and ends the query. */
static void query_deliver(Query *q, const uint8_t *answer, size_t size) {
        if (q->inject)
                (void) inject(q->proxy, q->inject_from, (const struct sockaddr_in *) &q->client, answer, size);
        else if (!q->tcp)
                (void) sendto(q->reply_fd, answer, size, MSG_DONTWAIT | MSG_NOSIGNAL,
                              (struct sockaddr *) &q->client, q->client_len);
        else if (q->conn) {
                TcpConn *c = q->conn;

                c->pending = NULL;
                if (conn_send(c, answer, size) < 0) {
                        query_free(q);
                        conn_free(c);
                        return;
                }
        }
        query_free(q);
}

static void query_fail(Query *q) {
        uint8_t reply[DNS_HEADER_SIZE + DNS_NAME_TEXT_MAX + 8];
        int n;

        query_stop_upstream(q);
        if (++q->server < q->proxy->n_servers && query_start(q) >= 0)
                return;

        n = dns_make_error_reply(q->msg, &q->q, DNS_RCODE_SERVFAIL, reply, sizeof(reply));
        if (n < 0) {
                query_free(q);
                return;
        }
        query_deliver(q, reply, (size_t) n);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U;
}

static int learn_address(const uint8_t addr[16], uint32_t ttl, void *userdata) {
        Query *q = userdata;

        if (q->n_addrs < DNS_CACHE_ADDRESSES) {
                memcpy(q->addrs[q->n_addrs].addr, addr, 16);
                q->addrs[q->n_addrs].ttl = ttl;
        }
        q->n_addrs++;
        q->min_ttl = q->n_addrs == 1 ? ttl : MIN(q->min_ttl, ttl);
        return sandbox_learn(q->proxy->sandbox, q->q.name, addr, ttl);
}

/* 0: delivered; -EBADMSG: not an answer to this query (ignore it, keep waiting on UDP). */
static int query_answer(Query *q, const uint8_t *answer, size_t size) {
        int k;

        k = dns_parse_answer(answer, size, &q->q, learn_address, q);
        if (k == -EBADMSG)
                return k;
        if (k < 0) {
                /* Could not store the addresses: an answer the sandbox could not use. */
                log_warning_errno(k, "cannot store the addresses of '%s': %m", q->q.name);
                query_fail(q);
                return 0;
        }
        /* A complete, successful answer whose every address was noted may be reused. */
        if (k > 0 && (size_t) k == q->n_addrs && size >= DNS_HEADER_SIZE && !(answer[2] & 0x02) &&
            (answer[3] & 0x0f) == 0)
                (void) dns_cache_store(&q->proxy->cache, q->tcp, q->msg, q->size, answer, size, q->addrs,
                                       q->n_addrs, q->min_ttl, now_usec());
        query_deliver(q, answer, size);
        return 0;
}

static int on_upstream_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        query_fail(userdata);
        return 0;
}

static Query *upstream_find(Upstream *u, uint16_t id) {
        for (Query *q = u->proxy->queries; q; q = q->next)
                if (q->up == u && q->up_id == id)
                        return q;
        return NULL;
}

/* The socket reported an error (an ICMP port unreachable shows up as ECONNREFUSED): it
 * cannot say which query it belongs to, so every query waiting on it tries the next server. */
static void upstream_fail(Upstream *u) {
        Query *q;

        u->pending++;           /* keeps u while its queries let go of it */
        upstream_retire(u);
        for (;;) {
                for (q = u->proxy->queries; q && q->up != u; q = q->next)
                        ;
                if (!q)
                        break;
                query_fail(q);
        }
        upstream_release(u);
}

/* Reads one datagram from `u`. Returns 1 if one was read, 0 if none was waiting, <0 on a
 * socket error (after failing the queries waiting on it). */
static int upstream_receive(Upstream *u) {
        Manager *m = u->proxy->sandbox->manager;
        uint8_t *buf = m->buf;
        Query *q;
        ssize_t n;
        uint64_t rtt, *avg;

        n = recv(u->fd, buf, DNS_MAX, MSG_DONTWAIT);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                upstream_fail(u);
                return -EIO;
        }
        if (n < DNS_HEADER_SIZE)
                return 1;
        q = upstream_find(u, (uint16_t) (buf[0] << 8 | buf[1]));
        if (!q)
                return 1;       /* late, or not ours: not an answer to anything asked */
        rtt = now_usec() - q->sent_usec;
        avg = &u->proxy->rtt_usec[u->server];
        *avg = *avg ? (*avg * 7 + rtt) / 8 : rtt;
        buf[0] = q->msg[0];     /* the sandbox's own id */
        buf[1] = q->msg[1];
        /* An answer whose question does not match is ignored: the right one may still come. */
        (void) query_answer(q, buf, (size_t) n);
        return 1;
}

static int on_upstream_udp(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) upstream_receive(userdata);
        return 0;
}

/* After a query went out to a server that has been answering within BUSY_POLL_USEC, waits
 * for the answer by polling instead of going back to epoll: being woken up costs more than
 * the wait itself (two context switches and an interrupt to another CPU, which in a VM
 * can take tens of µs). It burns at most BUSY_POLL_USEC of CPU per forwarded query, and
 * nothing at all for a server that answers slower than that (a resolver across the
 * network), whose answers keep coming through epoll. */
static void upstream_busy_poll(Upstream *u) {
        uint64_t *avg = &u->proxy->rtt_usec[u->server], deadline;
        int k;

        if (*avg > BUSY_POLL_USEC)
                return;
        deadline = now_usec() + BUSY_POLL_USEC;
        u->pending++;           /* keeps u while answers end queries */
        /* sched_yield(): on a CPU shared with the resolver, let it run rather than spin. */
        while ((k = upstream_receive(u)) == 0 && now_usec() < deadline)
                (void) sched_yield();
        /* No answer in time: no more polling until answers show the server is quick. */
        if (k == 0 && *avg == 0)
                *avg = BUSY_POLL_USEC + 1;
        upstream_release(u);
}

static int on_upstream_tcp(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Query *q = userdata;
        ssize_t n;

        if (!q->receiving) {
                int err = 0;
                socklen_t l = sizeof(err);

                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err != 0) {
                        query_fail(q);
                        return 0;
                }
                n = send(fd, q->buf + q->buf_done, q->buf_len - q->buf_done, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                query_fail(q);
                        return 0;
                }
                q->buf_done += (size_t) n;
                if (q->buf_done < q->buf_len)
                        return 0;
                free(q->buf);
                q->buf = malloc(2 + DNS_MAX);
                if (!q->buf) {
                        query_fail(q);
                        return 0;
                }
                q->buf_len = 2;
                q->buf_done = 0;
                q->receiving = true;
                (void) sd_event_source_set_io_events(s, EPOLLIN);
                return 0;
        }

        n = recv(fd, q->buf + q->buf_done, q->buf_len - q->buf_done, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                query_fail(q);
                return 0;
        }
        q->buf_done += (size_t) n;
        if (q->buf_done == 2 && q->buf_len == 2) {
                q->buf_len = 2 + (((size_t) q->buf[0] << 8) | q->buf[1]);
                if (q->buf_len == 2) {
                        query_fail(q);
                        return 0;
                }
        }
        if (q->buf_done < q->buf_len)
                return 0;
        if (query_answer(q, q->buf + 2, q->buf_len - 2) == -EBADMSG)
                query_fail(q);
        return 0;
}

/* A random id that no other query waiting on `u` has. getrandom() fills a batch at a time,
 * so that a query costs no system call for it. */
static int upstream_new_id(Upstream *u, uint16_t *ret) {
        DnsProxy *p = u->proxy;

        for (unsigned tries = 0; tries < 16; tries++) {
                uint16_t id;

                if (p->n_ids == 0) {
                        if (getrandom(p->ids, sizeof(p->ids), 0) != (ssize_t) sizeof(p->ids))
                                return errno > 0 ? -errno : -EIO;
                        p->n_ids = ELEMENTSOF(p->ids);
                }
                id = p->ids[--p->n_ids];
                if (!upstream_find(u, id)) {
                        *ret = id;
                        return 0;
                }
        }
        return -EBUSY;          /* at most MAX_QUERIES are waiting: only by bad luck */
}

/* The socket new queries to `server` go out on, opened (or replaced) as needed. */
static int upstream_get(DnsProxy *p, unsigned server, Upstream **ret) {
        Manager *m = p->sandbox->manager;
        const struct sockaddr_in6 *sa = &p->servers[server].addr;
        _cleanup_close_ int fd = -EBADF;
        Upstream *u = p->upstream[server];
        int k;

        if (u && (u->uses >= UPSTREAM_SOCKET_USES || now_usec() - u->opened_usec >= UPSTREAM_SOCKET_USEC))
                upstream_retire(u);
        else if (u) {
                *ret = u;
                return 0;
        }

        fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) < 0)
                return negative_errno();
        u = calloc(1, sizeof(Upstream));
        if (!u)
                return -ENOMEM;
        u->proxy = p;
        u->server = server;
        u->opened_usec = now_usec();
        u->fd = TAKE_FD(fd);
        k = sd_event_add_io(m->event, &u->io, u->fd, EPOLLIN, on_upstream_udp, u);
        if (k < 0) {
                upstream_free(u);
                return k;
        }
        p->upstream[server] = u;
        *ret = u;
        return 0;
}

/* Sends a UDP query under an id of ours; the sandbox's id stays in q->msg. */
static int query_send_udp(Query *q) {
        Upstream *u;
        uint16_t id;
        ssize_t n;
        int k;

        k = upstream_get(q->proxy, q->server, &u);
        if (k < 0)
                return k;
        k = upstream_new_id(u, &id);
        if (k < 0)
                return k;
        u->uses++;
        q->msg[0] = (uint8_t) (id >> 8);
        q->msg[1] = (uint8_t) id;
        n = send(u->fd, q->msg, q->size, MSG_DONTWAIT | MSG_NOSIGNAL);
        q->msg[0] = (uint8_t) (q->q.id >> 8);
        q->msg[1] = (uint8_t) q->q.id;
        if (n < 0) {
                /* An error from an earlier datagram (ECONNREFUSED) is reported here too:
                 * give the next query a fresh socket. */
                k = negative_errno();
                upstream_retire(u);
                return k;
        }
        q->up = u;
        q->up_id = id;
        q->sent_usec = now_usec();
        u->pending++;
        return 0;
}

static int query_start(Query *q) {
        DnsProxy *p = q->proxy;
        Manager *m = p->sandbox->manager;
        const struct sockaddr_in6 *server = &p->servers[q->server].addr;
        int k;

        if (!q->tcp) {
                k = query_send_udp(q);
                if (k < 0)
                        return k;
                return sd_event_add_time_relative(m->event, &q->timer, CLOCK_MONOTONIC, UPSTREAM_TIMEOUT_USEC,
                                                  0, on_upstream_timeout, q);
        }

        q->fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (q->fd < 0)
                return negative_errno();
        if (connect(q->fd, (const struct sockaddr *) server, sizeof(*server)) < 0 && errno != EINPROGRESS) {
                k = negative_errno();
                q->fd = safe_close(q->fd);
                return k;
        }
        q->buf = malloc(q->size + 2);
        if (!q->buf)
                return -ENOMEM;
        q->buf[0] = (uint8_t) (q->size >> 8);
        q->buf[1] = (uint8_t) q->size;
        memcpy(q->buf + 2, q->msg, q->size);
        q->buf_len = q->size + 2;
        q->buf_done = 0;
        k = sd_event_add_io(m->event, &q->io, q->fd, EPOLLOUT, on_upstream_tcp, q);
        if (k < 0)
                return k;
        return sd_event_add_time_relative(m->event, &q->timer, CLOCK_MONOTONIC, UPSTREAM_TIMEOUT_USEC, 0,
                                          on_upstream_timeout, q);
}

/* Answers from the cache, after putting the answer's addresses into the allow map again
 * (they may have been pushed out of it). Returns the answer's size, or 0 for a miss. */
static size_t answer_from_cache(DnsProxy *p, bool tcp, const uint8_t *msg, size_t size, const DnsQuestion *q,
                                uint8_t *reply, size_t reply_size) {
        const DnsCacheEntry *e;

        e = dns_cache_lookup(&p->cache, tcp, msg, size, now_usec());
        if (!e || e->answer_len > reply_size)
                return 0;
        for (size_t i = 0; i < e->n_addrs; i++)
                if (sandbox_learn(p->sandbox, q->name, e->addrs[i].addr, e->addrs[i].ttl) < 0)
                        return 0;
        memcpy(reply, e->answer, e->answer_len);
        reply[0] = msg[0];              /* the asker's id */
        reply[1] = msg[1];
        return e->answer_len;
}

/* A query from the sandbox (sent by `pid`, `comm`, when known). Returns 1 when an answer was
 * written to `reply` right away (REFUSED, or from the cache), 0 when it was forwarded, <0
 * to drop it. */
static int handle_query(DnsProxy *p, bool tcp, const uint8_t *msg, size_t size, uint32_t pid, const char *comm,
                        Query **ret_query, uint8_t *reply, size_t reply_size, size_t *ret_reply_len) {
        uint8_t fwd[DNS_FORWARD_QUERY_MAX];
        DnsQuestion question;
        Query *q;
        size_t n;
        int k;

        k = dns_parse_query(msg, size, &question);
        if (k < 0)
                return k;

        if (sandbox_check_name(p->sandbox, question.name, question.name_ok) < 0) {
                sandbox_report_dns(p->sandbox, question.name, question.qtype, pid, comm);
                k = dns_make_error_reply(msg, &question, DNS_RCODE_REFUSED, reply, reply_size);
                if (k < 0)
                        return k;
                *ret_reply_len = (size_t) k;
                return 1;
        }

        /* From here on only the query rebuilt from its question goes anywhere (and keys the
         * cache): whatever else the sandbox put in the message stays here. */
        k = dns_make_forward_query(msg, &question, fwd, sizeof(fwd));
        if (k < 0)
                return k;
        msg = fwd;
        size = (size_t) k;

        n = answer_from_cache(p, tcp, msg, size, &question, reply, reply_size);
        if (n > 0) {
                *ret_reply_len = n;
                return 1;
        }

        if (p->n_queries >= MAX_QUERIES)
                return -EBUSY;

        q = calloc(1, sizeof(Query));
        if (!q)
                return -ENOMEM;
        q->proxy = p;
        q->fd = -EBADF;
        q->q = question;
        q->size = size;
        q->msg = malloc(size);
        if (!q->msg) {
                free(q);
                return -ENOMEM;
        }
        memcpy(q->msg, msg, size);
        q->next = p->queries;
        p->queries = q;
        p->n_queries++;
        *ret_query = q;
        return 0;
}

/* Sends a UDP query upstream; its answer goes to `client` (through reply_fd, unless the query
 * is one the fast path left to the proxy). */
static void forward_udp(Query *q, const void *client, socklen_t client_len, int reply_fd) {
        client_len = MIN(client_len, (socklen_t) sizeof(q->client));
        memcpy(&q->client, client, client_len);
        q->client_len = client_len;
        q->reply_fd = reply_fd;
        if (query_start(q) < 0) {
                query_fail(q);
                return;
        }
        if (q->up)
                upstream_busy_poll(q->up);
}

static int on_udp(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DnsProxy *p = userdata;
        Manager *m = p->sandbox->manager;
        uint8_t *reply = m->reply;
        struct sockaddr_storage from;
        socklen_t from_len = sizeof(from);
        size_t reply_len = 0;
        Query *q = NULL;
        ssize_t n;
        int k;

        n = recvfrom(fd, m->buf, DNS_MAX, MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
        if (n < 0)
                return 0;

        k = handle_query(p, false, m->buf, (size_t) n, 0, NULL, &q, reply, sizeof(m->reply), &reply_len);
        if (k < 0)
                return 0;
        if (k > 0) {
                (void) sendto(fd, reply, reply_len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *) &from,
                              from_len);
                return 0;
        }
        forward_udp(q, &from, from_len, fd);
        return 0;
}

static bool is_direct_server(DnsProxy *p, uint32_t addr) {
        uint32_t direct[NET_DNS_DIRECT_MAX];
        unsigned n = dns_proxy_direct_servers(p, direct);

        for (unsigned i = 0; i < n; i++)
                if (direct[i] == addr)
                        return true;
        return false;
}

/* A query the egress program would not let go: refused, rebuilt and forwarded, or answered
 * from the cache, as one sent to the proxy would be; the answer goes to the socket as if the
 * resolver had sent it. */
static void handle_dropped_query(DnsProxy *p, const struct net_dns_event *e) {
        Manager *m = p->sandbox->manager;
        struct sockaddr_in client = {
                .sin_family = AF_INET,
                .sin_port = e->sport,
                .sin_addr.s_addr = e->saddr,
        };
        char comm[sizeof(e->comm) + 1];
        size_t reply_len = 0;
        Query *q = NULL;
        int k;

        memcpy(comm, e->comm, sizeof(e->comm));
        comm[sizeof(e->comm)] = 0;
        k = handle_query(p, false, e->msg, e->len, e->pid, comm, &q, m->reply, sizeof(m->reply), &reply_len);
        if (k < 0)
                return;
        if (k > 0) {
                (void) inject(p, e->daddr, &client, m->reply, reply_len);
                return;
        }
        q->inject = true;
        q->inject_from = e->daddr;
        forward_udp(q, &client, sizeof(client), p->udp_fd);
}

typedef struct Learning {
        Sandbox *sandbox;
        const char *name;               /* the question's */
} Learning;

static int learn_dropped(const uint8_t addr[16], uint32_t ttl, void *userdata) {
        const Learning *l = userdata;

        return sandbox_learn(l->sandbox, l->name, addr, ttl);
}

/* An answer the ingress program could not read: learned from here, then passed on. */
static void handle_dropped_answer(DnsProxy *p, const struct net_dns_event *e) {
        struct sockaddr_in client = {
                .sin_family = AF_INET,
                .sin_port = e->dport,
                .sin_addr.s_addr = e->daddr,
        };
        uint8_t reply[DNS_HEADER_SIZE + DNS_NAME_TEXT_MAX + 8];
        DnsQuestion q;
        int k;

        if (dns_parse_response_question(e->msg, e->len, &q) < 0)
                return;                 /* not an answer to anything: nothing to pass on */
        if (q.name_ok) {
                Learning l = { .sandbox = p->sandbox, .name = q.name };

                k = dns_parse_answer(e->msg, e->len, &q, learn_dropped, &l);
                if (k < 0 && k != -EBADMSG) {
                        /* its addresses could not be stored: an answer the sandbox cannot use */
                        log_warning_errno(k, "cannot store the addresses of '%s': %m", q.name);
                        k = dns_make_error_reply(e->msg, &q, DNS_RCODE_SERVFAIL, reply, sizeof(reply));
                        if (k > 0)
                                (void) inject(p, e->saddr, &client, reply, (size_t) k);
                        return;
                }
        }
        (void) inject(p, e->saddr, &client, e->msg, e->len);
}

void dns_proxy_handle_dropped(DnsProxy *p, const struct net_dns_event *e) {
        /* Only from a resolver of the fast path (the programs checked; so does this) */
        if (!p->can_inject)
                return;
        if (e->kind == NET_EVENT_DNS_QUERY && is_direct_server(p, e->daddr))
                handle_dropped_query(p, e);
        else if (e->kind == NET_EVENT_DNS_ANSWER && is_direct_server(p, e->saddr))
                handle_dropped_answer(p, e);
}

unsigned dns_proxy_direct_servers(DnsProxy *p, uint32_t ret[NET_DNS_DIRECT_MAX]) {
        unsigned n = 0;

        if (!p->can_inject)
                return 0;
        for (unsigned i = 0; i < p->n_servers && n < NET_DNS_DIRECT_MAX; i++) {
                const uint8_t *a = p->servers[i].addr.sin6_addr.s6_addr;
                uint32_t ip4;

                /* IPv4 on loopback (v4-mapped 127.0.0.0/8), not in the proxies' 127.53.0.0/16 */
                if (!IN6_IS_ADDR_V4MAPPED(&p->servers[i].addr.sin6_addr) || a[12] != 127 || a[13] == 53)
                        continue;
                memcpy(&ip4, a + 12, sizeof(ip4));
                ret[n++] = ip4;
        }
        return n;
}

static void conn_free(TcpConn *c) {
        DnsProxy *p = c->proxy;

        for (TcpConn **i = &p->conns; *i; i = &(*i)->next)
                if (*i == c) {
                        *i = c->next;
                        p->n_conns--;
                        break;
                }
        if (c->pending) {
                c->pending->conn = NULL;
                query_free(c->pending);
        }
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        safe_close(c->fd);
        free(c->out);
        free(c);
}

/* Takes the next complete query from the input buffer, if there is one. */
static void conn_process(TcpConn *c) {
        Manager *m = c->proxy->sandbox->manager;
        uint8_t *reply = m->reply;
        size_t len, reply_len = 0;
        Query *q = NULL;
        int k;

        if (c->pending || c->out || c->in_len < 2)
                return;
        len = ((size_t) c->in[0] << 8) | c->in[1];
        if (c->in_len < 2 + len)
                return;

        k = handle_query(c->proxy, true, c->in + 2, len, 0, NULL, &q, reply, sizeof(m->reply), &reply_len);
        memmove(c->in, c->in + 2 + len, c->in_len - 2 - len);
        c->in_len -= 2 + len;
        if (k < 0) {
                conn_free(c);
                return;
        }
        if (k > 0) {
                if (conn_send(c, reply, reply_len) < 0)
                        conn_free(c);
                return;
        }
        q->tcp = true;
        q->conn = c;
        c->pending = q;
        (void) sd_event_source_set_io_events(c->io, 0);
        if (query_start(q) < 0)
                query_fail(q);
}

static void conn_resume(TcpConn *c) {
        (void) sd_event_source_set_io_events(c->io, EPOLLIN);
        (void) sd_event_source_set_time_relative(c->timer, TCP_IDLE_USEC);
        conn_process(c);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        TcpConn *c = userdata;
        ssize_t n;

        if (c->out) {
                n = send(fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                conn_free(c);
                        return 0;
                }
                c->out_sent += (size_t) n;
                if (c->out_sent == c->out_len) {
                        c->out = mfree(c->out);
                        conn_resume(c);
                }
                return 0;
        }

        n = recv(fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                conn_free(c);
                return 0;
        }
        c->in_len += (size_t) n;
        (void) sd_event_source_set_time_relative(c->timer, TCP_IDLE_USEC);
        conn_process(c);
        return 0;
}

static int on_conn_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        TcpConn *c = userdata;

        if (c->pending)         /* the upstream timeout will end this */
                return sd_event_source_set_time_relative(s, TCP_IDLE_USEC);
        conn_free(c);
        return 0;
}

static int on_tcp_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DnsProxy *p = userdata;
        Manager *m = p->sandbox->manager;
        TcpConn *c;
        int cfd, k;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
                return 0;
        if (p->n_conns >= MAX_CONNS) {
                safe_close(cfd);
                return 0;
        }
        c = calloc(1, sizeof(TcpConn));
        if (!c) {
                safe_close(cfd);
                return 0;
        }
        c->proxy = p;
        c->fd = cfd;
        c->next = p->conns;
        p->conns = c;
        p->n_conns++;
        k = sd_event_add_io(m->event, &c->io, cfd, EPOLLIN, on_conn_io, c);
        if (k >= 0)
                k = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC, TCP_IDLE_USEC, 0,
                                               on_conn_idle, c);
        if (k < 0)
                conn_free(c);
        return 0;
}

static uint32_t slot_address(unsigned slot) {
        return htonl((127U << 24) | (53U << 16) | ((slot / 254U) << 8) | (slot % 254U + 1U));
}

static int bind_slot(DnsProxy *p, unsigned slot) {
        struct sockaddr_in sa = {
                .sin_family = AF_INET,
                .sin_port = htons(NET_PROXY_PORT),
                .sin_addr.s_addr = slot_address(slot),
        };
        _cleanup_close_ int u = -EBADF, t = -EBADF;
        int one = 1;

        u = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        t = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (u < 0 || t < 0)
                return negative_errno();
        (void) setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(u, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            bind(t, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            listen(t, 64) < 0)
                return negative_errno();
        /* What it sends on the fast path's behalf passes the ingress program unread. Needs
         * CAP_NET_ADMIN; without it there is no fast path. */
        p->can_inject = setsockopt(u, SOL_SOCKET, SO_MARK, &(uint32_t) { NET_DNS_MARK }, sizeof(uint32_t)) >= 0;
        p->udp_fd = TAKE_FD(u);
        p->tcp_fd = TAKE_FD(t);
        p->slot = slot;
        p->addr = sa.sin_addr.s_addr;
        return 0;
}

/* The IPv6 side: [::1] has one address only, so sandboxes differ by port there. Ports
 * below the usual ephemeral range, so that outgoing connections do not take them. */
#define PORT6_FIRST 20000U
#define PORT6_COUNT 12000U

static int bind_port6(DnsProxy *p) {
        for (unsigned i = 0; i < 64; i++) {
                struct sockaddr_in6 sa = {
                        .sin6_family = AF_INET6,
                        .sin6_port = htons((uint16_t) (PORT6_FIRST + (p->slot + i * 191U) % PORT6_COUNT)),
                        .sin6_addr = IN6ADDR_LOOPBACK_INIT,
                };
                _cleanup_close_ int u = -EBADF, t = -EBADF;
                int one = 1;

                u = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                t = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (u < 0 || t < 0)
                        return negative_errno();
                (void) setsockopt(u, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
                (void) setsockopt(t, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
                (void) setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
                if (bind(u, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
                    bind(t, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                        if (errno == EADDRINUSE)
                                continue;
                        return negative_errno();        /* no IPv6 here: v4-mapped only */
                }
                if (listen(t, 64) < 0)
                        return negative_errno();
                p->udp6_fd = TAKE_FD(u);
                p->tcp6_fd = TAKE_FD(t);
                p->port6 = sa.sin6_port;
                return 0;
        }
        return -EADDRINUSE;
}

int dns_proxy_new(Sandbox *s, DnsProxy **ret) {
        Manager *m = s->manager;
        DnsProxy *p;
        int k = -EADDRNOTAVAIL;

        p = calloc(1, sizeof(DnsProxy));
        if (!p)
                return -ENOMEM;
        p->sandbox = s;
        p->udp_fd = p->tcp_fd = p->udp6_fd = p->tcp6_fd = -EBADF;
        p->n_servers = (unsigned) resolv_conf_load(m->resolv_conf, p->servers);

        /* The first free slot whose address nobody else has taken. */
        for (unsigned slot = 0; slot < BPFD_PROXY_SLOTS; slot++) {
                if (m->proxy_used[slot / 8] & (1U << (slot % 8)))
                        continue;
                k = bind_slot(p, slot);
                if (k >= 0) {
                        m->proxy_used[slot / 8] |= (uint8_t) (1U << (slot % 8));
                        break;
                }
                if (k != -EADDRINUSE)
                        break;
        }
        if (k < 0) {
                free(p);
                return k;
        }

        if (bind_port6(p) < 0)
                log_info("no IPv6 side for the DNS proxy of %s", s->path);

        k = sd_event_add_io(m->event, &p->udp_io, p->udp_fd, EPOLLIN, on_udp, p);
        if (k >= 0)
                k = sd_event_add_io(m->event, &p->tcp_io, p->tcp_fd, EPOLLIN, on_tcp_accept, p);
        if (k >= 0 && p->udp6_fd >= 0)
                k = sd_event_add_io(m->event, &p->udp6_io, p->udp6_fd, EPOLLIN, on_udp, p);
        if (k >= 0 && p->tcp6_fd >= 0)
                k = sd_event_add_io(m->event, &p->tcp6_io, p->tcp6_fd, EPOLLIN, on_tcp_accept, p);
        if (k < 0) {
                dns_proxy_free(p);
                return k;
        }
        *ret = p;
        return 0;
}

DnsProxy *dns_proxy_free(DnsProxy *p) {
        Manager *m;

        if (!p)
                return NULL;
        m = p->sandbox->manager;
        while (p->conns)
                conn_free(p->conns);
        while (p->queries)
                query_free(p->queries);
        for (unsigned i = 0; i < ELEMENTSOF(p->upstream); i++)
                upstream_free(p->upstream[i]);
        dns_cache_clear(&p->cache);
        sd_event_source_disable_unref(p->udp_io);
        sd_event_source_disable_unref(p->tcp_io);
        sd_event_source_disable_unref(p->udp6_io);
        sd_event_source_disable_unref(p->tcp6_io);
        safe_close(p->udp6_fd);
        safe_close(p->tcp6_fd);
        if (p->udp_fd >= 0)
                m->proxy_used[p->slot / 8] &= (uint8_t) ~(1U << (p->slot % 8));
        safe_close(p->udp_fd);
        safe_close(p->tcp_fd);
        free(p);
        return NULL;
}
