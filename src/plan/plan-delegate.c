/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan-delegate.h"
#include "util/error-message.h"
#include "util/path-util.h"
#include "util/strv.h"

static int access_rank(PathAccess a) {
        /* Of two entries for one path the more restrictive one stands (unit-build.c). */
        switch (a) {
        case PATH_ACCESS_WRITE: return 0;
        case PATH_ACCESS_READ: return 1;
        case PATH_ACCESS_HIDE: return 2;
        default: return 3;
        }
}

bool delegation_caller_can_write(const DelegationContext *ctx, const char *path) {
        const PlanPath *best = NULL;
        size_t best_len = 0;

        for (size_t i = 0; i < ctx->n_caller_paths; i++) {
                const PlanPath *e = &ctx->caller_paths[i];
                if (!path_startswith(path, e->path))
                        continue;
                size_t l = strlen(e->path);
                if (!best || l > best_len ||
                    (l == best_len && access_rank(e->access) > access_rank(best->access))) {
                        best = e;
                        best_len = l;
                }
        }
        return best && best->access == PATH_ACCESS_WRITE;
}

bool delegation_inside_caller_writes(const DelegationContext *ctx, const char *path) {
        for (size_t i = 0; i < ctx->n_caller_paths; i++)
                if (ctx->caller_paths[i].access == PATH_ACCESS_WRITE &&
                    path_startswith(path, ctx->caller_paths[i].path))
                        return true;
        return false;
}

static bool property_is_on(const Plan *p, const char *name) {
        const char *v = plan_property(p, name);
        return v && !streq(v, "") && !streq(v, "no") && !streq(v, "false") && !streq(v, "0") &&
               !streq(v, "off");
}

bool plan_adds_up_to_nothing(const Plan *p) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (p->paths[i].access == PATH_ACCESS_HIDE || p->paths[i].access == PATH_ACCESS_DENY)
                        return false;
        return !property_is_on(p, "ProtectSystem") && !property_is_on(p, "ProtectHome");
}

/* An entry the command line put there ("--fs-write", "--property", ...): a delegated request
 * carries none (its Request has only argv), and a plan that has one is refused all the same. */
static const char *command_line_origin(const Plan *p) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (startswith(strempty(p->paths[i].origin), "--"))
                        return p->paths[i].origin;
        for (size_t i = 0; i < p->n_properties; i++)
                if (startswith(strempty(p->properties[i].origin), "--"))
                        return p->properties[i].origin;
        STRV_FOREACH(o, p->net_allow_origin)
                if (startswith(*o, "--"))
                        return *o;
        STRV_FOREACH(o, p->net_deny_origin)
                if (startswith(*o, "--"))
                        return *o;
        return NULL;
}

/* The first profile the command matched that the caller delegates, or NULL. */
static const char *delegated_profile(const Plan *p, const DelegationContext *ctx) {
        STRV_FOREACH(name, p->profiles)
                if (strv_contains(ctx->delegated, *name))
                        return *name;
        return NULL;
}

static const char *command_of(const Plan *p) {
        return p->argv && p->argv[0] ? p->argv[0] : "?";
}

int plan_delegate(Plan *p, const Request *req, const DelegationContext *ctx, Delegation *ret,
                  char **ret_error) {
        const char *what;

        /* Only the command line chooses the profiles, through their own match patterns. */
        what = request_widening_option(req);
        if (!what)
                what = command_line_origin(p);
        if (what)
                return error_message(ret_error, -EPERM, "%s is refused in a delegated request: only the "
                                     "profiles' match patterns choose what a delegated command gets", what);

        const char *by = delegated_profile(p, ctx);
        if (!by) {
                *ret = DELEGATION_IN_PLACE;
                return 0;
        }

        /* One profile that says delegable = false stops the delegated run, whatever else
         * matches: the run fails rather than get what that profile grants. */
        if (p->undelegable)
                return error_message(ret_error, -EPERM, "'%s' matches profile '%s', which is not delegable "
                                     "(delegable = false): it is not run for %s", command_of(p),
                                     p->undelegable[0], ctx->caller_unit);

        /* Nothing is asked: its standard input is the caller's, who could answer. */
        if (p->untrusted_files)
                return error_message(ret_error, -EPERM, "%s is not trusted, and a delegated command cannot "
                                     "ask: not running '%s' (to trust it, outside any sandbox: scudo trust "
                                     "%s)", p->untrusted_files[0], command_of(p), p->untrusted_files[0]);
        if (p->confirm)
                return error_message(ret_error, -EPERM, "%s: confirm = true, and a delegated command cannot "
                                     "ask: not running '%s'", strempty(p->confirm_origin), command_of(p));

        /* Where it starts: the broker has made sure this is the caller's very directory
         * (src/broker/peer.c); it must also be one the caller may write. */
        if (!p->working_directory || !delegation_caller_can_write(ctx, p->working_directory))
                return error_message(ret_error, -EPERM, "the working directory %s is not one that %s can "
                                     "write: '%s' is not delegated from there",
                                     strempty(p->working_directory), ctx->caller_unit, command_of(p));

        /* What the profiles work out from the request stays inside what the caller can write:
         * a write where the caller can write, a read inside the caller's writable area. Paths
         * written out in full are the profile's policy. */
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                bool ok;

                if (!e->derived)
                        continue;
                if (e->access == PATH_ACCESS_WRITE)
                        ok = delegation_caller_can_write(ctx, e->path);
                else if (e->access == PATH_ACCESS_READ)
                        ok = delegation_inside_caller_writes(ctx, e->path);
                else
                        continue;       /* hiding or denying only takes away */
                if (!ok)
                        return error_message(ret_error, -EPERM, "%s: %s access to %s, worked out from the "
                                             "request, lies outside what %s can write: '%s' is not "
                                             "delegated", strempty(e->origin),
                                             path_access_to_string(e->access), e->path, ctx->caller_unit,
                                             command_of(p));
        }

        /* A delegated command runs sandboxed or not at all. */
        if (plan_adds_up_to_nothing(p))
                return error_message(ret_error, -EPERM, "the profiles of '%s' add up to no sandbox (nothing "
                                     "hidden or denied, ProtectSystem= and ProtectHome= off): it is not run "
                                     "outside every sandbox for %s", command_of(p), ctx->caller_unit);

        /* What the delegated sandbox turns away is the caller's to read, beside the output. */
        char *t = strdup("stderr");
        if (!t)
                return -ENOMEM;
        free(p->log_target);
        p->log_target = t;

        *ret = DELEGATION_OUTSIDE;
        return 0;
}
