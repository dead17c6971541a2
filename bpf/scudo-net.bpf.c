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
 * proxy: the skb programs at the end of this file check each query and learn from each
 * answer in the kernel, which saves the two extra hops through the helper. */

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "scudo-net.h"

#define AF_INET 2
#define AF_INET6 10
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

static __always_inline bool lpm_hit(void *map, __u64 sid, __u16 port, const __u32 *addr) {
        struct net_lpm_key k = {
                .prefixlen = NET_LPM_FULL_BITS,
                .sid_lo = (__u32) sid,
                .sid_hi = (__u32) (sid >> 32),
                .port = port,
                .addr = { addr[0], addr[1], addr[2], addr[3] },
        };

        if (bpf_map_lookup_elem(map, &k))
                return true;
        k.port = 0;
        return bpf_map_lookup_elem(map, &k) != NULL;
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
        if (lpm_hit(&deny_rules, l->sid, port, addr))
                v = NET_STATIC_DENY;
        else if (lpm_hit(&allow_rules, l->sid, port, addr))
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
        return addr[0] == 0 && addr[1] == 0 && (addr[2] == 0 || addr[2] == bpf_htonl(0xffff)) && addr[3] == 0;
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

/* --- Host names: the fast path --------------------------------------------------------
 *
 * The egress program is attached only with NET_LAYER_DNS_DIRECT; the ingress one, which also
 * judges incoming traffic (below), to every sandbox with rules, and reads answers only with
 * NET_LAYER_DNS_DIRECT. Every packet of the sandbox passes through them, so anything that is
 * not UDP to or from port 53 leaves at once. What they check:
 *
 *   egress: a UDP datagram from port 53 never leaves the sandbox (nothing in it may pose as
 *   a resolver to its own sockets). One to port 53 of a direct resolver leaves only when it
 *   is a plain query (one question, no other records but an empty OPT, nothing after them)
 *   for a name an allow rule covers and no deny rule refuses outright; anything else is
 *   dropped and handed to the helper, which answers it from the resolver's address (REFUSED,
 *   or the answer to the query it rebuilt). Port 53 anywhere but a direct resolver or the
 *   proxy is dropped: the connect and sendmsg hooks never send a datagram there.
 *
 *   ingress: an answer from a direct resolver has the addresses of the name asked (and of
 *   the CNAMEs it leads to) put into learned_allow/learned_deny before the socket gets it.
 *   A name is followed by where it is in the message: an owner must be a compression
 *   pointer to the question or to a CNAME's target. An answer laid out otherwise, or too
 *   long for these programs, is dropped and handed to the helper, which learns from it with
 *   its own parser and sends it on to the socket (marked NET_DNS_MARK, so that it passes
 *   here unread).
 *
 * The message is read into a per-CPU scratch slot. A program running in process context can
 * be preempted by another on the same CPU, so a slot is claimed with a compare-and-swap and
 * there are several; with none free a query is dropped and an answer passed unread. */

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define DNS_HEADER 12
#define DNS_QUERY_MAX 512
#define DNS_LABELS_MAX (NET_NAME_KEY_SIZE / 2)  /* each label takes two bytes at least */
#define DNS_ANSWERS_MAX 32
#define DNS_CHAIN_MAX 8
#define DNS_FOUND_MAX 8
#define DNS_SCRATCH_SLOTS 4
#define DNS_TYPE_A 1
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_OPT 41
#define DNS_CLASS_IN 1
#define MSG_MASK (NET_DNS_MSG_MAX - 1)
#define KEY_MASK (NET_NAME_KEY_SIZE - 1)

/* egress verdicts: 0 drops with EPERM; 2 drops with "congestion", which a UDP sender without
 * IP_RECVERR takes for a datagram sent, so that it waits for the helper's answer. */
#define EGRESS_PASS 1
#define EGRESS_DROP 0
#define EGRESS_TO_HELPER 2

/* Everything indexed by a value the verifier cannot bound lives here rather than on the
 * stack: variable stack offsets would need CAP_PERFMON. */
struct dns_scratch {
        __u32 busy;
        __u32 nfound;                           /* rules in found[] */
        __u32 overflow;                         /* more rules than found[] holds */
        __u32 nchain;                           /* names in chain[] */
        struct net_name_key key;
        __u16 label[DNS_LABELS_MAX];            /* where each label starts, from the name */
        struct net_name_rule found[DNS_FOUND_MAX];      /* the rules covering the name */
        __u16 chain[DNS_CHAIN_MAX];             /* answers: where the chain's names are */
        struct net_dns_event ev;                /* ev.msg holds the message */
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, DNS_SCRATCH_SLOTS);
        __type(key, __u32);
        __type(value, struct dns_scratch);
} dns_scratch SEC(".maps");

