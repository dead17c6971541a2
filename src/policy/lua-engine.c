/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "policy/embedded.h"
#include "policy/lua-engine.h"

/* The count hook fires every HOOK_STEP VM instructions while the budget holds. */
#define HOOK_STEP 1000
/* How long a C function may keep running past the deadline before the watchdog gives up. */
#define WATCHDOG_GRACE_USEC 1000000ULL

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
        Budget now;                     /* in force: global, or narrower inside engine.sandbox */

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

/* The engine whose watchdog is armed; there is at most one, since it is one process timer. */
static LuaEngine *watchdog_engine;

static uint64_t now_usec(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

LuaEngine *lua_engine_from(lua_State *L) {
        return *(LuaEngine **) lua_getextraspace(L);
}

/* ---- memory ---------------------------------------------------------------------------- */

/* An evaluation allocates a few hundred KiB in many small blocks and frees them all at once
 * at the end. They come from an arena: a bump pointer in one mapping, where freeing the last
 * block gives its space back and freeing any other does nothing until the arena goes. Lua
 * tells the allocator every block's size, so the arena keeps no headers. When the arena is
 * full (user code churning), blocks come from malloc(). The limit counts what Lua holds,
 * wherever it lives. Blocks are aligned as Lua needs (8 bytes: its largest types are
 * pointers, lua_Integer and double), not as malloc() would: every page of the arena a resolve
 * touches costs the kernel some 2 us to give and take back, as much as several thousand
 * instructions. */
#define ARENA_SIZE (8U << 20)
#define ARENA_ALIGN 8U
/* An evaluation touches about 400 KiB of the arena, and taking a page fault for each 4 KiB
 * page was a tenth of its CPU time. The pages are faulted in ahead instead, a step at a time,
 * one madvise each (tools/bench-policy: 1.9 instead of 2.07 ms per resolve). At most one
 * step is touched for nothing; steps from 64 to 512 KiB measured the same. */
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
 * gives transparent huge pages, the few hundred KiB a resolve touches come as one page, a
 * fault and a clear of 2 MiB, about half of what the ~90 pages of 4 KiB cost one by one
 * (tools/bench-policy). Elsewhere the advice fails and changes nothing. Without the mapping,
 * malloc(). */
static void arena_map(LuaEngine *e) {
        size_t size = ARENA_SIZE + ARENA_HUGE_PAGE;
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
                return;
        e->arena_map = m;
        e->arena_map_size = size;
        e->arena = (char *) (((uintptr_t) m + ARENA_HUGE_PAGE - 1) & ~(uintptr_t) (ARENA_HUGE_PAGE - 1));
        (void) madvise(e->arena, ARENA_HUGE_PAGE, MADV_HUGEPAGE);
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

static void *engine_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
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

/* ---- instructions and time ------------------------------------------------------------- */

static const char *trip_message(Trip t) {
        switch (t) {
        case TRIP_INSTRUCTIONS:
                return "instruction budget exhausted";
        case TRIP_DEADLINE:
                return "deadline exceeded";
        default:
                return "budget exhausted";
        }
}

static void engine_hook(lua_State *L, lua_Debug *ar) {
        LuaEngine *e = lua_engine_from(L);

        if (e->trip == TRIP_NONE) {
                e->instructions += HOOK_STEP;
                if (e->watchdog_fired || (e->now.deadline > 0 && now_usec() > e->now.deadline))
                        e->trip = TRIP_DEADLINE;
                else if (e->instructions > e->now.instructions)
                        e->trip = TRIP_INSTRUCTIONS;
                else
                        return;
                /* From now on fire on every instruction: whatever catches the error below
                 * gets the same error again at its next instruction. */
                lua_sethook(L, engine_hook, LUA_MASKCOUNT, 1);
        }
        lua_pushstring(L, trip_message(e->trip));       /* stack: message */
        lua_error(L);
}

/* The watchdog is one process timer, armed once per engine. Every call into Lua and every
 * user-code budget moves the deadline; setting the timer again for each move, and stopping it
 * between calls, was most of a resolve's system calls for it. So the timer is only ever moved
 * earlier: a deadline that moves later leaves it where it is, and when it fires early, the
 * handler sets it again for the deadline then in force (or for nothing, between calls). */
static uint64_t load_u64(const uint64_t *p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store_u64(uint64_t *p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Sets the timer to fire at `due` (absolute). Async-signal-safe: timer_settime is. */
static void watchdog_set(LuaEngine *e, uint64_t due, uint64_t now) {
        uint64_t usec = due > now ? due - now : 0;
        struct itimerspec its = {
                .it_value.tv_sec = (time_t) (usec / 1000000ULL),
                .it_value.tv_nsec = (long) (usec % 1000000ULL) * 1000L,
        };
        if (usec == 0)
                its.it_value.tv_nsec = 1;       /* already due: fire at once */
        store_u64(&e->timer_due, due);
        (void) timer_settime(e->timer, 0, &its, NULL);
}

static void watchdog_handler(int sig) {
        LuaEngine *e = watchdog_engine;

        if (!e)
                return;
        uint64_t deadline = load_u64(&e->watch_deadline);
        uint64_t now = now_usec();
        if (e->depth == 0 || deadline == 0 || (!e->watchdog_fired && now < deadline)) {
                /* Between calls, or early for the deadline in force: set for that one. */
                if (e->depth > 0 && deadline > 0)
                        watchdog_set(e, deadline, now);
                else
                        store_u64(&e->timer_due, 0);
                return;
        }
        if (!e->watchdog_fired) {
                /* Force the hook: it runs at the next VM instruction and raises. */
                e->watchdog_fired = 1;
                lua_sethook(e->L, engine_hook, LUA_MASKCOUNT, 1);
                watchdog_set(e, now + WATCHDOG_GRACE_USEC, now);
                return;
        }
        /* Still inside a C function (a pathological pattern match, say) a second after the
         * deadline. Nothing has been started yet; give up without running anything. */
        static const char msg[] = "scudo: policy evaluation did not finish before its deadline, "
                                  "giving up without running anything\n";
        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(125);
}

/* Makes the watchdog follow the budget in force: moves the timer only when the deadline
 * came before it. */
static void watchdog_update(LuaEngine *e) {
        if (!e->watchdog_armed)
                return;
        uint64_t deadline = e->now.deadline;
        store_u64(&e->watch_deadline, deadline);
        if (deadline == 0 || e->watchdog_fired)
                return;
        uint64_t due = load_u64(&e->timer_due);
        if (due == 0 || due > deadline)
                watchdog_set(e, deadline, now_usec());
}

static int watchdog_arm(LuaEngine *e) {
        if (!e->limits.watchdog || watchdog_engine)
                return 0;

        struct sigevent sev = {
                .sigev_notify = SIGEV_SIGNAL,
                .sigev_signo = SIGALRM,
        };
        if (timer_create(CLOCK_MONOTONIC, &sev, &e->timer) < 0)
                return negative_errno();

        /* SA_RESTART: a timer that fires early (see above) must not fail a system call. What
         * a signal cannot end, a C function stuck past the deadline, the grace period does. */
        struct sigaction sa = { .sa_handler = watchdog_handler, .sa_flags = SA_RESTART };
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGALRM, &sa, &e->old_action);
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, SIGALRM);
        if (sigprocmask(SIG_UNBLOCK, &m, &e->old_mask) == 0)
                e->restore_mask = sigismember(&e->old_mask, SIGALRM) == 1;

        e->timer_due = 0;
        watchdog_engine = e;
        e->watchdog_armed = true;
        watchdog_update(e);
        return 0;
}

static void watchdog_disarm(LuaEngine *e) {
        if (!e->watchdog_armed)
                return;
        (void) timer_delete(e->timer);
        if (e->restore_mask)
                (void) sigprocmask(SIG_SETMASK, &e->old_mask, NULL);
        (void) sigaction(SIGALRM, &e->old_action, NULL);
        watchdog_engine = NULL;
        e->watchdog_armed = false;
}

/* ---- errors ---------------------------------------------------------------------------- */

static bool is_config_error(lua_State *L, int idx) {
        LuaEngine *e = lua_engine_from(L);
        bool r = false;

        if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx))       /* stack: mt */
                return false;
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->error_mt_ref);                     /* stack: mt errmt */
        r = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);                                                          /* stack: */
        return r;
}

