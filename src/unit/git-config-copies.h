/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* git's configuration as the sandbox sees it: each configuration file git reads there (the
 * home's ~/.gitconfig and ${XDG_CONFIG_HOME}/git/config, the config of every .git at the top
 * of a writable directory, and the files these include, recursively) that the plan shows
 * read-only and that holds credentials is shown as a copy less them (git-config-filter.h):
 * written 0600 below the caller's runtime directory, bound read-only over the original
 * (unit-build.c), removed when the run ends. Files the plan hides or denies are not shown at
 * all and need no copy; files the command may write (an include inside the project) are the
 * project's, as everything else there is. */

#include "plan/plan.h"

typedef struct GitConfigCopies {
        char *dir;              /* $XDG_RUNTIME_DIR/scudo/git-config-<unit>, once made */
        char **src;             /* the copies, */
        char **dst;             /* each shown in place of this file (canonical path) */
} GitConfigCopies;

/* Makes the copies for `plan`. home and config_home ($XDG_CONFIG_HOME, or NULL for
 * ~/.config) say where the home's git configuration is; runtime_dir and unit_name where the
 * copies go. Returns 0 (with nothing made when no file holds a credential), or -errno, logged
 * here; then nothing is left behind. */
int git_config_copies_make(const Plan *plan, const char *home, const char *config_home,
                           const char *runtime_dir, const char *unit_name, GitConfigCopies *ret);

/* The copy shown in place of `path`, or NULL. c may be NULL. */
const char *git_config_copy_of(const GitConfigCopies *c, const char *path);

/* Removes the copies and their directory. */
void git_config_copies_remove(GitConfigCopies *c);
