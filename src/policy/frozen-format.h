/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The built-in policies' frozen form: written by tools/policy-freeze.c at build time, read by
 * src/policy/frozen.c. FROZEN_MAGIC, the number of chunks (u32), then each chunk's size (u32)
 * and its bytecode, our own, made by this Lua library at build time; every u32 little-endian.
 * Chunk 1 returns the definitions with what every run needs of them (scudo.freeze), chunk
 * i + 1 the rest of the values of the i-th. A new layout takes a new magic. */

#include <stdint.h>

#define FROZEN_MAGIC "scudo-frozen-2\n"

static inline uint32_t frozen_get_u32(const unsigned char b[static 4]) {
        return (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 | (uint32_t) b[3] << 24;
}

static inline void frozen_put_u32(unsigned char b[static 4], uint32_t v) {
        b[0] = v & 0xff;
        b[1] = (v >> 8) & 0xff;
        b[2] = (v >> 16) & 0xff;
        b[3] = (v >> 24) & 0xff;
}
