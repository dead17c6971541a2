/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* git's and tools' configuration less its credentials: each file the hardening step marks to
 * be shown so (PATH_SOURCE_GIT_CONFIG_COPY, plan/harden-git-config.c; PATH_SOURCE_CONFIG_COPY,
 * plan/harden-tool-config.c) is read again here, filtered (plan/git-config-filter.h,
 * plan/config-filter.h), written 0600 below the caller's runtime directory, bound read-only
 * over the original (unit-build.c), and removed when the run ends. */

#include "plan/plan.h"

typedef struct GitConfigCopies {
        char *dir;              /* $XDG_RUNTIME_DIR/scudo/git-config-<unit>, once made */
        char **src;             /* the copies, */
        char **dst;             /* each shown in place of this file (canonical path) */
} GitConfigCopies;

/* Makes the copies `plan` asks for; runtime_dir and unit_name say where they go. A file that is
 * gone since the plan was made gets none. Returns 0 (with nothing made when the plan asks for
 * none), or -errno, logged here; then nothing is left behind. */
int git_config_copies_make(const Plan *plan, const char *runtime_dir, const char *unit_name,
                           GitConfigCopies *ret);

/* The copy shown in place of `path`, or NULL. c may be NULL. */
const char *git_config_copy_of(const GitConfigCopies *c, const char *path);

/* Removes the copies and their directory. */
void git_config_copies_remove(GitConfigCopies *c);
