/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* scudo.engine: what the Lua library needs from the host (lua-engine.h). */

#include <lauxlib.h>
#include <time.h>

#include "policy/lua-engine-internal.h"

/* engine.budgeted_call(label, context, f, ...) -> true, results... | nil, message
 *
 * Runs f(...) as user code: under the narrower budget, with `context` visible to the public
 * primitives (scudo.fs.write, ...), and with any error turned into a message that starts
 * with `label`. A budget that runs out is reported here, whatever the user code did with
 * the error on its way out. */
static int l_engine_budgeted_call(lua_State *L) {
        LuaEngine *e = lua_engine_from(L);
        const char *label = luaL_checkstring(L, 1);
        luaL_checktype(L, 2, LUA_TTABLE);
        luaL_checktype(L, 3, LUA_TFUNCTION);

        if (e->context_ref != LUA_NOREF)
                return luaL_error(L, "engine.budgeted_call: user code may not start user code");

        int nargs = lua_gettop(L) - 3;
        Budget saved = e->now;
        uint64_t t = now_usec();

        lua_pushvalue(L, 2);                                                    /* stack: l c f a.. c */
        e->context_ref = luaL_ref(L, LUA_REGISTRYINDEX);                        /* stack: l c f a.. */

        e->now.memory = MIN(e->global.memory, e->memory + e->limits.user_code_memory);
        e->now.instructions = MIN(e->global.instructions,
                                  e->instructions + e->limits.user_code_instructions);
        if (e->limits.user_code_usec > 0)
                e->now.deadline = e->global.deadline > 0 ?
                        MIN(e->global.deadline, t + e->limits.user_code_usec) : t + e->limits.user_code_usec;
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
                                label, (lua_Integer) e->limits.user_code_instructions);
        else if (trip == TRIP_DEADLINE)
                lua_pushfstring(L, "%s: stopped: ran longer than %I ms", label,
                                (lua_Integer) (e->limits.user_code_usec / 1000));
        else if (status == LUA_ERRMEM || refused) {
                lua_gc(L, LUA_GCCOLLECT);
                lua_pushfstring(L, "%s: stopped: memory limit of %I MiB reached", label,
                                (lua_Integer) (e->limits.user_code_memory >> 20));
        } else if (engine_is_config_error(L, -2)) {
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

/* engine.embedded() -> { {name=, text=, frozen=}, ... }: the built-in policies, in name
 * order. `frozen`, when the build made it (tools/policy-freeze.c), is engine_frozen (frozen.c)
 * for the file, which load.lua takes instead of parsing the text. */
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
                        lua_pushcclosure(L, engine_frozen, 1);
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
        { "budgeted_call", l_engine_budgeted_call },
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