/* Name rule patterns: exact names, and the names below "*.suffix" (key: the suffix). */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, NET_NAMES_MAX);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, struct net_name_key);
        __type(value, struct net_name_rules);
} name_hosts SEC(".maps"), name_domains SEC(".maps");


static __always_inline struct dns_scratch *scratch_claim(void) {
        for (__u32 i = 0; i < DNS_SCRATCH_SLOTS; i++) {
                __u32 k = i;
                struct dns_scratch *s = bpf_map_lookup_elem(&dns_scratch, &k);

                if (s && __sync_val_compare_and_swap(&s->busy, 0, 1) == 0)
                        return s;
        }
        return NULL;
}

static __always_inline void scratch_release(struct dns_scratch *s) {
        __sync_lock_test_and_set(&s->busy, 0);
}

static __always_inline __u32 msg8(const struct dns_scratch *s, __u32 p) {
        return s->ev.msg[p & MSG_MASK];
}

static __always_inline __u32 msg16(const struct dns_scratch *s, __u32 p) {
        return msg8(s, p) << 8 | msg8(s, p + 1);
}

static __always_inline __u32 msg32(const struct dns_scratch *s, __u32 p) {
        return msg16(s, p) << 16 | msg16(s, p + 2);
}

/* The UDP datagram of an skb: its IPv4 addresses, ports and where its payload is. */
struct udp_view {
        __u32 saddr, daddr;                     /* network order; 0 for IPv6 */
        __u16 sport, dport;                     /* host order */
        __u32 off, len;                         /* payload */
        bool ipv6;
};

/* 1: a UDP datagram (filled in `u`); 0: something else. */
static __always_inline int udp_view(struct __sk_buff *skb, struct udp_view *u) {
        void *data = (void *) (long) skb->data, *data_end = (void *) (long) skb->data_end;
        __u16 ports[2];

        if (skb->protocol == bpf_htons(ETH_P_IP)) {
                struct iphdr *head = data, ip;
                __u32 hl;

                /* Most packets are TCP: told from the linear head, without copying */
                if ((void *) (head + 1) <= data_end && head->protocol != IPPROTO_UDP)
                        return 0;

                if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) < 0 || ip.protocol != IPPROTO_UDP)
                        return 0;
                hl = (__u32) ip.ihl * 4;
                if (hl < sizeof(ip))
                        return 0;
                u->saddr = ip.saddr;
                u->daddr = ip.daddr;
                u->off = hl + 8;
                u->ipv6 = false;
        } else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
                struct ipv6hdr *head = data, ip6;

                if ((void *) (head + 1) <= data_end && head->nexthdr != IPPROTO_UDP)
                        return 0;

                /* Only a UDP header right after the fixed header is looked at: IPv6 never
                 * takes the fast path, and port 53 over IPv6 only ever goes to the proxy. */
                if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) < 0 || ip6.nexthdr != IPPROTO_UDP)
                        return 0;
                u->saddr = u->daddr = 0;
                u->off = sizeof(ip6) + 8;
                u->ipv6 = true;
        } else
                return 0;

        if (bpf_skb_load_bytes(skb, u->off - 8, ports, sizeof(ports)) < 0)
                return 0;
        u->sport = bpf_ntohs(ports[0]);
        u->dport = bpf_ntohs(ports[1]);
        u->len = skb->len > u->off ? skb->len - u->off : 0;
        return 1;
}

