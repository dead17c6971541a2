/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A lua_Alloc that refuses to grow past a limit, for the tests and fuzzers that drive the
 * parser's out-of-memory paths. (osize is a type tag when ptr is NULL.) */

#include <stdlib.h>

typedef struct Budget {
        size_t used;
        size_t limit;
} Budget;

static inline void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
        Budget *b = ud;

        if (!ptr)
                osize = 0;
        if (nsize == 0) {
                free(ptr);
                b->used -= osize;
                return NULL;
        }
        if (nsize > osize && b->used + (nsize - osize) > b->limit)
                return NULL;
        void *q = realloc(ptr, nsize);
        if (q)
                b->used = b->used - osize + nsize;
        return q;
}
