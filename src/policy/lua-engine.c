/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The Lua state of the policy engine (lua-engine.h): building it, its errors, and the calls
 * into it from C. */

#include <lauxlib.h>
#include <lualib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/lua-engine-internal.h"

LuaEngine *lua_engine_from(lua_State *L) {
        return *(LuaEngine **) lua_getextraspace(L);
}

/* ---- errors ---------------------------------------------------------------------------- */

bool engine_is_config_error(lua_State *L, int idx) {
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
int engine_msghandler(lua_State *L) {
        if (engine_is_config_error(L, 1))
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

        if (engine_is_config_error(L, -1)) {
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

static int push_light_string(lua_State *L) {
        lua_pushstring(L, lua_touserdata(L, 1));
        return 1;
}

void lua_engine_push_free(lua_State *L, char *s) {
        /* lua_pushstring raises when the memory cap is reached: pushed in a protected call,
         * so that s is freed either way. Neither push below allocates. */
        lua_pushcfunction(L, push_light_string);
        lua_pushlightuserdata(L, s);
        int status = lua_pcall(L, 1, 1, 0);                                     /* stack: s | err */
        free(s);
        if (status != LUA_OK)
                lua_error(L);
}

void lua_engine_push_context(lua_State *L, const char *what) {
        LuaEngine *e = lua_engine_from(L);

        if (e->context_ref == LUA_NOREF)
                luaL_error(L, "%s: only available while a profile file or a hook runs", what);
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->context_ref);                      /* stack: ctx */
}

/* ---- the state ------------------------------------------------------------------------- */

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
        lua_pushstring(L, name); /* stack: name chunk f name */
        lua_call(L, 1, 1);                                                      /* stack: name chunk mod */
        return 1;
}

/* Adds the loaders of `modules` to the package.preload table on top of the stack. */
static void preload_embedded(lua_State *L, const EmbeddedFile *modules) {
        for (const EmbeddedFile *f = modules; f->name; f++) {
                lua_pushlightuserdata(L, (void *) f);
                lua_pushcclosure(L, load_embedded, 1);                          /* stack: pre fn */
                lua_setfield(L, -2, f->name);                                   /* stack: pre */
        }
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
        preload_embedded(L, embedded_lua_modules);
        for (const luaL_Reg *m = c_modules; m->name; m++) {
                lua_pushcfunction(L, m->func);
                lua_setfield(L, -2, m->name);
        }
        lua_pop(L, 2);                                                          /* stack: */

        /* An evaluation is short and its memory capped: the library runs with the collector
         * stopped (Lua still collects in an emergency, before an allocation would fail), and
         * engine.budgeted_call lets it run while user code churns. */
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
                arena_unmap(e);
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
        /* lua_close() runs the finalizers, then frees every object one by one. Freeing is for
         * nothing while every block is in the arena, which goes at once below, and so are the
         * finalizers while no C memory is held: user code cannot set any (see userenv.lua),
         * the userdata boxes of scudo.sys and scudo.trust hold C memory only while the C
         * function that filled them runs (lua_engine_hold), and luaL_Buffer's boxes only give
         * memory back to the allocator. So lua_close() runs only when a block came from
         * malloc() or a box still holds something (a Lua error unwound past the function
         * filling it), with no memory limit then. */
        if (e->L && (e->outside > 0 || e->held > 0)) {
                e->now.memory = SIZE_MAX;
                lua_close(e->L);
        }
        arena_unmap(e);
        free(e);
        return NULL;
}

lua_State *lua_engine_state(LuaEngine *e) {
        return e->L;
}

/* Runs inside a protected call: preload_embedded() of the table given as light userdata. */
static int engine_preload(lua_State *L) {
        const EmbeddedFile *modules = lua_touserdata(L, 1);

        lua_getglobal(L, LUA_LOADLIBNAME);                                      /* stack: m pkg */
        lua_getfield(L, -1, "preload");                                         /* stack: m pkg pre */
        preload_embedded(L, modules);
        return 0;
}

int lua_engine_preload(LuaEngine *e, const EmbeddedFile *modules, char **ret_error) {
        return lua_engine_cpcall(e, engine_preload, (void *) modules, 0, 0, ret_error);
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
                if (ret_error &&
                    asprintf(ret_error, "policy evaluation stopped: memory limit of %zu MiB reached",
                             e->limits.memory_max >> 20) < 0)
                        *ret_error = NULL;
                lua_pop(L, 1);
        } else {
                r = engine_is_config_error(L, -1) ? -EINVAL : -EIO;
                char *m = error_to_string(L);                                   /* pops */
                if (ret_error)
                        *ret_error = m;
                else
                        free(m);
        }
        return r;
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
