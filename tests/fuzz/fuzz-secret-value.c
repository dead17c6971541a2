/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for the rule that judges a value a credential by its structure
 * (src/util/secret-value.c): whatever the bytes, it returns, reads none past the length it is
 * given (the input is copied to a buffer of exactly that size), and says the same twice. The
 * sanitizers report overreads and undefined behaviour. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/secret-value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *exact = malloc(size ? size : 1);
        if (!exact)
                return 0;
        memcpy(exact, data, size);
        const char *k = secret_value_kind(exact, size);
        if (k != secret_value_kind(exact, size))
                abort();
        if (k && !*k)
                abort();
        free(exact);
        return 0;
}
