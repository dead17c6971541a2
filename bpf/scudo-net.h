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

/* Addresses learned from DNS answers: exact entries whose value is the CLOCK_MONOTONIC time
 * (ns) after which they no longer count. */
struct net_exact_key {
        __u64 sid;
        __u16 port;             /* host order; 0 = any port */
        __u16 zero1;
        __u32 zero2;
        __u32 addr[4];
};

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
        __u32 zero2;
};

#define NET_LAYER_DNS_FILTERED (1U << 0)
#define NET_LAYER_LEARN_ALLOW  (1U << 1)       /* has allow rules for names */
#define NET_LAYER_LEARN_DENY   (1U << 2)       /* has deny rules for names with a port */

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