/* The message handler of every protected call: configuration errors pass unchanged; anything
 * else becomes a string with a traceback. An error object is never converted through its
 * metamethods: a hostile __tostring would run outside any budget. */
static int engine_msghandler(lua_State *L) {
        if (is_config_error(L, 1))
                return 1;

        const char *msg = NULL;
        if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER)
                msg = lua_tostring(L, 1);
        else
                msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
        luaL_traceback(L, L, msg, 1);                                           /* stack: ... tb */
        return 1;
}

_noreturn_ int lua_engine_raise(lua_State *L, const char *fmt, ...) {
        LuaEngine *e = lua_engine_from(L);
        va_list ap;

        lua_createtable(L, 0, 1);                                               /* stack: err */
        va_start(ap, fmt);
        lua_pushvfstring(L, fmt, ap);                                           /* stack: err msg */
        va_end(ap);
        lua_setfield(L, -2, "message");                                         /* stack: err */
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->error_mt_ref);                     /* stack: err mt */
        lua_setmetatable(L, -2);                                                /* stack: err */
        lua_error(L);
        abort();        /* not reached */
}

/* Copies the error on top of the stack to a malloc'd string, popping it. */
static char *error_to_string(lua_State *L) {
        const char *s = NULL;
        char *r;

        if (is_config_error(L, -1)) {
                lua_getfield(L, -1, "message");                                 /* stack: err msg */
                lua_remove(L, -2);                                              /* stack: msg */
        }
        if (lua_type(L, -1) == LUA_TSTRING)
                s = lua_tostring(L, -1);
        r = strdup(s ?: "(error object is not a string)");
        lua_pop(L, 1);
        return r;
}

