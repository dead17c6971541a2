/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The C checks of a plan, whatever produced it, and the canonical form they and the hardening
 * step (plan-harden.h) work on: plan_normalize(), then plan_check(); nothing runs unless both
 * pass. */

#include "plan/plan.h"

/* The most filesystem paths one plan may hold: some hundred times what the built-in policies
 * and a project's file make, and few enough that checking them stays well under a second. */
#define PLAN_PATHS_MAX 10000

/* The canonical form of an absolute path: realpath() of the longest prefix that exists, then
 * the components that do not exist (yet) with "." and ".." applied. Symlinks are therefore
 * resolved exactly where the kernel would resolve them. -EINVAL for a relative path or one
 * holding control characters; -ELOOP, -EACCES, ... when an existing prefix cannot be resolved. */
int plan_path_canonicalize(const char *path, char **ret);

/* What canonicalizing learnt of the filesystem, reused for the next paths of one plan (see
 * plan-validate.c). Zero-initialized; path_memo_done() frees it. Keep one only as long as
 * the paths are checked together: it does not see later changes to the filesystem. */
typedef struct PathMemoEntry PathMemoEntry;
typedef struct PathMemo {
        PathMemoEntry *entries;
        size_t n, allocated;
        /* tsearch(3) trees of the entries by path and by prefix (see plan-validate.c) */
        void *by_path, *missing, *canonical_prefixes, *links;
} PathMemo;

void path_memo_done(PathMemo *m);

/* plan_path_canonicalize() through a memo (NULL: none): the same results, with fewer system
 * calls for paths that share prefixes. */
int plan_path_canonicalize_memo(PathMemo *memo, const char *path, char **ret);

/* Makes the plan's paths what the runner and the hardening step work on, in place:
 *   - at most PLAN_PATHS_MAX paths, every one absolute, made canonical (see above), each
 *     path as given kept in `given`; a hide or deny of "/" refused as it is seen;
 *   - what leads out of a directory the command may write taken out, into `dropped` with its
 *     reason (the hardening step's rule, harden-leads-out.h: it comes before the next one,
 *     as which entry wins for a path depends on it);
 *   - one entry per path (the later wins, as in the profiles);
 *   - the log target's directory canonical.
 * Returns 0, or -EINVAL with *ret_error naming the entry refused and its origin, or -ENOMEM. */
int plan_normalize(Plan *p, char **ret_error);

/* Refuses what is invalid in a normalized plan, changing nothing:
 *   - exec_path and working directory absolute, a command line;
 *   - unit properties known, with values of the right form (unit-properties.h);
 *   - network rules that parse (net/net-rule.c); dns and dbus modes in range;
 *   - delegation only from a sealed sandbox (not with dbus.session = "allow");
 *   - environment entries NAME=VALUE; log target and report kinds known.
 * Nothing runs unless it passes. Returns 0, or -EINVAL with *ret_error naming the entry and its
 * origin, or -ENOMEM. */
int plan_check(const Plan *p, char **ret_error);