/* Reads the payload into the scratch slot. */
static __always_inline int load_msg(struct __sk_buff *skb, const struct udp_view *u, struct dns_scratch *s) {
        __u32 len = u->len;

        if (len < DNS_HEADER || len > NET_DNS_MSG_MAX)
                return -1;
        if (bpf_skb_load_bytes(skb, u->off, s->ev.msg, len) < 0)
                return -1;
        s->ev.len = len;
        return 0;
}

/* Per byte: itself in lower case when it may be in a name (letters, digits, '-', '_'), 0
 * otherwise. A table, so that the loops over a label's bytes have no branch for the
 * verifier to follow but their end. */
#define LDH(c) [c] = c
#define UPPER(c) [c] = c + 'a' - 'A'
static const __u8 name_byte[256] = {
        LDH('-'), LDH('_'),
        LDH('0'), LDH('1'), LDH('2'), LDH('3'), LDH('4'), LDH('5'), LDH('6'), LDH('7'), LDH('8'), LDH('9'),
        LDH('a'), LDH('b'), LDH('c'), LDH('d'), LDH('e'), LDH('f'), LDH('g'), LDH('h'), LDH('i'),
        LDH('j'), LDH('k'), LDH('l'), LDH('m'), LDH('n'), LDH('o'), LDH('p'), LDH('q'), LDH('r'),
        LDH('s'), LDH('t'), LDH('u'), LDH('v'), LDH('w'), LDH('x'), LDH('y'), LDH('z'),
        UPPER('A'), UPPER('B'), UPPER('C'), UPPER('D'), UPPER('E'), UPPER('F'), UPPER('G'), UPPER('H'),
        UPPER('I'), UPPER('J'), UPPER('K'), UPPER('L'), UPPER('M'), UPPER('N'), UPPER('O'), UPPER('P'),
        UPPER('Q'), UPPER('R'), UPPER('S'), UPPER('T'), UPPER('U'), UPPER('V'), UPPER('W'), UPPER('X'),
        UPPER('Y'), UPPER('Z'),
};

/* A name that may not be compressed (a question): labels of letters, digits, '-' and '_'. */
struct name_scan {
        struct dns_scratch *s;
        __u32 size;                             /* of the message */
        __u32 start;                            /* where the name starts */
        __u32 next;                             /* where the next length byte is */
        __u32 end;                              /* just past the name; 0 until found */
        __u32 nlabels;
        __u32 bad;
};

static long scan_name_byte(__u32 i, struct name_scan *c) {
        struct dns_scratch *s = c->s;
        __u32 p = c->start + i;
        __u8 b;

        if (p >= c->size) {
                c->bad = 1;
                return 1;
        }
        b = s->ev.msg[p & MSG_MASK];
        if (p == c->next) {
                if (b == 0) {
                        c->end = p + 1;
                        return 1;
                }
                /* over 63: compression pointers and label types other than plain */
                if (b > 63 || c->nlabels >= DNS_LABELS_MAX) {
                        c->bad = 1;
                        return 1;
                }
                s->label[c->nlabels & (DNS_LABELS_MAX - 1)] = (__u16) i;
                c->nlabels++;
                c->next = p + 1 + b;
                return 0;
        }
        if (name_byte[b] == 0) {
                c->bad = 1;
                return 1;
        }
        return 0;
}

/* The rules that cover a name: those of the name itself, and of every "*.parent". */
struct name_match {
        struct dns_scratch *s;
        __u32 start, len;                       /* the name in the message, its wire length */
        __u32 k;                                /* labels not looked up yet */
        __u32 nlabels;
        __u64 hosts, domains;                   /* the label counts patterns have (net_layer) */
};