void lua_engine_push_where(lua_State *L) {
        lua_Debug ar;

        for (int level = 1; lua_getstack(L, level, &ar); level++) {
                if (!lua_getinfo(L, "Sl", &ar))
                        break;
                if (ar.currentline > 0) {
                        lua_pushfstring(L, "%s:%d", ar.short_src, ar.currentline);
                        return;
                }
        }
        lua_pushliteral(L, "?");
}

void lua_engine_push_context(lua_State *L, const char *what) {
        LuaEngine *e = lua_engine_from(L);

        if (e->context_ref == LUA_NOREF)
                luaL_error(L, "%s: only available while a profile file or a hook runs", what);
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->context_ref);                      /* stack: ctx */
}

/* ---- scudo.engine: what the Lua library needs from the host ---------------------------- */

/* engine.sandbox(label, context, f, ...) -> true, results... | nil, message
 *
 * Runs f(...) as user code: under the narrower budget, with `context` visible to the public
 * primitives (scudo.fs.write, ...), and with any error turned into a message that starts
 * with `label`. A budget that runs out is reported here, whatever the user code did with
 * the error on its way out. */
static int l_engine_sandbox(lua_State *L) {
        LuaEngine *e = lua_engine_from(L);
        const char *label = luaL_checkstring(L, 1);
        luaL_checktype(L, 2, LUA_TTABLE);
        luaL_checktype(L, 3, LUA_TFUNCTION);

        if (e->context_ref != LUA_NOREF)
                return luaL_error(L, "engine.sandbox: user code may not start user code");

        int nargs = lua_gettop(L) - 3;
        Budget saved = e->now;
        uint64_t t = now_usec();

        lua_pushvalue(L, 2);                                                    /* stack: l c f a.. c */
        e->context_ref = luaL_ref(L, LUA_REGISTRYINDEX);                        /* stack: l c f a.. */

        e->now.memory = MIN(e->global.memory, e->memory + e->limits.sandbox_memory);
        e->now.instructions = MIN(e->global.instructions,
                                  e->instructions + e->limits.sandbox_instructions);
        if (e->limits.sandbox_usec > 0)
                e->now.deadline = e->global.deadline > 0 ?
                        MIN(e->global.deadline, t + e->limits.sandbox_usec) : t + e->limits.sandbox_usec;
        e->memory_refused = false;
        watchdog_update(e);
        /* The collector runs while user code does; see engine_setup. So does the count hook:
         * only user code is counted (the library's own work is bounded by the deadline). */
        lua_gc(L, LUA_GCRESTART);
        lua_sethook(L, engine_hook, LUA_MASKCOUNT, HOOK_STEP);

        lua_pushcfunction(L, engine_msghandler);                                /* stack: l c f a.. h */
        lua_insert(L, 3);                                                       /* stack: l c h f a.. */
        int status = lua_pcall(L, nargs, LUA_MULTRET, 3);                       /* stack: l c h r.. */

        lua_gc(L, LUA_GCSTOP);
        Trip trip = e->trip;
        bool refused = e->memory_refused;
        e->now = saved;
        e->memory_refused = false;
        luaL_unref(L, LUA_REGISTRYINDEX, e->context_ref);
        e->context_ref = LUA_NOREF;
        if (trip == TRIP_NONE || !e->watchdog_fired) {
                /* Back to the library's own code, which runs without the count hook. A budget
                 * that ran out is this user code's error, reported below. (Once the watchdog
                 * has fired, the hook stays, raising at every instruction, and everything
                 * unwinds to the C caller.) */
                e->trip = TRIP_NONE;
                lua_sethook(L, NULL, 0, 0);
        }
        watchdog_update(e);

        if (status == LUA_OK) {
                int n = lua_gettop(L) - 3;
                lua_pushboolean(L, true);                                       /* stack: l c h r.. true */
                lua_insert(L, 4);                                               /* stack: l c h true r.. */
                return n + 1;
        }

        lua_pushnil(L);                                                         /* stack: l c h err nil */
        if (trip == TRIP_INSTRUCTIONS)
                lua_pushfstring(L, "%s: stopped: instruction budget of %I exhausted (a loop without end?)",
                                label, (lua_Integer) e->limits.sandbox_instructions);
        else if (trip == TRIP_DEADLINE)
                lua_pushfstring(L, "%s: stopped: ran longer than %I ms", label,
                                (lua_Integer) (e->limits.sandbox_usec / 1000));
        else if (status == LUA_ERRMEM || refused) {
                lua_gc(L, LUA_GCCOLLECT);
                lua_pushfstring(L, "%s: stopped: memory limit of %I MiB reached", label,
                                (lua_Integer) (e->limits.sandbox_memory >> 20));
        } else if (is_config_error(L, -2)) {
                lua_getfield(L, -2, "message");                                 /* stack: ... err nil msg */
                lua_pushfstring(L, "%s: %s", label, lua_tostring(L, -1));
                lua_remove(L, -2);
        } else
                lua_pushfstring(L, "%s: %s", label,
                                lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "error");
        return 2;                                                               /* stack: ... nil msg */
}

