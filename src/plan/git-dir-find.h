/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Every git directory git's discovery would find below a directory: from any directory under
 * it, git looks for a .git (a directory, a "gitdir:" file or a symlink to one) and takes a
 * directory that is itself a git directory (HEAD, objects/, refs/: a bare layout) as one. A
 * repository vendored anywhere below a project (third_party/a/b/c/lib/.git) is found, whatever
 * its depth and names: the hardening step shows each one's configuration less its credentials
 * (harden-git-config.c). One readdir per directory; nothing below a git directory is read. */

#include <stddef.h>

typedef enum GitDirKind {
        GIT_DIR_DOT_GIT,        /* `dir`/.git is a directory, or a symlink (to one, git hopes) */
        GIT_DIR_GIT_FILE,       /* `dir`/.git is a file: "gitdir: PATH" */
        GIT_DIR_BARE,           /* `dir` itself is a git directory */
} GitDirKind;

/* Called for each one found: 0 to go on, or -errno to stop the walk with. */
typedef int (*GitDirFound)(const char *dir, GitDirKind kind, void *userdata);

/* How many directories one walk reads at most, and how deep it goes: past either, the walk
 * stops with -E2BIG (the caller refuses the run rather than leave a configuration unread). */
#define GIT_DIR_FIND_MAX_DIRS 200000U
#define GIT_DIR_FIND_MAX_DEPTH 256U

/* Walks `root` (absolute, canonical), not following symlinks below it; an unreadable
 * directory is skipped (the command cannot read it either). Returns 0, -E2BIG, -ENOMEM, or
 * what `found` returned. *n_dirs counts the directories read (figures for the caller). */
int git_dirs_find(const char *root, GitDirFound found, void *userdata, size_t *n_dirs);
