/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* scudo's network filter: cgroup socket hooks attached by scudo-bpfd to one sandbox's cgroup.
 *
 * connect and sendmsg decide whether a destination may be reached (deny rules first, then
 * allow rules, then addresses learned from DNS answers); port 53 is sent to the sandbox's own
 * DNS proxy instead, and recvmsg/getpeername make the answers look as if they came from the
 * server that was asked. sock_create keeps everything but TCP and UDP out, since raw,
 * ICMP, SCTP or MPTCP sockets would not pass through the checks above.
 *
 * With NET_LAYER_DNS_DIRECT, UDP queries to a resolver on this host's loopback skip the
 * proxy: the skb programs of dns-fastpath.bpf.h check each query and learn from each answer
 * in the kernel, which saves the two extra hops through the helper. The ingress program, at
 * the end of this file, also judges what reaches the sandbox from the network. */

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "scudo-net.h"

#define AF_INET 2
#define AF_INET6 10
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define DNS_PORT 53

/* Set by the loader before load. comm needs CAP_PERFMON in these program types, so it is
 * read only when the loader has it; the verifier drops the call otherwise. */
const volatile bool report_comm = false;
/* The helper's pid namespace, so that reported pids are the ones it (and scudo) see. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

struct {
        __uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
        __type(key, __u64);
        __type(value, struct net_layer);
} layers SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LPM_TRIE);
        __uint(max_entries, NET_RULES_MAX);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, struct net_lpm_key);
        __type(value, __u8);
} allow_rules SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LPM_TRIE);
        __uint(max_entries, NET_RULES_MAX);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, struct net_lpm_key);
        __type(value, __u8);
} deny_rules SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, NET_LEARNED_MAX);
        __type(key, struct net_exact_key);
        __type(value, __u64);
} learned_allow SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, NET_LEARNED_MAX);
        __type(key, struct net_exact_key);
        __type(value, __u64);
} learned_deny SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, NET_VERDICTS_MAX);
        __type(key, struct net_exact_key);
        __type(value, __u8);
} verdicts SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_SK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct net_orig);
} dns_orig SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 1024 * 1024);
} events SEC(".maps");

/* Events (DNS messages for the helper among them) that did not fit in the ring buffer, or
 * over a sandbox's share of it. */
__u64 events_lost = 0;

/* With `mark`, the rule found (the most specific for this port, else for any port) is
 * marked as reached. */
static __always_inline bool lpm_hit(void *map, __u64 sid, __u16 port, const __u32 *addr, bool mark) {
        struct net_lpm_key k = {
                .prefixlen = NET_LPM_FULL_BITS,
                .sid_lo = (__u32) sid,
                .sid_hi = (__u32) (sid >> 32),
                .port = port,
                .addr = { addr[0], addr[1], addr[2], addr[3] },
        };
        __u8 *v;

        v = bpf_map_lookup_elem(map, &k);
        if (!v) {
                k.port = 0;
                v = bpf_map_lookup_elem(map, &k);
        }
        if (!v)
                return false;
        if (mark && *v != NET_RULE_REACHED)
                *v = NET_RULE_REACHED;
        return true;
}

static __always_inline bool learned_hit(void *map, __u64 sid, __u16 port, const __u32 *addr) {
        struct net_exact_key k = {
                .sid = sid,
                .port = port,
                .addr = { addr[0], addr[1], addr[2], addr[3] },
        };
        __u64 now = bpf_ktime_get_ns();
        __u64 *expires;

        expires = bpf_map_lookup_elem(map, &k);
        if (expires && (*expires == 0 || *expires > now))
                return true;
        k.port = 0;
        expires = bpf_map_lookup_elem(map, &k);
        return expires && (*expires == 0 || *expires > now);
}

/* The rule tries' answer, from the verdict cache when it has been asked before: walking a
 * trie of thousands of rules costs more than the connect() around it. */
