/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A tool's configuration file without its credentials: what a delegable sandbox is shown in
 * place of one that holds some (harden-tool-config.c names it, unit/git-config-copies.c writes
 * and binds the copy). One filter per format; pure: text in, text out. */

#include <stddef.h>

typedef enum ConfigFormat {
        CONFIG_FORMAT_LINES,    /* INI-like, TOML, YAML, .properties, KEY=VALUE, XML: by line */
        CONFIG_FORMAT_JSON,
} ConfigFormat;

typedef struct ConfigFiltered {
        char *text;             /* the configuration less its credentials, NUL-terminated */
        size_t len;
        unsigned removed;       /* lines, members or values taken out */
} ConfigFiltered;

/* The format of the file at `path`, by its name (.json is JSON; the rest are read by line). */
ConfigFormat config_format_of(const char *path);

/* Filters the n bytes at text. Taken out, never shown:
 *   - by line: every line that holds a credential by its structure (util/secret-value.h: a
 *     `password: x`, `token = "x"`, `<password>x</password>`, a URL with a password, a token),
 *     each made an empty line (line numbers stay, and every one of these formats takes an
 *     empty line); and under an INI or TOML section header, or a YAML key without a value,
 *     whose name is a secret field ([credentials], `github-oauth:`), every line of it;
 *   - JSON: every member whose name is a secret field (`"github-oauth": {...}`, "password")
 *     and every string that is a credential, in objects and arrays; a text that is not JSON
 *     becomes "{}".
 * Returns 0, or -ENOMEM. */
int config_filter(const char *text, size_t n, ConfigFormat format, ConfigFiltered *ret);

/* Reads the regular file at `canonical` (at most a few MiB) and filters it by its format.
 * Returns 0 or a negative errno. */
int config_read_filtered(const char *canonical, ConfigFiltered *ret);

void config_filtered_done(ConfigFiltered *f);
