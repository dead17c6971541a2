/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* SHA-256 (FIPS 180-4), for binding trust to a file's content. Small and self-contained:
 * libsystemd 252 does not export its own. */

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_HEX_SIZE (SHA256_DIGEST_SIZE * 2 + 1)

typedef struct Sha256 {
        uint32_t h[8];
        uint64_t length;        /* bytes hashed so far */
        uint8_t block[64];
        size_t used;            /* bytes in block */
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t size);
void sha256_final(Sha256 *s, uint8_t ret[SHA256_DIGEST_SIZE]);

/* One call: the lower-case hex digest of data, NUL-terminated. */
void sha256_hex(const void *data, size_t size, char ret[SHA256_HEX_SIZE]);
