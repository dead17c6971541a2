/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The built-in policies' frozen definitions, as tools/policy-freeze.c wrote them at build time
 * (frozen-format.h), handed to load.lua and schema.lua one chunk at a time. */

#include <lauxlib.h>
#include <string.h>

#include "policy/frozen-format.h"
#include "policy/lua-engine-internal.h"

/* Finds chunk `index` (from 1) of the frozen data: false when there is no such chunk. */
static bool frozen_chunk(const EmbeddedFile *f, uint32_t index, const char **ret, size_t *ret_size) {
        size_t ml = strlen(FROZEN_MAGIC), at = ml + 4;
        const unsigned char *d = (const unsigned char *) f->bytecode;

        if (!d || f->bytecode_size < at || memcmp(d, FROZEN_MAGIC, ml) != 0 || index < 1 ||
            index > frozen_get_u32(d + ml))
                return false;
        for (uint32_t i = 1;; i++) {
                if (f->bytecode_size - at < 4)
                        return false;
                size_t n = frozen_get_u32(d + at);
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
int engine_frozen(lua_State *L) {
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