static __always_inline void collect(struct dns_scratch *s, const struct net_name_rules *v) {
#pragma unroll
        for (__u32 r = 0; r < NET_NAME_RULES_MAX; r++) {
                if (r >= v->n)
                        break;
                if (s->nfound >= DNS_FOUND_MAX) {
                        s->overflow = 1;
                        break;
                }
                s->found[s->nfound & (DNS_FOUND_MAX - 1)] = v->rule[r];
                s->nfound++;
        }
}

static __always_inline void lookup_pattern(struct dns_scratch *s, bool host) {
        struct net_name_rules *v;

        /* a call for each map, so that the verifier can inline each lookup */
        if (host)
                v = bpf_map_lookup_elem(&name_hosts, &s->key);
        else
                v = bpf_map_lookup_elem(&name_domains, &s->key);
        if (v)
                collect(s, v);
}

/* From the name's last byte to its first, each byte goes into the key (in lower case; length
 * bytes are at most 63 and never change), right-aligned. Once a label's first byte is in,
 * the key holds that label and all after it, zeros before: a parent's key (for "*.parent"
 * rules) when it is not the first label, the name's own when it is. Only label counts some
 * pattern has are looked up. */
static long match_name_byte(__u32 i, struct name_match *m) {
        struct dns_scratch *s = m->s;
        __u32 j, held;
        __u8 b;

        if (i >= m->len)
                return 1;
        j = m->len - 1 - i;
        b = s->ev.msg[(m->start + j) & MSG_MASK];
        /* a length byte (at most 63) as it is, a name's byte in lower case */
        s->key.name[(NET_NAME_KEY_SIZE - m->len + j) & KEY_MASK] = b < 64 ? b : name_byte[b];
        if (m->k > 0 && j == s->label[(m->k - 1) & (DNS_LABELS_MAX - 1)]) {
                m->k--;
                held = (m->nlabels - m->k - 1) & 63;
                if (m->k == 0) {
                        if (m->hosts & (1ULL << held))
                                lookup_pattern(s, true);
                } else if (m->domains & (1ULL << held))
                        lookup_pattern(s, false);
        }
        return 0;
}

/* Finds the rules for the name that starts at `start`. Returns its wire length, or 0 when
 * the name cannot be matched here (compressed, longer than a key, odd bytes). */
