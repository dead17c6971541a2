/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Types shared by the network filter programs (scudo-net.bpf.c) and scudo-bpfd, which fills
 * their maps and reads their events. Fixed-width fields only, laid out so that no padding
 * is left to chance: both sides must agree byte for byte.
 *
 * Addresses are always kept as 16 bytes in network order. IPv4 is stored v4-mapped
 * (::ffff:a.b.c.d) so that one rule and one lookup cover an AF_INET socket and an AF_INET6
 * socket talking to the same IPv4 host. */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The sandbox id is the cgroup id (the directory's inode number) of the cgroup the programs
 * were attached to. Every rule key starts with it, so that one map serves all sandboxes. */

/* Rule tries: key = sid (64 bits) + port (16) + zero (16) + address (128). A rule for a CIDR
 * has prefixlen 96 + its length in the 128-bit space; a rule for "any port" uses port 0. */
struct net_lpm_key {
        __u32 prefixlen;
        __u32 sid_lo;
        __u32 sid_hi;
        __u16 port;             /* host order; 0 = any port */
        __u16 zero;
        __u32 addr[4];
};

#define NET_LPM_FIXED_BITS 96
#define NET_LPM_FULL_BITS (NET_LPM_FIXED_BITS + 128)

/* The value of a rule's entry: NET_RULE_SET as the helper stores it; in allow_rules the
 * programs make it NET_RULE_REACHED when the rule lets something through (for the cached
 * verdict: the first time), which the helper reads at the end of a run (BpfdUsage). */
#define NET_RULE_SET 1
#define NET_RULE_REACHED 2

/* Addresses learned from DNS answers: exact entries whose value is the CLOCK_MONOTONIC time
 * (ns) after which they no longer count. */
struct net_exact_key {
        __u64 sid;
        __u16 port;             /* host order; 0 = any port */
        __u16 zero1;
        __u32 zero2;
        __u32 addr[4];
};

#define NET_DNS_DIRECT_MAX 3             /* glibc's MAXNS */

/* Per-attachment configuration, in the cgroup storage of the cgroup the programs are
 * attached to. A program run for a process below that cgroup finds the storage of the
 * attachment it belongs to, so nested attachments each apply their own rules. While `sid`
 * is 0 (attached, not yet configured) everything is refused. */
struct net_layer {
        __u64 sid;
        __u32 proxy4;           /* the sandbox's DNS proxy, IPv4, network order; 0 = none */
        __u32 flags;
        __u16 proxy6_port;      /* its IPv6 side on [::1], network order; 0 = none */
        __u16 zero1;
        __u32 grace_sec;        /* NET_LAYER_DNS_DIRECT: an answer's addresses last TTL + this */
        /* NET_LAYER_DNS_DIRECT: the resolvers on this host's loopback (127.0.0.0/8, network
         * order; 0 = none) that UDP queries go to as they are, past the proxy. */
        __u32 direct4[NET_DNS_DIRECT_MAX];
        __u32 zero3;
        /* Written by the programs: how many DNS messages this sandbox handed to the helper
         * in the current window of NET_DNS_WINDOW_SHIFT (a flood from one sandbox must not
         * fill the ring buffer that all of them share). */
        __u64 dns_window;
        __u32 dns_events;
        __u32 zero4;
        /* NET_LAYER_DNS_DIRECT: bit N-1 is set when some exact (host) or "*." (domain) name
         * pattern has N labels; the programs look up only those label counts. */
        __u64 host_labels;
        __u64 domain_labels;
};

#define NET_DNS_WINDOW_SHIFT 27                 /* about 134 ms */
#define NET_DNS_EVENTS_PER_WINDOW 64U

#define NET_LAYER_DNS_FILTERED (1U << 0)
#define NET_LAYER_LEARN_ALLOW  (1U << 1)       /* has allow rules for names */
#define NET_LAYER_LEARN_DENY   (1U << 2)       /* has deny rules for names with a port */
#define NET_LAYER_DNS_DIRECT   (1U << 3)       /* the DNS fast path: see "Host names" below */

/* What the rule tries say about one sandbox, address and port, kept after the first lookup
 * (key: struct net_exact_key). The tries never change once a sandbox is set up, so an entry
 * never goes stale; only the DNS-learned maps, consulted on every call, change. */
enum {
        NET_STATIC_NONE = 1,
        NET_STATIC_ALLOW = 2,
        NET_STATIC_DENY = 3,
};
#define NET_VERDICTS_MAX 65536

/* Where a redirected DNS query was originally sent, per socket, so that replies and
 * getpeername() show that server and not the proxy. */
struct net_orig {
        __u32 addr[4];          /* AF_INET socket: addr[3] holds the address */
        __u16 port;             /* network order */
        __u16 family;
};

enum {
        NET_EVENT_CONNECT = 1,  /* connect() refused */
        NET_EVENT_SENDMSG = 2,  /* sendto()/sendmsg() to an address refused */
        NET_EVENT_SOCKET = 3,   /* socket() of a kind other than TCP/UDP refused */
        NET_EVENT_INBOUND = 6,  /* a connection or datagram from the network refused */
};

struct net_event {
        __u64 sid;
        __u32 kind;
        __u32 pid;
        __u32 addr[4];
        __u16 port;             /* host order */
        __u8 protocol;          /* IPPROTO_* */
        __u8 family;            /* of the socket */
        __u32 sock_type;        /* NET_EVENT_SOCKET: SOCK_* */
        char comm[16];          /* empty when the loader may not read it */
};

#define NET_RULES_MAX 262144
#define NET_LEARNED_MAX 65536
#define NET_PROXY_PORT 53

/* Host names, the fast path (NET_LAYER_DNS_DIRECT). A UDP query to a resolver on this host's
 * loopback is not sent to the proxy: the cgroup's egress program reads its question and lets
 * it go only when it is plainly a query for a name the rules allow, and the ingress program
 * reads the resolver's answer and puts its addresses into learned_allow/learned_deny before
 * the socket gets it. Anything these programs do not fully understand is dropped and passed
 * whole to the helper (struct net_dns_event), which deals with it as the proxy would and
 * sends the answer to the socket itself, from the resolver's address. */

/* A name rule's pattern: the name in wire format (length-prefixed labels and the final zero
 * byte), lower case, right-aligned in `name` with zeros before it. Right-aligned, so that
 * the key of every parent of a name is the name's own key with its first labels zeroed.
 * Names longer than a key (126 characters) never take the fast path: every lookup hashes
 * the whole key, and most names are far shorter. */
#define NET_NAME_KEY_SIZE 128
struct net_name_key {
        __u64 sid;
        __u8 name[NET_NAME_KEY_SIZE];
};

/* The rules of one pattern: "allowed.test:443" and "deny allowed.test:25" are two. */
#define NET_NAME_RULES_MAX 8
struct net_name_rule {
        __u16 port;             /* host order; 0 = any port */
        __u8 deny;
        __u8 zero;
};

struct net_name_rules {
        __u32 n;
        /* 0 as the helper stores it; 1 once the ingress program learned from an answer for a
         * name the pattern covers (a query the rules let through) */
        __u32 reached;
        struct net_name_rule rule[NET_NAME_RULES_MAX];
};

#define NET_NAMES_MAX 65536

/* DNS messages the programs dropped for the helper to handle: a query from the sandbox
 * (to `daddr`, the resolver, from `saddr`:`sport`, the sandbox's socket) or an answer from
 * the resolver to the sandbox (from `saddr`, to `daddr`:`dport`). */
enum {
        NET_EVENT_DNS_QUERY = 16,
        NET_EVENT_DNS_ANSWER = 17,
};

#define NET_DNS_MSG_MAX 4096
struct net_dns_event {
        __u64 sid;
        __u32 kind;             /* NET_EVENT_DNS_QUERY or NET_EVENT_DNS_ANSWER */
        __u32 pid;              /* QUERY: the process that sent it */
        __u32 saddr;            /* network order */
        __u32 daddr;
        __u16 sport;            /* network order */
        __u16 dport;
        __u32 len;              /* bytes of msg */
        char comm[16];          /* QUERY: empty when the loader may not read it */
        __u8 msg[NET_DNS_MSG_MAX];
};

/* What the helper sets on the answers it sends from a resolver's address, so that the
 * ingress program lets them through as they are. Setting a mark needs CAP_NET_ADMIN. */
#define NET_DNS_MARK 0x5c0d0053U
/* The most an answer's TTL keeps an address, in seconds. */
#define NET_DNS_TTL_MAX (24U * 3600U)
