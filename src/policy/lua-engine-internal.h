/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the parts of the engine (lua-engine.h) share: the engine itself, its budgets, and the
 * functions one part calls in another. lua-engine.c builds the state and makes the calls into
 * it, lua-arena.c is its allocator, lua-budget.c the count hook and the watchdog, l-engine.c
 * the scudo.engine module, frozen.c the reader of the built-in policies' frozen form. */

#include <lua.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "policy/embedded.h"
#include "policy/lua-engine.h"

/* The count hook fires every HOOK_STEP VM instructions while the budget holds. */
#define HOOK_STEP 1000

typedef enum Trip {
        TRIP_NONE,
        TRIP_INSTRUCTIONS,
        TRIP_DEADLINE,
} Trip;

/* What a budget is: absolute limits, narrowed while user code runs. */
typedef struct Budget {
        size_t memory;
        uint64_t instructions;
        uint64_t deadline;      /* CLOCK_MONOTONIC, usec; 0: none */
} Budget;

struct LuaEngine {
        lua_State *L;
        LuaLimits limits;

        size_t memory;                  /* bytes held by the state */
        char *arena;                    /* see engine_alloc */
        void *arena_map;                /* the mapping holding it, arena_map_size bytes */
        size_t arena_map_size;
        size_t arena_used;
        size_t arena_populated;         /* bytes faulted in ahead (all once the kernel cannot:
                                         * MADV_POPULATE_WRITE is 5.14), see arena_populate */
        bool memory_refused;            /* the allocator said no since the flag was cleared */
        size_t outside;                 /* live blocks from malloc(), past the arena */
        unsigned held;                  /* C memory only a finalizer would free: lua_engine_hold */
        uint64_t instructions;          /* counted by the hook, HOOK_STEP at a time */

        Budget global;                  /* the whole evaluation */
        Budget now;                     /* in force: global, or narrower inside engine.budgeted_call */

        Trip trip;
        volatile sig_atomic_t watchdog_fired;
        bool watchdog_armed;
        bool restore_mask;              /* SIGALRM was blocked before watchdog_arm */
        timer_t timer;
        /* When the timer fires (CLOCK_MONOTONIC, usec; 0: not set), which the handler sets
         * too; and now.deadline as the handler reads it, a copy of its own since the handler
         * may run while `now` is being changed. Both read and written atomically. */
        uint64_t timer_due;
        uint64_t watch_deadline;
        struct sigaction old_action;
        sigset_t old_mask;

        int context_ref;                /* registry ref of the running user code's context */
        int error_mt_ref;               /* metatable marking configuration errors */
        unsigned depth;                 /* nesting of lua_engine_call */
};

static inline uint64_t now_usec(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

/* lua-engine.c */
/* Whether the value at idx is a configuration error (lua_engine_raise). */
bool engine_is_config_error(lua_State *L, int idx);
/* The message handler of every protected call. */
int engine_msghandler(lua_State *L);

/* lua-arena.c */
/* Maps the arena (without it, every block comes from malloc()). */
void arena_map(LuaEngine *e);
void arena_unmap(LuaEngine *e);
/* The state's lua_Alloc; `ud` is the engine. */
void *engine_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* lua-budget.c */
void engine_hook(lua_State *L, lua_Debug *ar);
/* Makes the watchdog follow the budget in force (e->now.deadline). */
void watchdog_update(LuaEngine *e);
void watchdog_disarm(LuaEngine *e);
/* Start and end of a protected call from C: the outermost starts the global budget. */
void engine_enter(LuaEngine *e);
Trip engine_leave(LuaEngine *e);

/* frozen.c */
/* frozen([i]): the loader of the frozen definitions of an embedded policy, upvalue 1 its
 * EmbeddedFile (see frozen-format.h). */
int engine_frozen(lua_State *L);
