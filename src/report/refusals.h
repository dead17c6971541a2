/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The refusal reports of one run: what scudo-bpfd sends (net-session.h) judged against the
 * plan (file-judge.h, net-judge.h) and written by the feed (report-feed.h) where the plan's
 * log.target and --report-json say. */

#include <time.h>

#include "net/net-session.h"
#include "net/protocol.h"
#include "plan/plan.h"
#include "report/report-feed.h"

typedef struct Refusals Refusals;

/* Opens the log.target file and the --report-json file (`json_path`, or NULL), each refusing
 * a symlink, a FIFO, a hard link or another user's file in its place. On error `*ret_error`
 * says why (to be printed once by the caller). */
int refusals_new(const Plan *plan, const char *json_path, Refusals **ret, char **ret_error);
Refusals *refusals_free(Refusals *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Refusals *, refusals_free);

/* Whether log.report asks for file refusals. */
bool refusals_want_files(const Refusals *r);
ReportFeed *refusals_feed(Refusals *r);

/* The FILE_PREFIXES message for the helper (file-judge.h), valid as long as `r`. */
int refusals_file_prefixes(Refusals *r, const void **ret, size_t *ret_size);

/* For net_session_dispatch(). */
void refusals_on_event(const BpfdEvent *e, void *userdata);
void refusals_on_file_event(const BpfdFileEvent *e, void *userdata);
void refusals_on_file_lost(const BpfdFileLost *l, void *userdata);

/* The run is over: summaries written, with --report-json which write grants were used since
 * `started` (the start of the unit; NULL: not known) and, from the helper's session `net`
 * (NULL: none), which network.allow rules were reached; the queue flushed (at most about a
 * second more). Call it before the run's slice goes: the helper forgets a sandbox with it. */
void refusals_finish(Refusals *r, NetSession *net, const struct timespec *started);
