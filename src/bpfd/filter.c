/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <assert.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>

#include "bpfd/filter.h"
#include "bpfd/name-key.h"
#include "scudo-net.skel.h"
#include "util/log.h"
#include "util/macro.h"

struct Filter {
        struct scudo_net *skel;
        struct ring_buffer *rb;
        FilterEventCallback cb;
        FilterDnsCallback dns_cb;
        void *userdata;
        bool comm;
};

typedef struct Attachment {
        size_t prog_offset;             /* offsetof(struct scudo_net, progs.X) */
        enum bpf_attach_type type;
} Attachment;

#define PROG(name) offsetof(struct scudo_net, progs.name)

/* sock_create first: from then on the cgroup can make no socket until it is configured. */
static const Attachment attachments[] = {
        { PROG(scudo_sock_create), BPF_CGROUP_INET_SOCK_CREATE },
        { PROG(scudo_connect4), BPF_CGROUP_INET4_CONNECT },
        { PROG(scudo_connect6), BPF_CGROUP_INET6_CONNECT },
        { PROG(scudo_sendmsg4), BPF_CGROUP_UDP4_SENDMSG },
        { PROG(scudo_sendmsg6), BPF_CGROUP_UDP6_SENDMSG },
        { PROG(scudo_recvmsg4), BPF_CGROUP_UDP4_RECVMSG },
        { PROG(scudo_recvmsg6), BPF_CGROUP_UDP6_RECVMSG },
        { PROG(scudo_getpeername4), BPF_CGROUP_INET4_GETPEERNAME },
        { PROG(scudo_getpeername6), BPF_CGROUP_INET6_GETPEERNAME },
        { PROG(scudo_ingress), BPF_CGROUP_INET_INGRESS },
};

/* The DNS fast path (NET_LAYER_DNS_DIRECT): it sees every packet sent, so only where needed. */
static const Attachment dns_attachments[] = {
        { PROG(scudo_dns_egress), BPF_CGROUP_INET_EGRESS },
};

static int prog_fd(Filter *f, const Attachment *a) {
        struct bpf_program *p = *(struct bpf_program **) ((uint8_t *) f->skel + a->prog_offset);

        return bpf_program__fd(p);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
        if (level == LIBBPF_DEBUG && log_get_max_level() < LOG_LEVEL_DEBUG)
                return 0;
        if (level == LIBBPF_INFO && log_get_max_level() < LOG_LEVEL_INFO)
                return 0;
        /* libbpf's own format strings, passed through */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        return vfprintf(stderr, fmt, ap);
#pragma GCC diagnostic pop
}

/* bpf_get_current_comm() is refused in cgroup socket programs without CAP_PERFMON. */
static bool have_perfmon(void) {
        cap_flag_value_t v = CAP_CLEAR;
        cap_t caps;

        caps = cap_get_proc();
        if (!caps)
                return false;
        if (cap_get_flag(caps, CAP_PERFMON, CAP_EFFECTIVE, &v) < 0 || v != CAP_SET)
                (void) cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &v);
        cap_free(caps);
        return v == CAP_SET;
}

static int on_sample(void *ctx, void *data, size_t size) {
        const size_t dns_header = offsetof(struct net_dns_event, msg);
        Filter *f = ctx;
        struct net_event e;
        uint32_t kind;

        if (size < offsetof(struct net_event, kind) + sizeof(kind))
                return 0;
        memcpy(&kind, (uint8_t *) data + offsetof(struct net_event, kind), sizeof(kind));
        if (kind == NET_EVENT_DNS_QUERY || kind == NET_EVENT_DNS_ANSWER) {
                const struct net_dns_event *d = data;

                /* the record ends where the message does: len is checked against it */
                if (size < dns_header || d->len > NET_DNS_MSG_MAX || dns_header + d->len > size)
                        return 0;
                return f->dns_cb ? f->dns_cb(d, f->userdata) : 0;
        }
        if (size < sizeof(e))
                return 0;
        memcpy(&e, data, sizeof(e));
        return f->cb ? f->cb(&e, f->userdata) : 0;
}

int filter_new(FilterEventCallback cb, FilterDnsCallback dns_cb, void *userdata, Filter **ret) {
        _cleanup_free_ Filter *f = NULL;
        struct stat st;
        int k;

        libbpf_set_print(libbpf_print);

        f = calloc(1, sizeof(Filter));
        if (!f)
                return -ENOMEM;
        f->cb = cb;
        f->dns_cb = dns_cb;
        f->userdata = userdata;

        f->skel = scudo_net__open();
        if (!f->skel)
                return negative_errno();

        f->comm = have_perfmon();
        f->skel->rodata->report_comm = f->comm;
        if (stat("/proc/self/ns/pid", &st) >= 0) {
                f->skel->rodata->pidns_dev = (uint64_t) st.st_dev;
                f->skel->rodata->pidns_ino = (uint64_t) st.st_ino;
        }

        k = scudo_net__load(f->skel);
        if (k < 0) {
                scudo_net__destroy(f->skel);
                return k;
        }

        f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.events), on_sample, f, NULL);
        if (!f->rb) {
                k = negative_errno();
                scudo_net__destroy(f->skel);
                return k;
        }

        *ret = TAKE_PTR(f);
        return 0;
}

