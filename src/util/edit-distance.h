/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Strings longer than this are never "close" to anything: their distance is SIZE_MAX. */
#define EDIT_DISTANCE_MAX 64

/* Levenshtein distance between a[0..la) and b[0..lb), behind every "did you mean". */
size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, bool ignore_case);
