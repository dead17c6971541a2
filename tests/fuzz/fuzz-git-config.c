/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for git's configuration filter (src/plan/git-config-filter.c) and the rule
 * it asks (src/util/secret-value.c): whatever the input, the filter returns, its text is as
 * long as it says, and no entry of it (a line and the lines it continues) is a credential by
 * that rule, as git reads them (judged whole, a URL's scheme on one line and a path on the next
 * could make one). The sanitizers report leaks and overreads. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/git-config-filter.h"
#include "util/secret-value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        GitConfigFiltered f = {};

        (void) secret_value_kind((const char *) data, size);
        if (git_config_filter((const char *) data, size, &f) < 0)
                return 0;
        if (!f.text || f.text[f.len] != 0)
                abort();
        /* each entry as git reads it: a line, with the lines a trailing backslash continues */
        for (const char *l = f.text, *end = f.text + f.len; l < end;) {
                const char *nl = l;
                while ((nl = memchr(nl, '\n', (size_t) (end - nl))) && nl > l && nl[-1] == '\\')
                        nl++;
                size_t len = nl ? (size_t) (nl - l) : (size_t) (end - l);
                if (secret_value_kind(l, len))
                        abort();
                l += len + 1;
        }
        for (char **i = f.includes; i && *i; i++)
                if (strlen(*i) > size)
                        abort();
        git_config_filtered_done(&f);
        return 0;
}