Filter *filter_free(Filter *f) {
        if (!f)
                return NULL;
        ring_buffer__free(f->rb);
        scudo_net__destroy(f->skel);
        free(f);
        return NULL;
}

bool filter_reports_comm(Filter *f) {
        return f->comm;
}

static void detach_list(Filter *f, int cgroup_fd, const Attachment *list, size_t n) {
        for (size_t i = n; i-- > 0; )
                (void) bpf_prog_detach2(prog_fd(f, &list[i]), cgroup_fd, list[i].type);
}

static int attach_list(Filter *f, int cgroup_fd, const Attachment *list, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int k;

                k = bpf_prog_attach(prog_fd(f, &list[i]), cgroup_fd, list[i].type, BPF_F_ALLOW_MULTI);
                if (k < 0) {
                        k = k == -1 ? negative_errno() : k;
                        detach_list(f, cgroup_fd, list, i);
                        return k;
                }
        }
        return 0;
}

int filter_attach(Filter *f, int cgroup_fd, bool dns_direct) {
        int k;

        k = attach_list(f, cgroup_fd, attachments, ELEMENTSOF(attachments));
        if (k < 0 || !dns_direct)
                return k;
        k = attach_list(f, cgroup_fd, dns_attachments, ELEMENTSOF(dns_attachments));
        if (k < 0)
                detach_list(f, cgroup_fd, attachments, ELEMENTSOF(attachments));
        return k;
}

void filter_detach(Filter *f, int cgroup_fd, bool dns_direct) {
        if (dns_direct)
                detach_list(f, cgroup_fd, dns_attachments, ELEMENTSOF(dns_attachments));
        detach_list(f, cgroup_fd, attachments, ELEMENTSOF(attachments));
}

int filter_layer_get(Filter *f, uint64_t cgid, struct net_layer *ret) {
        return bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.layers), &cgid, ret) < 0 ? negative_errno() : 0;
}

int filter_layer_set(Filter *f, uint64_t cgid, const struct net_layer *layer) {
        return bpf_map_update_elem(bpf_map__fd(f->skel->maps.layers), &cgid, layer, BPF_EXIST) < 0 ?
                negative_errno() : 0;
}

static struct net_lpm_key lpm_key(uint64_t sid, uint16_t port, const uint8_t addr[16], unsigned prefixlen) {
        struct net_lpm_key k = {
                .prefixlen = NET_LPM_FIXED_BITS + prefixlen,
                .sid_lo = (uint32_t) sid,
                .sid_hi = (uint32_t) (sid >> 32),
                .port = port,
        };

        memcpy(k.addr, addr, sizeof(k.addr));
        return k;
}

int filter_rule_add(Filter *f, bool deny, uint64_t sid, uint16_t port, const uint8_t addr[16],
                    unsigned prefixlen) {
        struct net_lpm_key k = lpm_key(sid, port, addr, prefixlen);
        int fd = bpf_map__fd(deny ? f->skel->maps.deny_rules : f->skel->maps.allow_rules);
        uint8_t set = NET_RULE_SET;

        return bpf_map_update_elem(fd, &k, &set, BPF_ANY) < 0 ? negative_errno() : 0;
}

int filter_rule_reached(Filter *f, uint64_t sid, uint16_t port, const uint8_t addr[16], unsigned prefixlen) {
        struct net_lpm_key k = lpm_key(sid, port, addr, prefixlen);
        uint8_t v;

        /* A lookup in a trie finds the longest prefix up to the key's: the rule's own entry. */
        if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.allow_rules), &k, &v) < 0)
                return negative_errno();
        return v == NET_RULE_REACHED;
}

int filter_learned_add(Filter *f, bool deny, uint64_t sid, uint16_t port, const uint8_t addr[16],
                       uint64_t expires_ns) {
        struct net_exact_key k = {
                .sid = sid,
                .port = port,
        };
        int fd = bpf_map__fd(deny ? f->skel->maps.learned_deny : f->skel->maps.learned_allow);

        /* The latest answer for an address sets its expiry. */
        memcpy(k.addr, addr, sizeof(k.addr));
        return bpf_map_update_elem(fd, &k, &expires_ns, BPF_ANY) < 0 ? negative_errno() : 0;
}

int filter_name_set(Filter *f, uint64_t sid, bool domain, const char *name,
                    const struct net_name_rules *rules) {
        struct net_name_key k;
        int fd = bpf_map__fd(domain ? f->skel->maps.name_domains : f->skel->maps.name_hosts);
        int r;

        r = net_name_key_make(sid, name, &k);
        if (r < 0)
                return r;
        return bpf_map_update_elem(fd, &k, rules, BPF_ANY) < 0 ? negative_errno() : 0;
}

