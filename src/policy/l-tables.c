/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.tables: table primitives the Lua library calls for every profile it reads: the sorted
 * keys of a table, whether a value is a list or a table (util.lua), and the merge of one
 * profile's values into another's (merge.lua). Each is one C call where the Lua version made
 * several, and a loop of Lua instructions per key or element. Internal. */
#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "policy/lua-engine.h"
#include "policy/toml.h"

typedef struct Key {
        const char *s;
        size_t len;
} Key;

int lua_string_order(const char *l, size_t ll, const char *r, size_t lr) {
        int c = memcmp(l, r, MIN(ll, lr));
        return c != 0 ? c : (ll > lr) - (ll < lr);
}

static int key_cmp(const void *a, const void *b) {
        const Key *x = a, *y = b;
        return lua_string_order(x->s, x->len, y->s, y->len);
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
        if (toml_is_array(L, idx))
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
        if (lua_type(L, 1) == LUA_TTABLE && !toml_is_array(L, 1) && !toml_is_datetime(L, 1)) {
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

/* Pushes a copy of the list at idx: the same elements, in a table of the right size. */
static void copy_list(lua_State *L, int idx) {
        lua_Integer n = (lua_Integer) lua_rawlen(L, idx);
        lua_createtable(L, n > INT_MAX ? 0 : (int) n, 0);                       /* stack: copy */
        for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, idx, i);
                lua_rawseti(L, -2, i);
        }
}

/* Pushes a copy of the table at idx (its keys and values, not deeper). */
static void copy_map(lua_State *L, int idx) {
        int n = 0;
        for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
                n++;
        lua_createtable(L, 0, n);                                               /* stack: copy */
        for (lua_pushnil(L); lua_next(L, idx);) {                               /* stack: copy k v */
                lua_pushvalue(L, -2);
                lua_insert(L, -2);                                              /* stack: copy k k v */
                lua_rawset(L, -4);                                              /* stack: copy k */
        }
}

/* Appends the list at src to the list at dst. */
static void append_list(lua_State *L, int dst, int src) {
        lua_Integer n = (lua_Integer) lua_rawlen(L, src), at = (lua_Integer) lua_rawlen(L, dst);
        for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, src, i);
                lua_rawseti(L, dst, at + i);
        }
}

/* tables.merge(acc, values, keys, replace, inherit): merge.lua's merge of a profile's values
 * into the profile acc, its rules given by keys (schema.KEYS: kind "list", "map" or "scalar";
 * noinherit): for each key of values, nothing when inherit and the key is noinherit; a copy of
 * the value (a new list or map holding the same items) when acc has none or replace (a set of
 * keys, or nil) names the key; else a list is appended to acc's, the entries of a map set in
 * acc's, a scalar replaces acc's. Then every key replace names that values lacks is removed
 * from acc. */
static int l_tables_merge(lua_State *L) {
        luaL_checktype(L, 1, LUA_TTABLE);
        luaL_checktype(L, 2, LUA_TTABLE);
        luaL_checktype(L, 3, LUA_TTABLE);
        bool has_replace = !lua_isnoneornil(L, 4), inherit = lua_toboolean(L, 5);
        if (has_replace)
                luaL_checktype(L, 4, LUA_TTABLE);
        lua_settop(L, 5);

        for (lua_pushnil(L); lua_next(L, 2); lua_pop(L, 1)) {                   /* stack: .. key e */
                int key = lua_gettop(L) - 1, e = key + 1;
                lua_pushvalue(L, key);
                if (lua_rawget(L, 3) != LUA_TTABLE)                             /* stack: .. key e spec */
                        return luaL_error(L, "tables.merge: no such key '%s'", lua_tostring(L, key));
                lua_getfield(L, -1, "kind");
                const char *kind = lua_tostring(L, -1);                         /* held by spec */
                lua_getfield(L, -2, "noinherit"); /* stack: .. spec kind noinherit */
                bool noinherit = lua_toboolean(L, -1);
                lua_pop(L, 1);
                bool list = kind && streq(kind, "list"), map = kind && streq(kind, "map");
                if (inherit && noinherit) {
                        lua_settop(L, e);
                        continue;
                }
                bool fresh = false;
                if (has_replace) {
                        lua_pushvalue(L, key);
                        fresh = lua_rawget(L, 4) != LUA_TNIL && lua_toboolean(L, -1);
                        lua_pop(L, 1);
                }
                lua_pushvalue(L, key);
                int cur = lua_rawget(L, 1);                                     /* stack: .. spec kind cur */
                if (fresh || cur == LUA_TNIL) {
                        lua_pop(L, 1);
                        lua_pushvalue(L, key);
                        if (list)
                                copy_list(L, e);
                        else if (map)
                                copy_map(L, e);
                        else
                                lua_pushvalue(L, e);                            /* stack: .. kind key new */
                        lua_rawset(L, 1);
                } else if (list) {
                        if (cur != LUA_TTABLE)
                                return luaL_error(L, "tables.merge: '%s' is not a list",
                                                  lua_tostring(L, key));
                        append_list(L, lua_gettop(L), e);
                } else if (map) {
                        if (cur != LUA_TTABLE)
                                return luaL_error(L, "tables.merge: '%s' is not a map",
                                                  lua_tostring(L, key));
                        int dst = lua_gettop(L);
                        for (lua_pushnil(L); lua_next(L, e);) {                 /* stack: .. cur k v */
                                lua_pushvalue(L, -2);
                                lua_insert(L, -2);                              /* stack: .. cur k k v */
                                lua_rawset(L, dst);                             /* stack: .. cur k */
                        }
                } else {
                        lua_pushvalue(L, key);
                        lua_pushvalue(L, e);
                        lua_rawset(L, 1);
                }
                lua_settop(L, e);                                               /* stack: .. key e */
        }
        if (has_replace)
                for (lua_pushnil(L); lua_next(L, 4); lua_pop(L, 1)) {           /* stack: .. key origin */
                        lua_pushvalue(L, -2);
                        if (lua_rawget(L, 2) == LUA_TNIL) {
                                lua_pushvalue(L, -3);
                                lua_pushnil(L);
                                lua_rawset(L, 1);
                        }
                        lua_pop(L, 1);
                }
        return 0;
}

static const luaL_Reg tables_functions[] = {
        { "sorted_keys", l_tables_sorted_keys },
        { "is_list", l_tables_is_list },
        { "is_table", l_tables_is_table },
        { "merge", l_tables_merge },
        { NULL, NULL },
};

int luaopen_scudo_tables(lua_State *L) {
        luaL_newlib(L, tables_functions);
        return 1;
}
