/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdbool.h>
#include <string.h>

#include "util/macro.h"
#include "policy/sha256.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SHA256_SHANI 1
#endif

static const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned n) {
        return (x >> n) | (x << (32 - n));
}

static void compress(Sha256 *s, const uint8_t *p) {
        uint32_t w[64], a, b, c, d, e, f, g, h;

        for (unsigned i = 0; i < 16; i++)
                w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 |
                       (uint32_t) p[4 * i + 2] << 8 | (uint32_t) p[4 * i + 3];
        for (unsigned i = 16; i < 64; i++) {
                uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
                uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
        e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
        for (unsigned i = 0; i < 64; i++) {
                uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
                uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
                h = g, g = f, f = e, e = d + t1;
                d = c, c = b, b = a, a = t1 + t2;
        }
        s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
        s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

#ifdef SHA256_SHANI
/* The SHA extensions of x86 (sha256rnds2 does two rounds, sha256msg1/2 the message schedule):
 * every trusted project file is hashed on every run, and these take a tenth of the time. */
__attribute__((target("sha,sse4.1"))) static void compress_shani(uint32_t h[8], const uint8_t *p, size_t blocks) {
        const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
        /* The state as the instructions want it: A B E F and C D G H, A in the top word. */
        __m128i dcba = _mm_loadu_si128((const __m128i *) &h[0]);
        __m128i hgfe = _mm_loadu_si128((const __m128i *) &h[4]);
        __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
        __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
        __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
        __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

        for (; blocks > 0; blocks--, p += 64) {
                __m128i w[4], abef0 = abef, cdgh0 = cdgh;
                for (unsigned i = 0; i < 4; i++)
                        w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (p + 16 * i)), bswap);
                /* Four rounds a group; from the fifth on, w[g & 3] (words 4g-16.. of the schedule)
                 * becomes words 4g..4g+3: W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]). */
                for (unsigned g = 0; g < 16; g++) {
                        if (g >= 4) {
                                __m128i x = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
                                x = _mm_add_epi32(x, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
                                w[g & 3] = _mm_sha256msg2_epu32(x, w[(g + 3) & 3]);
                        }
                        __m128i k = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *) &K[4 * g]));
                        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
                        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
                }
                abef = _mm_add_epi32(abef, abef0);
                cdgh = _mm_add_epi32(cdgh, cdgh0);
        }
        __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
        __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
        _mm_storeu_si128((__m128i *) &h[0], _mm_blend_epi16(feba, dchg, 0xF0));
        _mm_storeu_si128((__m128i *) &h[4], _mm_alignr_epi8(dchg, feba, 8));
}

static bool have_shani(void) {
        static int have = -1;   /* not asked yet */
        if (have < 0) {
                unsigned a, b, c, d;
                bool sse41 = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_1) && (c & bit_SSSE3);
                have = sse41 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
        }
        return have;
}
#endif

/* Hashes whole blocks. */
static void compress_blocks(Sha256 *s, const uint8_t *p, size_t blocks) {
#ifdef SHA256_SHANI
        if (have_shani()) {
                compress_shani(s->h, p, blocks);
                return;
        }
#endif
        for (; blocks > 0; blocks--, p += 64)
                compress(s, p);
}

void sha256_init(Sha256 *s) {
        static const uint32_t iv[8] = {
                0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
        };
        *s = (Sha256) {};
        memcpy(s->h, iv, sizeof(iv));
}

void sha256_update(Sha256 *s, const void *data, size_t size) {
        const uint8_t *p = data;

        s->length += size;
        while (size > 0) {
                if (s->used == 0 && size >= 64) {
                        /* Whole blocks straight from the data. */
                        size_t blocks = size / 64;
                        compress_blocks(s, p, blocks);
                        p += blocks * 64, size -= blocks * 64;
                        continue;
                }
                size_t n = (64 - s->used < size ? 64 - s->used : size);
                memcpy(s->block + s->used, p, n);
                s->used += n, p += n, size -= n;
                if (s->used == 64) {
                        compress_blocks(s, s->block, 1);
                        s->used = 0;
                }
        }
}

void sha256_final(Sha256 *s, uint8_t ret[SHA256_DIGEST_SIZE]) {
        uint64_t bits = s->length * 8;
        uint8_t pad[72] = { 0x80 };
        size_t padlen = (s->used < 56 ? 56 : 120) - s->used;

        for (unsigned i = 0; i < 8; i++)
                pad[padlen + i] = (uint8_t) (bits >> (56 - 8 * i));
        uint64_t keep = s->length;
        sha256_update(s, pad, padlen + 8);
        s->length = keep;
        for (unsigned i = 0; i < 8; i++) {
                ret[4 * i] = (uint8_t) (s->h[i] >> 24);
                ret[4 * i + 1] = (uint8_t) (s->h[i] >> 16);
                ret[4 * i + 2] = (uint8_t) (s->h[i] >> 8);
                ret[4 * i + 3] = (uint8_t) s->h[i];
        }
}

void sha256_hex(const void *data, size_t size, char ret[SHA256_HEX_SIZE]) {
        static const char hex[] = "0123456789abcdef";
        uint8_t d[SHA256_DIGEST_SIZE];
        Sha256 s;

        sha256_init(&s);
        sha256_update(&s, data, size);
        sha256_final(&s, d);
        for (unsigned i = 0; i < SHA256_DIGEST_SIZE; i++) {
                ret[2 * i] = hex[d[i] >> 4];
                ret[2 * i + 1] = hex[d[i] & 15];
        }
        ret[SHA256_HEX_SIZE - 1] = 0;
}
