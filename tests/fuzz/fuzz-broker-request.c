/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target: what a process inside a sandbox that delegates sends the broker. The first
 * byte says how many fds came with the message (the kernel's count, which the parser is given),
 * the rest is the message. Beyond not crashing, a message the parser accepts must hold what the
 * broker then relies on. */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "broker/wire.h"
#include "util/env-util.h"
#include "util/strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *reason = NULL;
        char **argv = NULL;
        uint32_t value;
        uint8_t *copy;

        if (size < 1)
                return 0;
        size_t n_fds = data[0] & 7;
        data++;
        size--;

        /* A copy of exactly `size` bytes, so that ASan sees any read past the message. */
        copy = malloc(size ?: 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);

        int k = broker_message_type(copy, size, &reason);
        assert(k < 0 ? reason != NULL : size >= sizeof(BrokerHeader));
        if (broker_parse_run(copy, size, n_fds, &argv, &reason) == 0) {
                size_t total = 0, n = strv_length(argv);
                BrokerHeader h;

                memcpy(&h, copy, sizeof(h));
                assert(n_fds == BROKER_RUN_FDS);
                assert(n >= 1 && n <= BROKER_ARGC_MAX && n == h.value);
                assert(argv[0][0] != 0);
                STRV_FOREACH(a, argv) {
                        assert(utf8_is_valid(*a));
                        total += strlen(*a) + 1;
                }
                assert(total + sizeof(BrokerHeader) == size && total <= BROKER_ARGV_SIZE_MAX);

                /* What was accepted builds back into the same bytes. */
                void *again;
                size_t again_size;
                assert(broker_build_run(argv, &again, &again_size) == 0);
                assert(again_size == size && memcmp(again, copy, size) == 0);
                free(again);
                strv_free(argv);
        }
        for (int t = BROKER_MSG_RUN; t <= BROKER_MSG_BUSY; t++)
                if (broker_parse_bare(copy, size, t, &value, &reason) == 0)
                        assert(size == sizeof(BrokerHeader));
        free(copy);
        return 0;
}