/* engine.load(text, chunkname, env) -> function | nil, message
 * Text only: binary chunks are refused (they can crash the interpreter). */
static int l_engine_load(lua_State *L) {
        size_t len;
        const char *text = luaL_checklstring(L, 1, &len);
        const char *name = luaL_checkstring(L, 2);
        luaL_checktype(L, 3, LUA_TTABLE);

        if (luaL_loadbufferx(L, text, len, name, "t") != LUA_OK) {              /* stack: t n env err */
                lua_pushnil(L);
                lua_insert(L, -2);                                              /* stack: t n env nil err */
                return 2;
        }
        lua_pushvalue(L, 3);                                                    /* stack: t n env f env */
        if (!lua_setupvalue(L, -2, 1))                                          /* stack: t n env f */
                lua_pop(L, 1);
        return 1;
}

/* engine.raise(message): a configuration error, shown without a traceback. */
static int l_engine_raise(lua_State *L) {
        const char *msg = luaL_checkstring(L, 1);
        lua_engine_raise(L, "%s", msg);
}

/* engine.funcinfo(f) -> source, line: where a function was defined. */
static int l_engine_funcinfo(lua_State *L) {
        lua_Debug ar;

        luaL_checktype(L, 1, LUA_TFUNCTION);
        lua_pushvalue(L, 1);
        if (!lua_getinfo(L, ">S", &ar))
                return 0;
        lua_pushstring(L, ar.short_src);
        lua_pushinteger(L, ar.linedefined);
        return 2;
}

/* ---- the built-in policies' frozen definitions ---------------------------------------- */

/* What tools/policy-freeze.c writes: this magic, the number of chunks (u32, little-endian), then
 * each chunk's size (u32) and its bytecode, our own, made by this Lua library at build time.
 * Chunk 1 returns the definitions with what every run needs of them (scudo.admin.freeze), chunk
 * i + 1 the rest of the values of the i-th. */
#define FROZEN_MAGIC "scudo-frozen-2\n"

