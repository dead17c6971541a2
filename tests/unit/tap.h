/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A minimal TAP producer for the unit tests: `ok N - desc` per check, the plan line at the
 * end, and a non-zero exit status when any check failed. Each check names what it tested. */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define TAP_CHECK(cond, ...)                                                    \
        do {                                                                    \
                bool _c = (cond);                                               \
                tap_n++;                                                        \
                if (_c)                                                         \
                        printf("ok %d - ", tap_n);                              \
                else {                                                          \
                        tap_failed++;                                           \
                        printf("not ok %d - ", tap_n);                          \
                }                                                               \
                printf(__VA_ARGS__);                                            \
                printf("\n");                                                   \
                if (!_c)                                                        \
                        printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        } while (0)

#define TAP_STREQ(a, b, ...)                                                    \
        do {                                                                    \
                const char *_a = (a), *_b = (b);                                \
                bool _ok = _a && _b && strcmp(_a, _b) == 0;                     \
                TAP_CHECK(_ok, __VA_ARGS__);                                    \
                if (!_ok)                                                       \
                        printf("#   got '%s', expected '%s'\n", _a ? _a : "(null)", _b ? _b : "(null)"); \
        } while (0)

/* A check this machine cannot make: `ok N # SKIP why`, counted as passed by TAP readers. */
#define TAP_SKIP(...)                                                           \
        do {                                                                    \
                tap_n++;                                                        \
                printf("ok %d # SKIP ", tap_n);                                 \
                printf(__VA_ARGS__);                                            \
                printf("\n");                                                   \
        } while (0)

static inline int tap_done(void) {
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
