/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for the filter of tools' configuration (src/plan/config-filter.c), in both
 * of its ways (by line, and JSON through json-c): whatever the input, it returns, its text is
 * as long as it says, and no line the filter by line keeps is a credential by the rule it
 * asks (src/util/secret-value.c). The sanitizers report leaks and overreads. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/config-filter.h"
#include "util/secret-value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        for (int format = CONFIG_FORMAT_LINES; format <= CONFIG_FORMAT_JSON; format++) {
                ConfigFiltered f = {};
                if (config_filter((const char *) data, size, (ConfigFormat) format, &f) < 0)
                        continue;
                if (!f.text || f.text[f.len] != 0 || strlen(f.text) > f.len)
                        abort();
                for (size_t i = 0; format == CONFIG_FORMAT_LINES && i < f.len;) {
                        const char *nl = memchr(f.text + i, '\n', f.len - i);
                        size_t end = nl ? (size_t) (nl - f.text) : f.len;
                        if (secret_value_kind(f.text + i, end - i))
                                abort();
                        i = end + 1;
                }
                config_filtered_done(&f);
        }
        return 0;
}