static uint32_t get_u32(const unsigned char *b) {
        return (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 | (uint32_t) b[3] << 24;
}

/* Finds chunk `index` (from 1) of the frozen data: false when there is no such chunk. */
static bool frozen_chunk(const EmbeddedFile *f, uint32_t index, const char **ret, size_t *ret_size) {
        size_t ml = strlen(FROZEN_MAGIC), at = ml + 4;
        const unsigned char *d = (const unsigned char *) f->bytecode;

        if (!d || f->bytecode_size < at || memcmp(d, FROZEN_MAGIC, ml) != 0 || index < 1 ||
            index > get_u32(d + ml))
                return false;
        for (uint32_t i = 1;; i++) {
                if (f->bytecode_size - at < 4)
                        return false;
                size_t n = get_u32(d + at);
                at += 4;
                if (f->bytecode_size - at < n)
                        return false;
                if (i == index) {
                        *ret = (const char *) d + at;
                        *ret_size = n;
                        return true;
                }
                at += n;
        }
}

/* frozen([i]) -> the definitions (no i), or the rest of the values of the i-th (i from 1), of
 * an embedded policy (upvalue 1: the EmbeddedFile). Without i, nil when the data does not fit
 * this binary (the caller parses the text then); after that, a chunk that does not load is an
 * internal error. */
static int l_frozen(lua_State *L) {
        const EmbeddedFile *f = lua_touserdata(L, lua_upvalueindex(1));
        bool first = lua_isnoneornil(L, 1);
        lua_Integer i = first ? 0 : luaL_checkinteger(L, 1);
        const char *chunk;
        size_t size;

        luaL_argcheck(L, i >= 0 && i < INT32_MAX, 1, "out of range");
        if (!frozen_chunk(f, (uint32_t) i + 1, &chunk, &size) ||
            luaL_loadbufferx(L, chunk, size, "=[built-in policies]", "b") != LUA_OK) {
                if (first) {
                        lua_pushnil(L);
                        return 1;
                }
                return luaL_error(L, "built-in policy %s: frozen definition %I does not load", f->name, i);
        }
        lua_call(L, 0, 1);
        return 1;
}

/* engine.embedded() -> { {name=, text=, frozen=}, ... }: the built-in policies, in name
 * order. `frozen`, when the build made it (tools/policy-freeze.c), is l_frozen for the file,
 * which load.lua takes instead of parsing the text. */
static int l_engine_embedded(lua_State *L) {
        lua_newtable(L);
        int n = 0;
        for (const EmbeddedFile *f = embedded_policies; f->name; f++) {
                lua_createtable(L, 0, 3);
                lua_pushstring(L, f->name);
                lua_setfield(L, -2, "name");
                lua_pushlstring(L, f->data, f->size);
                lua_setfield(L, -2, "text");
                if (f->bytecode) {
                        lua_pushlightuserdata(L, (void *) f);
                        lua_pushcclosure(L, l_frozen, 1);
                        lua_setfield(L, -2, "frozen");
                }
                lua_rawseti(L, -2, ++n);
        }
        return 1;
}

static int l_engine_usage(lua_State *L) {
        LuaEngine *e = lua_engine_from(L);
        lua_pushinteger(L, (lua_Integer) e->memory);
        lua_pushinteger(L, (lua_Integer) e->instructions);
        return 2;
}

/* engine.cpu() -> CPU seconds used by the process (for measurements). */
static int l_engine_cpu(lua_State *L) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        lua_pushnumber(L, (lua_Number) ts.tv_sec + (lua_Number) ts.tv_nsec / 1e9);
        return 1;
}

static const luaL_Reg engine_functions[] = {
        { "cpu", l_engine_cpu },
        { "sandbox", l_engine_sandbox },
        { "load", l_engine_load },
        { "raise", l_engine_raise },
        { "funcinfo", l_engine_funcinfo },
        { "embedded", l_engine_embedded },
        { "usage", l_engine_usage },
        { NULL, NULL },
};

int luaopen_scudo_engine(lua_State *L) {
        luaL_newlib(L, engine_functions);
        return 1;
}

/* ---- the state ------------------------------------------------------------------------- */

const EmbeddedFile *embedded_find(const EmbeddedFile *table, const char *name) {
        for (const EmbeddedFile *f = table; f->name; f++)
                if (streq(f->name, name))
                        return f;
        return NULL;
}

