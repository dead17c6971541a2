/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Reports as text (one line, as on stderr) and as JSON (one object, for --report-json).
 *
 * What the command chose is escaped (util/text-escape.h). */

#include <stddef.h>

#include "report/report.h"

/* "file: refused read of '/home/u/.ssh/id' (EACCES) by pid 42 (cat): filesystem.deny "~/.ssh"
 * (<built-in>/default.toml:20)". No "scudo: " prefix, no newline. Returns the length it
 * needed, as snprintf. */
int report_format_text(const Report *r, unsigned count, char *buf, size_t size);

/* One JSON object, no newline. `count` > 1 marks a summary of repeats. */
int report_format_json(const Report *r, unsigned count, const char *time, char *buf, size_t size);

/* The errno's symbolic name ("EACCES"), or NULL. */
const char *report_errno_name(int error);
