/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The DNS proxy's part in the fast path (NET_LAYER_DNS_DIRECT, scudo-net.bpf.c): the
 * sandbox's UDP queries go to a resolver on loopback as they are, and the proxy only sees
 * what the BPF programs drop for it (dns_proxy_handle_dropped): queries they would not let
 * go, answers they could not read. It answers those to the sandbox's socket itself, from its
 * own UDP socket but with the resolver's address as the source (IP_PKTINFO; any 127.0.0.0/8
 * address is this host's, and the socket is bound to port 53), so that the socket, connected
 * to the resolver, takes it. Its datagrams are marked NET_DNS_MARK, which the ingress program
 * lets pass unread. */

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "bpfd/dns-proxy-internal.h"
#include "util/log.h"
#include "util/macro.h"

int fastpath_inject(DnsProxy *p, uint32_t from, const struct sockaddr_in *to, const uint8_t *msg,
                    size_t size) {
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
        Manager *m = p->cgroup->manager;
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
                (void) fastpath_inject(p, e->daddr, &client, m->reply, reply_len);
                return;
        }
        q->inject = true;
        q->inject_from = e->daddr;
        forward_udp(q, &client, sizeof(client), p->udp_fd);
}

typedef struct Learning {
        FilteredCgroup *cgroup;
        const char *name;               /* the question's */
} Learning;

static int learn_dropped(const uint8_t addr[16], uint32_t ttl, void *userdata) {
        const Learning *l = userdata;

        return filtered_cgroup_learn(l->cgroup, l->name, addr, ttl);
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
                Learning l = { .cgroup = p->cgroup, .name = q.name };

                k = dns_parse_answer(e->msg, e->len, &q, learn_dropped, &l);
                if (k < 0 && k != -EBADMSG) {
                        /* its addresses could not be stored: an answer the sandbox cannot use */
                        log_warning_errno(k, "cannot store the addresses of '%s': %m", q.name);
                        k = dns_make_error_reply(e->msg, &q, DNS_RCODE_SERVFAIL, reply, sizeof(reply));
                        if (k > 0)
                                (void) fastpath_inject(p, e->saddr, &client, reply, (size_t) k);
                        return;
                }
        }
        (void) fastpath_inject(p, e->saddr, &client, e->msg, e->len);
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
