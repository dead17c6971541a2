/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>

#include "bpfd/cgroup.h"
#include "bpfd/dns-proxy.h"
#include "bpfd/manager.h"
#include "net/net-rule.h"
#include "util/log.h"
#include "util/macro.h"

/* At most this many reports per cgroup and second go to the client; the rest are counted. */
#define REPORTS_PER_SECOND 50U
/* File events are candidates the kernel could not rule out (bpf/scudo-files.bpf.c), to be
 * judged by scudo; the kernel has a share of its own per sandbox. */
#define FILE_EVENTS_PER_SECOND 2000U
#define MAX_TTL_SEC (24U * 3600U)

void rule_set_done(RuleSet *s) {
        free(s->addresses);
        free(s->names);
        *s = (RuleSet) {};
}

static int grow(void **p, size_t *allocated, size_t n, size_t size) {
        size_t a;
        void *q;

        if (n < *allocated)
                return 0;
        a = MAX(*allocated * 2, 16U);
        q = reallocarray(*p, a, size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *allocated = a;
        return 0;
}

int rule_set_add(const BpfdCheckedRule *r, void *userdata) {
        RuleSet *s = userdata;
        /* every rule comes through here, in the order sent */
        uint32_t index = (uint32_t) (s->n_addresses + s->n_names);
        int k;

        if (r->kind == BPFD_RULE_ADDRESS) {
                k = grow((void **) &s->addresses, &s->allocated_addresses, s->n_addresses,
                         sizeof(AddressRule));
                if (k < 0)
                        return k;
                s->addresses[s->n_addresses] = (AddressRule) {
                        .action = r->action,
                        .prefixlen = r->prefixlen,
                        .port = r->port,
                        .index = index,
                };
                memcpy(s->addresses[s->n_addresses].addr, r->addr, 16);
                s->n_addresses++;
                return 0;
        }

        k = grow((void **) &s->names, &s->allocated_names, s->n_names, sizeof(NameRule));
        if (k < 0)
                return k;
        s->names[s->n_names] = (NameRule) {
                .action = r->action,
                .kind = r->kind,
                .port = r->port,
                .index = index,
        };
        /* checked by bpfd_parse_rules(): at most BPFD_NAME_MAX bytes */
        strncpy(s->names[s->n_names].name, r->name, BPFD_NAME_MAX);
        s->n_names++;
        return 0;
}

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U;
}

FilteredCgroup *filtered_cgroup_find(Manager *m, uint64_t sid) {
        for (FilteredCgroup *fc = m->cgroups; fc; fc = fc->next)
                if (fc->sid == sid)
                        return fc;
        return NULL;
}

FilteredCgroup *filtered_cgroup_free(FilteredCgroup *fc) {
        Manager *m;

        if (!fc)
                return NULL;
        m = fc->manager;
        for (FilteredCgroup **p = &m->cgroups; *p; p = &(*p)->next)
                if (*p == fc) {
                        *p = fc->next;
                        m->n_cgroups--;
                        break;
                }
        if (fc->client) {
                client_keep_usage(fc->client, fc);
                fc->client->cgroup = NULL;
        }
        if (fc->files)
                file_reporter_unwatch(m->files, fc->sid);
        /* The attachments go with the cgroup; what is ours to clean are the map entries. */
        if (fc->network)
                (void) filter_forget(m->filter, fc->sid);
        dns_proxy_free(fc->proxy);
        free(fc->names);
        free(fc->addresses);
        free(fc->path);
        free(fc);
        return NULL;
}

static bool name_rule_matches(const NameRule *r, const char *name) {
        NetRule n = {
                .kind = r->kind == BPFD_RULE_HOST ? NET_RULE_HOST : NET_RULE_DOMAIN,
        };

        memcpy(n.name, r->name, sizeof(n.name));
        return net_rule_matches_name(&n, name);
}

int filtered_cgroup_check_name(FilteredCgroup *fc, const char *name, bool name_ok) {
        bool allowed = false;

        if (!name_ok)
                return -EPERM;
        for (size_t i = 0; i < fc->n_names; i++) {
                const NameRule *r = &fc->names[i];

                if (!name_rule_matches(r, name))
                        continue;
                /* A deny rule for every port of the name refuses it outright; one for some
                 * ports only is applied to its answers in filtered_cgroup_learn(). */
                if (r->action == BPFD_ACTION_DENY && r->port == 0)
                        return -EPERM;
                if (r->action == BPFD_ACTION_ALLOW)
                        allowed = true;
        }
        return allowed ? 0 : -EPERM;
}

