/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The policy engine's entry points: a Request goes into a fresh Lua state (lua-engine.c) as
 * the library's request table (request-to-lua.c), lua/scudo/policy.lua resolves it, and the
 * plan table it returns is read back into a Plan (plan-from-lua.c), made canonical by
 * plan_normalize(), checked by plan_check() and hardened by plan_harden(). Nothing here prints:
 * warnings go back to the caller. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/broker-paths.h"
#include "plan/git-dir-find.h"
#include "plan/plan-create.h"
#include "plan/plan-harden.h"
#include "plan/plan-delegate.h"
#include "plan/plan-git-remote.h"
#include "plan/plan-validate.h"
#include "policy/lua-engine.h"
#include "policy/policy-internal.h"
#include "policy/policy.h"
#include "util/path-util.h"
#include "util/scudo-programs.h"
#include "util/strv.h"

static bool watchdog = true;

void policy_set_watchdog(bool on) {
        watchdog = on;
}

static int engine_new(LuaEngine **ret) {
        LuaLimits l = LUA_LIMITS_DEFAULT;
        l.watchdog = watchdog;
        return lua_engine_new(&l, ret);
}

/* ---- hardening ------------------------------------------------------------------------- */

/* The value of `name` in env as the policy engine reads it (request-to-lua.c): of two entries
 * with one name, the later. */
static const char *env_get_last(char * const *env, const char *name) {
        const char *v = NULL;
        size_t l = strlen(name);
        for (char * const *e = env; e && *e; e++)
                if (strncmp(*e, name, l) == 0 && (*e)[l] == '=')
                        v = *e + l + 1;
        return v;
}

/* The hardening step's context for the caller of `req`, made once for its two calls (the rule
 * decided before delegation, plan-harden.h's 0b, and plan_harden()): where its home, runtime
 * directory and configuration are, with the places of plan/persistence.h resolved once. The
 * variables as the policy engine read them, which worked out the grants. */
static int hardening_context(const Request *req, HardenContext *ret) {
        *ret = (HardenContext) {
                .home = req->home,
                .runtime_dir = req->runtime_dir,
                .config_home = env_get_last(req->environ, "XDG_CONFIG_HOME"),
                .state_home = env_get_last(req->environ, "XDG_STATE_HOME"),
                .data_home = env_get_last(req->environ, "XDG_DATA_HOME"),
                .path = env_get_last(req->environ, "PATH"),
                .environ = req->environ,
                /* the helper's socket when it is not the system one (file-capabilities mode,
                 * tests): kept out of the sandbox like the default */
                .bpfd_socket = secure_getenv("SCUDO_BPFD_SOCKET"),
        };
        return harden_context_resolve(ret);
}

/* plan_harden() in ctx and, for a plan that delegates, with scudo itself (the routing links
 * lead to it). */