int filter_name_reached(Filter *f, uint64_t sid, bool domain, const char *name) {
        struct net_name_key k;
        struct net_name_rules v;
        int fd = bpf_map__fd(domain ? f->skel->maps.name_domains : f->skel->maps.name_hosts);
        int r;

        r = net_name_key_make(sid, name, &k);
        if (r < 0)
                return r;
        if (bpf_map_lookup_elem(fd, &k, &v) < 0)
                return negative_errno();
        return v.reached != 0;
}

/* Collects the keys of `fd` that `match` selects, then deletes them: deleting while walking
 * with get_next_key could skip entries. */
static int delete_matching(int fd, size_t key_size, bool (*match)(const void *key, int fd, const void *data),
                           const void *data) {
        _cleanup_free_ uint8_t *keys = NULL;
        uint8_t prev[sizeof(struct net_name_key)], cur[sizeof(struct net_name_key)];
        size_t n = 0, allocated = 0;
        bool first = true;
        int removed = 0;

        assert(key_size <= sizeof(prev));
        for (;;) {
                if (bpf_map_get_next_key(fd, first ? NULL : prev, cur) < 0)
                        break;
                first = false;
                if (match(cur, fd, data)) {
                        if (n == allocated) {
                                size_t a = MAX(allocated * 2, 64U);
                                uint8_t *b = realloc(keys, a * key_size);

                                if (!b)
                                        return -ENOMEM;
                                keys = b;
                                allocated = a;
                        }
                        memcpy(keys + n * key_size, cur, key_size);
                        n++;
                }
                memcpy(prev, cur, key_size);
        }
        for (size_t i = 0; i < n; i++)
                if (bpf_map_delete_elem(fd, keys + i * key_size) >= 0)
                        removed++;
        return removed;
}

static bool lpm_key_is_sid(const void *key, int fd, const void *data) {
        const struct net_lpm_key *k = key;
        uint64_t sid = *(const uint64_t *) data;

        return k->sid_lo == (uint32_t) sid && k->sid_hi == (uint32_t) (sid >> 32);
}

/* net_exact_key and net_name_key: the sid comes first. */
static bool key_starts_with_sid(const void *key, int fd, const void *data) {
        uint64_t sid;

        memcpy(&sid, key, sizeof(sid));
        return sid == *(const uint64_t *) data;
}

static bool exact_key_expired(const void *key, int fd, const void *data) {
        uint64_t expires;

        return bpf_map_lookup_elem(fd, key, &expires) >= 0 && expires != 0 &&
                expires <= *(const uint64_t *) data;
}

int filter_forget(Filter *f, uint64_t sid) {
        const struct {
                struct bpf_map *map;
                size_t key_size;
                bool (*match)(const void *key, int fd, const void *data);
        } maps[] = {
                { f->skel->maps.allow_rules, sizeof(struct net_lpm_key), lpm_key_is_sid },
                { f->skel->maps.deny_rules, sizeof(struct net_lpm_key), lpm_key_is_sid },
                { f->skel->maps.learned_allow, sizeof(struct net_exact_key), key_starts_with_sid },
                { f->skel->maps.learned_deny, sizeof(struct net_exact_key), key_starts_with_sid },
                { f->skel->maps.verdicts, sizeof(struct net_exact_key), key_starts_with_sid },
                { f->skel->maps.name_hosts, sizeof(struct net_name_key), key_starts_with_sid },
                { f->skel->maps.name_domains, sizeof(struct net_name_key), key_starts_with_sid },
        };
        int n = 0;

        for (size_t i = 0; i < ELEMENTSOF(maps); i++) {
                int k = delete_matching(bpf_map__fd(maps[i].map), maps[i].key_size, maps[i].match, &sid);

                n += MAX(k, 0);
        }
        return n;
}

int filter_expire(Filter *f, uint64_t now_ns) {
        int n = 0, k;

        k = delete_matching(bpf_map__fd(f->skel->maps.learned_allow), sizeof(struct net_exact_key),
                            exact_key_expired, &now_ns);
        n += MAX(k, 0);
        k = delete_matching(bpf_map__fd(f->skel->maps.learned_deny), sizeof(struct net_exact_key),
                            exact_key_expired, &now_ns);
        n += MAX(k, 0);
        return n;
}

int filter_events_fd(Filter *f) {
        return ring_buffer__epoll_fd(f->rb);
}

int filter_events_consume(Filter *f) {
        int k = ring_buffer__consume(f->rb);

        return k < 0 ? k : 0;
}

uint64_t filter_events_lost(Filter *f) {
        return __atomic_load_n(&f->skel->bss->events_lost, __ATOMIC_RELAXED);
}