static __always_inline __u32 match_name(struct dns_scratch *s, const struct net_layer *l, __u32 start,
                                        __u32 size, struct name_match *m) {
        struct name_scan c = { .s = s, .size = size, .start = start, .next = start };
        __u64 *w = (__u64 *) s->key.name;

        (void) bpf_loop(NET_NAME_KEY_SIZE, scan_name_byte, &c, 0);
        if (c.bad || c.end == 0 || c.nlabels == 0)
                return 0;
        s->nfound = 0;
        s->overflow = 0;
        m->s = s;
        m->start = start;
        m->len = c.end - start;
        m->k = c.nlabels;
        m->nlabels = c.nlabels;
        m->hosts = l->host_labels;
        m->domains = l->domain_labels;
        if (m->len > NET_NAME_KEY_SIZE)
                return 0;

        s->key.sid = l->sid;
#pragma unroll
        for (int i = 0; i < NET_NAME_KEY_SIZE / 8; i++)
                w[i] = 0;
        (void) bpf_loop(NET_NAME_KEY_SIZE, match_name_byte, m, 0);
        return m->len;
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

static __always_inline void send_to_helper(struct dns_scratch *s, struct net_layer *l, __u32 kind,
                                           const struct udp_view *u) {
        struct net_dns_event *e = &s->ev;
        __u32 len = e->len;

        if (!within_budget(l)) {
                __sync_fetch_and_add(&events_lost, 1);
                return;
        }

        e->sid = l->sid;
        e->kind = kind;
        e->saddr = u->saddr;
        e->daddr = u->daddr;
        e->sport = bpf_htons(u->sport);
        e->dport = bpf_htons(u->dport);
        e->pid = 0;
        __builtin_memset(e->comm, 0, sizeof(e->comm));
        if (kind == NET_EVENT_DNS_QUERY) {
                e->pid = current_pid();
                if (report_comm)
                        bpf_get_current_comm(e->comm, sizeof(e->comm));
        }
        if (len > NET_DNS_MSG_MAX)
                return;
        if (bpf_ringbuf_output(&events, e, __builtin_offsetof(struct net_dns_event, msg) + len, 0) < 0)
                __sync_fetch_and_add(&events_lost, 1);
}

/* A query the egress program lets go by itself: the header of a standard query with one
 * question, and at most one additional record, an OPT without options. */
static __always_inline bool plain_query(const struct dns_scratch *s, __u32 size) {
        __u32 flags = msg16(s, 2);

        /* QR, opcode, AA, TC, RA, Z and rcode all 0; RD, AD and CD as the asker likes */
        if (flags & ~0x0130U)
                return false;
        return msg16(s, 4) == 1 && msg16(s, 6) == 0 && msg16(s, 8) == 0 && msg16(s, 10) <= 1;
}

static __always_inline bool plain_opt(const struct dns_scratch *s, __u32 p, __u32 size) {
        /* root owner, type OPT, any payload size, rcode 0, version 0, only DO, no data */
        return p + 11 == size && msg8(s, p) == 0 && msg16(s, p + 1) == DNS_TYPE_OPT &&
                msg8(s, p + 5) == 0 && msg8(s, p + 6) == 0 && (msg8(s, p + 7) & 0x7f) == 0 &&
                msg8(s, p + 8) == 0 && msg16(s, p + 9) == 0;
}

/* EGRESS_PASS when the query may go to the resolver as it is. */
static __always_inline int check_query(struct dns_scratch *s, const struct net_layer *l) {
        struct name_match m = {};
        __u32 size = s->ev.len, n, end;
        bool allowed = false;

        if (size > DNS_QUERY_MAX || !plain_query(s, size))
                return EGRESS_TO_HELPER;
        n = match_name(s, l, DNS_HEADER, size, &m);
        if (n == 0 || s->overflow)
                return EGRESS_TO_HELPER;
        end = DNS_HEADER + n + 4;               /* past QTYPE and QCLASS */
        if (msg16(s, 10) == 0 ? end != size : !plain_opt(s, end, size))
                return EGRESS_TO_HELPER;

#pragma unroll
        for (__u32 r = 0; r < DNS_FOUND_MAX; r++) {
                if (r >= s->nfound)
                        break;
                if (s->found[r].deny && s->found[r].port == 0)
                        return EGRESS_TO_HELPER;        /* refused outright */
                if (!s->found[r].deny)
                        allowed = true;
        }
        return allowed ? EGRESS_PASS : EGRESS_TO_HELPER;
}

SEC("cgroup_skb/egress")
int scudo_dns_egress(struct __sk_buff *skb) {
        struct net_layer *l = bpf_get_local_storage(&layers, 0);
        struct dns_scratch *s;
        struct udp_view u = {};
        int verdict;

        if (!udp_view(skb, &u))
                return EGRESS_PASS;
        if (u.sport == DNS_PORT)
                return EGRESS_DROP;
        if (u.dport != DNS_PORT)
                return EGRESS_PASS;
        if (u.ipv6 || !(l->flags & NET_LAYER_DNS_DIRECT))
                return EGRESS_DROP;
        if (l->proxy4 != 0 && u.daddr == l->proxy4)
                return EGRESS_PASS;
        if (!is_direct_resolver(l, u.daddr))
                return EGRESS_DROP;
        /* The helper answers to the query's source: it must be the socket's own address,
         * not one asked for with IP_PKTINFO (the sendmsg hooks clear that for port 53). */
        if (skb->local_ip4 != 0 && skb->local_ip4 != u.saddr)
                return EGRESS_DROP;

        s = scratch_claim();
        if (!s)
                return EGRESS_DROP;
        if (load_msg(skb, &u, s) < 0) {
                /* not a DNS message at all: nothing for the helper either */
                scratch_release(s);
                return EGRESS_DROP;
        }
        verdict = check_query(s, l);
        if (verdict == EGRESS_TO_HELPER)
                send_to_helper(s, l, NET_EVENT_DNS_QUERY, &u);
        scratch_release(s);
        return verdict;
}

/* Answers: which owners belong to the name asked, and the addresses they have. */
struct answer_walk {
        struct dns_scratch *s;
        __u64 sid, now;
        __u32 grace_sec;
        __u32 size, pos, count;
        __u32 slow;                             /* for the helper */
};

static __always_inline bool chain_has(const struct dns_scratch *s, __u32 off) {
#pragma unroll
        for (__u32 i = 0; i < DNS_CHAIN_MAX; i++) {
                if (i >= s->nchain)
                        break;
                if (s->chain[i] == off)
                        return true;
        }
        return false;
}

static __always_inline void chain_add(struct answer_walk *w, __u32 off) {
        struct dns_scratch *s = w->s;

        if (chain_has(s, off))
                return;
        if (s->nchain >= DNS_CHAIN_MAX) {
                w->slow = 1;
                return;
        }
        s->chain[s->nchain & (DNS_CHAIN_MAX - 1)] = (__u16) off;
        s->nchain++;
}

static __always_inline void learn(struct answer_walk *w, const __u32 *addr, __u32 ttl) {
        struct dns_scratch *s = w->s;
        struct net_exact_key k = {
                .sid = w->sid,
                .addr = { addr[0], addr[1], addr[2], addr[3] },
        };
        __u64 expires;

        /* TTLs above 2^31 count as 0 (RFC 2181 section 8); none lasts more than a day */
        if (ttl > 0x7fffffffU)
                ttl = 0;
        if (ttl > NET_DNS_TTL_MAX)
                ttl = NET_DNS_TTL_MAX;
        expires = w->now + ((__u64) ttl + w->grace_sec) * 1000000000ULL;

#pragma unroll
        for (__u32 r = 0; r < DNS_FOUND_MAX; r++) {
                void *map;
                __u64 *cur;

                if (r >= s->nfound)
                        break;
                k.port = s->found[r].port;
                /* The same answer again: a later expiry in place, which costs far less than
                 * an update (a new LRU node each time). A call for each map, so that the
                 * verifier can inline the lookups. */
                if (s->found[r].deny) {
                        map = &learned_deny;
                        cur = bpf_map_lookup_elem(&learned_deny, &k);
                } else {
                        map = &learned_allow;
                        cur = bpf_map_lookup_elem(&learned_allow, &k);
                }
                if (cur) {
                        if (*cur != 0 && *cur < expires)
                                *cur = expires;
                        continue;
                }
                (void) bpf_map_update_elem(map, &k, &expires, BPF_ANY);
        }
}

static long walk_answer(__u32 i, struct answer_walk *w) {
        struct dns_scratch *s = w->s;
        __u32 p = w->pos, owner, type, class, ttl, rdlen;
        __u32 a[4] = {};

        if (i >= w->count)
                return 1;
        if (p + 12 > w->size || (msg8(s, p) & 0xc0) != 0xc0) {
                w->slow = 1;                    /* an owner written out: the helper reads it */
                return 1;
        }
        owner = (msg8(s, p) & 0x3f) << 8 | msg8(s, p + 1);
        type = msg16(s, p + 2);
        class = msg16(s, p + 4);
        ttl = msg32(s, p + 6);
        rdlen = msg16(s, p + 10);
        p += 12;
        if (p + rdlen > w->size) {
                w->slow = 1;
                return 1;
        }
        w->pos = p + rdlen;

        if (class != DNS_CLASS_IN || (type != DNS_TYPE_A && type != DNS_TYPE_AAAA && type != DNS_TYPE_CNAME))
                return 0;
        if (!chain_has(s, owner)) {
                /* perhaps a name of the chain, written at another place: the helper knows */
                w->slow = 1;
                return 1;
        }
        if (type == DNS_TYPE_CNAME) {
                chain_add(w, p);
                if (rdlen >= 2 && (msg8(s, p) & 0xc0) == 0xc0)
                        chain_add(w, (msg8(s, p) & 0x3f) << 8 | msg8(s, p + 1));
                return w->slow;
        }
        if (type == DNS_TYPE_A && rdlen == 4) {
                a[2] = bpf_htonl(0xffff);
                a[3] = bpf_htonl(msg32(s, p));
        } else if (type == DNS_TYPE_AAAA && rdlen == 16) {
                a[0] = bpf_htonl(msg32(s, p));
                a[1] = bpf_htonl(msg32(s, p + 4));
                a[2] = bpf_htonl(msg32(s, p + 8));
                a[3] = bpf_htonl(msg32(s, p + 12));
        } else
                return 0;                       /* malformed: the helper's parser skips it too */
        learn(w, a, ttl);
        return 0;
}

/* 1: the socket may have the answer now; 0: it is for the helper. */
static __always_inline int learn_answer(struct dns_scratch *s, const struct net_layer *l) {
        struct name_match m = {};
        struct answer_walk w = {};
        __u32 size = s->ev.len, flags = msg16(s, 2), n, ancount;

        /* not an answer to a standard query, truncated (asked again over TCP, through the
         * proxy), an error, or empty: nothing to learn */
        if (!(flags & 0x8000) || (flags & 0x7800) || (flags & 0x0200) || (flags & 0x000f) ||
            msg16(s, 4) != 1)
                return 1;
        ancount = msg16(s, 6);
        if (ancount == 0)
                return 1;
        if (ancount > DNS_ANSWERS_MAX)
                return 0;
        n = match_name(s, l, DNS_HEADER, size, &m);
        if (n == 0)
                return 0;
        if (s->nfound == 0)
                return 1;                       /* no rule covers it (never asked through here) */
        if (s->overflow)
                return 0;

        w.s = s;
        w.sid = l->sid;
        w.now = bpf_ktime_get_ns();
        w.grace_sec = l->grace_sec;
        w.size = size;
        w.pos = DNS_HEADER + n + 4;
        w.count = ancount;
        s->chain[0] = DNS_HEADER;
        s->nchain = 1;
        (void) bpf_loop(DNS_ANSWERS_MAX, walk_answer, &w, 0);
        return w.slow ? 0 : 1;
}

/* An answer from a direct resolver: learned from here, or handed to the helper. */
static __always_inline int dns_answer(struct __sk_buff *skb, struct net_layer *l) {
        struct dns_scratch *s;
        struct udp_view u = {};
        int verdict;

        if (!udp_view(skb, &u) || u.sport != DNS_PORT || u.ipv6)
                return 1;
        if (!is_direct_resolver(l, u.saddr) || skb->mark == NET_DNS_MARK)
                return 1;

        s = scratch_claim();
        if (!s)
                return 1;
        if (u.len > NET_DNS_MSG_MAX || load_msg(skb, &u, s) < 0) {
                /* too big to hand over (or no DNS message): the socket gets it, unlearned */
                scratch_release(s);
                return 1;
        }
        verdict = learn_answer(s, l);
        if (verdict == 0)
                send_to_helper(s, l, NET_EVENT_DNS_ANSWER, &u);
        scratch_release(s);
        return verdict;
}

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
