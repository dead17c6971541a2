/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <string.h>

#include "bpfd/name-key.h"

int net_name_key_make(uint64_t sid, const char *name, struct net_name_key *ret) {
        uint8_t wire[NET_NAME_KEY_SIZE];
        size_t n = 0, len = strlen(name);

        /* "a.b" is 1 'a' 1 'b' 0 in wire format: the text, a length byte before the first
         * label and the root's zero after the last */
        if (len == 0 || len + 2 > sizeof(wire))
                return -EINVAL;
        for (const char *p = name; *p; ) {
                size_t l = strcspn(p, ".");

                if (l == 0 || l > 63)
                        return -EINVAL;
                wire[n++] = (uint8_t) l;
                memcpy(wire + n, p, l);
                n += l;
                p += l;
                if (*p == '.' && *++p == 0)
                        return -EINVAL;         /* a final dot: an empty last label */
        }
        wire[n++] = 0;
        *ret = (struct net_name_key) { .sid = sid };
        memcpy(ret->name + sizeof(ret->name) - n, wire, n);
        return 0;
}
