/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* SHA-256, for binding trust to a file's content: libgcrypt's, which libsystemd (252) already
 * links into every scudo process, so it costs no library more. Its message digests only: no
 * secure memory, no random pool. */

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_HEX_SIZE (SHA256_DIGEST_SIZE * 2 + 1)

/* An incremental hash; sha256_final() ends it. Should libgcrypt refuse to start (it never has
 * for a digest this standard), sha256_final() and sha256_hex() fail with -EIO, and what asked
 * for the hash fails with them: a file whose hash is unknown is not trusted. */
typedef struct Sha256 {
        void *md;               /* gcry_md_hd_t, NULL when libgcrypt refused */
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t size);
int sha256_final(Sha256 *s, uint8_t ret[SHA256_DIGEST_SIZE]);

/* One call: the lower-case hex digest of data, NUL-terminated; 0 or -EIO. */
int sha256_hex(const void *data, size_t size, char ret[SHA256_HEX_SIZE]);
