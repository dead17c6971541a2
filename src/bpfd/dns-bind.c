/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* Where a DNS proxy (dns-proxy.h) listens: a UDP socket and a TCP one on the same address and
 * port, on 127.53.X.Y port 53 (one address per proxy, its slot), and on [::1], which has one
 * address only, at a port of its own. */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bpfd/dns-proxy-internal.h"
#include "util/macro.h"

/* The IPv6 side's ports: below the usual ephemeral range, so that outgoing connections do
 * not take them. */
#define PORT6_FIRST 20000U
#define PORT6_COUNT 12000U
#define PORT6_TRIES 64U

static uint32_t slot_address(unsigned slot) {
        return htonl((127U << 24) | (53U << 16) | ((slot / 254U) << 8) | (slot % 254U + 1U));
}

/* A UDP socket and a listening TCP socket bound to `sa`. -EADDRINUSE: try another. */
static int bind_pair(const struct sockaddr *sa, socklen_t sa_len, int *ret_udp, int *ret_tcp) {
        _cleanup_close_ int u = -EBADF, t = -EBADF;
        int one = 1;

        u = socket(sa->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        t = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (u < 0 || t < 0)
                return negative_errno();
        if (sa->sa_family == AF_INET6) {
                (void) setsockopt(u, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
                (void) setsockopt(t, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        }
        (void) setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(u, sa, sa_len) < 0 || bind(t, sa, sa_len) < 0 || listen(t, 64) < 0)
                return negative_errno();
        *ret_udp = TAKE_FD(u);
        *ret_tcp = TAKE_FD(t);
        return 0;
}

int proxy_bind4(DnsProxy *p) {
        Manager *m = p->cgroup->manager;
        int k = -EADDRNOTAVAIL;

        /* The first free slot whose address nobody else has taken. */
        for (unsigned slot = 0; slot < BPFD_PROXY_SLOTS; slot++) {
                struct sockaddr_in sa = {
                        .sin_family = AF_INET,
                        .sin_port = htons(NET_PROXY_PORT),
                        .sin_addr.s_addr = slot_address(slot),
                };

                if (m->proxy_used[slot / 8] & (1U << (slot % 8)))
                        continue;
                k = bind_pair((const struct sockaddr *) &sa, sizeof(sa), &p->udp_fd, &p->tcp_fd);
                if (k == -EADDRINUSE)
                        continue;
                if (k < 0)
                        return k;
                m->proxy_used[slot / 8] |= (uint8_t) (1U << (slot % 8));
                p->slot = slot;
                p->addr = sa.sin_addr.s_addr;
                /* What it sends on the fast path's behalf passes the ingress program unread.
                 * Needs CAP_NET_ADMIN; without it there is no fast path. */
                p->can_inject = setsockopt(p->udp_fd, SOL_SOCKET, SO_MARK, &(uint32_t) { NET_DNS_MARK },
                                           sizeof(uint32_t)) >= 0;
                return 0;
        }
        return k;
}

int proxy_bind6(DnsProxy *p) {
        for (unsigned i = 0; i < PORT6_TRIES; i++) {
                struct sockaddr_in6 sa = {
                        .sin6_family = AF_INET6,
                        .sin6_port = htons((uint16_t) (PORT6_FIRST + (p->slot + i * 191U) % PORT6_COUNT)),
                        .sin6_addr = IN6ADDR_LOOPBACK_INIT,
                };
                int k;

                k = bind_pair((const struct sockaddr *) &sa, sizeof(sa), &p->udp6_fd, &p->tcp6_fd);
                if (k == -EADDRINUSE)
                        continue;
                if (k < 0)
                        return k;       /* no IPv6 here: v4-mapped only */
                p->port6 = sa.sin6_port;
                return 0;
        }
        return -EADDRINUSE;
}

void proxy_unbind(DnsProxy *p) {
        Manager *m = p->cgroup->manager;

        p->udp6_fd = safe_close(p->udp6_fd);
        p->tcp6_fd = safe_close(p->tcp6_fd);
        if (p->udp_fd >= 0)
                m->proxy_used[p->slot / 8] &= (uint8_t) ~(1U << (p->slot % 8));
        p->udp_fd = safe_close(p->udp_fd);
        p->tcp_fd = safe_close(p->tcp_fd);
}
