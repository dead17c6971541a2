/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Text a command chose (a file name, a link's target), made safe to print on one line: control
 * characters (C0, DEL, and C1 in UTF-8), bytes that are not UTF-8, and the backslash itself
 * become \xNN (\\ for the backslash), so that it can neither draw on a terminal, nor start a
 * line of its own that reads as scudo's, nor break a JSON string. Valid UTF-8 text stays. */

#include <stddef.h>

/* Writes the escaped form of `s` into `buf` (always NUL-terminated; cut, never mid-escape,
 * when too long). Returns the length written. */
size_t text_escape(const char *s, char *buf, size_t size);
