/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.fs: file access for a hook to add: scudo.fs.write(path), .read, .hide, .deny.
 * Paths take the same variables as profile keys (~, ${HOME}, ${project}, ...); a relative
 * path is relative to the file that holds the hook. */
#include <lauxlib.h>
#include <limits.h>

#include "policy/l-common.h"
#include "policy/lua-engine.h"

static int fs_edit(lua_State *L, const char *what, const char *op) {
        lua_check_text(L, 1, PATH_MAX);
        lua_settop(L, 1);
        lua_push_edit(L, what, op, 1, true);
        return 0;
}

static int l_fs_write(lua_State *L) {
        return fs_edit(L, "scudo.fs.write", "filesystem.write");
}

static int l_fs_read(lua_State *L) {
        return fs_edit(L, "scudo.fs.read", "filesystem.read");
}

static int l_fs_hide(lua_State *L) {
        return fs_edit(L, "scudo.fs.hide", "filesystem.hide");
}

static int l_fs_deny(lua_State *L) {
        return fs_edit(L, "scudo.fs.deny", "filesystem.deny");
}

static const luaL_Reg fs_functions[] = {
        { "write", l_fs_write },
        { "read", l_fs_read },
        { "hide", l_fs_hide },
        { "deny", l_fs_deny },
        { NULL, NULL },
};

int luaopen_scudo_fs(lua_State *L) {
        luaL_newlib(L, fs_functions);
        return 1;
}
