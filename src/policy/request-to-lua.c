/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A Request made the Lua table lua/scudo/policy.lua reads: the caller's command, directories,
 * environment (its names sorted here) and one-run options, and the configuration directory to
 * read (SCUDO_SYSCONFDIR, or the one a test or benchmark sets). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "policy/lua-engine.h"
#include "policy/policy-internal.h"
#include "policy/policy.h"
#include "util/strv.h"

static char *sysconfdir_override;

void policy_set_sysconfdir(const char *dir) {
        free(sysconfdir_override);
        sysconfdir_override = dir ? strdup(dir) : NULL;
}

void push_strv(lua_State *L, char * const *l, const char *field) {
        lua_newtable(L);
        lua_Integer n = 0;
        STRV_FOREACH(s, l) {
                lua_pushstring(L, *s);
                lua_rawseti(L, -2, ++n);
        }
        lua_setfield(L, -2, field);
}

static void push_string(lua_State *L, const char *s, const char *field) {
        if (s) {
                lua_pushstring(L, s);
                lua_setfield(L, -2, field);
        }
}

/* One variable of the caller's environment: "NAME=value", where NAME is name_len bytes. */
typedef struct EnvVar {
        const char *s;
        size_t name_len;
        size_t position;        /* in the environment: of two with one name, the later counts */
} EnvVar;

/* By NAME as Lua's < orders the names, then by position. */
static int env_var_cmp(const void *a, const void *b) {
        const EnvVar *x = a, *y = b;
        int c = lua_string_order(x->s, x->name_len, y->s, y->name_len);
        return c != 0 ? c : (x->position > y->position) - (x->position < y->position);
}

static bool env_var_same_name(const EnvVar *x, const EnvVar *y) {
        return x->name_len == y->name_len && memcmp(x->s, y->s, x->name_len) == 0;
}

/* Sets fields env (name -> value, the later of two with one name) and env_names (env's names,
 * sorted: the library would sort them through Lua comparisons otherwise) of the table on top,
 * each table made at its size and each name made once. */
static void push_environment(lua_State *L, char * const *vars) {
        size_t n = 0, k = 0, names = 0;
        STRV_FOREACH(e, vars)
                n++;
        /* Lua memory: nothing to free should a later allocation raise. */
        EnvVar *v = lua_newuserdatauv(L, MAX(n, (size_t) 1) * sizeof(EnvVar), 0);      /* stack: req box */
        STRV_FOREACH(e, vars) {
                const char *eq = strchr(*e, '=');
                if (eq && eq != *e) {
                        v[k] = (EnvVar) { .s = *e, .name_len = (size_t) (eq - *e), .position = k };
                        k++;
                }
        }
        qsort(v, k, sizeof(EnvVar), env_var_cmp);
        for (size_t i = 0; i < k; i++)
                if (i == 0 || !env_var_same_name(&v[i - 1], &v[i]))
                        names++;
        int size = (int) MIN(names, (size_t) INT_MAX);
        lua_createtable(L, 0, size);                                            /* stack: req box env */
        lua_createtable(L, size, 0); /* stack: req box env names */
        lua_Integer m = 0;
        for (size_t i = 0; i < k; i++) {
                lua_pushlstring(L, v[i].s, v[i].name_len); /* stack: .. env names name */
                if (i == 0 || !env_var_same_name(&v[i - 1], &v[i])) {
                        lua_pushvalue(L, -1);
                        lua_rawseti(L, -3, ++m);
                }
                lua_pushstring(L, v[i].s + v[i].name_len + 1); /* stack: .. env names name value */
                lua_rawset(L, -4);
        }
        lua_setfield(L, -4, "env_names");                                       /* stack: req box env */
        lua_setfield(L, -3, "env");                                             /* stack: req box */
        lua_pop(L, 1);                                                          /* stack: req */
}

typedef struct PushRequest {
        const Request *req;
        const char *const *paths;       /* for check and trust */
} PushRequest;

/* Returns the request table and the paths list; run through lua_engine_cpcall. */
static int push_request(lua_State *L) {
        PushRequest *pr = lua_touserdata(L, 1);
        const Request *req = pr->req;
        char etc[4096];

        lua_createtable(L, 0, 32);                                              /* stack: ud req */
        push_strv(L, req->argv, "argv");
        if (req->command_name)
                push_string(L, req->command_name, "command_name");
        else if (req->argv && req->argv[0]) {
                const char *b = strrchr(req->argv[0], '/');
                push_string(L, b ? b + 1 : req->argv[0], "command_name");
        } else
                push_string(L, "", "command_name");
        push_string(L, req->exec_path, "exec_path");
        push_string(L, req->start_dir ?: "/", "start_dir");
        push_string(L, req->home ?: "/", "home");
        if (req->runtime_dir)
                push_string(L, req->runtime_dir, "runtime_dir");
        else {
                lua_pushfstring(L, "/run/user/%d", (int) req->uid);
                lua_setfield(L, -2, "runtime_dir");
        }
        lua_pushinteger(L, (lua_Integer) req->uid);
        lua_setfield(L, -2, "uid");
        lua_pushboolean(L, req->nested);
        lua_setfield(L, -2, "nested");
        lua_pushboolean(L, req->via_link);
        lua_setfield(L, -2, "via_link");
        lua_pushboolean(L, isatty(STDIN_FILENO) && isatty(STDERR_FILENO));
        lua_setfield(L, -2, "interactive");

        const char *sc = sysconfdir_override ?: SCUDO_SYSCONFDIR;
        (void) snprintf(etc, sizeof(etc), "%s%s", sc[0] == '/' ? "" : "/", sc);
        push_string(L, etc, "sysconfdir");

        push_environment(L, req->environ);

        push_strv(L, req->profiles, "profiles");
        lua_pushboolean(L, req->no_match);
        lua_setfield(L, -2, "no_match");
        push_strv(L, req->fs_write, "fs_write");
        push_strv(L, req->fs_read, "fs_read");
        push_strv(L, req->fs_hide, "fs_hide");
        push_strv(L, req->fs_deny, "fs_deny");
        push_strv(L, req->net_allow, "net_allow");
        push_strv(L, req->net_deny, "net_deny");
        lua_pushboolean(L, req->no_network);
        lua_setfield(L, -2, "no_network");
        push_strv(L, req->env_copy, "env_copy");
        push_strv(L, req->deny_env, "deny_env");
        push_strv(L, req->allow_env, "allow_env");
        push_strv(L, req->properties, "properties");
        lua_pushinteger(L, req->delegate);
        lua_setfield(L, -2, "delegate");                                        /* stack: ud req */

        lua_newtable(L);                                                        /* stack: ud req paths */
        lua_Integer n = 0;
        for (const char *const *p = pr->paths; p && *p; p++) {
                lua_pushstring(L, *p);
                lua_rawseti(L, -2, ++n);
        }
        return 2;
}

/* Leaves the request table (and the paths table, if with_paths) on the stack. */
int request_to_lua(LuaEngine *e, const Request *req, const char *const *paths, bool with_paths,
                   char **ret_error) {
        PushRequest pr = { .req = req, .paths = paths };

        int r = lua_engine_cpcall(e, push_request, &pr, 0, 2, ret_error);      /* stack: req paths */
        if (r < 0)
                return r;
        if (!with_paths)
                lua_pop(lua_engine_state(e), 1);                                /* stack: req */
        return 0;
}
