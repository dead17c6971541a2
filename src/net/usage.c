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

int bpfd_written_check(const void *buf, size_t size, const char **ret_reason) {
        BpfdWritten w;

        if (size < sizeof(w))
                return bad(ret_reason, "WRITTEN_REPLY too short");
        memcpy(&w, buf, sizeof(w));
        if (w.header.magic != BPFD_MAGIC || w.header.version != BPFD_VERSION ||
            w.header.type != BPFD_MSG_WRITTEN_REPLY || w.header.size != size || w.header.reserved != 0)
                return bad(ret_reason, "malformed WRITTEN_REPLY header");
        if (w.n > BPFD_WRITTEN_MAX || size - sizeof(w) != (size_t) w.n * sizeof(BpfdDirId))
                return bad(ret_reason, "WRITTEN_REPLY count does not match its size");
        if ((w.flags & ~BPFD_WRITTEN_INCOMPLETE) || w.reserved != 0)
                return bad(ret_reason, "WRITTEN_REPLY with unknown flags");
        if (w.error > 0 || w.error < -4095 || (w.error < 0 && w.n != 0))
                return bad(ret_reason, "WRITTEN_REPLY with an error not an errno, or with directories");
        return w.error < 0 ? w.error : (int) w.n;
}
