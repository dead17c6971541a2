/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Whether a git configuration file names no code to run and no other place to read from or
 * write to: only the keys `git init`, `git clone` and `cargo new` write (an allow-list), for the
 * end-of-run check of a git directory the command made or changed (persist-check.h). Pure
 * logic, fuzzed (tests/fuzz/fuzz-git-config-keys.c). */

#include <stdbool.h>

/* Called for each include.path and includeIf.*.path, with the value as written (from after
 * the '=' to the end of the line, leading blanks skipped). */
typedef void (*GitConfigInclude)(const char *value, void *userdata);

/* Reads `text` (NUL-terminated; its lines are cut in place). Anything it cannot read as git
 * would, a key on a section's line, a value going on to the next line, counts as not benign. */
bool git_config_keys_benign(char *text, GitConfigInclude on_include, void *userdata);
