/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <gcrypt.h>
#include <stdbool.h>
#include <string.h>

#include "policy/sha256.h"

/* The version libsystemd itself asks for; anything Debian 12 ships is newer. */
#define GCRYPT_VERSION_MIN "1.4.5"

/* libgcrypt wants gcry_check_version() before anything else, once. libsystemd may have done
 * it already (for the journal's sealing); doing it again is harmless. Secure memory is for
 * keys, and a digest of a file has none: turning it off keeps libgcrypt from locking pages. */
static bool gcrypt_ready(void) {
        static int ready = -1;

        if (ready < 0) {
                ready = gcry_check_version(GCRYPT_VERSION_MIN) != NULL;
                if (ready && !gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
                        (void) gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
                        (void) gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
                }
        }
        return ready;
}

void sha256_init(Sha256 *s) {
        gcry_md_hd_t md = NULL;

        if (!gcrypt_ready() || gcry_md_open(&md, GCRY_MD_SHA256, 0) != 0)
                md = NULL;
        s->md = md;
}

void sha256_update(Sha256 *s, const void *data, size_t size) {
        if (s->md && size > 0)
                gcry_md_write(s->md, data, size);
}

int sha256_final(Sha256 *s, uint8_t ret[SHA256_DIGEST_SIZE]) {
        const unsigned char *d = s->md ? gcry_md_read(s->md, GCRY_MD_SHA256) : NULL;

        if (d)
                memcpy(ret, d, SHA256_DIGEST_SIZE);
        if (s->md)
                gcry_md_close(s->md);
        s->md = NULL;
        return d ? 0 : -EIO;
}

int sha256_hex(const void *data, size_t size, char ret[SHA256_HEX_SIZE]) {
        static const char digits[] = "0123456789abcdef";
        uint8_t d[SHA256_DIGEST_SIZE];

        if (!gcrypt_ready())
                return -EIO;
        gcry_md_hash_buffer(GCRY_MD_SHA256, d, data, size);
        for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
                ret[2 * i] = digits[d[i] >> 4];
                ret[2 * i + 1] = digits[d[i] & 0xf];
        }
        ret[SHA256_HEX_SIZE - 1] = 0;
        return 0;
}