static __always_inline __u8 static_verdict(const struct net_layer *l, __u16 port, const __u32 *addr) {
        struct net_exact_key k = {
                .sid = l->sid,
                .port = port,
                .addr = { addr[0], addr[1], addr[2], addr[3] },
        };
        __u8 *cached, v;

        cached = bpf_map_lookup_elem(&verdicts, &k);
        if (cached)
                return *cached;
        if (lpm_hit(&deny_rules, l->sid, port, addr, false))
                v = NET_STATIC_DENY;
        else if (lpm_hit(&allow_rules, l->sid, port, addr, true))
                v = NET_STATIC_ALLOW;
        else
                v = NET_STATIC_NONE;
        (void) bpf_map_update_elem(&verdicts, &k, &v, BPF_ANY);
        return v;
}

/* Deny beats allow: a destination is reachable when no deny rule and no denied DNS answer
 * covers it, and an allow rule or an allowed DNS answer does. */
static __always_inline bool permitted(const struct net_layer *l, __u16 port, const __u32 *addr) {
        __u8 v = static_verdict(l, port, addr);

        if (v == NET_STATIC_DENY)
                return false;
        if ((l->flags & NET_LAYER_LEARN_DENY) && learned_hit(&learned_deny, l->sid, port, addr))
                return false;
        if (v == NET_STATIC_ALLOW)
                return true;
        return (l->flags & NET_LAYER_LEARN_ALLOW) && learned_hit(&learned_allow, l->sid, port, addr);
}

static __always_inline __u32 current_pid(void) {
        struct bpf_pidns_info ns = {};

        if (pidns_ino != 0 &&
            bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) == 0)
                return ns.tgid;
        return (__u32) (bpf_get_current_pid_tgid() >> 32);
}

/* `sender`: the event is about what the running process does (a connect, a send, a socket),
 * so its pid and name are reported; not for what arrives from the network. */
static __always_inline void report(const struct net_layer *l, __u32 kind, __u16 port, const __u32 *addr,
                                   __u8 protocol, __u8 family, __u32 sock_type, bool sender) {
        struct net_event *e;

        e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
        if (!e) {
                __sync_fetch_and_add(&events_lost, 1);
                return;
        }
        e->sid = l->sid;
        e->kind = kind;
        e->pid = sender ? current_pid() : 0;
        e->addr[0] = addr[0];
        e->addr[1] = addr[1];
        e->addr[2] = addr[2];
        e->addr[3] = addr[3];
        e->port = port;
        e->protocol = protocol;
        e->family = family;
        e->sock_type = sock_type;
        __builtin_memset(e->comm, 0, sizeof(e->comm));
        if (report_comm && sender)
                bpf_get_current_comm(e->comm, sizeof(e->comm));
        bpf_ringbuf_submit(e, 0);
}

/* A sandbox's share of the ring buffer; over it, what it sends is dropped unanswered. */
static __always_inline bool within_budget(struct net_layer *l) {
        __u64 window = bpf_ktime_get_ns() >> NET_DNS_WINDOW_SHIFT;

        if (l->dns_window != window) {
                /* racy between CPUs, and it need not be more than roughly right */
                l->dns_window = window;
                l->dns_events = 0;
        }
        return __sync_fetch_and_add(&l->dns_events, 1) < NET_DNS_EVENTS_PER_WINDOW;
}

static __always_inline bool is_loopback6(const __u32 *addr) {
        return addr[0] == 0 && addr[1] == 0 && addr[2] == 0 && addr[3] == bpf_htonl(1);
}

static __always_inline bool is_proxy(const struct net_layer *l, const __u32 *addr, __u16 port) {
        if (l->proxy4 != 0 && port == DNS_PORT &&
            addr[0] == 0 && addr[1] == 0 && addr[2] == bpf_htonl(0xffff) && addr[3] == l->proxy4)
                return true;
        return l->proxy6_port != 0 && port == bpf_ntohs(l->proxy6_port) && is_loopback6(addr);
}

static __always_inline bool wants_dns_redirect(const struct net_layer *l, __u16 port, __u32 protocol) {
        return (l->flags & NET_LAYER_DNS_FILTERED) && l->proxy4 != 0 && port == DNS_PORT &&
                (protocol == IPPROTO_UDP || protocol == IPPROTO_TCP);
}

