/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* `scudo suggest`: from the --report-json file of one run, the profile changes that would have
 * allowed what was refused, as a TOML snippet naming the profile and the file to put it in, and
 * the grants the run never used (write grants under which nothing changed), as candidates to
 * remove. Nothing is changed: the snippet is printed for the user to read and apply. */

#include <stdio.h>

/* Reads the records (one JSON object a line) in `text` and writes the suggestion to `out`.
 * `home` is shown as "~". Returns 0, or -EBADMSG for a file that is not a run's report (a line
 * that is not JSON, or no "run" record first), with *ret_line the line number. */
int suggest_write(const char *text, const char *home, FILE *out, unsigned *ret_line);
