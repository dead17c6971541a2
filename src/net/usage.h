/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* scudo's check of the helper's USAGE_REPLY (net/protocol.h). The helper is privileged, but a
 * confused or newer one must not make scudo read past the message or count a rule it did not
 * send as reached. A pure function: the unit tests and the fuzzer call it directly. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/protocol.h"

/* Checks `size` bytes as the answer to a session of `n_rules` rules whose first `n_deny` are
 * deny rules. Returns 0 (then reached[] holds bits for allow rules only), the helper's
 * negative error, or -EBADMSG with a reason. */
int bpfd_usage_check(const void *buf, size_t size, uint32_t n_rules, uint32_t n_deny,
                     const char **ret_reason);

static inline bool bpfd_usage_bit(const BpfdUsage *u, uint32_t i) {
        return i < BPFD_RULES_MAX && (u->reached[i / 8] & (1U << (i % 8)));
}

/* Checks `size` bytes as the answer to WRITTEN (net/protocol.h): the header, a count that
 * matches the size, no unknown flag, and with an error no directory. Returns the number of
 * directories that follow, the helper's negative error, or -EBADMSG with a reason. */
int bpfd_written_check(const void *buf, size_t size, const char **ret_reason);