/* package.preload loader of an embedded Lua module; upvalue 1: the EmbeddedFile. */
static int load_embedded(lua_State *L) {
        const EmbeddedFile *f = lua_touserdata(L, lua_upvalueindex(1));
        const char *name = luaL_checkstring(L, 1);

        lua_pushfstring(L, "=[%s]", f->name);                                   /* stack: name chunk */
        /* Our own bytecode, compiled from the same source at build time, loads faster. Should
         * it not fit this Lua library (another luac), the source is there. User code is never
         * loaded in binary form (engine.load). */
        if (!f->bytecode ||
            luaL_loadbufferx(L, f->bytecode, f->bytecode_size, lua_tostring(L, -1), "b") != LUA_OK) {
                lua_settop(L, 2);
                if (luaL_loadbufferx(L, f->data, f->size, lua_tostring(L, -1), "t") != LUA_OK)
                        return lua_error(L);
        }
        lua_pushstring(L, name);                                                /* stack: name chunk f name */
        lua_call(L, 1, 1);                                                      /* stack: name chunk mod */
        return 1;
}

static const luaL_Reg c_modules[] = {
        { "scudo.engine", luaopen_scudo_engine },
        { "scudo.sys", luaopen_scudo_sys },
        { "scudo.text", luaopen_scudo_text },
        { "scudo.tables", luaopen_scudo_tables },
        { "scudo.toml", luaopen_scudo_toml },
        { "scudo.trust", luaopen_scudo_trust },
        { "scudo", luaopen_scudo },
        { "scudo.fs", luaopen_scudo_fs },
        { "scudo.net", luaopen_scudo_net },
        { "scudo.unit", luaopen_scudo_unit },
        { "scudo.path", luaopen_scudo_path },
        { NULL, NULL },
};

/* Runs inside the first lua_pcall: everything that may raise while the state is built. */
static int engine_setup(lua_State *L) {
        LuaEngine *e = lua_engine_from(L);
        static const luaL_Reg libs[] = {
                { LUA_GNAME, luaopen_base },
                { LUA_TABLIBNAME, luaopen_table },
                { LUA_STRLIBNAME, luaopen_string },
                { LUA_MATHLIBNAME, luaopen_math },
                { LUA_UTF8LIBNAME, luaopen_utf8 },
                { LUA_LOADLIBNAME, luaopen_package },
        };

        for (size_t i = 0; i < ELEMENTSOF(libs); i++) {
                luaL_requiref(L, libs[i].name, libs[i].func, 1);                /* stack: lib */
                lua_pop(L, 1);                                                  /* stack: */
        }

        /* Nothing reads or runs files by name, prints, or steers the collector. `load` is
         * replaced by engine.load, which accepts text only and always takes an _ENV. */
        static const char * const drop[] = {
                "dofile", "loadfile", "load", "print", "collectgarbage",
        };
        for (size_t i = 0; i < ELEMENTSOF(drop); i++) {
                lua_pushnil(L);
                lua_setglobal(L, drop[i]);
        }
        lua_getglobal(L, LUA_STRLIBNAME);                                       /* stack: string */
        lua_pushnil(L);
        lua_setfield(L, -2, "dump");                                            /* stack: string */
        lua_pop(L, 1);                                                          /* stack: */

        /* Hide the metatable shared by all strings: getmetatable("") returns false, so no
         * user code can reach (and change) the table behind ("").method. */
        lua_pushliteral(L, "");                                                 /* stack: "" */
        if (lua_getmetatable(L, -1)) {                                          /* stack: "" mt */
                lua_pushboolean(L, false);
                lua_setfield(L, -2, "__metatable");
                lua_pop(L, 1);
        }
        lua_pop(L, 1);                                                          /* stack: */

        /* package: only package.preload is searched; no paths, no C loader. */
        lua_getglobal(L, LUA_LOADLIBNAME);                                      /* stack: pkg */
        lua_getfield(L, -1, "searchers");                                       /* stack: pkg s */
        lua_Integer n = (lua_Integer) lua_rawlen(L, -1);
        for (lua_Integer i = n; i >= 2; i--) {
                lua_pushnil(L);
                lua_rawseti(L, -2, i);
        }
        lua_pop(L, 1);                                                          /* stack: pkg */
        lua_pushliteral(L, "");
        lua_setfield(L, -2, "path");
        lua_pushliteral(L, "");
        lua_setfield(L, -2, "cpath");
        lua_pushnil(L);
        lua_setfield(L, -2, "loadlib");
        lua_pushnil(L);
        lua_setfield(L, -2, "searchpath");

        lua_getfield(L, -1, "preload");                                         /* stack: pkg pre */
        for (const EmbeddedFile *f = embedded_lua_modules; f->name; f++) {
                lua_pushlightuserdata(L, (void *) f);
                lua_pushcclosure(L, load_embedded, 1);                          /* stack: pkg pre fn */
                lua_setfield(L, -2, f->name);                                   /* stack: pkg pre */
        }
        for (const luaL_Reg *m = c_modules; m->name; m++) {
                lua_pushcfunction(L, m->func);
                lua_setfield(L, -2, m->name);
        }
        lua_pop(L, 2);                                                          /* stack: */

        /* An evaluation is short and its memory capped: the library runs with the collector
         * stopped (Lua still collects in an emergency, before an allocation would fail), and
         * engine.sandbox lets it run while user code churns. */
        lua_gc(L, LUA_GCSTOP);

        /* The marker of configuration errors. */
        lua_createtable(L, 0, 1);                                               /* stack: mt */
        lua_pushboolean(L, false);
        lua_setfield(L, -2, "__metatable");
        e->error_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);                       /* stack: */
        return 0;
}

