/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The hardening step's leads-out rule: an entry written through a directory the command may
 * write, which resolves outside it. Anything in that directory may be a symlink the command
 * planted in an earlier run, so no such read or write entry is granted: ${project}/.git
 * replaced by a link to the home directory would otherwise bind all of it into the next
 * sandbox. What the link leads to stays as visible as it is without the entry.
 *
 * This is the one home of the rule: a run and `scudo explain` both get it from
 * plan_normalize() (plan-validate.h), which applies it between making the paths canonical and
 * keeping one entry per path, since which entry wins for a path depends on it (a read of
 * ~/real and a later write of ${project}/link, a link to ~/real: the read stays). */

#include "plan/plan.h"

/* Whether an entry at `raw` (canonical: `canonical`) leads out of a directory the command may
 * write (`dir_raw`, canonical `dir_canonical`): the path as written goes through the
 * directory (up to its first ".."), but resolves outside it. Returns 1, 0, or -ENOMEM. */
int plan_path_leads_out(const char *raw, const char *canonical, const char *dir_raw,
                        const char *dir_canonical);

/* Takes every read or write entry that leads out of a write entry of the plan (the first such
 * in the plan's order) out of the plan's paths, into `dropped`, with the reason (naming that
 * directory) and `warn` set. The paths are canonical, each entry's path as written in `given`
 * (or the path itself when NULL); all of them count, repeated ones too. O(n log n).
 * 0 or -ENOMEM (then nothing moved). */
int plan_harden_leads_out(Plan *p);