int filtered_cgroup_learn(FilteredCgroup *fc, const char *name, const uint8_t addr[16], uint32_t ttl) {
        Manager *m = fc->manager;
        uint64_t expires;
        int r = 0;

        /* The answer's TTL, plus a grace period for programs that connect a little later
         * than they resolve; capped, so that no answer allows an address for days. */
        expires = now_usec(CLOCK_MONOTONIC) * 1000U +
                (uint64_t) (MIN(ttl, MAX_TTL_SEC) + m->dns_grace_sec) * 1000000000U;

        for (size_t i = 0; i < fc->n_names; i++) {
                NameRule *nr = &fc->names[i];
                int k;

                if (!name_rule_matches(nr, name))
                        continue;
                if (nr->action == BPFD_ACTION_ALLOW)
                        nr->reached = true;
                k = filter_learned_add(m->filter, nr->action == BPFD_ACTION_DENY, fc->sid, nr->port, addr,
                                       expires);
                if (k < 0)
                        r = k;
        }
        return r;
}

static void fill_comm(BpfdEvent *e) {
        char path[64], comm[sizeof(e->comm)] = "";
        ssize_t n;
        int fd;

        if (e->comm[0] || e->pid == 0)
                return;
        (void) snprintf(path, sizeof(path), "/proc/%u/comm", e->pid);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return;
        n = read(fd, comm, sizeof(comm) - 1);
        safe_close(fd);
        if (n <= 0)
                return;
        comm[n] = 0;
        comm[strcspn(comm, "\n")] = 0;
        memcpy(e->comm, comm, sizeof(e->comm));
}

static void log_event(const FilteredCgroup *fc, const BpfdEvent *e) {
        char a[INET6_ADDRSTRLEN] = "";

        if (log_get_max_level() < LOG_LEVEL_INFO)
                return;
        if (e->kind == BPFD_EVENT_DNS)
                log_info("refused DNS name '%s' (type %u) for %s", e->name, e->qtype, fc->path);
        else {
                (void) inet_ntop(AF_INET6, e->addr, a, sizeof(a));
                log_info("refused kind=%u dst=[%s]:%u proto=%u pid=%u comm=%.16s for %s",
                         e->kind, a, e->port, e->protocol, e->pid, e->comm, fc->path);
        }
}

void filtered_cgroup_report(FilteredCgroup *fc, const BpfdEvent *event) {
        BpfdEvent e = *event;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        fill_comm(&e);
        log_event(fc, &e);

        if (!fc->client)
                return;

        if (now - fc->window_start >= 1000000U) {
                if (fc->lost > 0) {
                        BpfdEvent lost = {
                                .header = e.header,
                                .kind = BPFD_EVENT_LOST,
                                .count = fc->lost,
                        };

                        if (client_send_event(fc->client, &lost) >= 0)
                                fc->lost = 0;
                }
                fc->window_start = now;
                fc->window_count = 0;
        }
        if (fc->window_count >= REPORTS_PER_SECOND || client_send_event(fc->client, &e) < 0) {
                fc->lost++;
                return;
        }
        fc->window_count++;
}

void filtered_cgroup_report_dns(FilteredCgroup *fc, const char *name, uint16_t qtype, uint32_t pid,
                                const char *comm) {
        BpfdEvent e = {
                .header = {
                        .magic = BPFD_MAGIC,
                        .version = BPFD_VERSION,
                        .type = BPFD_MSG_EVENT,
                        .size = sizeof(BpfdEvent),
                },
                .kind = BPFD_EVENT_DNS,
                .pid = pid,
                .qtype = qtype,
        };

        (void) snprintf(e.name, sizeof(e.name), "%s", name);
        if (comm)
                (void) snprintf(e.comm, sizeof(e.comm), "%s", comm);
        filtered_cgroup_report(fc, &e);
}