int lua_engine_new(const LuaLimits *limits, LuaEngine **ret) {
        LuaEngine *e = calloc(1, sizeof(LuaEngine));
        if (!e)
                return -ENOMEM;
        e->limits = limits ? *limits : LUA_LIMITS_DEFAULT;
        e->global = (Budget) {
                .memory = e->limits.memory_max,
                .instructions = e->limits.instructions_max,
        };
        e->now = e->global;
        e->context_ref = LUA_NOREF;
        e->error_mt_ref = LUA_NOREF;
        arena_map(e);

        e->L = lua_newstate(engine_alloc, e);
        if (!e->L) {
                if (e->arena)
                        (void) munmap(e->arena_map, e->arena_map_size);
                free(e);
                return -ENOMEM;
        }
        *(LuaEngine **) lua_getextraspace(e->L) = e;

        lua_pushcfunction(e->L, engine_msghandler);
        lua_pushcfunction(e->L, engine_setup);
        int status = lua_pcall(e->L, 0, 0, 1);
        lua_settop(e->L, 0);
        if (status != LUA_OK) {
                lua_engine_free(e);
                return status == LUA_ERRMEM ? -ENOMEM : -EIO;
        }
        *ret = e;
        return 0;
}

LuaEngine *lua_engine_free(LuaEngine *e) {
        if (!e)
                return NULL;
        watchdog_disarm(e);
        /* lua_close() runs the finalizers, then frees every object one by one (a twentieth of
         * a resolve). Freeing is for nothing while every block is in the arena, which goes at
         * once below, and so are the finalizers while no C memory is held: user code cannot
         * set any (see sandbox.lua), the userdata boxes of scudo.sys and scudo.trust hold C
         * memory only while the C function that filled them runs (lua_engine_hold), and
         * luaL_Buffer's boxes only give memory back to the allocator. So lua_close() runs
         * only when a block came from malloc() or a box still holds something (a Lua error
         * unwound past the function filling it), with no memory limit then. */
        if (e->L && (e->outside > 0 || e->held > 0)) {
                e->now.memory = SIZE_MAX;
                lua_close(e->L);
        }
        if (e->arena)
                (void) munmap(e->arena_map, e->arena_map_size);
        free(e);
        return NULL;
}

lua_State *lua_engine_state(LuaEngine *e) {
        return e->L;
}

/* Trampoline: require(module)[function](...), inside the protected call. */
static int engine_trampoline(lua_State *L) {
        const char *module = lua_touserdata(L, 1);
        const char *function = lua_touserdata(L, 2);

        lua_getglobal(L, "require");                                            /* stack: m f a.. req */
        lua_pushstring(L, module);
        lua_call(L, 1, 1);                                                      /* stack: m f a.. mod */
        if (lua_getfield(L, -1, function) != LUA_TFUNCTION)                     /* stack: m f a.. mod fn */
                return luaL_error(L, "%s.%s is not a function", module, function);
        lua_replace(L, 2);                                                      /* stack: m fn a.. mod */
        lua_pop(L, 1);                                                          /* stack: m fn a.. */
        lua_remove(L, 1);                                                       /* stack: fn a.. */
        lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);                            /* stack: r.. */
        return lua_gettop(L);
}

/* Turns a failed protected call's status and error object (on top) into an errno and a
 * message, popping the error. */
