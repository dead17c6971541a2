/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for the allow-list of git's configuration keys the end-of-run check asks
 * (src/git/git-config-keys.c): whatever the input, it returns, every include value it hands
 * on lies inside the text, and a text that sets core.fsmonitor is never benign. The sanitizers
 * report overreads. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/git-config-keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Bounds {
        const char *start;
        const char *end;
} Bounds;

static void on_include(const char *value, void *userdata) {
        const Bounds *b = userdata;
        if (value < b->start || value + strlen(value) > b->end)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        Bounds b = { .start = text, .end = text + size };
        (void) git_config_keys_benign(text, on_include, &b);
        free(text);

        /* the same input with a program named after it */
        static const char tail[] = "\n[core]\n\tfsmonitor = x\n";
        text = malloc(size + sizeof(tail));
        if (!text)
                return 0;
        memcpy(text, data, size);
        memcpy(text + size, tail, sizeof(tail));
        for (size_t i = 0; i < size; i++)
                if (text[i] == 0)
                        text[i] = ' ';     /* one text, not cut short before the key */
        if (git_config_keys_benign(text, NULL, NULL))
                abort();
        free(text);
        return 0;
}
