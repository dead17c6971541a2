/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target: the map of the executables scudo is bound over inside a sandbox that
 * delegates (broker/route.h), as the scudo inside reads it. The first byte chooses the lookup
 * and the length of the key that follows; the rest is the map. A pair found is whole. */

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        bool by_target = data[0] & 1;
        size_t kl = (size_t) (data[0] >> 1);
        data++;
        size--;
        if (kl > size)
                kl = size;
        char *key = strndup((const char *) data, kl);
        /* A copy of exactly the map's bytes, so that ASan sees any read past them. */
        size_t n = size - kl;
        char *map = malloc(n ? n : 1);
        if (!key || !map)
                abort();
        memcpy(map, data + kl, n);
        char *found = NULL;
        int r = broker_route_map_find(map, n, by_target, key, &found);
        assert(r == 0 || r == -ENOENT || r == -EBADMSG || r == -ENOMEM);
        assert((r == 0) == (found != NULL));
        free(found);
        free(map);
        free(key);
        return 0;
}
