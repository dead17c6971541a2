/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.tables: table primitives the Lua library calls for every profile it reads: the sorted
 * keys of a table, and whether a value is a list or a table (util.lua). Each is one C call
 * where the Lua version made several, and a loop of Lua instructions per key. Internal. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "policy/lua-engine.h"
#include "policy/toml.h"

typedef struct Key {
        const char *s;
        size_t len;
} Key;

/* The order of Lua's < on strings: strcoll() on the parts between NUL bytes, a string that
 * ends first being the smaller. */
static int key_cmp(const void *a, const void *b) {
        const Key *x = a, *y = b;
        const char *l = x->s, *r = y->s;
        size_t ll = x->len, lr = y->len;

        for (;;) {
                int c = strcoll(l, r);
                if (c != 0)
                        return c;
                size_t pl = strlen(l), pr = strlen(r);
                if (pr == lr)
                        return pl == ll ? 0 : 1;
                if (pl == ll)
                        return -1;
                l += pl + 1;
                ll -= pl + 1;
                r += pr + 1;
                lr -= pr + 1;
        }
}

static bool has_metatable(lua_State *L, int idx, const char *name) {
        bool r = false;
        if (lua_getmetatable(L, idx)) {                                         /* stack: mt */
                luaL_getmetatable(L, name);                                     /* stack: mt named */
                r = lua_rawequal(L, -1, -2);
                lua_pop(L, 2);
        }
        return r;
}

/* tables.sorted_keys(t) -> { keys, sorted } | nil when a key is not a string (the caller sorts
 * those its own way). */
static int l_tables_sorted_keys(lua_State *L) {
        size_t n = 0, k = 0;

        luaL_checktype(L, 1, LUA_TTABLE);
        lua_settop(L, 1);
        for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1)) {                   /* stack: t key value */
                if (lua_type(L, -2) != LUA_TSTRING) {
                        lua_pushnil(L);
                        return 1;
                }
                n++;
        }
        /* Lua memory: nothing to free should a later allocation raise. The strings stay
         * referenced by t. */
        Key *keys = lua_newuserdatauv(L, (n > 0 ? n : 1) * sizeof(Key), 0);     /* stack: t box */
        for (lua_pushnil(L); k < n && lua_next(L, 1); lua_pop(L, 1)) {
                keys[k].s = lua_tolstring(L, -2, &keys[k].len);
                k++;
        }
        qsort(keys, k, sizeof(Key), key_cmp);
        lua_createtable(L, (int) k, 0);                                         /* stack: t box list */
        for (size_t i = 0; i < k; i++) {
                lua_pushlstring(L, keys[i].s, keys[i].len);
                lua_rawseti(L, -2, (lua_Integer) i + 1);
        }
        return 1;
}

/* A TOML array, or a table whose keys are exactly 1..#t (an empty table is one too). */
static bool is_list(lua_State *L, int idx) {
        size_t n = 0;

        if (lua_type(L, idx) != LUA_TTABLE)
                return false;
        if (has_metatable(L, idx, TOML_ARRAY_METATABLE))
                return true;
        for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
                if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1) {
                        lua_pop(L, 2);
                        return false;
                }
                n++;
        }
        return n == lua_rawlen(L, idx);
}

/* tables.is_list(v) -> boolean: a TOML array or a Lua sequence. */
static int l_tables_is_list(lua_State *L) {
        lua_settop(L, 1);
        lua_pushboolean(L, is_list(L, 1));
        return 1;
}

/* tables.is_table(v) -> boolean: a table that is neither a TOML array nor a TOML date-time,
 * and empty or not a list. */
static int l_tables_is_table(lua_State *L) {
        bool r = false;

        lua_settop(L, 1);
        if (lua_type(L, 1) == LUA_TTABLE && !has_metatable(L, 1, TOML_ARRAY_METATABLE) &&
            !has_metatable(L, 1, TOML_DATETIME_METATABLE)) {
                lua_pushnil(L);
                if (!lua_next(L, 1))                                            /* empty */
                        r = true;
                else {
                        lua_settop(L, 1);
                        r = !is_list(L, 1);
                }
        }
        lua_pushboolean(L, r);
        return 1;
}

static const luaL_Reg tables_functions[] = {
        { "sorted_keys", l_tables_sorted_keys },
        { "is_list", l_tables_is_list },
        { "is_table", l_tables_is_table },
        { NULL, NULL },
};

int luaopen_scudo_tables(lua_State *L) {
        luaL_newlib(L, tables_functions);
        return 1;
}
