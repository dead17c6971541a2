/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The Lua state's memory (lua-engine.h): an arena, and the limit of the budget in force.
 * What each choice here saves is measured in docs/measurements.md. */

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "policy/lua-engine-internal.h"

/* An evaluation allocates a few hundred KiB in many small blocks and frees them all at once
 * at the end. They come from an arena: a bump pointer in one mapping, where freeing the last
 * block gives its space back and freeing any other does nothing until the arena goes. Lua
 * tells the allocator every block's size, so the arena keeps no headers. When the arena is
 * full (user code churning), blocks come from malloc(). The limit counts what Lua holds,
 * wherever it lives. Blocks are aligned as Lua needs (8 bytes: its largest types are
 * pointers, lua_Integer and double), not as malloc() would: every page of the arena a resolve
 * touches costs the kernel as much to give and take back as several thousand instructions. */
#define ARENA_SIZE (8U << 20)
#define ARENA_ALIGN 8U
/* An evaluation touches a few hundred KiB of the arena. Rather than take a page fault for
 * each 4 KiB page, the pages are faulted in ahead, a step at a time, one madvise each. At most
 * one step is touched for nothing. */
#define ARENA_POPULATE_STEP (128U << 10)
/* The huge page the arena starts with, where there are transparent ones (x86-64: 2 MiB). */
#define ARENA_HUGE_PAGE (2U << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14; older glibc headers lack it */
#endif

static size_t align_up(size_t n) {
        return (n + ARENA_ALIGN - 1) & ~(size_t) (ARENA_ALIGN - 1);
}

static bool in_arena(LuaEngine *e, void *p) {
        return e->arena && (char *) p >= e->arena && (char *) p < e->arena + ARENA_SIZE;
}

/* Faults in the arena's pages up to the end of the step holding arena_used. Only an
 * optimisation: should madvise fail, pages are faulted in one by one as they are touched. */
static void arena_populate_step(LuaEngine *e) {
        size_t step = ARENA_POPULATE_STEP;
        size_t end = MIN((size_t) ARENA_SIZE, (e->arena_used + step - 1) / step * step);
        if (madvise(e->arena + e->arena_populated, end - e->arena_populated, MADV_POPULATE_WRITE) < 0)
                end = ARENA_SIZE;       /* then pages are faulted in as they are touched */
        e->arena_populated = end;
}

/* After every growth of arena_used: the step, when arena_used went past the pages faulted in. */
static inline void arena_populate(LuaEngine *e) {
        if (e->arena_used > e->arena_populated)
                arena_populate_step(e);
}

/* Address space only; pages are faulted in as they come into use (arena_populate). Its start
 * is aligned to a huge page, which its first part asks for (MADV_HUGEPAGE): where the kernel
 * gives transparent huge pages, the few hundred KiB a resolve touches come as one page, one
 * fault and one clear, which cost less than the 4 KiB pages one by one. Elsewhere the advice
 * fails and changes nothing. Without the mapping, malloc(). */
void arena_map(LuaEngine *e) {
        size_t size = ARENA_SIZE + ARENA_HUGE_PAGE;
        void *m =
                mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
                return;
        e->arena_map = m;
        e->arena_map_size = size;
        e->arena = (char *) (((uintptr_t) m + ARENA_HUGE_PAGE - 1) & ~(uintptr_t) (ARENA_HUGE_PAGE - 1));
        (void) madvise(e->arena, ARENA_HUGE_PAGE, MADV_HUGEPAGE);
}

void arena_unmap(LuaEngine *e) {
        if (e->arena)
                (void) munmap(e->arena_map, e->arena_map_size);
        e->arena = NULL;
}

static void *arena_alloc(LuaEngine *e, size_t n) {
        size_t a = align_up(n);
        if (!e->arena || a > ARENA_SIZE - e->arena_used)
                return NULL;
        void *p = e->arena + e->arena_used;
        e->arena_used += a;
        arena_populate(e);
        return p;
}

static bool arena_is_last(LuaEngine *e, void *p, size_t size) {
        return (char *) p + align_up(size) == e->arena + e->arena_used;
}

/* A block past the arena, counted: lua_engine_free needs to know whether any is left. */
static void *outside_alloc(LuaEngine *e, size_t n) {
        void *p = malloc(n);
        if (p)
                e->outside++;
        return p;
}

static void block_free(LuaEngine *e, void *ptr, size_t osize) {
        if (!in_arena(e, ptr)) {
                free(ptr);
                e->outside--;
        } else if (arena_is_last(e, ptr, osize))
                e->arena_used = (size_t) ((char *) ptr - e->arena);
}

static void *block_realloc(LuaEngine *e, void *ptr, size_t osize, size_t nsize) {
        if (!ptr)
                return arena_alloc(e, nsize) ?: outside_alloc(e, nsize);
        if (!in_arena(e, ptr))
                return realloc(ptr, nsize);
        if (nsize <= osize)
                return ptr;     /* shrink in place */
        if (arena_is_last(e, ptr, osize)) {
                size_t start = (size_t) ((char *) ptr - e->arena);
                if (align_up(nsize) <= ARENA_SIZE - start) {
                        e->arena_used = start + align_up(nsize);
                        arena_populate(e);
                        return ptr;
                }
        }
        void *n = arena_alloc(e, nsize) ?: outside_alloc(e, nsize);
        if (!n)
                return NULL;
        memcpy(n, ptr, osize);
        block_free(e, ptr, osize);
        return n;
}

/* Everything but the common case below. */
static _noinline_ void *engine_alloc_general(LuaEngine *e, void *ptr, size_t osize, size_t nsize) {
        if (!ptr)
                osize = 0;      /* then osize is a type tag, not a size */
        if (nsize == 0) {
                if (ptr)
                        block_free(e, ptr, osize);
                e->memory -= osize;
                return NULL;
        }
        /* Only growth is refused: Lua must always be able to shrink or free. */
        if (nsize > osize && e->memory - osize + nsize > e->now.memory) {
                e->memory_refused = true;
                return NULL;
        }
        void *n = block_realloc(e, ptr, osize, nsize);
        if (!n)
                return NULL;
        e->memory = e->memory - osize + nsize;
        return n;
}

void *engine_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
        LuaEngine *e = ud;

        /* Most calls: a new block, from the arena, within the limit. This is what the general
         * case does for it, in a few instructions and no call (a resolve makes thousands). */
        if (!ptr && nsize > 0 && e->memory + nsize <= e->now.memory && e->arena) {
                size_t a = align_up(nsize);
                if (a <= ARENA_SIZE - e->arena_used && e->arena_used + a <= e->arena_populated) {
                        void *p = e->arena + e->arena_used;
                        e->arena_used += a;
                        e->memory += nsize;
                        return p;
                }
        }
        return engine_alloc_general(e, ptr, osize, nsize);
}

size_t lua_engine_memory(LuaEngine *e) {
        return e->memory;
}

void lua_engine_hold(lua_State *L) {
        lua_engine_from(L)->held++;
}

void lua_engine_release(lua_State *L) {
        LuaEngine *e = lua_engine_from(L);
        if (e->held > 0)
                e->held--;
}
