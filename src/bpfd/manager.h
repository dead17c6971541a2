/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* scudo-bpfd's state: the loaded filter, the connected clients, and the filtered cgroups
 * (those it has put under network rules or watches the file refusals of). A filtered cgroup
 * outlives the client that asked for it: its restrictions stay for as long as the cgroup
 * exists, and are forgotten once the cgroup is gone. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "bpfd/file-report.h"
#include "bpfd/filter.h"
#include "bpfd/protocol-parse.h"
#include "bpfd/resolv-conf.h"
#include "net/protocol.h"

#define BPFD_MAX_CLIENTS 256U
#define BPFD_MAX_CGROUPS_PER_UID 256U
#define BPFD_REQUEST_TIMEOUT_USEC (30U * 1000000U)
#define BPFD_SWEEP_USEC (5U * 1000000U)
#define BPFD_PROXY_SLOTS 65024U         /* 127.53.0.1 .. 127.53.253.254 */

typedef struct Manager Manager;
typedef struct Client Client;
typedef struct FilteredCgroup FilteredCgroup;
typedef struct DnsProxy DnsProxy;

typedef struct NameRule {
        BpfdAction action;
        BpfdRuleKind kind;
        uint16_t port;
        uint32_t index;                 /* in the session's order of rules (BpfdUsage) */
        bool reached;                   /* an answer for a name it covers went through the helper */
        char name[BPFD_NAME_MAX + 1];
} NameRule;

typedef struct AddressRule {
        BpfdAction action;
        unsigned prefixlen;
        uint16_t port;
        uint32_t index;
        uint8_t addr[16];
} AddressRule;

/* What a client asked for, before it is applied. */
typedef struct RuleSet {
        AddressRule *addresses;
        size_t n_addresses, allocated_addresses;
        NameRule *names;
        size_t n_names, allocated_names;
} RuleSet;

void rule_set_done(RuleSet *s);
int rule_set_add(const BpfdCheckedRule *r, void *userdata);   /* a BpfdRuleCallback */

struct Client {
        Manager *manager;
        Client *next;
        int fd;
        sd_event_source *io, *timeout;
        uid_t uid;
        pid_t pid;
        enum { CLIENT_WANT_OPEN, CLIENT_WANT_RULES, CLIENT_ACTIVE } state;
        BpfdOpenRequest open;
        RuleSet rules;
        uint32_t received;
        void *file_prefixes;            /* the FILE_PREFIXES message, checked, until COMMIT */
        size_t file_prefixes_size;
        FilteredCgroup *cgroup;         /* once active; may go away before the client */
        bool usage_asked;
        BpfdUsage *usage;               /* kept when the cgroup goes first; or not sent yet */
        bool usage_pending;             /* `usage` waits for room in the socket */
};

struct FilteredCgroup {
        Manager *manager;
        FilteredCgroup *next;
        uint64_t sid;                   /* the cgroup id */
        uid_t uid;
        char *path;
        NameRule *names;
        size_t n_names;
        AddressRule *addresses;         /* kept to tell which were reached */
        size_t n_addresses;
        DnsProxy *proxy;                /* NULL with DNS open */
        bool dns_direct;                /* the DNS fast path: see scudo-net.bpf.c */
        Client *client;                 /* where reports go, while connected */
        uint64_t window_start;          /* report rate limit: start of the window (µs) */
        unsigned window_count;
        unsigned lost;
        bool network;                   /* the network programs are attached */
        bool files;                     /* its file refusals are watched */
        uint64_t file_window_start;     /* the same for file events, which scudo sifts */
        unsigned file_window_count;
        unsigned file_lost;             /* not sent since the last event that was, of all shares */
        BpfdFileLost file_lost_by;      /* the same, by share */
};

struct Manager {
        sd_event *event;
        Filter *filter;
        FileReporter *files;            /* NULL where file refusals cannot be reported */
        const char *files_why;          /* and why */
        int listen_fd;
        int inotify_fd;
        sd_event_source *listen_io, *events_io, *files_io, *inotify_io, *sweep_timer, *idle_timer;
        Client *clients;
        unsigned n_clients;
        FilteredCgroup *cgroups;
        unsigned n_cgroups;
        uint64_t exit_idle_usec;        /* 0: never exit when idle */
        unsigned dns_grace_sec;
        const char *resolv_conf;
        uint8_t proxy_used[BPFD_PROXY_SLOTS / 8];
        uint8_t buf[65536 + 2];         /* scratch for one message at a time */
        uint8_t reply[4096];            /* a DNS answer made or taken from a cache */
};

/* connection.c */
int client_new(Manager *m, int fd);
Client *client_free(Client *c);
int client_send_event(Client *c, const BpfdEvent *e);
int client_send_file_event(Client *c, const BpfdFileEvent *e);
int client_send_file_lost(Client *c, const BpfdFileLost *l);
/* The filtered cgroup of `c` goes: what it used is kept for USAGE. */
void client_keep_usage(Client *c, FilteredCgroup *fc);

/* filtered-cgroup.c */
/* `ret_notice`: on success, what was asked for and cannot be given (file reports), or NULL. */
int filtered_cgroup_create(Manager *m, Client *c, FilteredCgroup **ret, const char **ret_reason,
                           const char **ret_notice);
FilteredCgroup *filtered_cgroup_free(FilteredCgroup *fc);
FilteredCgroup *filtered_cgroup_find(Manager *m, uint64_t sid);
/* -EPERM: refuse the name; 0: forward it. For an allowed name, `learn` then inserts the
 * addresses of its answer (called by the proxy before the answer goes out). */
int filtered_cgroup_check_name(FilteredCgroup *fc, const char *name, bool name_ok);
int filtered_cgroup_learn(FilteredCgroup *fc, const char *name, const uint8_t addr[16], uint32_t ttl);
void filtered_cgroup_report(FilteredCgroup *fc, const BpfdEvent *e);
void filtered_cgroup_report_file(FilteredCgroup *fc, const struct file_event *e);
/* pid 0 and comm NULL (or empty) when the sender is not known (queries to the proxy). */
void filtered_cgroup_report_dns(FilteredCgroup *fc, const char *name, uint16_t qtype, uint32_t pid,
                                const char *comm);
/* Sets the bits of the allow rules something in the cgroup used (BpfdUsage). */
void filtered_cgroup_usage(FilteredCgroup *fc, uint8_t reached[static BPFD_RULES_MAX / 8]);
int manager_sweep(Manager *m);

/* bpfd.c */
void manager_check_idle(Manager *m);
