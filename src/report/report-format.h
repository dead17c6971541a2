/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Reports as text (one line, as on stderr) and as JSON (one object, for --report-json).
 *
 * What the command chose is escaped so that it can neither draw on a terminal nor break a
 * line or a JSON string: control characters (C0, DEL, and C1 in UTF-8), bytes that are not
 * UTF-8, and the backslash itself become \xNN (\\ for the backslash). Valid UTF-8 text stays. */

#include <stddef.h>

#include "report/report.h"

/* Writes the escaped form of `s` into `buf` (always NUL-terminated; cut, never mid-escape,
 * when too long). Returns the length written. */
size_t report_escape(const char *s, char *buf, size_t size);

/* "file: refused read of '/home/u/.ssh/id' (EACCES) by pid 42 (cat): filesystem.deny "~/.ssh"
 * (<built-in>/default.toml:20)". No "scudo: " prefix, no newline. Returns the length it
 * needed, as snprintf. */
int report_format_text(const Report *r, unsigned count, char *buf, size_t size);

/* One JSON object, no newline. `count` > 1 marks a summary of repeats. */
int report_format_json(const Report *r, unsigned count, const char *time, char *buf, size_t size);

/* The errno's symbolic name ("EACCES"), or NULL. */
const char *report_errno_name(int error);
