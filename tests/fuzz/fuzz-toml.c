/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for the TOML parser: every input is parsed once with the plain allocator and
 * once more under a small memory budget derived from the input, so that the out-of-memory paths
 * (Lua errors unwinding the protected parse) are exercised too. The sanitizers report leaks. */

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/toml.h"
#include "tests/lua-budget.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static bool is_datetime(lua_State *L, int idx) {
        if (!lua_getmetatable(L, idx))
                return false;
        luaL_getmetatable(L, TOML_DATETIME_METATABLE);
        bool eq = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        return eq;
}

/* Walks a parsed value, checking the mapping's invariants: datetimes have a string value and
 * no lines, every table and array has a line table. */
static void check_value(lua_State *L, int idx, unsigned depth) {
        if (lua_type(L, idx) != LUA_TTABLE)
                return;
        if (depth > 2 * TOML_MAX_DEPTH * TOML_MAX_DEPTH || !lua_checkstack(L, 4))
                abort();

        toml_push_lines(L, idx);
        bool has_lines = lua_istable(L, -1);
        lua_pop(L, 1);
        if (is_datetime(L, idx)) {
                if (has_lines || lua_getfield(L, idx, "value") != LUA_TSTRING)
                        abort();
                lua_pop(L, 1);
                return;
        }
        if (!has_lines)
                abort();

        lua_pushnil(L);
        while (lua_next(L, idx)) {
                check_value(L, lua_gettop(L), depth + 1);
                lua_pop(L, 1);
        }
}

/* Parses under budget b (NULL: no budget). The budget is lifted before the result is walked. */
static void parse_once(lua_State *L, const uint8_t *data, size_t size, Budget *b) {
        bool may_fail_alloc = b;
        char *error = NULL;
        int r = toml_parse(L, (const char *) data, size, "fuzz", &error);

        if (b)
                b->limit = SIZE_MAX;
        if (r == 0) {
                if (lua_gettop(L) != 1 || error)
                        abort();
                check_value(L, 1, 0);
                lua_settop(L, 0);
        } else if (lua_gettop(L) != 0)
                abort();
        else if (r == -EINVAL && (!error || strncmp(error, "fuzz:", 5) != 0))
                abort();
        else if (r == -ENOMEM && !may_fail_alloc)
                abort();
        else if (r != -EINVAL && r != -ENOMEM && r != -EFBIG)
                abort();
        free(error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        lua_State *L = luaL_newstate();
        if (!L)
                return 0;
        parse_once(L, data, size, NULL);
        lua_close(L);

        Budget b = { .limit = SIZE_MAX };
        L = lua_newstate(capped_alloc, &b);
        if (!L)
                return 0;
        b.limit = b.used + (size * 131 + 977) % 16384;
        parse_once(L, data, size, &b);
        lua_close(L);
        return 0;
}
