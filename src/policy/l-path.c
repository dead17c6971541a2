/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.path: looking at the start directory and its parents.
 *   scudo.path.lookup(markers[, start]) -> the nearest directory, from start (default: the
 *       command's start directory) up to /, that holds one of markers (a name or a list of
 *       names, each a relative path without ".."), or nil;
 *   scudo.path.exists(path) -> boolean (without following a final symlink);
 *   scudo.path.persistence_roots(home, config_home, data_home, state_home, PATH) -> { { path,
 *       deep }... }: the places whose contents run later outside (plan/persistence.h), files
 *       and directories, in its order; config_home, data_home, state_home and PATH may be nil. */
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/persistence.h"
#include "policy/l-common.h"
#include "policy/lua-engine.h"

#define MARKERS_MAX 64

static bool marker_ok(const char *m) {
        if (!*m || m[0] == '/')
                return false;
        for (const char *p = m; *p; ) {
                const char *e = strchrnul(p, '/');
                if ((size_t) (e - p) == 2 && p[0] == '.' && p[1] == '.')
                        return false;
                p = *e ? e + 1 : e;
        }
        return true;
}

static int l_path_lookup(lua_State *L) {
        char dir[PATH_MAX], cand[PATH_MAX];
        const char *markers[MARKERS_MAX];
        size_t n = 0;

        lua_settop(L, 2);
        if (lua_type(L, 1) == LUA_TTABLE) {
                lua_Integer len = (lua_Integer) lua_rawlen(L, 1);
                luaL_argcheck(L, len > 0 && len <= MARKERS_MAX, 1, "needs 1 to 64 marker names");
                for (lua_Integer i = 1; i <= len; i++) {
                        /* Strings only, which the table keeps referenced while they are used:
                         * lua_tolstring() would make a number a string in the stack slot only,
                         * for the collector to free once the slot is popped. */
                        size_t ml;
                        if (lua_rawgeti(L, 1, i) != LUA_TSTRING)
                                return luaL_error(L, "scudo.path.lookup: marker %I is not a string", i);
                        const char *m = lua_tolstring(L, -1, &ml);
                        lua_pop(L, 1);
                        if (strlen(m) != ml || ml == 0 || ml > 255)
                                return luaL_error(L,
                                                  "scudo.path.lookup: marker %I is not a name of 1 to 255 "
                                                  "bytes without NUL",
                                                  i);
                        markers[n++] = m;
                }
        } else
                markers[n++] = lua_check_text(L, 1, 255);
        for (size_t i = 0; i < n; i++)
                if (!marker_ok(markers[i]))
                        return luaL_argerror(L, 1, "a marker is a relative name without '..'");

        if (lua_isnil(L, 2)) {
                lua_engine_push_context(L, "scudo.path.lookup");                /* stack: m s ctx */
                lua_getfield(L, -1, "start_dir");                               /* stack: m s ctx d */
                lua_replace(L, 2);
                lua_settop(L, 2);
        }
        const char *start = lua_check_text(L, 2, PATH_MAX - 1);
        luaL_argcheck(L, start[0] == '/', 2, "must be absolute");
        (void) snprintf(dir, sizeof(dir), "%s", start);

        for (;;) {
                for (size_t i = 0; i < n; i++) {
                        struct stat st;
                        int k = snprintf(cand, sizeof(cand), "%s/%s", streq(dir, "/") ? "" : dir,
                                         markers[i]);
                        if (k > 0 && (size_t) k < sizeof(cand) && lstat(cand, &st) == 0) {
                                lua_pushstring(L, dir);
                                return 1;
                        }
                }
                if (streq(dir, "/"))
                        break;
                char *slash = strrchr(dir, '/');
                if (slash == dir)
                        dir[1] = 0;
                else
                        *slash = 0;
        }
        lua_pushnil(L);
        return 1;
}

static int l_path_exists(lua_State *L) {
        const char *p = lua_check_text(L, 1, PATH_MAX);
        struct stat st;
        lua_pushboolean(L, lstat(p, &st) == 0);
        return 1;
}

static const char *opt_text(lua_State *L, int i) {
        return lua_isnoneornil(L, i) ? NULL : lua_check_text(L, i, PATH_MAX);
}

static int l_path_persistence_roots(lua_State *L) {
        PersistenceEnv env = {
                .home = lua_check_text(L, 1, PATH_MAX),
                .config_home = opt_text(L, 2),
                .data_home = opt_text(L, 3),
                .state_home = opt_text(L, 4),
                .path = lua_isnoneornil(L, 5) ? NULL : lua_check_text(L, 5, 128 * 1024),
        };
        PersistenceRoot *r = NULL;
        size_t n = 0;
        luaL_argcheck(L, env.home[0] == '/', 1, "must be absolute");
        if (persistence_roots(&env, &r, &n) < 0)
                return luaL_error(L, "scudo.path.persistence_roots: out of memory");
        /* A memory error while copying (the engine's budget spent) would leave the list behind;
         * it ends the resolution, and the process with it. */
        if (!lua_checkstack(L, 4)) {
                persistence_roots_free(r, n);
                return luaL_error(L, "scudo.path.persistence_roots: stack overflow");
        }
        lua_createtable(L, (int) MIN(n, (size_t) INT_MAX), 0);
        for (size_t i = 0; i < n; i++) {
                lua_createtable(L, 2, 0);
                lua_pushstring(L, r[i].path);
                lua_rawseti(L, -2, 1);
                lua_pushboolean(L, r[i].deep);
                lua_rawseti(L, -2, 2);
                lua_rawseti(L, -2, (lua_Integer) i + 1);
        }
        persistence_roots_free(r, n);
        return 1;
}

static const luaL_Reg path_functions[] = {
        { "persistence_roots", l_path_persistence_roots },
        { "lookup", l_path_lookup },
        { "exists", l_path_exists },
        { NULL, NULL },
};

int luaopen_scudo_path(lua_State *L) {
        luaL_newlib(L, path_functions);
        return 1;
}
