/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.toml: the TOML parser (toml.c) as seen from the Lua library. Internal. */
#include <lauxlib.h>
#include <stdlib.h>

#include "policy/lua-engine.h"
#include "policy/toml.h"

/* toml.decode(text, name) -> table | nil, message */
static int l_toml_decode(lua_State *L) {
        size_t len;
        const char *text = luaL_checklstring(L, 1, &len);
        const char *name = luaL_checkstring(L, 2);
        char *error = NULL;

        int r = toml_parse(L, text, len, name, &error);
        if (r == -ENOMEM) {
                free(error);
                return luaL_error(L, "not enough memory");
        }
        if (r < 0) {
                lua_pushnil(L);
                if (error)
                        lua_engine_push_free(L, error);
                else
                        lua_pushliteral(L, "could not parse");
                return 2;
        }
        return 1;
}

/* toml.lines(t) -> { [key or index] = line } | nil */
static int l_toml_lines(lua_State *L) {
        luaL_checkany(L, 1);
        toml_push_lines(L, 1);
        return 1;
}

/* toml.line_tables() -> { [t] = toml.lines(t) } for the tables and arrays toml.decode made
 * (weak keys), or nil before the first decode: what toml.lines looks in, for a reader asking
 * about every table of a document (one call rather than one per table). */
static int l_toml_line_tables(lua_State *L) {
        if (lua_getfield(L, LUA_REGISTRYINDEX, TOML_LINES_KEY) != LUA_TTABLE) {
                lua_pop(L, 1);
                lua_pushnil(L);
        }
        return 1;
}

/* toml.is_array(t) -> boolean: an array, as opposed to a table (both are Lua tables). */
static int l_toml_is_array(lua_State *L) {
        lua_pushboolean(L, toml_is_array(L, 1));
        return 1;
}

/* toml.is_datetime(v) -> boolean */
static int l_toml_is_datetime(lua_State *L) {
        lua_pushboolean(L, toml_is_datetime(L, 1));
        return 1;
}

static const luaL_Reg toml_functions[] = {
        { "decode", l_toml_decode },
        { "lines", l_toml_lines },
        { "line_tables", l_toml_line_tables },
        { "is_array", l_toml_is_array },
        { "is_datetime", l_toml_is_datetime },
        { NULL, NULL },
};

int luaopen_scudo_toml(lua_State *L) {
        luaL_newlib(L, toml_functions);
        return 1;
}