void filtered_cgroup_report_file(FilteredCgroup *fc, const struct file_event *fe) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        BpfdFileEvent e = {
                .header = {
                        .magic = BPFD_MAGIC,
                        .version = BPFD_VERSION,
                        .type = BPFD_MSG_FILE_EVENT,
                        .size = sizeof(BpfdFileEvent),
                },
                .nr = fe->nr,
                .flags = fe->flags,
                .error = fe->err,
                .pid = fe->pid,
                .dirfd = fe->dirfd,
        };

        if (!fc->client)
                return;
        if (now - fc->file_window_start >= 1000000U) {
                fc->file_window_start = now;
                fc->file_window_count = 0;
        }
        fc->file_lost += fe->dropped + fe->ring_lost;
        fc->file_lost_by.sandbox += fe->dropped;
        fc->file_lost_by.ring += fe->ring_lost;
        if (fc->file_window_count >= FILE_EVENTS_PER_SECOND) {
                fc->file_lost++;
                fc->file_lost_by.helper++;
                return;
        }
        if (fc->file_lost > 0) {
                BpfdFileLost *l = &fc->file_lost_by;

                l->header = (BpfdHeader) {
                        .magic = BPFD_MAGIC,
                        .version = BPFD_VERSION,
                        .type = BPFD_MSG_FILE_LOST,
                        .size = sizeof(BpfdFileLost),
                };
                if (client_send_file_lost(fc->client, l) < 0) {
                        fc->file_lost++;
                        fc->file_lost_by.helper++;
                        return;
                }
        }
        e.dropped = fc->file_lost;
        memcpy(e.comm, fe->comm, sizeof(e.comm));
        e.comm[sizeof(e.comm) - 1] = 0;
        static_assert(sizeof(e.path) == sizeof(fe->path), "file event paths");
        memcpy(e.path, fe->path, sizeof(e.path));
        e.path[sizeof(e.path) - 1] = 0;
        if (client_send_file_event(fc->client, &e) < 0) {
                /* a breakdown that went out is sent again, whole, with the next one */
                fc->file_lost++;
                fc->file_lost_by.helper++;
                return;
        }
        fc->file_lost = 0;
        fc->file_lost_by = (BpfdFileLost) {};
        fc->file_window_count++;
}

static void set_bit(uint8_t reached[static BPFD_RULES_MAX / 8], uint32_t i) {
        if (i < BPFD_RULES_MAX)
                reached[i / 8] |= (uint8_t) (1U << (i % 8));
}

void filtered_cgroup_usage(FilteredCgroup *fc, uint8_t reached[static BPFD_RULES_MAX / 8]) {
        Manager *m = fc->manager;

        if (!fc->network)
                return;
        for (size_t i = 0; i < fc->n_addresses; i++) {
                const AddressRule *r = &fc->addresses[i];

                if (r->action == BPFD_ACTION_ALLOW &&
                    filter_rule_reached(m->filter, fc->sid, r->port, r->addr, r->prefixlen) > 0)
                        set_bit(reached, r->index);
        }
        /* Names: what went through the proxy (or the helper's part of the fast path) is
         * marked here, what the fast path answered in the kernel in its map. */
        for (size_t i = 0; i < fc->n_names; i++) {
                const NameRule *r = &fc->names[i];

                if (r->action != BPFD_ACTION_ALLOW)
                        continue;
                if (r->reached ||
                    (fc->dns_direct &&
                     filter_name_reached(m->filter, fc->sid, r->kind == BPFD_RULE_DOMAIN, r->name) > 0))
                        set_bit(reached, r->index);
        }
}

static unsigned count_for_uid(Manager *m, uid_t uid) {
        unsigned n = 0;

        for (FilteredCgroup *fc = m->cgroups; fc; fc = fc->next)
                n += fc->uid == uid;
        return n;
}

static int add_address_rules(Manager *m, const FilteredCgroup *fc) {
        for (size_t i = 0; i < fc->n_addresses; i++) {
                const AddressRule *r = &fc->addresses[i];
                int k;

                k = filter_rule_add(m->filter, r->action == BPFD_ACTION_DENY, fc->sid, r->port, r->addr,
                                    r->prefixlen);
                if (k < 0)
                        return k;
        }
        return 0;
}

