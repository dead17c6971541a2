/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Grants that create what they grant.
 *
 * A profile may say that a path it grants (write or read) is a directory or a file to make
 * when it is missing: otherwise a tool's cache that does not exist yet is not bound at all,
 * the tool fills a cache in the throw-away home, and every later run starts without one. What
 * may be made is decided here, on the plan as the policy engine gave it (before plan_normalize
 * makes its paths canonical, so that the path as written is still there to compare):
 *   - only a write or read entry;
 *   - only strictly below the user's home directory or runtime directory, the two places that
 *     are the user's own (never "/" as either);
 *   - never where the path as written goes through a symlink below them: a symlink there
 *     may have been planted by a sandbox that could write its directory, pointing at a
 *     place whose contents run later (~/.config/systemd/user), which would then be made and
 *     granted.
 * Two entries that make the same path as a file and as a directory are refused where both
 * are known, in the policy engine (build.lua).
 *
 * The runner makes them just before the unit starts (util/path-create.h), walking the
 * canonical path component by component without following any symlink, so that one planted
 * since this check is refused too. `scudo explain` and `--dry-run` make nothing. */

#include "plan/plan.h"

/* home, runtime_dir: the caller's (as the request has them; either may be NULL). Returns 0,
 * -ENOMEM, or -EINVAL with *ret_error naming the entry, its origin and the reason. */
int plan_create_check(const Plan *p, const char *home, const char *runtime_dir, char **ret_error);