static int engine_failure(LuaEngine *e, int status, Trip trip, char **ret_error) {
        lua_State *L = e->L;
        int r;

        if (trip != TRIP_NONE) {
                r = -ETIME;
                if (ret_error)
                        *ret_error = strdup(trip == TRIP_INSTRUCTIONS ?
                                            "policy evaluation stopped: instruction budget exhausted" :
                                            "policy evaluation stopped: deadline exceeded");
                lua_pop(L, 1);
        } else if (status == LUA_ERRMEM) {
                r = -ENOMEM;
                if (ret_error && asprintf(ret_error, "policy evaluation stopped: memory limit of %zu MiB reached",
                                          e->limits.memory_max >> 20) < 0)
                        *ret_error = NULL;
                lua_pop(L, 1);
        } else {
                r = is_config_error(L, -1) ? -EINVAL : -EIO;
                char *m = error_to_string(L);                                   /* pops */
                if (ret_error)
                        *ret_error = m;
                else
                        free(m);
        }
        return r;
}

/* Starts or ends the outermost protected call: the global budget runs from here. */
static void engine_enter(LuaEngine *e) {
        if (e->depth++ > 0)
                return;
        e->trip = TRIP_NONE;
        e->watchdog_fired = 0;
        e->instructions = 0;
        e->global.deadline = e->limits.usec_max > 0 ? now_usec() + e->limits.usec_max : 0;
        e->now = e->global;
        lua_sethook(e->L, NULL, 0, 0);
        /* The timer and the handler stay for the engine's life: a resolve makes several
         * calls, and setting them up again for each was a dozen system calls. */
        if (e->watchdog_armed)
                watchdog_update(e);
        else
                (void) watchdog_arm(e);
}

static Trip engine_leave(LuaEngine *e) {
        Trip trip = e->trip;
        if (--e->depth > 0)
                return trip;
        e->trip = TRIP_NONE;
        e->watchdog_fired = 0;
        e->global.deadline = 0;
        e->now = e->global;
        watchdog_update(e);     /* no deadline: a timer still set fires for nothing */
        lua_sethook(e->L, NULL, 0, 0);
        return trip;
}

int lua_engine_call(LuaEngine *e, const char *module, const char *function, int nargs, int nresults,
                    char **ret_error) {
        lua_State *L = e->L;
        int base = lua_gettop(L) - nargs;       /* index of the first argument */

        if (!lua_checkstack(L, nargs + 8))
                return -ENOMEM;

        lua_pushcfunction(L, engine_msghandler);                                /* stack: a.. h */
        lua_pushcfunction(L, engine_trampoline);                                /* stack: a.. h t */
        /* Names as light userdata: pushing them as strings could raise out here. */
        lua_pushlightuserdata(L, (void *) module);
        lua_pushlightuserdata(L, (void *) function);                            /* stack: a.. h t m f */
        for (int i = 0; i < nargs; i++)
                lua_pushvalue(L, base + 1 + i);                                 /* stack: a.. h t m f a.. */
        for (int i = 0; i < nargs; i++)
                lua_remove(L, base + 1);                                        /* stack: h t m f a.. */

        engine_enter(e);
        int status = lua_pcall(L, nargs + 2, nresults, base + 1);
        Trip trip = engine_leave(e);

        if (status == LUA_OK) {
                lua_remove(L, base + 1);                                        /* stack: r.. */
                return 0;
        }
        int r = engine_failure(e, status, trip, ret_error);                     /* stack: h */
        lua_settop(L, base);
        return r;
}

int lua_engine_cpcall(LuaEngine *e, lua_CFunction f, void *ud, int nargs, int nresults, char **ret_error) {
        lua_State *L = e->L;
        int base = lua_gettop(L) - nargs;

        if (!lua_checkstack(L, 4))
                return -ENOMEM;
        /* None of these allocate, so nothing can raise outside the protected call. */
        lua_pushcfunction(L, engine_msghandler);                                /* stack: a.. h */
        lua_pushcfunction(L, f);
        lua_pushlightuserdata(L, ud);                                           /* stack: a.. h f ud */
        lua_rotate(L, base + 1, 3);                                             /* stack: h f ud a.. */
        engine_enter(e);
        int status = lua_pcall(L, nargs + 1, nresults, base + 1);
        Trip trip = engine_leave(e);
        if (status == LUA_OK) {
                lua_remove(L, base + 1);                                        /* stack: r.. */
                return 0;
        }
        int r = engine_failure(e, status, trip, ret_error);
        lua_settop(L, base);
        return r;
}
