/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* NULL-terminated string vectors. */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)

size_t strv_length(char * const *l);
/* Appends a copy of s. Returns 0 or -ENOMEM; *l is untouched on failure. */
int strv_extend(char ***l, const char *s);
/* Appends s itself, taking ownership on success only. */
int strv_push(char ***l, char *s);
/* Appends the n strings at items, each taken over whatever happens: on the first NULL among
 * them (an allocation that failed) or the first failure, that one and the rest are freed and
 * -ENOMEM returned; the ones before it stay appended. */
int strv_push_all(char ***l, char **items, size_t n);
bool strv_contains(char * const *l, const char *s);
char **strv_copy(char * const *l);

#define STRV_FOREACH(s, l) for (char * const *s = (l); s && *s; s++)
