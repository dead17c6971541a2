/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.unit: systemd unit properties. scudo.unit.set(name, value) in a hook; .check(name,
 * value) and .text(value) anywhere. Values become text the way profile `unit` keys do:
 * booleans "yes"/"no", integers in decimal, strings as they are, lists space-joined. The
 * name and the text are checked against the runner's table (unit/properties.c). */
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/l-common.h"
#include "policy/lua-engine.h"
#include "plan/unit-properties.h"

#define UNIT_VALUE_MAX 4096

/* Converts the scalar at idx to text in buf; returns NULL and a reason if it cannot. */
static const char *scalar_text(lua_State *L, int idx, char *buf, size_t size, const char **reason) {
        switch (lua_type(L, idx)) {
        case LUA_TBOOLEAN:
                return lua_toboolean(L, idx) ? "yes" : "no";
        case LUA_TNUMBER:
                if (lua_isinteger(L, idx))
                        (void) snprintf(buf, size, "%lld", (long long) lua_tointeger(L, idx));
                else {
                        double d = lua_tonumber(L, idx);
                        if (!isfinite(d)) {
                                *reason = "not a finite number";
                                return NULL;
                        }
                        (void) snprintf(buf, size, "%.15g", d);
                }
                return buf;
        case LUA_TSTRING: {
                size_t len;
                const char *s = lua_tolstring(L, idx, &len);
                if (strlen(s) != len) {
                        *reason = "holds a NUL byte";
                        return NULL;
                }
                return s;
        }
        default:
                *reason = "must be a boolean, a number, a string or a list of those";
                return NULL;
        }
}

/* Pushes the text of the value at idx, or nil and a reason. */
static int push_text(lua_State *L, int idx) {
        char buf[64];
        const char *reason = NULL;

        idx = lua_absindex(L, idx);
        if (lua_type(L, idx) != LUA_TTABLE) {
                const char *s = scalar_text(L, idx, buf, sizeof(buf), &reason);
                if (!s) {
                        lua_pushnil(L);
                        lua_pushstring(L, reason);
                        return 2;
                }
                lua_pushstring(L, s);
                return 1;
        }

        /* The buffer's box stays on top whenever the buffer may grow (see docs/internals.md,
         * "C modules"): the separator goes in before the element is pushed, and the element's
         * text goes in with luaL_addvalue, the one call made for a value on top. */
        luaL_Buffer b;
        lua_Integer n = (lua_Integer) lua_rawlen(L, idx);
        luaL_buffinit(L, &b);                                                   /* stack: .. box */
        for (lua_Integer i = 1; i <= n; i++) {
                if (i > 1)
                        luaL_addchar(&b, ' ');
                lua_rawgeti(L, idx, i);                                         /* stack: .. box v */
                const char *s = lua_type(L, -1) == LUA_TTABLE ? NULL :
                        scalar_text(L, -1, buf, sizeof(buf), &reason);
                if (!s) {
                        /* The box is left below the two results; it is closed on return. */
                        lua_pop(L, 1);                                          /* stack: .. box */
                        lua_pushnil(L);
                        lua_pushstring(L, reason ?: "a list may not hold tables");
                        return 2;
                }
                /* The text may be buf (numbers) or "yes"/"no": made a string on top. */
                lua_pushstring(L, s);                                           /* stack: .. box v s */
                lua_remove(L, -2);                                              /* stack: .. box s */
                luaL_addvalue(&b);                                              /* stack: .. box */
        }
        luaL_pushresult(&b);
        return 1;
}

/* Checks name=text; on error pushes nil, message and returns 2, else returns 0. */
static int check_property(lua_State *L, const char *name, const char *text) {
        char *error = NULL;

        int r = unit_property_check(name, text, &error);
        if (r >= 0) {
                free(error);
                return 0;
        }
        lua_pushnil(L);
        if (error)
                lua_engine_push_free(L, error);
        else
                lua_pushliteral(L, "invalid unit property");
        return 2;
}

/* unit.text(value) -> text | nil, reason */
static int l_unit_text(lua_State *L) {
        luaL_checkany(L, 1);
        return push_text(L, 1);
}

/* unit.check(name, value) -> text | nil, message */
static int l_unit_check(lua_State *L) {
        const char *name = lua_check_text(L, 1, 128);
        luaL_checkany(L, 2);
        lua_settop(L, 2);
        if (push_text(L, 2) == 2) {                                             /* stack: n v .. nil why */
                lua_pushfstring(L, "unit.%s: %s", name, lua_tostring(L, -1));   /* stack: .. nil why msg */
                lua_replace(L, -2);                                             /* stack: .. nil msg */
                return 2;
        }
        const char *text = lua_tostring(L, -1);                                 /* stack: n v text */
        if (strlen(text) > UNIT_VALUE_MAX) {
                lua_pushnil(L);
                lua_pushfstring(L, "unit.%s: value longer than %d bytes", name, UNIT_VALUE_MAX);
                return 2;
        }
        if (check_property(L, name, text) == 2)
                return 2;
        return 1;
}

/* unit.set(name, value): in a hook. */
static int l_unit_set(lua_State *L) {
        lua_settop(L, 2);
        if (l_unit_check(L) == 2)                                               /* stack: n v nil msg */
                return luaL_error(L, "scudo.unit.set: %s", lua_tostring(L, -1));
        lua_createtable(L, 2, 0);                                               /* stack: n v text pair */
        lua_pushvalue(L, 1);
        lua_rawseti(L, -2, 1);
        lua_pushvalue(L, -2);
        lua_rawseti(L, -2, 2);
        lua_push_edit(L, "scudo.unit.set", "unit", -1, true);
        return 0;
}

/* unit.fixed(): what scudo sets on every unit, as NAME=VALUE texts, for explain. */
static int l_unit_fixed(lua_State *L) {
        lua_newtable(L);
        for (int i = 0; unit_fixed_properties[i]; i++) {
                lua_pushstring(L, unit_fixed_properties[i]);
                lua_rawseti(L, -2, i + 1);
        }
        return 1;
}

static const luaL_Reg unit_functions[] = {
        { "set", l_unit_set },
        { "fixed", l_unit_fixed },
        { "check", l_unit_check },
        { "text", l_unit_text },
        { NULL, NULL },
};

int luaopen_scudo_unit(lua_State *L) {
        luaL_newlib(L, unit_functions);
        return 1;
}
