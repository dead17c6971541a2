/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The Lua state the policy engine runs in.
 *
 * One engine per evaluation. It opens only base, table, string, math, utf8 and a stripped
 * `package` whose only searcher is package.preload, which holds our embedded Lua library
 * (lua/scudo/NAME.lua) and the C modules (scudo.sys, scudo.fs, ...). Every entry from C into
 * Lua is protected, with a traceback for anything that is not a configuration error.
 *
 * Budgets, for the whole evaluation and tighter for each piece of user code (a `.lua`
 * profile file being loaded, a hook being run; see engine.budgeted_call in l-engine.c):
 *   - memory: the state's own allocator refuses growth past the limit (a Lua memory error);
 *   - instructions: a count hook, installed while user code runs, that once tripped fires on
 *     every instruction and raises again, so the user code's own pcall cannot swallow the
 *     error (the library's own code runs without it: a count hook slows every instruction);
 *   - wall clock: checked by the same hook; and, with `watchdog`, a SIGALRM timer that
 *     forces the hook at the deadline (library code included) and ends the process (exit
 *     125, with a message) if control does not come back from a C function within a grace
 *     second. */

#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/embedded.h"
#include "util/macro.h"

typedef struct LuaLimits {
        size_t memory_max;                      /* the whole state, bytes */
        size_t user_code_memory;                /* what one piece of user code may add */
        uint64_t instructions_max;              /* the whole evaluation */
        uint64_t user_code_instructions;        /* one piece of user code */
        uint64_t usec_max;                      /* the whole evaluation, wall clock; 0: none */
        uint64_t user_code_usec;                /* one piece of user code */
        bool watchdog;                          /* SIGALRM watchdog (not for fuzzers or libraries) */
} LuaLimits;

#define LUA_LIMITS_DEFAULT                                      \
        (LuaLimits) {                                           \
                .memory_max = 64U << 20,                        \
                .user_code_memory = 16U << 20,                  \
                .instructions_max = 200000000ULL,               \
                .user_code_instructions = 20000000ULL,          \
                .usec_max = 5000000ULL,                         \
                .user_code_usec = 1000000ULL,                   \
                .watchdog = false,                              \
        }

typedef struct LuaEngine LuaEngine;

int lua_engine_new(const LuaLimits *limits, LuaEngine **ret);
LuaEngine *lua_engine_free(LuaEngine *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(LuaEngine *, lua_engine_free);

lua_State *lua_engine_state(LuaEngine *e);

/* Calls require(module)[function](ARGS...) in protected mode, ARGS being the `nargs` values
 * on top of the stack (popped). On success leaves `nresults` values and returns 0. On failure
 * leaves the stack as it was below the arguments and returns:
 *   -EINVAL   a configuration error raised with engine.raise(): *ret_error is the message;
 *   -ENOMEM   the memory limit was reached;
 *   -ETIME    the instruction budget or the deadline ran out;
 *   -EIO      any other error (a bug, or an error in user code): message with traceback. */
int lua_engine_call(LuaEngine *e, const char *module, const char *function, int nargs, int nresults,
                    char **ret_error);

/* Runs f(ud, ARGS...) in protected mode, `ud` a light userdata and ARGS the `nargs` values on
 * top of the stack (popped), under the same budgets and error handling as lua_engine_call();
 * leaves `nresults` results. For C code that reads or builds Lua values: anything that may
 * allocate (and so raise) happens inside. */
int lua_engine_cpcall(LuaEngine *e, lua_CFunction f, void *ud, int nargs, int nresults, char **ret_error);

/* Adds embedded Lua modules to those require() finds, beside our library (for a tool that
 * needs a module of its own: tools/policy-freeze.c). Same returns as lua_engine_call(). */
int lua_engine_preload(LuaEngine *e, const EmbeddedFile *modules, char **ret_error);

/* Memory in use by the state, in bytes. */
size_t lua_engine_memory(LuaEngine *e);

/* For the C modules (src/policy/l-*.c). */
LuaEngine *lua_engine_from(lua_State *L);
/* C memory that a userdata's finalizer frees should a Lua error unwind past the function
 * filling it is held from its allocation (lua_engine_hold) to its free (lua_engine_release,
 * in the function itself or in the finalizer). lua_engine_free() skips lua_close() when
 * nothing is held: no finalizer would have anything to do. */
void lua_engine_hold(lua_State *L);
void lua_engine_release(lua_State *L);
/* Pushes the context table of the user code now running (set by engine.budgeted_call), or raises
 * "NAME: only available in user code" when there is none. */
void lua_engine_push_context(lua_State *L, const char *what);
/* Pushes the malloc'd string s (nil for NULL) and frees it, also when pushing raises. For C
 * text of any length (messages that quote what they refuse), without a fixed-size copy. */
void lua_engine_push_free(lua_State *L, char *s);
/* luaL_where() for the innermost Lua frame, as "chunk:line" without the trailing ": ". */
void lua_engine_push_where(lua_State *L);
/* Raises a configuration error (reported without a traceback). Never returns. */
_noreturn_ int lua_engine_raise(lua_State *L, const char *fmt, ...) _printf_(2, 3);

/* The luaopen_ functions of our C modules, one file each (scudo.engine: l-engine.c). */
int luaopen_scudo_engine(lua_State *L);
int luaopen_scudo_sys(lua_State *L);
int luaopen_scudo_text(lua_State *L);
int luaopen_scudo_tables(lua_State *L);
int luaopen_scudo_toml(lua_State *L);
int luaopen_scudo_trust(lua_State *L);
int luaopen_scudo(lua_State *L);
int luaopen_scudo_fs(lua_State *L);
int luaopen_scudo_net(lua_State *L);
int luaopen_scudo_unit(lua_State *L);
int luaopen_scudo_path(lua_State *L);

/* The order of Lua's < on two strings of the given lengths, which need no NUL after them
 * (l-tables.c). Lua's is strcoll() on the parts between NUL bytes, a string that ends first
 * being the smaller; in the "C" locale, which scudo never leaves (it calls no setlocale(), and
 * the engine loads no os library), that is byte by byte, a prefix first. Negative, 0 or
 * positive, as strcmp(). */
int lua_string_order(const char *l, size_t ll, const char *r, size_t lr);
