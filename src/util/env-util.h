/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether systemd accepts "NAME=value" in Environment=: a shell-style name, a value that is
 * valid UTF-8 without control characters other than tab and newline. Anything else would make
 * the whole unit fail to start, so such variables are left out (bash's exported functions,
 * "BASH_FUNC_x%%", are the usual case). */
bool env_assignment_is_valid(const char *e);
bool env_name_is_valid(const char *name, size_t len);
bool utf8_is_valid(const char *s);

/* The entry "NAME=..." of an environment block whose name is the first len bytes of name, or
 * NULL; and the value of the variable `name`, or NULL. The first one wins, as getenv(3)'s. */
char **env_find(char * const *env, const char *name, size_t len);
const char *env_get(char * const *env, const char *name);
