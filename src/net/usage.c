/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "net/usage.h"

static int bad(const char **ret_reason, const char *reason) {
        if (ret_reason)
                *ret_reason = reason;
        return -EBADMSG;
}

int bpfd_usage_check(const void *buf, size_t size, uint32_t n_rules, uint32_t n_deny,
                     const char **ret_reason) {
        const BpfdUsage *u = buf;

        if (size != sizeof(BpfdUsage))
                return bad(ret_reason, "USAGE_REPLY of the wrong size");
        if (u->header.magic != BPFD_MAGIC || u->header.version != BPFD_VERSION ||
            u->header.type != BPFD_MSG_USAGE_REPLY || u->header.size != size || u->header.reserved != 0)
                return bad(ret_reason, "malformed USAGE_REPLY header");
        if (n_rules > BPFD_RULES_MAX || n_deny > n_rules || u->n_rules != n_rules)
                return bad(ret_reason, "USAGE_REPLY for another number of rules");
        if (u->error > 0 || u->error < -4095)
                return bad(ret_reason, "USAGE_REPLY with an error that is no errno");
        /* Only allow rules can be reached; with an error, none is. */
        for (uint32_t i = 0; i < BPFD_RULES_MAX; i++)
                if (bpfd_usage_bit(u, i) && (u->error < 0 || i < n_deny || i >= n_rules))
                        return bad(ret_reason, "USAGE_REPLY marks a rule that cannot have been reached");
        return u->error;
}
