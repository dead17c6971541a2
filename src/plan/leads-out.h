/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The leads-out rule: an entry written through a directory the command may write, which
 * resolves outside it. Anything in that directory may be a symlink the command planted in an
 * earlier run, so no such read or write entry is granted: ${project}/.git replaced by a link to
 * the home directory would otherwise bind all of it into the next sandbox. */

#include <stddef.h>

#include "plan/plan.h"

/* Whether an entry at `raw` (canonical: `canonical`) leads out of a directory the command may
 * write (`dir_raw`, canonical `dir_canonical`): the path as written goes through the
 * directory (up to its first ".."), but resolves outside it. Returns 1, 0, or -ENOMEM. */
int plan_path_leads_out(const char *raw, const char *canonical, const char *dir_raw, const char *dir_canonical);

/* For each of n entries (the path as written, its canonical form, its access), the index of
 * the first write entry it leads out of (plan_path_leads_out), or SIZE_MAX for none and for
 * hide and deny entries. O(n log n): each prefix of the path as walked is looked up among the
 * write entries sorted by name. 0 or -ENOMEM. */
int plan_paths_leading_out(size_t n, char *const *raw, char *const *canonical, const PathAccess *access,
                           size_t *ret);
