/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The plan table lua/scudo/policy.lua returns, read back into a Plan (and its warnings). An
 * entry or a list of the wrong shape makes the plan malformed (-EINVAL); a scalar field that
 * is not there takes its default. */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "policy/lua-engine.h"
#include "policy/policy-internal.h"
#include "util/strv.h"

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
        int tv = lua_rawget(L, -3); /* stack: plan names values */
        if (tn != LUA_TTABLE || tv != LUA_TTABLE) {
                lua_pop(L, 2);
                return -EINVAL;
        }
        lua_Integer n = (lua_Integer) lua_rawlen(L, -2);
        for (lua_Integer i = 1; i <= n && r >= 0; i++) {
                if (lua_rawgeti(L, -2, i) != LUA_TSTRING) { /* stack: .. names values name */
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
                        /* plan_create_check needs the path as written to tell a symlink on the
                         * way: `expanded`, where the builder kept it (explain, hooks), is that
                         * before it was cleaned. */
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
                                const char *oo = get_string(L, "over_origin", NULL);
                                PathAccess oa = path_access_from_string(get_string(L, "over_access", ""));
                                if (r >= 0 && oo && oa >= 0) {
                                        p->paths[p->n_paths - 1].over_access = oa;
                                        if (!(p->paths[p->n_paths - 1].over_origin = strdup(oo)))
                                                r = -ENOMEM;
                                }
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
                p->git_remote = get_bool(L, "git_remote");
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
                { "delegate_executables", &p->delegate_executables },
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
int plan_from_lua(LuaEngine *e, const Request *req, Plan **ret, char ***ret_warnings,
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
        p->exec_dev = req->exec_dev;
        p->exec_ino = req->exec_ino;
        p->argv = strv_copy(req->argv);
        p->working_directory = req->start_dir ? strdup(req->start_dir) : NULL;
        if (!p->exec_path || !p->argv || (req->start_dir && !p->working_directory))
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}
