/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for the host and port of a git remote URL (src/plan/git-remote-url.c): a
 * remote's URL is the repository's to choose. Whatever the bytes (as a NUL-terminated string
 * of exactly that size), it returns one of its documented answers; a rule it writes is
 * NUL-terminated within the buffer, ends in ":PORT" and starts with no '-'. The sanitizers
 * report overreads and undefined behaviour. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/git-remote-url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *url = malloc(size + 1);
        char rule[GIT_REMOTE_HOST_MAX + 16];
        if (!url)
                return 0;
        memcpy(url, data, size);
        url[size] = 0;
        int r = git_remote_url_rule(url, rule, sizeof rule);
        if (r != 0 && r != -ENOENT && r != -EPROTO && r != -EINVAL && r != -ENOBUFS)
                abort();
        if (r == 0) {
                size_t l = strnlen(rule, sizeof rule);
                const char *colon = strrchr(rule, ':');
                if (l == sizeof rule || !colon || !colon[1] || rule[0] == '-' ||
                    strspn(colon + 1, "0123456789") != strlen(colon + 1))
                        abort();
        }
        free(url);
        return 0;
}
