/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* git's configuration without its credentials: what the sandbox is shown in place of a git
 * configuration file that holds some (git-config-copies.h writes it and binds it over the
 * original). Pure: text in, text out. */

#include <stddef.h>

typedef struct GitConfigFiltered {
        char *text;             /* the configuration less its credentials, NUL-terminated */
        size_t len;
        unsigned removed;       /* entries (and whole sections) taken out */
        char **includes;        /* the values of include.path and includeIf.*.path, unquoted,
                                 * as written (~ and relative paths not resolved) */
} GitConfigFiltered;

/* Filters the n bytes at text, line by line, keeping git's own syntax (sections, quoting,
 * comments, continued lines). Taken out, each replaced by a comment saying so (never by what
 * it held):
 *   - every entry of a credential section (credential.*, credential.<url>.*: helpers that may
 *     hold a password inline, user names);
 *   - http.extraHeader and http.cookieFile, for every URL (an Authorization header, cookies);
 *   - every entry whose name holds "pass", "token" or "secret" (sendemail.smtpPass,
 *     github.token);
 *   - every entry whose value is a credential by its shape (util/secret-value.h: a URL with a
 *     password, as in remote.*.url, url.*.insteadOf or http.proxy; a token);
 *   - a whole section whose subsection is such a value ([url "https://u:TOKEN@host/"]);
 *   - a line git's syntax does not allow, and after a section header of that kind, the whole
 *     section: what cannot be read is not shown.
 * Returns 0, or -ENOMEM. */
int git_config_filter(const char *text, size_t n, GitConfigFiltered *ret);

void git_config_filtered_done(GitConfigFiltered *f);
