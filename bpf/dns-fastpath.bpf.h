/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The DNS fast path of scudo's network filter: a part of scudo-net.bpf.c, which includes it
 * once, after the maps and helpers it uses. It is not a compilation unit of its own because
 * the skeleton is made from one object, and the ingress program there (which also judges
 * incoming traffic) reads answers with dns_answer() below, inlined like every helper here.
 *
 * The egress program is attached only with NET_LAYER_DNS_DIRECT; the ingress one, which also
 * judges incoming traffic (scudo-net.bpf.c), to every sandbox with rules, and reads answers only with
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

#pragma once

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
        bool mark;                              /* lookup_pattern() */
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

/* `mark`: an answer is being read, so its question was let through; the pattern is marked
 * as reached (net_name_rules). */
static __always_inline void lookup_pattern(struct dns_scratch *s, bool host, bool mark) {
        struct net_name_rules *v;

        /* a call for each map, so that the verifier can inline each lookup */
        if (host)
                v = bpf_map_lookup_elem(&name_hosts, &s->key);
        else
                v = bpf_map_lookup_elem(&name_domains, &s->key);
        if (!v)
                return;
        collect(s, v);
        if (mark && !v->reached)
                v->reached = 1;
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
                                lookup_pattern(s, true, m->mark);
                } else if (m->domains & (1ULL << held))
                        lookup_pattern(s, false, m->mark);
        }
        return 0;
}

/* Finds the rules for the name that starts at `start`. Returns its wire length, or 0 when
 * the name cannot be matched here (compressed, longer than a key, odd bytes). */
static __always_inline __u32 match_name(struct dns_scratch *s, const struct net_layer *l, __u32 start,
                                        __u32 size, struct name_match *m, bool mark) {
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
        m->mark = mark;
        if (m->len > NET_NAME_KEY_SIZE)
                return 0;

        s->key.sid = l->sid;
#pragma unroll
        for (int i = 0; i < NET_NAME_KEY_SIZE / 8; i++)
                w[i] = 0;
        (void) bpf_loop(NET_NAME_KEY_SIZE, match_name_byte, m, 0);
        return m->len;
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
        n = match_name(s, l, DNS_HEADER, size, &m, false);
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
        n = match_name(s, l, DNS_HEADER, size, &m, true);
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
