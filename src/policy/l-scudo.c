/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo: the public module user code sees (a read-only view of it, see userenv.lua):
 * scudo.warn(msg) and the sub-modules scudo.fs, scudo.net, scudo.unit, scudo.path.
 *
 * The primitives never change the plan directly. They check their arguments in C and append
 * an edit { op = ..., value = ..., origin = "file:line" } to the context of the user code now
 * running; the Lua library applies the edits once the hook has returned, through the same
 * expansion and validation as profile keys. */
#include <lauxlib.h>
#include <string.h>

#include "policy/l-common.h"
#include "policy/lua-engine.h"

#define EDITS_MAX 10000

void lua_push_edit(lua_State *L, const char *what, const char *op, int value_idx, bool hook_only) {
        value_idx = lua_absindex(L, value_idx);
        lua_engine_push_context(L, what);                                       /* stack: ctx */
        if (hook_only) {
                lua_getfield(L, -1, "phase");                                   /* stack: ctx phase */
                const char *phase = lua_tostring(L, -1);
                if (!phase || !streq(phase, "hook"))
                        luaL_error(L, "%s: only a hook can change the plan; a profile file states "
                                   "it in the profile's keys", what);
                lua_pop(L, 1);                                                  /* stack: ctx */
        }
        lua_getfield(L, -1, hook_only ? "edits" : "warnings");                  /* stack: ctx list */
        if (!lua_istable(L, -1))
                luaL_error(L, "%s: no plan to change", what);
        /* Each change is applied by the library after the hook, outside its budget: a bound. */
        if (lua_rawlen(L, -1) >= EDITS_MAX)
                luaL_error(L, "%s: more than %d changes from one hook", what, EDITS_MAX);
        lua_createtable(L, 0, 3);                                               /* stack: ctx list e */
        lua_pushstring(L, op);
        lua_setfield(L, -2, "op");
        lua_pushvalue(L, value_idx);
        lua_setfield(L, -2, "value");
        lua_engine_push_where(L);
        lua_setfield(L, -2, "origin");                                          /* stack: ctx list e */
        lua_rawseti(L, -2, (lua_Integer) lua_rawlen(L, -2) + 1);                /* stack: ctx list */
        lua_pop(L, 2);                                                          /* stack: */
}

const char *lua_check_text(lua_State *L, int idx, size_t max) {
        size_t len;
        const char *s = luaL_checklstring(L, idx, &len);
        luaL_argcheck(L, strlen(s) == len, idx, "holds a NUL byte");
        luaL_argcheck(L, len > 0 && len <= max, idx, "empty or too long");
        return s;
}

/* scudo.warn(message): shown to the user before the command runs. */
static int l_scudo_warn(lua_State *L) {
        lua_check_text(L, 1, 4096);
        lua_settop(L, 1);
        lua_push_edit(L, "scudo.warn", "warn", 1, false);
        return 0;
}

static const luaL_Reg scudo_functions[] = {
        { "warn", l_scudo_warn },
        { NULL, NULL },
};

int luaopen_scudo(lua_State *L) {
        static const char * const subs[] = { "fs", "net", "unit", "path" };

        luaL_newlib(L, scudo_functions);                                        /* stack: m */
        for (size_t i = 0; i < ELEMENTSOF(subs); i++) {
                lua_getglobal(L, "require");                                    /* stack: m req */
                lua_pushfstring(L, "scudo.%s", subs[i]);
                lua_call(L, 1, 1);                                              /* stack: m sub */
                lua_setfield(L, -2, subs[i]);                                   /* stack: m */
        }
        return 1;
}