static int harden(Plan *p, const HardenContext *ctx) {
        _cleanup_free_ char *scudo_path = NULL, *route_path = NULL, *root = NULL, *cache = NULL;
        if (strv_length(p->delegate) > 0 && !(scudo_path = realpath("/proc/self/exe", NULL)))
                return -errno;
        if (scudo_path && !(route_path = scudo_route_path()))
                return -ENOMEM;
        /* The project walk's cache: below the brokers' root, which no sandbox reaches
         * (broker-paths.h: denied in each one, refused to every grant; the one sandbox that
         * delegates has a tmpfs of its own there). */
        if (plan_broker_root(getuid(), &root) < 0 || !(cache = path_join(root, GIT_DIR_CACHE_NAME)))
                return -ENOMEM;
        HardenContext c = *ctx;
        c.scudo_path = scudo_path;
        c.route_path = route_path;
        c.git_dir_cache = cache;
        return plan_harden(p, &c);
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
 * as '?', so that none reaches the terminal of whoever prints them. */
static void sanitize_warnings(char **warnings) {
        STRV_FOREACH(w, warnings)
                for (char *c = *w; *c; c++)
                        if ((unsigned char) *c < 0x20 || *c == 0x7f)
                                *c = '?';
}

static int resolve_plan(LuaEngine *e, const Request *req, Plan **ret, char ***warnings, char **ret_error) {
        _cleanup_(plan_freep) Plan *p = NULL;

        int r = request_to_lua(e, req, NULL, false, ret_error);                 /* stack: req */
        if (r < 0)
                return r;
        r = lua_engine_call(e, "scudo.policy", "resolve", 1, 1, ret_error);     /* stack: plan */
        if (r < 0)
                return r;
        r = plan_from_lua(e, req, &p, warnings, ret_error);                     /* stack: */
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

/* What a run says of one entry the hardening step dropped: the entry as the profile gave it,
 * and why it is not granted. *ret stays NULL for a drop a run does not warn of. */
static int format_dropped(const PlanDrop *d, char **ret) {
        if (!d->warn)
                return 0;
        return asprintf(ret, "%s: filesystem.%s: '%s' %s: ignored", strempty(d->entry.origin),
                        path_access_to_string(d->entry.access), d->entry.given ?: d->entry.path, d->reason);
}

/* What a run says of a derived write refused before delegation, as the policy engine says of
 * those it refuses itself (build.lua). */
static int format_refused(const PlanDrop *d, char **ret) {
        return asprintf(ret, "%s: filesystem.write: %s not made writable: %s", strempty(d->entry.origin),
                        d->entry.given ?: d->entry.path, d->reason);
}

/* Appends the warning `format` makes of each of the n drops (none for those it skips). */
static int push_drop_warnings(const PlanDrop *drops, size_t n, int (*format)(const PlanDrop *d, char **ret),
                              char ***warnings) {
        for (size_t i = 0; i < n; i++) {
                char *w = NULL;
                if (format(&drops[i], &w) < 0)
                        return -ENOMEM;
                if (!w)
                        continue;
                int r = strv_push(warnings, w);
                if (r < 0) {
                        free(w);
                        return r;
                }
        }
        return 0;
}

static int resolve(const Request *req, Plan **ret_plan, char ***warnings, char **ret_error) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(harden_context_done) HardenContext hc = {};

        int r = check_nested(req, ret_error);
        if (r < 0)
                return r;
        r = engine_new(&e);
        if (r < 0)
                return r;
        r = resolve_plan(e, req, &p, warnings, ret_error);
        if (r < 0)
                return r;
        r = plan_create_check(p, req->home, req->runtime_dir, ret_error);
        if (r < 0)
                return r;
        r = plan_normalize(p, ret_error);
        if (r < 0)
                return r;
        r = hardening_context(req, &hc);
        if (r < 0)
                return r;
        r = plan_refuse_persistence_writes(p, &hc);
        if (r < 0)
                return r;
        r = push_drop_warnings(p->refused, p->n_refused, format_refused, warnings);
        if (r < 0)
                return r;
        r = push_drop_warnings(p->dropped, p->n_dropped, format_dropped, warnings);
        if (r < 0)
                return r;
        r = plan_check(p, ret_error);
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
        r = plan_git_remote(p, req, ret_error);
        if (r < 0)
                return r;
        r = harden(p, &hc);
        if (r == -E2BIG && ret_error && !*ret_error) {
                /* the one walk that stops so: the project's, for git's configuration */
                char *why = NULL;
                if (asprintf(&why, "more directories below the project than scudo looks through for git's "
                             "configuration (%u, or %u deep): start the command in a smaller directory",
                             GIT_DIR_FIND_MAX_DIRS, GIT_DIR_FIND_MAX_DEPTH) >= 0)
                        *ret_error = why;
        }
        if (r < 0)
                return r;
        *ret_plan = TAKE_PTR(p);
        return 0;
}

int policy_resolve(const Request *req, Plan **ret_plan, char ***ret_warnings, char **ret_error) {
        _cleanup_strv_free_ char **warnings = NULL;

        int r = resolve(req, ret_plan, &warnings, ret_error);
        sanitize_warnings(warnings);
        if (ret_warnings)
                *ret_warnings = TAKE_PTR(warnings);
        return r;
}

int policy_explain(const Request *req, bool json, char **ret_text, char **ret_error) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(harden_context_done) HardenContext hc = {};
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
        if (r >= 0 && plan_normalize(p, &invalid) >= 0 && (r = hardening_context(req, &hc)) >= 0 &&
            (r = plan_refuse_persistence_writes(p, &hc)) >= 0 && plan_check(p, &invalid) >= 0 &&
            plan_git_remote(p, req, &invalid) >= 0) {
                r = harden(p, &hc);
                hardened = r >= 0;
        }
        if (r < 0 && !invalid)
                invalid = strdup(strerror(-r));
        lua_pushvalue(L, -1);                                                   /* stack: req plan ex ex */
        r = lua_engine_cpcall(e, push_refused, p, 1, 0, ret_error);             /* stack: req plan ex */
        if (r < 0)
                return r;

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

int policy_print_plan(const Plan *p, char **ret_text, char **ret_error) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;

        int r = engine_new(&e);
        if (r < 0)
                return r;
        r = lua_engine_cpcall(e, push_hardening, (void *) p, 0, 1, ret_error);  /* stack: h */
        if (r < 0)
                return r;
        r = lua_engine_call(e, "scudo.policy", "plan_text", 1, 1, ret_error);   /* stack: text */
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

int policy_command_names(const Request *req, char **ret_text, char **ret_error) {
        return call_text(req, NULL, "command_names", ret_text, NULL, ret_error);
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
        r = lua_engine_call(e, "scudo.policy", "trust_targets", 2, 2, ret_error); /* stack: list text */
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
