/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Lexical path handling: no filesystem access unless the name says so. */

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

/* Joins a and b with one '/', returning a new string or NULL on OOM. */
char *path_join(const char *a, const char *b);

/* Collapses "//", "/./" and "/../" of an absolute path, without looking at the filesystem.
 * Returns -EINVAL for a relative path. "/.." stays "/". */
int path_normalize(const char *path, char **ret);

/* If path equals prefix or lies below it (on a component boundary), returns the rest
 * (possibly ""), else NULL. Both must be normalized. */
const char *path_startswith(const char *path, const char *prefix);

bool path_is_absolute(const char *p);

/* realpath() in 3 system calls (open with O_PATH, readlink of /proc/self/fd/N, close) instead of
 * one readlink per component: the kernel's own name for what the path leads to. Falls back on
 * realpath() where /proc cannot tell (no /proc, a deleted or unreachable file, a name too long).
 * Returns resolved, or NULL with errno set, as realpath() does; but the kernel's own refusals
 * apply (a symlink fs.protected_symlinks keeps from being followed: EACCES, where realpath(),
 * which only reads links, goes on). */
char *path_realpath_fast(const char *path, char resolved[static PATH_MAX]);

/* Finds an executable called `name` on `search_path` (":"-separated), skipping candidates
 * that are the same file as `skip_dev`/`skip_ino` (scudo itself when run through a link).
 * Returns 0 and the path, -ENOENT, or -EACCES when only non-executable matches exist. */
int path_find_executable(const char *name, const char *search_path, dev_t skip_dev, ino_t skip_ino,
                         char **ret);

/* mkdir -p: creates path and its missing parents with `mode`. */
int mkdir_p(const char *path, mode_t mode);
