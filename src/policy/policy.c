/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The policy engine's entry points: a Request goes into a fresh Lua state (lua-engine.c),
 * lua/scudo/policy.lua resolves it, and the plan table it returns is read back into a Plan
 * and checked by plan_validate(). */
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "plan/plan-create.h"
#include "plan/plan-harden.h"
#include "plan/plan-delegate.h"
#include "plan/plan-validate.h"
#include "policy/lua-engine.h"
#include "policy/policy.h"
#include "util/ask.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/strv.h"

static char *sysconfdir_override;
static bool watchdog = true;

void policy_set_sysconfdir(const char *dir) {
        free(sysconfdir_override);
        sysconfdir_override = dir ? strdup(dir) : NULL;
}

void policy_set_watchdog(bool on) {
        watchdog = on;
}

static int engine_new(LuaEngine **ret) {
        LuaLimits l = LUA_LIMITS_DEFAULT;
        l.watchdog = watchdog;
        return lua_engine_new(&l, ret);
}

/* ---- Request -> Lua -------------------------------------------------------------------- */

static void push_strv(lua_State *L, char * const *l, const char *field) {
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

/* By NAME as Lua's < orders the names (byte by byte, a prefix first: strcoll() in the "C"
 * locale, which scudo never leaves: it calls no setlocale()), then by position. */
static int env_var_cmp(const void *a, const void *b) {
        const EnvVar *x = a, *y = b;
        int c = memcmp(x->s, y->s, MIN(x->name_len, y->name_len));
        if (c == 0)
                c = (x->name_len > y->name_len) - (x->name_len < y->name_len);
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
        lua_createtable(L, size, 0);                                            /* stack: req box env names */
        lua_Integer m = 0;
        for (size_t i = 0; i < k; i++) {
                lua_pushlstring(L, v[i].s, v[i].name_len);                      /* stack: .. env names name */
                if (i == 0 || !env_var_same_name(&v[i - 1], &v[i])) {
                        lua_pushvalue(L, -1);
                        lua_rawseti(L, -3, ++m);
                }
                lua_pushstring(L, v[i].s + v[i].name_len + 1);                  /* stack: .. env names name value */
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
static int request_to_lua(LuaEngine *e, const Request *req, const char *const *paths, bool with_paths,
                          char **ret_error) {
        PushRequest pr = { .req = req, .paths = paths };

        int r = lua_engine_cpcall(e, push_request, &pr, 0, 2, ret_error);      /* stack: req paths */
        if (r < 0)
                return r;
        if (!with_paths)
                lua_pop(lua_engine_state(e), 1);                                /* stack: req */
        return 0;
}

/* ---- Lua plan -> Plan ------------------------------------------------------------------ */

typedef struct ReadPlan {
        Plan *plan;
        char **warnings;
        int r;
} ReadPlan;

/* Field `name` of the table on top, raw (the plan is the library's, but be strict). */
static int get_field(lua_State *L, const char *name) {
        lua_pushstring(L, name);
        return lua_rawget(L, -2);
}

static const char *get_string(lua_State *L, const char *name, const char *def) {
        const char *s = def;
        if (get_field(L, name) == LUA_TSTRING)
                s = lua_tostring(L, -1);
        lua_pop(L, 1);  /* the string stays referenced by the table */
        return s;
}

static bool get_bool(lua_State *L, const char *name) {
        get_field(L, name);
        bool b = lua_toboolean(L, -1);
        lua_pop(L, 1);
        return b;
}

static int get_strv(lua_State *L, const char *name, char ***ret) {
        int r = 0;
        if (get_field(L, name) == LUA_TTABLE) {
                lua_Integer n = (lua_Integer) lua_rawlen(L, -1);
                for (lua_Integer i = 1; i <= n && r >= 0; i++) {
                        if (lua_rawgeti(L, -1, i) == LUA_TSTRING)
                                r = strv_extend(ret, lua_tostring(L, -1));
                        else
                                r = -EINVAL;
                        lua_pop(L, 1);
                }
        }
        lua_pop(L, 1);
        return r;
}

/* plan.environment, the names in order, and plan.environment_values, name -> value: the
 * NAME=VALUE list (joined here rather than by the library, one Lua string each). */
static int get_environment(lua_State *L, char ***ret) {
        int r = 0;
        int tn = get_field(L, "environment");                                   /* stack: plan names */
        if (tn == LUA_TNIL) {
                lua_pop(L, 1);
                return 0;
        }
        lua_pushliteral(L, "environment_values");
        int tv = lua_rawget(L, -3);                                             /* stack: plan names values */
        if (tn != LUA_TTABLE || tv != LUA_TTABLE) {
                lua_pop(L, 2);
                return -EINVAL;
        }
        lua_Integer n = (lua_Integer) lua_rawlen(L, -2);
        for (lua_Integer i = 1; i <= n && r >= 0; i++) {
                if (lua_rawgeti(L, -2, i) != LUA_TSTRING) {                     /* stack: .. names values name */
                        r = -EINVAL;
                        lua_pop(L, 1);
                        break;
                }
                lua_pushvalue(L, -1);
                if (lua_rawget(L, -3) != LUA_TSTRING)                           /* stack: .. name value */
                        r = -EINVAL;
                else {
                        /* Up to a NUL byte, as strdup() would copy them. */
                        const char *k = lua_tostring(L, -2), *v = lua_tostring(L, -1);
                        size_t lk = strlen(k), lv = strlen(v);
                        char *e = malloc(lk + 1 + lv + 1);
                        if (!e)
                                r = -ENOMEM;
                        else {
                                memcpy(e, k, lk);
                                e[lk] = '=';
                                memcpy(e + lk + 1, v, lv + 1);
                                if ((r = strv_push(ret, e)) < 0)
                                        free(e);
                        }
                }
                lua_pop(L, 2);
        }
        lua_pop(L, 2);                                                          /* stack: plan */
        return r;
}

/* Runs in protected mode: read_plan(ReadPlan, plan). C memory is only added to rp->plan, which
 * the caller owns, so a Lua error part way leaks nothing. */
static int read_plan(lua_State *L) {
        ReadPlan *rp = lua_touserdata(L, 1);
        Plan *p = rp->plan;
        int r = 0;

        lua_settop(L, 2);                                                       /* stack: ud plan */
        if (!lua_istable(L, -1)) {
                rp->r = -EINVAL;
                return 0;
        }

        if (get_field(L, "paths") == LUA_TTABLE) {                              /* stack: ud plan paths */
                lua_Integer n = (lua_Integer) lua_rawlen(L, -1);
                for (lua_Integer i = 1; i <= n && r >= 0; i++) {
                        lua_rawgeti(L, -1, i);                                  /* stack: .. paths e */
                        if (!lua_istable(L, -1)) {
                                r = -EINVAL;
                                break;
                        }
                        PathAccess a = path_access_from_string(get_string(L, "access", ""));
                        PathCreate c = path_create_from_string(get_string(L, "create", "none"));
                        const char *path = get_string(L, "path", NULL);
                        /* For explain, `path` is canonical already, and plan_create_check needs the
                         * path as written to tell a symlink on the way: `expanded` (a run passes
                         * it as written, and `expanded` only with hooks). */
                        if (c > 0)
                                path = get_string(L, "expanded", path);
                        if (a < 0 || c < 0 || !path)
                                r = -EINVAL;
                        else
                                r = plan_add_path(p, a, path, get_string(L, "origin", ""));
                        if (r >= 0) {
                                p->paths[p->n_paths - 1].derived = get_bool(L, "derived");
                                const char *od = get_string(L, "over_deny", NULL);
                                if (od && !(p->paths[p->n_paths - 1].over_deny = strdup(od)))
                                        r = -ENOMEM;
                                p->paths[p->n_paths - 1].create = c;
                        }
                        lua_pop(L, 1);                                          /* stack: .. paths */
                }
        }
        lua_pop(L, 1);                                                          /* stack: ud plan */

        if (r >= 0 && get_field(L, "properties") == LUA_TTABLE) {
                lua_Integer n = (lua_Integer) lua_rawlen(L, -1);
                for (lua_Integer i = 1; i <= n && r >= 0; i++) {
                        lua_rawgeti(L, -1, i);
                        const char *name = lua_istable(L, -1) ? get_string(L, "name", NULL) : NULL;
                        const char *value = lua_istable(L, -1) ? get_string(L, "value", NULL) : NULL;
                        r = name && value ? plan_add_property(p, name, value, get_string(L, "origin", "")) :
                                -EINVAL;
                        lua_pop(L, 1);
                }
        }
        lua_pop(L, 1);

        if (r >= 0) {
                p->network_filtered = get_bool(L, "network_filtered");
                p->dns = dns_mode_from_string(get_string(L, "dns", "filtered"));
                p->dbus = dbus_mode_from_string(get_string(L, "dbus", "none"));
                p->dbus_system = dbus_mode_from_string(get_string(L, "dbus_system", "none"));
                p->delegable = get_bool(L, "delegable");
                p->confirm = get_bool(L, "confirm");
                const char *t = get_string(L, "log_target", "stderr");
                const char *co = get_string(L, "confirm_origin", NULL);
                if (!(p->log_target = strdup(t)) || (co && !(p->confirm_origin = strdup(co))))
                        r = -ENOMEM;
        }
        struct {
                const char *name;
                char ***list;
        } lists[] = {
                { "net_allow", &p->net_allow },
                { "net_deny", &p->net_deny },
                { "net_allow_origin", &p->net_allow_origin },
                { "net_deny_origin", &p->net_deny_origin },
                { "dbus_talk", &p->dbus_talk },
                { "dbus_own", &p->dbus_own },
                { "dbus_see", &p->dbus_see },
                { "dbus_system_talk", &p->dbus_system_talk },
                { "delegate", &p->delegate },
                { "delegate_commands", &p->delegate_commands },
                { "undelegable", &p->undelegable },
                { "untrusted_files", &p->untrusted_files },
                { "log_report", &p->log_report },
                { "profiles", &p->profiles },
                { "config_files", &p->config_files },
                { "hook_files", &p->hook_files },
                { "unset_environment", &p->unset_environment },
        };
        for (size_t i = 0; i < ELEMENTSOF(lists) && r >= 0; i++)
                r = get_strv(L, lists[i].name, lists[i].list);
        if (r >= 0)
                r = get_environment(L, &p->environment);
        if (r >= 0)
                r = get_strv(L, "warnings", &rp->warnings);
        /* Without network filtering the runner must not see rules at all. */
        if (r >= 0 && !p->network_filtered) {
                p->net_allow = strv_free(p->net_allow);
                p->net_deny = strv_free(p->net_deny);
                p->net_allow_origin = strv_free(p->net_allow_origin);
                p->net_deny_origin = strv_free(p->net_deny_origin);
        }
        rp->r = r;
        return 0;
}

/* Reads the plan table on top of the stack (popped) into a new Plan, and its warnings. */
static int plan_from_lua(LuaEngine *e, const Request *req, Plan **ret, char ***ret_warnings,
                         char **ret_error) {
        _cleanup_(plan_freep) Plan *p = plan_new();
        if (!p)
                return -ENOMEM;

        ReadPlan rp = { .plan = p };
        int r = lua_engine_cpcall(e, read_plan, &rp, 1, 0, ret_error);
        if (ret_warnings)
                *ret_warnings = rp.warnings;
        else
                strv_free(rp.warnings);
        if (r < 0)
                return r;
        if (rp.r < 0) {
                if (ret_error)
                        *ret_error = strdup(rp.r == -ENOMEM ? "out of memory" :
                                            "internal error: the policy library returned a malformed plan");
                return rp.r;
        }

        p->exec_path = strdup(req->exec_path ?: "");
        p->argv = strv_copy(req->argv);
        p->working_directory = req->start_dir ? strdup(req->start_dir) : NULL;
        if (!p->exec_path || !p->argv || (req->start_dir && !p->working_directory))
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

/* ---- hardening ------------------------------------------------------------------------- */

static const char *env_get(char * const *env, const char *name) {
        size_t l = strlen(name);
        STRV_FOREACH(e, env)
                if (strncmp(*e, name, l) == 0 && (*e)[l] == '=')
                        return *e + l + 1;
        return NULL;
}

/* What the hardening step needs to know of the caller. */
static HardenContext harden_context(const Request *req) {
        return (HardenContext) {
                .home = req->home,
                .runtime_dir = req->runtime_dir,
                .config_home = env_get(req->environ, "XDG_CONFIG_HOME"),
                .state_home = env_get(req->environ, "XDG_STATE_HOME"),
                .data_home = env_get(req->environ, "XDG_DATA_HOME"),
                .path = env_get(req->environ, "PATH"),
                /* the helper's socket when it is not the system one (file-capabilities mode,
                 * tests): kept out of the sandbox like the default */
                .bpfd_socket = secure_getenv("SCUDO_BPFD_SOCKET"),
        };
}

/* Inside a sandbox nothing that would widen what it grants may be asked for. A run refuses
 * these before it gets here (it runs the command in place); this covers explain, and whoever
 * else resolves a Request. */
static int check_nested(const Request *req, char **ret_error) {
        const char *what = req->nested ? request_widening_option(req) : NULL;
        if (!what)
                return 0;
        if (ret_error && asprintf(ret_error, "%s cannot be used inside a scudo sandbox: it could only "
                                  "change what the sandbox grants", what) < 0)
                *ret_error = NULL;
        return -EPERM;
}

/* ---- entry points ---------------------------------------------------------------------- */

static void push_entry(lua_State *L, const PlanPath *e, const char *dropped) {
        lua_createtable(L, 0, 6);
        lua_pushstring(L, path_access_to_string(e->access));
        lua_setfield(L, -2, "access");
        lua_pushstring(L, e->path);
        lua_setfield(L, -2, "path");
        lua_pushstring(L, strempty(e->origin));
        lua_setfield(L, -2, "origin");
        if (e->reason) {
                lua_pushstring(L, e->reason);
                lua_setfield(L, -2, "reason");
        }
        if (dropped) {
                lua_pushstring(L, dropped);
                lua_setfield(L, -2, "dropped");
        }
        if (e->create != PATH_CREATE_NONE) {
                lua_pushstring(L, path_create_to_string(e->create));
                lua_setfield(L, -2, "create");
        }
}

/* What the hardening step did to a plan (NULL: it did not run), for explain: { added = {
 * entry... }, dropped = { entry... }, private_pids = bool, git_watch = { dir... }, git_pins = { path... } }, each entry { access, path, origin,
 * reason (why scudo added it), dropped (why it was taken out), create }. Through
 * lua_engine_cpcall. */
static int push_hardening(lua_State *L) {
        const Plan *p = lua_touserdata(L, 1);
        if (!p) {
                lua_pushnil(L);
                return 1;
        }
        lua_createtable(L, 0, 3);
        lua_newtable(L);
        lua_Integer n = 0;
        for (size_t i = 0; i < p->n_paths; i++)
                if (p->paths[i].reason) {
                        push_entry(L, &p->paths[i], NULL);
                        lua_rawseti(L, -2, ++n);
                }
        lua_setfield(L, -2, "added");
        lua_createtable(L, (int) MIN(p->n_dropped, (size_t) INT_MAX), 0);
        for (size_t i = 0; i < p->n_dropped; i++) {
                push_entry(L, &p->dropped[i].entry, p->dropped[i].reason);
                lua_rawseti(L, -2, (lua_Integer) i + 1);
        }
        lua_setfield(L, -2, "dropped");
        lua_pushboolean(L, plan_private_pids(p));
        lua_setfield(L, -2, "private_pids");
        lua_createtable(L, 0, 0);
        n = 0;
        STRV_FOREACH(w, p->git_watch) {
                lua_pushstring(L, *w);
                lua_rawseti(L, -2, ++n);
        }
        lua_setfield(L, -2, "git_watch");
        lua_createtable(L, 0, 0);
        n = 0;
        STRV_FOREACH(w, p->git_pins) {
                lua_pushstring(L, *w);
                lua_rawseti(L, -2, ++n);
        }
        lua_setfield(L, -2, "git_pins");
        return 1;
}

/* The string s (a light userdata), or nil for NULL. Through lua_engine_cpcall. */
static int push_message(lua_State *L) {
        const char *s = lua_touserdata(L, 1);
        if (s)
                lua_pushstring(L, s);
        else
                lua_pushnil(L);
        return 1;
}

/* Copies the string on top of the stack (popped). lua_tostring on a string allocates nothing. */
static int take_string(LuaEngine *e, char **ret) {
        lua_State *L = lua_engine_state(e);
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        char *t = strdup(s);
        lua_pop(L, 1);
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

/* Warnings may carry text from configuration files and hooks: control characters are shown
 * as '?', so that none reaches the terminal. */
static void print_warnings(char **warnings) {
        STRV_FOREACH(w, warnings) {
                for (char *c = *w; *c; c++)
                        if ((unsigned char) *c < 0x20 || *c == 0x7f)
                                *c = '?';
                log_warning("%s", *w);
        }
}

static int resolve_plan(LuaEngine *e, const Request *req, Plan **ret, char **ret_error) {
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_strv_free_ char **warnings = NULL;

        int r = request_to_lua(e, req, NULL, false, ret_error);                 /* stack: req */
        if (r < 0)
                return r;
        r = lua_engine_call(e, "scudo.policy", "resolve", 1, 1, ret_error);     /* stack: plan */
        if (r < 0)
                return r;
        r = plan_from_lua(e, req, &p, &warnings, ret_error);                    /* stack: */
        if (r < 0)
                return r;
        print_warnings(warnings);
        *ret = TAKE_PTR(p);
        return 0;
}

/* confirm = true: ask on the terminal, and refuse where nothing can be asked. */
static int confirm_run(const Plan *p, const Request *req, char **ret_error) {
        _cleanup_free_ char *question = NULL;
        size_t size = 0;

        if (!p->confirm)
                return 0;
        if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) {
                if (ret_error && asprintf(ret_error, "a profile for '%s' asks for confirmation (confirm = true), "
                                          "but there is no terminal to ask on; not running it",
                                          strempty(req->argv ? req->argv[0] : NULL)) < 0)
                        *ret_error = NULL;
                return -ECANCELED;
        }
        FILE *q = open_memstream(&question, &size);
        if (!q)
                return -ENOMEM;
        fprintf(q, "scudo: run");
        STRV_FOREACH(a, req->argv)
                fprintf(q, " %s", *a);
        fprintf(q, " under");
        STRV_FOREACH(a, p->profiles)
                fprintf(q, " %s", *a);
        fputc('?', q);
        if (fclose(q) != 0)
                return -ENOMEM;
        int r = ask_yes_no(STDIN_FILENO, stderr, question);
        if (r > 0)
                return 0;
        if (ret_error)
                *ret_error = strdup("not confirmed; not running it");
        return -ECANCELED;
}

int policy_resolve(const Request *req, Plan **ret_plan, char **ret_error) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;

        int r = check_nested(req, ret_error);
        if (r < 0)
                return r;
        r = engine_new(&e);
        if (r < 0)
                return r;
        r = resolve_plan(e, req, &p, ret_error);
        if (r < 0)
                return r;
        r = plan_create_check(p, req->home, req->runtime_dir, ret_error);
        if (r < 0)
                return r;
        r = plan_validate(p, ret_error);
        if (r < 0)
                return r;
        if (req->delegation) {
                /* Through a broker: delegated or not, and within the limits (nothing is asked:
                 * confirm = true is one of them). */
                Delegation d;
                r = plan_delegate(p, req, req->delegation, &d, ret_error);
                if (r < 0)
                        return r;
                p->delegation_in_place = d == DELEGATION_IN_PLACE;
                if (p->delegation_in_place) {
                        *ret_plan = TAKE_PTR(p);
                        return 0;
                }
        }
        HardenContext hc = harden_context(req);
        r = plan_harden(p, &hc);
        if (r < 0)
                return r;
        if (!req->delegation) {
                r = confirm_run(p, req, ret_error);
                if (r < 0)
                        return r;
        }
        *ret_plan = TAKE_PTR(p);
        return 0;
}

int policy_explain(const Request *req, bool json, char **ret_text, char **ret_error) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_free_ char *invalid = NULL;

        int r = engine_new(&e);
        if (r < 0)
                return r;
        lua_State *L = lua_engine_state(e);

        r = request_to_lua(e, req, NULL, false, ret_error);                     /* stack: req */
        if (r < 0)
                return r;
        lua_pushvalue(L, -1);                                                   /* stack: req req */
        r = lua_engine_call(e, "scudo.policy", "explain", 1, 2, ret_error);     /* stack: req plan ex */
        if (r < 0)
                return r;
        lua_pushvalue(L, -2);                                                   /* stack: req plan ex plan */
        r = plan_from_lua(e, req, &p, NULL, &invalid);                          /* stack: req plan ex */
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                r = check_nested(req, &invalid);
        /* What the hardening step adds and drops is shown too. It creates nothing: what a run
         * would make (a configuration directory, a .git placeholder) is only named. */
        bool hardened = false;
        if (r >= 0)
                r = plan_create_check(p, req->home, req->runtime_dir, &invalid);
        if (r >= 0 && plan_validate(p, &invalid) >= 0) {
                HardenContext hc = harden_context(req);
                r = plan_harden(p, &hc);
                hardened = r >= 0;
        }
        if (r < 0 && !invalid)
                invalid = strdup(strerror(-r));

        lua_remove(L, -2);                                                      /* stack: req ex */
        lua_pushboolean(L, json);                                               /* stack: req ex json */
        r = lua_engine_cpcall(e, push_message, invalid, 0, 1, ret_error);        /* stack: req ex json err */
        if (r < 0)
                return r;
        r = lua_engine_cpcall(e, push_hardening, hardened ? p : NULL, 0, 1, ret_error); /* stack: .. err h */
        if (r < 0)
                return r;
        r = lua_engine_call(e, "scudo.policy", "render", 5, 1, ret_error);      /* stack: text */
        if (r < 0)
                return r;
        return take_string(e, ret_text);
}

/* Calls scudo.policy.NAME(request, paths) and returns its string result (and integer). */
static int call_text(const Request *req, const char *const *paths, const char *name, char **ret_text,
                     int *ret_count, char **ret_error) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;

        int r = engine_new(&e);
        if (r < 0)
                return r;
        lua_State *L = lua_engine_state(e);
        r = request_to_lua(e, req, paths, true, ret_error);                     /* stack: req paths */
        if (r < 0)
                return r;
        r = lua_engine_call(e, "scudo.policy", name, 2, 2, ret_error);          /* stack: text n */
        if (r < 0)
                return r;
        if (ret_count)
                *ret_count = (int) lua_tointeger(L, -1);
        lua_pop(L, 1);                                                          /* stack: text */
        return take_string(e, ret_text);
}

int policy_check(const Request *req, const char *const *paths, char **ret_report, int *ret_errors,
                 char **ret_error) {
        return call_text(req, paths, "check", ret_report, ret_errors, ret_error);
}

int policy_profiles(const Request *req, char **ret_text, char **ret_error) {
        return call_text(req, NULL, "profiles", ret_text, NULL, ret_error);
}

typedef struct Targets {
        char **paths, **hashes;
        int r;
} Targets;

/* read_targets(Targets, list): C copies of { {path=, sha256=}, ... }, in protected mode. */
static int read_targets(lua_State *L) {
        Targets *t = lua_touserdata(L, 1);
        lua_Integer n = lua_istable(L, 2) ? (lua_Integer) lua_rawlen(L, 2) : 0;
        for (lua_Integer i = 1; i <= n && t->r >= 0; i++) {
                lua_rawgeti(L, 2, i);                                           /* stack: ud list e */
                if (!lua_istable(L, -1)) {
                        t->r = -EINVAL;
                        break;
                }
                lua_getfield(L, -1, "path");
                lua_getfield(L, -2, "sha256");                                  /* stack: ud list e p h */
                if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                        t->r = -EINVAL;
                else {
                        t->r = strv_extend(&t->paths, lua_tostring(L, -2));
                        if (t->r >= 0)
                                t->r = strv_extend(&t->hashes, lua_tostring(L, -1));
                }
                lua_pop(L, 3);
        }
        return 0;
}

int policy_trust_targets(const Request *req, const char *const *paths, char ***ret_paths,
                         char ***ret_hashes, char **ret_summary, char **ret_error) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;
        _cleanup_free_ char *summary = NULL;
        Targets t = {};

        int r = engine_new(&e);
        if (r < 0)
                return r;
        r = request_to_lua(e, req, paths, true, ret_error);                     /* stack: req paths */
        if (r < 0)
                return r;
        r = lua_engine_call(e, "scudo.policy", "trust_targets", 2, 2, ret_error);       /* stack: list text */
        if (r < 0)
                return r;
        r = take_string(e, &summary);                                           /* stack: list */
        if (r < 0)
                return r;
        r = lua_engine_cpcall(e, read_targets, &t, 1, 0, ret_error);
        if (r >= 0)
                r = t.r;
        if (r < 0) {
                strv_free(t.paths);
                strv_free(t.hashes);
                return r;
        }
        *ret_paths = t.paths;
        *ret_hashes = t.hashes;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}
