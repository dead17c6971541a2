/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Which names git makes in a git directory, for the runner's check of a .git the command may
 * commit to (gitdir-watch.h): the one list of them. */

#include <stdbool.h>

/* Whether git itself makes `name` at the top of a git directory (a .git, or a submodule's or
 * linked worktree's own) in ordinary work: a pseudo-ref or message file, the index and its
 * relatives, a lock file, or the directory of objects, refs, logs or of an operation in
 * progress. config, hooks, commondir and the like are not: what git reads code to run, or
 * other places to read from, is never made new in a .git the command may commit to. */
bool gitdir_top_name_allowed(const char *name);

/* Whether `name` may be made in a git directory's objects/info: anything but alternates and
 * http-alternates, which send git to other object stores. */
bool gitdir_objects_info_name_allowed(const char *name);

/* Whether `name` at the top of a git directory is the state of a rebase, merge sequence or
 * am in progress: the list of its steps to come can run commands (exec) when it is continued. */
bool gitdir_name_is_sequence(const char *name);
