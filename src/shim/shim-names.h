/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The names the shim lists, for each working directory its callers look names up from.
 *
 * The policy engine decides them (`scudo __shim-names DIR`, policy_command_names()), in a
 * process of its own: a project file that loops, is huge or malformed runs out of that
 * process's budgets or crashes it, never the shim, and the shim's other threads go on serving.
 * The global list (start directory "/") is made again after each change to the global
 * configuration (shim_names_changed()); a directory's list lives SHIM_PROJECT_TTL_USEC, as
 * project files are not watched. */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define SHIM_LIST_TTL_USEC (60ULL * 1000 * 1000)
#define SHIM_EVAL_TIMEOUT_USEC (10ULL * 1000 * 1000)

typedef struct ShimList {
        atomic_int ref;
        char **names;           /* sorted, each once */
} ShimList;

typedef struct ShimNames ShimNames;

int shim_names_new(const char *scudo_path, ShimNames **ret);
void shim_names_free(ShimNames *s);

/* Bumps the generation: every list is made again at its next use. Safe from any thread. */
void shim_names_changed(ShimNames *s);

/* The generation now: an answer given while it stays the same may be kept. */
uint64_t shim_names_generation(ShimNames *s);

/* The list for a caller in `cwd` (NULL: the global one), and the global list; both with a
 * reference the caller drops with shim_list_unref(). Never fails for want of a list: a failed
 * evaluation gives the global list (an empty one at worst). */
void shim_names_get(ShimNames *s, const char *cwd, ShimList **ret_list, ShimList **ret_global);

void shim_list_unref(ShimList *l);

/* Makes the list of every name any caller could be given: the global names and those of each
 * trusted project file. Runs the policy engine once per trusted project directory: called at
 * start and after each change (shim_names_changed()), not in a lookup. */
void shim_names_refresh_listable(ShimNames *s);

/* Whether no caller, whatever its directory and PATH, is given `name` until the next change:
 * false while that is not known (before the first refresh, or after a change until the next). */
bool shim_names_never_listed(ShimNames *s, const char *name);

/* Runs `scudo __shim-names DIR` and parses what it prints. For `scudo status` too. */
int shim_names_evaluate(const char *scudo_path, const char *dir, char ***ret);
