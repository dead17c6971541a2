/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Every git directory git's discovery would find below a directory: from any directory under
 * it, git looks for a .git (a directory, a "gitdir:" file or a symlink to one) and takes a
 * directory that is itself a git directory (HEAD, objects/, refs/: a bare layout) as one. A
 * repository vendored anywhere below a project (third_party/a/b/c/lib/.git) is found, whatever
 * its depth and names: the hardening step shows each one's configuration less its credentials
 * (harden-git-config.c). One readdir per directory, or one stat where the last walk's cache
 * says it is unchanged; nothing below a git directory is read. */

#include <stdbool.h>
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

/* What one walk did: figures for the caller. */
typedef struct GitDirFindStats {
        size_t n_dirs;          /* directories looked at */
        size_t n_read;          /* of them, read (the others known unchanged from the cache) */
        bool cache_read;        /* the last walk's cache was there and sound */
        bool cache_written;     /* this walk's was written */
} GitDirFindStats;

/* Walks `root` (absolute, canonical), not following symlinks below it; an unreadable
 * directory is skipped (the command cannot read it either). With a cache_dir, reads only the
 * directories changed since the last walk of `root` (git-dir-cache.h), and keeps what it
 * found there for the next one. Returns 0, -E2BIG, -ENOMEM, or what `found` returned. */
int git_dirs_find(const char *root, const char *cache_dir, GitDirFound found, void *userdata,
                  GitDirFindStats *stats);
