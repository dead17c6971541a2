/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The first and last lines of a --report-json file, for `scudo suggest`: what ran, under which
 * profiles and grants ("kind": "run"), and which of the grants the run used ("kind": "usage"). */

#include <time.h>

#include "plan/plan.h"

/* {"kind":"run","command":[…],"start_dir":…,"profiles":[…],"write":[{"path","origin"}],
 *  "read":[…],"allow":[{"rule","origin"}],"deny":[…]} */
int run_record_json(const Plan *plan, char **ret);

/* {"kind":"usage","written":[PATH…],"reached":[RULE…]}: the write grants under which something
 * changed since
 * `since` (modified, created, removed or renamed: an mtime or ctime as late), found by a walk of
 * each that stops at the first such entry, stays on its file system, follows no symlink and
 * looks at most at USAGE_WALK_MAX entries per grant (past that, the grant counts as written).
 * What another program changed there meanwhile counts too. "reached": the network.allow
 * rules for which `reached` (one entry for each of plan->net_allow) is true; left out with
 * `reached` NULL (not known). */
#define USAGE_WALK_MAX 200000U
int usage_record_json(const Plan *plan, const struct timespec *since, const bool *reached, char **ret);
