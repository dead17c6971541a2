/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A refused connection, datagram, socket or DNS name from scudo-bpfd, as a report naming the
 * rule that refused it: the first `network.deny` rule that covers the address and port (or,
 * for a name, every port of the name), with where it was written; else "no rule allows it".
 * (A deny rule for some ports of a name refuses the addresses of its answers; those reports
 * say "no rule allows it" only when no rule covers the address itself.) */

#include "net/protocol.h"
#include "plan/plan.h"
#include "report/report.h"

typedef struct NetJudge NetJudge;

int net_judge_new(const Plan *plan, NetJudge **ret);
NetJudge *net_judge_free(NetJudge *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetJudge *, net_judge_free);

/* 1 with *ret filled (strings valid until the next call), 0 for an event that is no
 * refusal (BPFD_EVENT_LOST: *ret_lost is set). */
int net_judge(NetJudge *j, const BpfdEvent *e, Report *ret, unsigned *ret_lost);
