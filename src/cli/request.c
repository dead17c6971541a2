/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "plan/request.h"
#include "run/run.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/sandbox-unit.h"
#include "util/strv.h"

void request_done(Request *r) {
        strv_free(r->argv);
        free(r->command_name);
        free(r->exec_path);
        free(r->start_dir);
        strv_free(r->environ);
        free(r->home);
        free(r->runtime_dir);
        strv_free(r->profiles);
        strv_free(r->fs_write);
        strv_free(r->fs_read);
        strv_free(r->fs_hide);
        strv_free(r->fs_deny);
        strv_free(r->net_allow);
        strv_free(r->net_deny);
        strv_free(r->env_copy);
        strv_free(r->deny_env);
        strv_free(r->allow_env);
        strv_free(r->properties);
        *r = (Request) {};
}

int request_describe_caller(Request *req) {
        int r;

        /* Whether this runs inside a sandbox is the kernel's to say (util/sandbox-unit.h). Where
         * the cgroup listing cannot be read, the request counts as made outside: a run then
         * confines the command in full; the trust verbs ask again and refuse. */
        r = sandbox_unit_of(0, req->enclosing_unit);
        if (r < 0)
                log_debug("cannot read this process's cgroup, taking it for outside any sandbox: %s",
                          strerror(-r));
        req->nested = r > 0;
        if (!req->nested)
                req->enclosing_unit[0] = 0;

        req->uid = getuid();
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
                struct passwd *pw = getpwuid(req->uid);
                home = pw ? pw->pw_dir : NULL;
        }
        if (!home || home[0] != '/') {
                log_error("cannot determine the home directory ($HOME is not set)");
                return EXIT_SCUDO_SETUP;
        }
        r = path_normalize(home, &req->home);
        if (r < 0)
                return log_error_errno(r, "Bad home directory '%s': %m", home), EXIT_SCUDO_SETUP;

        const char *rt = getenv("XDG_RUNTIME_DIR");
        if (rt && rt[0] == '/')
                r = path_normalize(rt, &req->runtime_dir);
        else
                r = asprintf(&req->runtime_dir, "/run/user/%u", (unsigned) req->uid) < 0 ? -ENOMEM : 0;
        if (r < 0)
                return log_error_errno(r, "Cannot describe the caller: %m"), EXIT_SCUDO_SETUP;
        return 0;
}

const char *request_widening_option(const Request *req) {
        if (req->profiles)
                return "--profile";
        if (req->no_match)
                return "--no-match";
        if (req->fs_write || req->fs_read || req->fs_hide || req->fs_deny)
                return "--fs-*";
        if (req->net_allow || req->net_deny || req->no_network)
                return "--net-* / --no-network";
        if (req->deny_env || req->allow_env || req->env_copy)
                return "--env / --deny-env / --allow-env";
        if (req->properties)
                return "--property";
        if (req->delegate != 0)
                return "--delegate / --no-delegate";
        return NULL;
}
