/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The FUSE shim's pure logic (no FUSE, no /proc): which names it may list, where the real
 * command is looked up, a variable out of a process's environment block. Unit-tested in
 * tests/unit/test-shim-path.c. */

#include <stdbool.h>
#include <stddef.h>

/* A name the shim may list: a single path component, not "." or "..", not scudo itself (a
 * profile that matches `scudo` must not make the shim run scudo through scudo). */
bool shim_name_is_listable(const char *name);

/* Where the real command is looked up for a caller whose PATH is `path_env` (NULL: the
 * default): the entries after the first occurrence of the shim's directory `mount`, less
 * every entry that names `mount` again and every relative entry (the working directory, which
 * a project controls); "" when nothing is left. Returns 1 when `mount` is on that PATH, 0 when
 * not (*ret is then NULL): a shell that put the shim first after it started still shows its
 * old PATH in /proc, and what it holds after the shim is not known. */
int shim_search_path(const char *path_env, const char *mount, char **ret);

/* The value of NAME in a NUL-separated environment block of `size` bytes (as read from
 * /proc/PID/environ, maybe cut short: an unterminated last entry is not trusted), or NULL. */
const char *shim_environ_get(const char *block, size_t size, const char *name);

/* Splits the policy engine's listing (one name a line) into a sorted list of the listable
 * names, each once. */
int shim_names_parse(const char *text, char ***ret);

/* Whether `name` is in the sorted list `names`. */
bool shim_names_contain(char * const *names, const char *name);

/* Whether the `alen` bytes at `a` (a PATH entry) name the directory `b`, trailing slashes aside. */
bool shim_same_dir(const char *a, size_t alen, const char *b);

/* Where the shim's directory `mount` stands on the PATH `path_env`: 0 first, N after N other
 * entries, -1 not there. */
int shim_path_position(const char *path_env, const char *mount);
