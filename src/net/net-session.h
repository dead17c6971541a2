/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* scudo's side of scudo-bpfd: one connection per run that has network rules or wants its file
 * refusals reported.
 *
 * net_session_open() hands the helper the run's cgroup and the plan's network rules and
 * returns once the BPF programs are attached and enforcing; with network rules, any failure
 * means the run must not start. The connection then carries the helper's reports of refused
 * connections, DNS names and file accesses, which net_session_dispatch() hands to the
 * caller (src/report/ judges and writes them). Closing the session does not lift the
 * restrictions: they last as long as the cgroup. */

#include <stdbool.h>
#include <stddef.h>

#include "net/net-rule.h"
#include "util/macro.h"

typedef struct NetSession NetSession;

/* Connects to scudo-bpfd (SCUDO_BPFD_SOCKET, or $SCUDO_BPFD_SOCKET when set), asks it to
 * restrict the cgroup at `cgroup_path` (as in the unit's ControlGroup property) with the
 * plan's network rules and DNS mode, and waits for the acknowledgement.
 * Returns 0 when the programs are attached and enforce; -ECONNREFUSED or -ENOENT when the
 * helper is not reachable; -EINVAL for a rule that does not parse; -ETIMEDOUT; or the
 * helper's refusal (for example -EPERM, -EBUSY). net_session_error() then has a reason. */
#define NET_SESSION_FILES (1U << 0)       /* report refused file accesses too */
#define NET_SESSION_RECORD (1U << 1)      /* with FILES: record where the sandbox writes */
typedef struct NetSessionRules {
        /* Without network rules (the plan's network_filtered false) the session is for file
         * reports alone: nothing about the network changes, and the rest is not looked at. */
        bool filtered;
        char * const *allow;    /* network.allow, as written */
        char * const *deny;     /* network.deny */
        DnsMode dns;
        /* With NET_SESSION_FILES: a FILE_PREFIXES message (protocol.h) for the kernel to leave
         * out the failed calls that cannot be refusals; NULL: it sends every one. */
        const void *file_prefixes;
        size_t file_prefixes_size;
} NetSessionRules;

int net_session_open(const char *cgroup_path, const NetSessionRules *rules, unsigned flags,
                     NetSession **ret);

/* net_session_open() in two halves, so that the caller can do its own work while the helper
 * does its: start connects and sends the request (failing only when the helper cannot be
 * reached, or a rule does not parse), wait reads the acknowledgement and returns what
 * net_session_open() would. Nothing is restricted before wait returns 0: with network rules
 * the command must not start before it. */
int net_session_start(const char *cgroup_path, const NetSessionRules *rules, unsigned flags,
                      NetSession **ret);
int net_session_wait(NetSession *s);

/* The reason for the last failure of net_session_open(), _start() or _wait() in this thread, or
 * "". */
const char *net_session_error(void);

/* What the helper could not give and is no restriction (file reports on another architecture,
 * or a kernel without the tracepoint), or NULL. */
const char *net_session_notice(NetSession *s);

/* Poll this for POLLIN: events from the helper. */
int net_session_get_fd(NetSession *s);

typedef struct NetSessionHandler {
        void (*event)(const BpfdEvent *e, void *userdata);
        void (*file_event)(const BpfdFileEvent *e, void *userdata);
        void (*file_lost)(const BpfdFileLost *l, void *userdata);
        void *userdata;
} NetSessionHandler;

/* Reads the pending events and hands them to `h`. Returns 0, or -ECONNRESET once the helper
 * has gone away: the restrictions stay in force, but no more reports will come, so the caller
 * should stop polling the fd (a warning has been printed). */
int net_session_dispatch(NetSession *s, const NetSessionHandler *h);

/* Asks the helper, once, which of the network.allow rules the sandbox used (protocol.h,
 * BpfdUsage), handing the events that come first to `h`. Call it when the command is over and
 * before the cgroup goes. On success *ret_reached has one entry for each allow rule,
 * in order (*ret_n of them). -ETIMEDOUT, -ECONNRESET, -EBADMSG or the helper's error
 * otherwise, with net_session_error(). */
int net_session_usage(NetSession *s, const NetSessionHandler *h, unsigned timeout_ms, bool **ret_reached,
                      size_t *ret_n);

/* Asks the helper where the sandbox wrote (a session with NET_SESSION_RECORD; protocol.h,
 * BpfdWritten), handing the events that come first to `h`. Call it when the command is over
 * and before the cgroup goes. On success *ret_dirs holds *ret_n directories (with every one
 * above each). -E2BIG when the record is incomplete; -ENODATA when the helper keeps none;
 * -ETIMEDOUT, -ECONNRESET or -EBADMSG otherwise, with net_session_error(). */
int net_session_written(NetSession *s, const NetSessionHandler *h, unsigned timeout_ms, BpfdDirId **ret_dirs,
                        size_t *ret_n);

NetSession *net_session_free(NetSession *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetSession *, net_session_free);

/* The sandbox's DNS proxy address (IPv4, network order), or 0 with dns = open. */
uint32_t net_session_proxy4(NetSession *s);

/* Compiles a rule list into the wire form. Exposed for tests. */
int net_rules_compile(char * const *allow, char * const *deny, BpfdRule **ret_rules, size_t *ret_n,
                      char **ret_names, size_t *ret_names_size);

