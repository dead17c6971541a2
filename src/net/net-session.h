/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* scudo's side of the network filter: one connection to scudo-bpfd per sandboxed run.
 *
 * net_session_open() hands the helper the run's cgroup and the plan's network rules and
 * returns once the BPF programs are attached and enforcing; any failure means the run must
 * not start. The connection then carries the helper's reports of refused connections and
 * DNS names, which net_session_dispatch() prints as the plan's log.target and log.report
 * say. Closing the session does not lift the restrictions: they last as long as the cgroup. */

#include "net/net-rule.h"
#include "plan/plan.h"

typedef struct NetSession NetSession;

/* Connects to scudo-bpfd (SCUDO_BPFD_SOCKET, or $SCUDO_BPFD_SOCKET when set), asks it to
 * restrict the cgroup at `cgroup_path` (as in the unit's ControlGroup property) with the
 * plan's network rules and DNS mode, and waits for the acknowledgement.
 * Returns 0 when the programs are attached and enforce; -ECONNREFUSED or -ENOENT when the
 * helper is not reachable; -EINVAL for a rule that does not parse; -ETIMEDOUT; or the
 * helper's refusal (for example -EPERM, -EBUSY). net_session_error() then has a reason. */
int net_session_open(const char *cgroup_path, const Plan *plan, NetSession **ret);

/* The reason for the last failure of net_session_open() in this thread, or "". */
const char *net_session_error(void);

/* Whether that failure was scudo's own, before the helper was asked anything (the report
 * file, log.target): the reason then says it all. */
bool net_session_error_is_local(void);

/* Poll this for POLLIN: events from the helper. */
int net_session_get_fd(NetSession *s);

/* Reads the pending events and reports them. Returns 0, or -ECONNRESET once the helper has
 * gone away: the restrictions stay in force, but no more reports will come, so the caller
 * should stop polling the fd (a warning has been printed). */
int net_session_dispatch(NetSession *s);

NetSession *net_session_free(NetSession *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetSession *, net_session_free);

/* The sandbox's DNS proxy address (IPv4, network order), or 0 with dns = open. */
uint32_t net_session_proxy4(NetSession *s);

/* Compiles a rule list into the wire form. Exposed for tests. */
int net_rules_compile(char * const *allow, char * const *deny, BpfdRule **ret_rules, size_t *ret_n,
                      char **ret_names, size_t *ret_names_size);

/* Formats one event as a line of text (no newline), as printed on stderr. */
int net_event_format(const BpfdEvent *e, char *buf, size_t size);
