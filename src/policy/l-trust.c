/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.trust: the trust store (trust.c) as seen from the Lua library. Internal. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "policy/lua-engine.h"
#include "policy/trust.h"

/* trust.store() -> path | nil, message */
static int l_trust_store(lua_State *L) {
        char *p = NULL;
        int r = trust_store_path(&p);
        if (r < 0) {
                lua_pushnil(L);
                lua_pushfstring(L, "cannot locate the trust store: %s", strerror(-r));
                return 2;
        }
        lua_engine_push_free(L, p);
        return 1;
}

/* trust.check(store, path, sha256) -> boolean | nil, message */
static int l_trust_check(lua_State *L) {
        const char *store = luaL_checkstring(L, 1);
        const char *path = luaL_checkstring(L, 2);
        const char *sha = luaL_checkstring(L, 3);

        int r = trust_check(store, path, sha);
        if (r < 0) {
                lua_pushnil(L);
                lua_pushfstring(L, "%s: %s", store, strerror(-r));
                return 2;
        }
        lua_pushboolean(L, r > 0);
        return 1;
}

/* trust.entries(store) -> { [path] = sha256 } | nil, message. Read in C memory first, handed to
 * Lua one by one while a userdata owns the C copy (no leak if Lua raises). */
typedef struct EntriesBox {
        TrustEntry *e;
        size_t n;
} EntriesBox;

/* Held (lua_engine_hold) from the load to the clear. */
static void entries_clear(lua_State *L, EntriesBox *b) {
        if (!b->e)
                return;
        trust_entries_free(b->e, b->n);
        *b = (EntriesBox) {};
        lua_engine_release(L);
}

static int entries_gc(lua_State *L) {
        entries_clear(L, lua_touserdata(L, 1));
        return 0;
}

static int l_trust_entries(lua_State *L) {
        const char *store = luaL_checkstring(L, 1);
        EntriesBox *b = lua_newuserdatauv(L, sizeof(EntriesBox), 0);            /* stack: s box */
        *b = (EntriesBox) {};
        if (luaL_newmetatable(L, "scudo.trust.entries")) {
                lua_pushcfunction(L, entries_gc);
                lua_setfield(L, -2, "__gc");
        }
        lua_setmetatable(L, -2);
        int r = trust_load(store, &b->e, &b->n);
        if (r >= 0 && b->e)
                lua_engine_hold(L);
        if (r < 0) {
                lua_pushnil(L);
                lua_pushfstring(L, "%s: %s", store, strerror(-r));
                return 2;
        }
        lua_createtable(L, 0, (int) MIN(b->n, (size_t) 1000));                /* stack: s box t */
        for (size_t i = 0; i < b->n; i++) {
                lua_pushstring(L, b->e[i].sha256);
                lua_setfield(L, -2, b->e[i].path);
        }
        entries_clear(L, b);
        return 1;
}

static const luaL_Reg trust_functions[] = {
        { "entries", l_trust_entries },
        { "store", l_trust_store },
        { "check", l_trust_check },
        { NULL, NULL },
};

int luaopen_scudo_trust(lua_State *L) {
        luaL_newlib(L, trust_functions);
        return 1;
}
