/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for git's configuration filter (src/plan/git-config-filter.c) and the rule
 * it asks (src/util/secret-value.c): whatever the input, the filter returns, its text is as
 * long as it says, and no line of it is a credential by that rule (git reads a line at a time;
 * judged whole, a URL's scheme on one line and a path on the next could make one). The
 * sanitizers report leaks and overreads. */

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
        for (const char *l = f.text, *end = f.text + f.len; l < end;) {
                const char *nl = memchr(l, '\n', (size_t) (end - l));
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
