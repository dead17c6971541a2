/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Making a missing directory or file on behalf of a grant (plan/plan-create.h), outside any
 * sandbox, in a place a sandbox may have written to. */

#include <stdbool.h>

/* Makes the directory (directory = true) or empty file at `path` when it is missing, and every
 * missing directory above it, without following a symlink anywhere: the walk starts at "/" and
 * reaches each component with O_NOFOLLOW below the directory opened before it (O_PATH, so a
 * directory the user may search but not read, /home at 0711, can be passed), which is what
 * openat2()'s RESOLVE_NO_SYMLINKS does for a whole path, one name at a time. `path` must be
 * absolute and lexically clean (the plan's canonical form). Directories made are mode 0700 and
 * a file made 0600, exactly, whatever the umask; they belong to the caller. Whatever exists is
 * left as it is, but a symlink on the way or at the end is -ELOOP, and a component on the way
 * that is not a directory -ENOTDIR. Returns 1 when it made the path itself, 0 when the path
 * was there, or -errno. */
int path_create_no_symlinks(const char *path, bool directory);

/* The same for a file made holding `content`: a file half written is removed again. */
int path_create_file_holding(const char *path, const char *content);
