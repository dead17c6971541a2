/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Lexical path handling: no filesystem access unless the name says so. */

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct stat;

/* Joins a and b with one '/', returning a new string or NULL on OOM. */
char *path_join(const char *a, const char *b);

/* Collapses "//", "/./" and "/../" of an absolute path, without looking at the filesystem.
 * Returns -EINVAL for a relative path. "/.." stays "/". */
int path_normalize(const char *path, char **ret);

/* If path equals prefix or lies below it (on a component boundary), returns the rest
 * (possibly ""), else NULL. Both must be normalized. */
const char *path_startswith(const char *path, const char *prefix);

bool path_is_absolute(const char *p);

/* Whether path is absolute with no empty component ("//"), no "." or ".." component and no
 * trailing slash ("/" itself is clean): then it names what it leads to unless a symlink in it
 * leads elsewhere. */
bool path_is_lexically_clean(const char *path);

/* Whether a lexically clean path has no symlink in it, in one system call (openat2() with
 * RESOLVE_NO_SYMLINKS), where reading the kernel's name back (path_realpath_procfd) costs
 * three, and finding the longest existing prefix of a missing path costs that again per
 * prefix. Returns
 *    1: it exists, and is its own canonical form (what realpath() gives);
 *    -ENOENT, -ENOTDIR: it does not exist, and the walk met no symlink before the component
 *       that is missing (or not a directory): realpath() fails just so, and the path as
 *       written is the longest existing prefix's canonical form plus the rest;
 *    any other negative errno: cannot tell why: -EINVAL for a path that is not lexically
 *       clean, -ELOOP for a symlink in it, -ENOSYS without openat2() (old kernel, seccomp: not
 *       tried again), or what else openat2() said. */
int path_probe_no_symlinks(const char *path);

/* open() of a lexically clean path, refusing a symlink anywhere in it (openat2() with
 * RESOLVE_NO_SYMLINKS, or O_NOFOLLOW and the kernel's name read back): for files scudo writes
 * outside any sandbox in a place a sandbox may have changed. Returns the fd or -errno (-ELOOP
 * for a symlink, -EINVAL for a path that is not clean). */
int path_open_no_symlinks(const char *path, int flags, mode_t mode);

/* The identity of what a lexically clean path leads to, reached without following any symlink
 * (openat2() with RESOLVE_NO_SYMLINKS, or O_NOFOLLOW and the kernel's name read back): what a
 * mount of the path binds, if nothing changes it before. Returns 1 with *ret filled, 0 when it
 * does not exist (ENOENT, ENOTDIR), -ELOOP for a symlink anywhere in it, -EINVAL for a path
 * that is not clean, or another -errno. */
int path_stat_no_symlinks(const char *path, struct stat *ret);

/* realpath() in 3 system calls (open with O_PATH, readlink of /proc/self/fd/N, close) instead of
 * one readlink per component: the kernel's own name for what the path leads to. Falls back on
 * realpath() where /proc cannot tell (no /proc, a deleted or unreachable file, a name too long).
 * Returns resolved, or NULL with errno set, as realpath() does; but the kernel's own refusals
 * apply (a symlink fs.protected_symlinks keeps from being followed: EACCES, where realpath(),
 * which only reads links, goes on). */
char *path_realpath_procfd(const char *path, char resolved[static PATH_MAX]);

/* path_realpath_procfd(), with path_probe_no_symlinks() first: a lexically clean path with no
 * symlink in it is its own answer in 2 system calls (openat2, close), or fails in 1. */
char *path_realpath_fast(const char *path, char resolved[static PATH_MAX]);

/* A file's identity, as stat() says. */
typedef struct FileId {
        dev_t dev;
        ino_t ino;
} FileId;

/* Finds an executable called `name` on `search_path` (":"-separated), skipping candidates
 * that are the same file as one of the n_skip identities at `skip` (scudo itself, or
 * scudo-route, when run through a link named after the command). Returns 0 and the path,
 * -ENOENT, or -EACCES when only non-executable matches exist. */
int path_find_executable(const char *name, const char *search_path, const FileId *skip, size_t n_skip,
                         char **ret);

/* mkdir -p: creates path and its missing parents with `mode`. */
int mkdir_p(const char *path, mode_t mode);