static __always_inline bool is_direct_resolver(const struct net_layer *l, __u32 ip4) {
        if (!(l->flags & NET_LAYER_DNS_DIRECT) || ip4 == 0)
                return false;
        return ip4 == l->direct4[0] || ip4 == l->direct4[1] || ip4 == l->direct4[2];
}

static __always_inline void remember_orig(struct bpf_sock_addr *ctx, __u16 family, const __u32 *ip6) {
        struct net_orig *o;

        o = bpf_sk_storage_get(&dns_orig, ctx->sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
        if (!o)
                return;
        o->addr[0] = ip6[0];
        o->addr[1] = ip6[1];
        o->addr[2] = ip6[2];
        o->addr[3] = ip6[3];
        o->port = (__u16) ctx->user_port;
        o->family = family;
}

/* 0.0.0.0 and :: are not "no host": the kernel sends them to this host, to the address the
 * socket is bound to (or, for IPv4 sendmsg, the source asked for with IP_PKTINFO) or else to
 * loopback. A rule for every host on a port must not make them a way around a deny rule for
 * 127.0.0.1, so they are judged as every address they may turn into, and pass only when all
 * of those would. */
static __always_inline bool local_permitted4(const struct net_layer *l, __u16 port, __u32 ip4) {
        __u32 a[4] = { 0, 0, bpf_htonl(0xffff), ip4 };

        return permitted(l, port, a);
}

static __always_inline bool unspecified4_permitted(const struct net_layer *l, struct bpf_sock_addr *ctx,
                                                   __u32 kind, __u16 port) {
        struct bpf_sock *sk = ctx->sk;
        __u32 src;

        if (!local_permitted4(l, port, bpf_htonl(0x7f000001)))
                return false;
        if (!sk)
                return false;
        src = sk->src_ip4;
        if (src != 0 && !local_permitted4(l, port, src))
                return false;
        if (kind == NET_EVENT_SENDMSG) {
                src = ctx->msg_src_ip4;
                if (src != 0 && !local_permitted4(l, port, src))
                        return false;
        }
        return true;
}

static __always_inline bool is_unspecified6(const __u32 *addr) {
        /* :: itself, and ::ffff:0.0.0.0, which an AF_INET6 socket sends as IPv4 0.0.0.0 */
        return addr[0] == 0 && addr[1] == 0 && (addr[2] == 0 || addr[2] == bpf_htonl(0xffff)) &&
               addr[3] == 0;
}

static __always_inline bool unspecified6_permitted(const struct net_layer *l, struct bpf_sock_addr *ctx,
                                                   __u16 port) {
        __u32 loop6[4] = { 0, 0, 0, bpf_htonl(1) };
        struct bpf_sock *sk = ctx->sk;
        __u32 src[4];

        if (!local_permitted4(l, port, bpf_htonl(0x7f000001)) || !permitted(l, port, loop6))
                return false;
        if (!sk)
                return false;
        src[0] = sk->src_ip6[0];
        src[1] = sk->src_ip6[1];
        src[2] = sk->src_ip6[2];
        src[3] = sk->src_ip6[3];
        if ((src[0] | src[1] | src[2] | src[3]) != 0 && !permitted(l, port, src))
                return false;
        return true;
}

/* sendmsg on a connected socket with control messages (IP_PKTINFO, IP_TOS, UDP_SEGMENT...)
 * runs the hook too, with no address (0, port 0: a datagram cannot be sent to port 0): it goes
 * to the peer that connect() was checked for. */
static __always_inline bool is_connected_send4(struct bpf_sock_addr *ctx) {
        return ctx->user_port == 0 && ctx->user_ip4 == 0;
}

static __always_inline bool is_connected_send6(struct bpf_sock_addr *ctx, const __u32 *addr) {
        return ctx->user_port == 0 && (addr[0] | addr[1] | addr[2] | addr[3]) == 0;
}

/* The answer to a query goes back to its source: for port 53 the source is the socket's own
 * address, never one asked for with IP_PKTINFO. That one could be another program's socket
 * (bound to the same port on another loopback address), which the proxy, or the helper for
 * the fast path, would then send a datagram to. */
static __always_inline void own_source4(struct bpf_sock_addr *ctx) {
        struct bpf_sock *sk = ctx->sk;

        if (sk)
                ctx->msg_src_ip4 = sk->src_ip4;
}

static __always_inline void own_source6(struct bpf_sock_addr *ctx) {
        struct bpf_sock *sk = ctx->sk;

        if (!sk)
                return;
        ctx->msg_src_ip6[0] = sk->src_ip6[0];
        ctx->msg_src_ip6[1] = sk->src_ip6[1];
        ctx->msg_src_ip6[2] = sk->src_ip6[2];
        ctx->msg_src_ip6[3] = sk->src_ip6[3];
}

/* connect4 and sendmsg4: 1 lets the call through, 0 fails it with EPERM. */
static __always_inline int check4(struct bpf_sock_addr *ctx, __u32 kind) {
        struct net_layer *l = bpf_get_local_storage(&layers, 0);
        __u16 port = bpf_ntohs((__u16) ctx->user_port);
        __u32 addr[4] = { 0, 0, bpf_htonl(0xffff), ctx->user_ip4 };
        /* read once: clang may otherwise keep &ctx->protocol in a register, and the
         * verifier refuses loads through a moved context pointer */
        __u32 protocol = ctx->protocol;

        barrier_var(protocol);
        if (l->sid == 0)
                return 0;

        if (kind == NET_EVENT_SENDMSG && is_connected_send4(ctx)) {
                if (ctx->sk && ctx->sk->dst_port == bpf_htons(DNS_PORT))
                        own_source4(ctx);
                return 1;
        }
        if (wants_dns_redirect(l, port, protocol)) {
                if (kind == NET_EVENT_SENDMSG)
                        own_source4(ctx);
                /* to a resolver on loopback as it is: scudo_dns_egress reads every query */
                if (protocol == IPPROTO_UDP && is_direct_resolver(l, ctx->user_ip4))
                        return 1;
                remember_orig(ctx, AF_INET, addr);
                ctx->user_ip4 = l->proxy4;
                return 1;
        }
        if (is_proxy(l, addr, port))
                return 1;
        if (ctx->user_ip4 != 0) {
                if (permitted(l, port, addr))
                        return 1;
        } else if (unspecified4_permitted(l, ctx, kind, port))
                return 1;

        report(l, kind, port, addr, protocol, AF_INET, 0, true);
        return 0;
}

static __always_inline int check6(struct bpf_sock_addr *ctx, __u32 kind) {
        struct net_layer *l = bpf_get_local_storage(&layers, 0);
        __u16 port = bpf_ntohs((__u16) ctx->user_port);
        __u32 addr[4] = { ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3] };
        __u32 protocol = ctx->protocol;         /* once: see check4 */

        barrier_var(protocol);
        if (l->sid == 0)
                return 0;

        if (kind == NET_EVENT_SENDMSG && is_connected_send6(ctx, addr)) {
                if (ctx->sk && ctx->sk->dst_port == bpf_htons(DNS_PORT))
                        own_source6(ctx);
                return 1;
        }

        /* A v4-mapped server goes to the IPv4 proxy, as from an AF_INET socket. A native
         * IPv6 one goes to the proxy's IPv6 side on [::1]: the kernel refuses a sendmsg
         * rewritten from IPv6 to v4-mapped. */
        if (wants_dns_redirect(l, port, protocol)) {
                bool mapped = addr[0] == 0 && addr[1] == 0 && addr[2] == bpf_htonl(0xffff);

                if (kind == NET_EVENT_SENDMSG)
                        own_source6(ctx);
                /* v4-mapped: the datagrams are IPv4, which scudo_dns_egress reads */
                if (mapped && protocol == IPPROTO_UDP && is_direct_resolver(l, addr[3]))
                        return 1;
                remember_orig(ctx, AF_INET6, addr);
                if (mapped || l->proxy6_port == 0) {
                        ctx->user_ip6[0] = 0;
                        ctx->user_ip6[1] = 0;
                        ctx->user_ip6[2] = bpf_htonl(0xffff);
                        ctx->user_ip6[3] = l->proxy4;
                } else {
                        ctx->user_ip6[0] = 0;
                        ctx->user_ip6[1] = 0;
                        ctx->user_ip6[2] = 0;
                        ctx->user_ip6[3] = bpf_htonl(1);
                        ctx->user_port = l->proxy6_port;
                }
                return 1;
        }
        if (is_proxy(l, addr, port))
                return 1;
        if (!is_unspecified6(addr)) {
                if (permitted(l, port, addr))
                        return 1;
        } else if (unspecified6_permitted(l, ctx, port))
                return 1;

        report(l, kind, port, addr, protocol, AF_INET6, 0, true);
        return 0;
}