/* network.dns = "open": the system's resolvers may be reached on port 53, as they are. */
static int add_resolver_rules(Manager *m, uint64_t sid) {
        Nameserver ns[RESOLV_CONF_MAX_SERVERS];
        int n;

        n = resolv_conf_load(m->resolv_conf, ns);
        for (int i = 0; i < n; i++) {
                int k;

                k = filter_rule_add(m->filter, false, sid, 53, ns[i].addr.sin6_addr.s6_addr, 128);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int compare_names(const void *a, const void *b) {
        const NameRule *x = *(const NameRule *const *) a, *y = *(const NameRule *const *) b;

        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        return strcmp(x->name, y->name);
}

static unsigned count_labels(const char *name) {
        unsigned n = 1;

        for (const char *p = name; *p; p++)
                n += *p == '.';
        return n;
}

/* The DNS fast path needs the name rules in the name maps, each pattern with at most
 * NET_NAME_RULES_MAX rules of its own, and which label counts the patterns have in the
 * layer. Returns 1 when they are there, 0 when this cgroup is to go without (every query
 * then goes through the proxy), <0 on error. */
static int add_name_patterns(Manager *m, FilteredCgroup *fc, struct net_layer *layer) {
        _cleanup_free_ const NameRule **sorted = NULL;
        size_t i = 0;

        sorted = calloc(fc->n_names, sizeof(NameRule *));
        if (!sorted)
                return -ENOMEM;
        for (size_t j = 0; j < fc->n_names; j++)
                sorted[j] = &fc->names[j];
        qsort(sorted, fc->n_names, sizeof(NameRule *), compare_names);

        while (i < fc->n_names) {
                struct net_name_rules v = {};
                size_t j = i;
                int k;

                for (; j < fc->n_names && compare_names(&sorted[i], &sorted[j]) == 0; j++) {
                        if (v.n >= NET_NAME_RULES_MAX)
                                return 0;
                        v.rule[v.n++] = (struct net_name_rule) {
                                .port = sorted[j]->port,
                                .deny = sorted[j]->action == BPFD_ACTION_DENY,
                        };
                }
                k = filter_name_set(m->filter, fc->sid, sorted[i]->kind == BPFD_RULE_DOMAIN, sorted[i]->name,
                                    &v);
                if (k == -EINVAL)
                        return 0;
                if (k < 0)
                        return k;
                /* a key holds at most 64 labels, so every pattern that fits has a bit */
                if (sorted[i]->kind == BPFD_RULE_DOMAIN)
                        layer->domain_labels |= UINT64_C(1) << ((count_labels(sorted[i]->name) - 1) & 63);
                else
                        layer->host_labels |= UINT64_C(1) << ((count_labels(sorted[i]->name) - 1) & 63);
                i = j;
        }
        return 1;
}

/* Sets the cgroup up for the DNS fast path when it can have it: a resolver on loopback,
 * a proxy that can answer for it, name rules that fit the maps. Not without name rules: every
 * name is refused then, and the egress program would only cost every packet its run. */
static void setup_dns_direct(Manager *m, FilteredCgroup *fc, struct net_layer *layer) {
        uint32_t direct[NET_DNS_DIRECT_MAX] = {};
        int k;

        if (fc->n_names == 0 || dns_proxy_direct_servers(fc->proxy, direct) == 0)
                return;
        k = add_name_patterns(m, fc, layer);
        if (k <= 0) {
                if (k < 0)
                        log_warning_errno(k, "cannot store the name rules of %s, its DNS goes "
                                          "through the proxy: %m", fc->path);
                return;         /* what was stored goes with filter_forget() */
        }
        memcpy(layer->direct4, direct, sizeof(layer->direct4));
        layer->grace_sec = m->dns_grace_sec;
        layer->flags |= NET_LAYER_DNS_DIRECT;
        fc->dns_direct = true;
}

static void watch_parent(Manager *m, int cgroup_fd) {
        char p[64];
        int fd;

        /* Removal of the cgroup shows up as IN_DELETE on its parent; the periodic sweep
         * catches anything this misses. */
        fd = openat(cgroup_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        (void) snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        (void) inotify_add_watch(m->inotify_fd, p, IN_DELETE | IN_ONLYDIR);
        safe_close(fd);
}

/* The network part of a filtered cgroup: its rules, its DNS proxy, the programs attached. */
static int setup_network(Manager *m, Client *c, FilteredCgroup *fc, int cgfd, const char **ret_reason) {
        struct net_layer layer = {};
        uint64_t cgid = fc->sid;
        int k;

        fc->network = true;     /* from here on filtered_cgroup_free() forgets its map entries */
        k = add_address_rules(m, fc);
        if (k < 0) {
                *ret_reason = "cannot store the rules";
                return k;
        }
        if (c->open.dns == BPFD_DNS_FILTERED) {
                k = dns_proxy_new(fc, &fc->proxy);
                if (k < 0) {
                        *ret_reason = "cannot set up the DNS proxy";
                        return k;
                }
                layer.proxy4 = dns_proxy_address(fc->proxy);
                layer.proxy6_port = dns_proxy_port6(fc->proxy);
                layer.flags |= NET_LAYER_DNS_FILTERED;
                setup_dns_direct(m, fc, &layer);
        } else {
                k = add_resolver_rules(m, cgid);
                if (k < 0) {
                        *ret_reason = "cannot store the resolver rules";
                        return k;
                }
        }

        for (size_t i = 0; i < fc->n_names; i++) {
                if (fc->names[i].action == BPFD_ACTION_ALLOW)
                        layer.flags |= NET_LAYER_LEARN_ALLOW;
                else if (fc->names[i].port != 0)
                        layer.flags |= NET_LAYER_LEARN_DENY;
        }

        k = filter_attach(m->filter, cgfd, fc->dns_direct);
        if (k < 0) {
                *ret_reason = "cannot attach the BPF programs";
                return k;
        }
        layer.sid = cgid;
        k = filter_layer_set(m->filter, cgid, &layer);
        if (k < 0) {
                filter_detach(m->filter, cgfd, fc->dns_direct);
                *ret_reason = "cannot configure the BPF programs";
                return k;
        }
        log_info("restricting %s (uid %u, %zu address rules, %zu name rules, dns %s)", fc->path,
                 (unsigned) fc->uid, fc->n_addresses, fc->n_names,
                 !fc->proxy     ? "open" :
                 fc->dns_direct ? "filtered, direct to loopback resolvers" :
                                  "filtered");
        return 0;
}

/* File reports are no restriction: when they cannot be had, the session goes on without them
 * and the client is told why. */
static const char *setup_files(Manager *m, Client *c, FilteredCgroup *fc) {
        int k;

        if (!m->files)
                return m->files_why;
        k = file_reporter_watch(m->files, fc->sid, c->file_prefixes, c->file_prefixes_size,
                                c->open.flags & BPFD_OPEN_RECORD);
        if (k < 0) {
                log_warning_errno(k, "cannot watch the file refusals of %s: %m", fc->path);
                return "the helper cannot watch this sandbox's file accesses (see its journal)";
        }
        fc->files = true;
        log_info("reporting the file refusals of %s", fc->path);
        return NULL;
}

int filtered_cgroup_create(Manager *m, Client *c, FilteredCgroup **ret, const char **ret_reason,
                           const char **ret_notice) {
        _cleanup_close_ int cgfd = -EBADF;
        struct net_layer layer = {};
        FilteredCgroup *fc = NULL;
        uint64_t cgid;
        int k;

        *ret_notice = NULL;

        k = bpfd_check_cgroup_path(c->open.path, c->uid, ret_reason);
        if (k < 0)
                return k;
        k = cgroup_open_owned(c->open.path, c->uid, &cgfd, &cgid, ret_reason);
        if (k < 0)
                return k;

        /* Never a second policy for one cgroup: it could only be a wider one. */
        if (filtered_cgroup_find(m, cgid) || filter_layer_get(m->filter, cgid, &layer) >= 0) {
                *ret_reason = "the cgroup already has a network policy";
                return -EBUSY;
        }
        if (count_for_uid(m, c->uid) >= BPFD_MAX_CGROUPS_PER_UID) {
                *ret_reason = "too many sandboxes for this user";
                return -EUSERS;
        }

        fc = calloc(1, sizeof(FilteredCgroup));
        if (!fc)
                return -ENOMEM;
        fc->manager = m;
        fc->sid = cgid;
        fc->uid = c->uid;
        fc->path = strdup(c->open.path);
        if (!fc->path) {
                free(fc);
                return -ENOMEM;
        }
        fc->names = TAKE_PTR(c->rules.names);
        fc->n_names = c->rules.n_names;
        c->rules.n_names = c->rules.allocated_names = 0;
        /* kept, to tell which were reached (USAGE) */
        fc->addresses = TAKE_PTR(c->rules.addresses);
        fc->n_addresses = c->rules.n_addresses;
        c->rules.n_addresses = c->rules.allocated_addresses = 0;

        /* Listed from here on, so that filtered_cgroup_free() undoes whatever follows. */
        fc->next = m->cgroups;
        m->cgroups = fc;
        m->n_cgroups++;

        if (!(c->open.flags & BPFD_OPEN_NO_NETWORK)) {
                k = setup_network(m, c, fc, cgfd, ret_reason);
                if (k < 0)
                        goto fail;
        }
        if (c->open.flags & BPFD_OPEN_FILES)
                *ret_notice = setup_files(m, c, fc);

        watch_parent(m, cgfd);
        fc->client = c;
        *ret = fc;
        return 0;

fail:
        filtered_cgroup_free(fc);
        return k;
}

int manager_sweep(Manager *m) {
        struct timespec ts;
        FilteredCgroup *next;

        for (FilteredCgroup *fc = m->cgroups; fc; fc = next) {
                next = fc->next;
                if (cgroup_exists(fc->path, fc->sid) == 0) {
                        log_info("%s is gone, forgetting its rules", fc->path);
                        filtered_cgroup_free(fc);
                }
        }
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        (void) filter_expire(m->filter, (uint64_t) ts.tv_sec * 1000000000U + (uint64_t) ts.tv_nsec);
        manager_check_idle(m);
        return 0;
}
