/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The runner's check of a .git the command may commit to (plan-harden.c lists the directories,
 * Plan.git_watch): git writes it as it works, and what git reads code or other places from is
 * bound read-only where it exists; a name git does not make, appearing at the top of one of
 * these git directories (commondir, config.worktree, hooks, ...), in their modules/ or
 * worktrees/ (a new submodule or worktree), or in objects/info (alternates), stops the run.
 *
 * inotify tells scudo, outside, as the name is made: the entry is removed at once and the
 * unit killed; git outside could read it only in that moment. What a full queue may have hidden
 * is looked for by comparing each directory with what it held when the run started, then and
 * when the run ends (gitdir_watch_sweep). */

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "util/macro.h"

typedef struct GitdirWatch GitdirWatch;

/* Called once, at the first name refused; `path` was removed (or could not be: removed false). */
typedef void (*GitdirRefused)(const char *path, bool removed, void *userdata);

/* Watches the git directories `tops` (and what is below them, as above) from the event loop
 * `e`; the directories as they are now are what is not new. And the .git symlinks `pins`
 * (Plan.git_pins): one removed or replaced is put back as it is now, and stops the run. */
int gitdir_watch_new(char * const *tops, char * const *pins, sd_event *e, GitdirRefused cb, void *userdata,
                     GitdirWatch **ret);

/* Looks at every watched directory once more (after the unit is gone): removes what is new
 * and refused, says so on stderr, and warns of a rebase or sequence the command left in
 * progress. The number of entries removed. */
int gitdir_watch_sweep(GitdirWatch *w);

GitdirWatch *gitdir_watch_free(GitdirWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(GitdirWatch *, gitdir_watch_free);