SEC("cgroup/connect4")
int scudo_connect4(struct bpf_sock_addr *ctx) {
        return check4(ctx, NET_EVENT_CONNECT);
}

SEC("cgroup/sendmsg4")
int scudo_sendmsg4(struct bpf_sock_addr *ctx) {
        return check4(ctx, NET_EVENT_SENDMSG);
}

SEC("cgroup/connect6")
int scudo_connect6(struct bpf_sock_addr *ctx) {
        return check6(ctx, NET_EVENT_CONNECT);
}

SEC("cgroup/sendmsg6")
int scudo_sendmsg6(struct bpf_sock_addr *ctx) {
        return check6(ctx, NET_EVENT_SENDMSG);
}

/* recvmsg and getpeername: a peer that is our proxy on port 53 is shown as the server the
 * socket originally addressed. These hooks must return 1. */
static __always_inline void unmask4(struct bpf_sock_addr *ctx) {
        struct net_layer *l = bpf_get_local_storage(&layers, 0);
        struct net_orig *o;

        if (l->proxy4 == 0 || ctx->user_ip4 != l->proxy4 || bpf_ntohs((__u16) ctx->user_port) != DNS_PORT)
                return;
        o = bpf_sk_storage_get(&dns_orig, ctx->sk, NULL, 0);
        if (!o || o->family != AF_INET)
                return;
        ctx->user_ip4 = o->addr[3];
        ctx->user_port = o->port;
}

