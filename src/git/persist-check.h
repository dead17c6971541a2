/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What stays behind: the end-of-run check that nothing the command wrote leads a program run
 * later, outside any sandbox, to run code or to write outside the run's writable places
 * (docs/persistence.md).
 *
 * Once the unit is gone, every directory the command could write (the plan's write entries,
 * less what the plan binds read-only, hides or denies inside them) is looked at:
 *  - a symlink made, retargeted or moved there during the run (its change time is the run's)
 *    stays only if what it leads to, followed as a program outside would, lies inside the
 *    run's writable places, or is another user's that this one cannot write (/usr/bin/python3);
 *    any other is removed and reported with its target;
 *  - every git directory git's discovery would take (a directory holding HEAD with objects/
 *    and refs/, or with commondir: a .git, a bare layout, a worktree's or a submodule's git
 *    directory, at any depth), whose code-bearing parts (config, config.worktree, commondir,
 *    hooks/ and what they hold, the files its configuration includes) changed during the run,
 *    stays only if git would find no code to run in it: a configuration of only the keys
 *    `git init` and `git clone` write, and hooks/ holding only git's samples. Any other is
 *    made inert (HEAD moved aside, so git no longer takes the directory for a repository, and
 *    config moved aside) and reported;
 *  - a `.git` file (gitdir: ...) made during the run stays only if it leads to a git directory
 *    inside the writable places (which the rule above judges); any other is moved aside.
 *
 * Returns how many entries it removed or made inert. */

#include <sys/types.h>
#include <time.h>

#include "plan/plan.h"

int persist_check(const Plan *plan, const struct timespec *since);

/* The same, looking only in the directories whose inode numbers are in `written`: where
 * scudo-bpfd's write record says the command made, renamed, linked or changed an entry or
 * opened a file for writing, with every directory above each (net/protocol.h, BpfdWritten).
 * Only for a record that is complete: an incomplete one, or none, calls for persist_check(). */
int persist_check_written(const Plan *plan, const struct timespec *since, const ino_t *written, size_t n);