static __always_inline void unmask6(struct bpf_sock_addr *ctx) {
        struct net_layer *l = bpf_get_local_storage(&layers, 0);
        __u32 addr[4] = { ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3] };
        struct net_orig *o;

        if (!is_proxy(l, addr, bpf_ntohs((__u16) ctx->user_port)))
                return;
        /* An AF_INET6 socket may have addressed an IPv4 server v4-mapped, which runs the
         * IPv4 sendmsg hook; either way the original is kept in its IPv6 form. */
        o = bpf_sk_storage_get(&dns_orig, ctx->sk, NULL, 0);
        if (!o)
                return;
        ctx->user_ip6[0] = o->addr[0];
        ctx->user_ip6[1] = o->addr[1];
        ctx->user_ip6[2] = o->addr[2];
        ctx->user_ip6[3] = o->addr[3];
        ctx->user_port = o->port;
}

SEC("cgroup/recvmsg4")
int scudo_recvmsg4(struct bpf_sock_addr *ctx) {
        unmask4(ctx);
        return 1;
}

SEC("cgroup/recvmsg6")
int scudo_recvmsg6(struct bpf_sock_addr *ctx) {
        unmask6(ctx);
        return 1;
}

SEC("cgroup/getpeername4")
int scudo_getpeername4(struct bpf_sock_addr *ctx) {
        unmask4(ctx);
        return 1;
}

SEC("cgroup/getpeername6")
int scudo_getpeername6(struct bpf_sock_addr *ctx) {
        unmask6(ctx);
        return 1;
}

/* Only TCP and UDP sockets go through connect/sendmsg hooks that we check; anything else of
 * AF_INET/AF_INET6 (raw, ICMP "ping", SCTP, MPTCP, UDP-Lite) is refused when it is created. */
SEC("cgroup/sock_create")
int scudo_sock_create(struct bpf_sock *sk) {
        struct net_layer *l = bpf_get_local_storage(&layers, 0);
        __u32 zero[4] = {};

        if (l->sid == 0)
                return 0;
        if (sk->type == SOCK_STREAM && sk->protocol == IPPROTO_TCP)
                return 1;
        if (sk->type == SOCK_DGRAM && sk->protocol == IPPROTO_UDP)
                return 1;

        report(l, NET_EVENT_SOCKET, 0, zero, (__u8) sk->protocol, (__u8) sk->family, sk->type, true);
        return 0;
}

/* --- Host names: the fast path, in a file of its own -------------------------------------- */

#include "dns-fastpath.bpf.h"

/* --- Incoming traffic ---------------------------------------------------------------------
 *
 * The rules say what the sandbox may reach, and what reaches it from the network is judged by
 * the same rules, as if the sandbox were sending back: a new connection to a socket it listens
 * on, or a datagram to a socket not connected to its sender, from ADDR:PORT is taken only when
 * the rules would let the sandbox send to ADDR:PORT (a client's port is rarely known, so in
 * practice that takes a rule for the host on any port). Connections it made or accepted, and
 * datagrams from the peer a UDP socket is connected to, pass: their peer was judged when they
 * were set up. Whatever comes over the loopback interface, from this host, passes too: the
 * user's other programs can reach the sandbox through the files it writes anyway, and its own
 * servers (`npm run dev`) stay reachable from the browser. */

#define LOOPBACK_IFINDEX 1      /* in every network namespace */

static __always_inline int inbound_from_network(struct __sk_buff *skb, struct net_layer *l) {
        struct bpf_sock *sk = skb->sk;
        __u32 addr[4] = {}, l4;
        __u16 ports[2];
        __u8 protocol, family;

        if (l->sid == 0)
                return 0;
        if (skb->protocol == bpf_htons(ETH_P_IP)) {
                struct iphdr ip;

                if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) < 0)
                        return 0;
                protocol = ip.protocol;
                l4 = (__u32) ip.ihl * 4;
                addr[2] = bpf_htonl(0xffff);
                addr[3] = ip.saddr;
                family = AF_INET;
        } else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
                struct ipv6hdr ip6;

                if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) < 0)
                        return 0;
                protocol = ip6.nexthdr;
                l4 = sizeof(ip6);
                __builtin_memcpy(addr, &ip6.saddr, sizeof(addr));
                family = AF_INET6;
        } else
                return 1;
        /* Only TCP and UDP sockets exist in a sandbox; a header chain that hides which of
         * the two this is (IPv6 extension headers) is not taken. */
        if (protocol != IPPROTO_TCP && protocol != IPPROTO_UDP)
                return 0;
        if (bpf_skb_load_bytes(skb, l4, ports, sizeof(ports)) < 0)
                return 0;

        if (sk)
                sk = bpf_sk_fullsock(sk);
        if (protocol == IPPROTO_TCP) {
                /* only what comes to a listening socket opens something new */
                if (!sk || sk->state != BPF_TCP_LISTEN)
                        return 1;
        } else if (sk && sk->state == BPF_TCP_ESTABLISHED && sk->dst_port == ports[0] &&
                   (family == AF_INET ? sk->dst_ip4 == addr[3] :
                    sk->dst_ip6[0] == addr[0] && sk->dst_ip6[1] == addr[1] &&
                    sk->dst_ip6[2] == addr[2] && sk->dst_ip6[3] == addr[3]))
                return 1;               /* from the peer the UDP socket is connected to */

        if (permitted(l, bpf_ntohs(ports[0]), addr))
                return 1;
        if (within_budget(l))           /* the network, not the sandbox, sets the pace */
                report(l, NET_EVENT_INBOUND, bpf_ntohs(ports[0]), addr, protocol, family, 0, false);
        return 0;
}

SEC("cgroup_skb/ingress")
int scudo_ingress(struct __sk_buff *skb) {
        struct net_layer *l = bpf_get_local_storage(&layers, 0);

        if (skb->ingress_ifindex != LOOPBACK_IFINDEX)
                return inbound_from_network(skb, l);
        if (l->flags & NET_LAYER_DNS_DIRECT)
                return dns_answer(skb, l);
        return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
