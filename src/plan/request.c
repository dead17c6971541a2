/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A Request's own data: freeing it, and which of its options would widen a sandbox. Making
 * one from this process is the CLI's (cli/request-from-process.c); the broker makes one from a message. */
#include <stdlib.h>
#include <unistd.h>

#include "request.h"
#include "util/strv.h"

void request_done(Request *r) {
        strv_free(r->argv);
        free(r->command_name);
        free(r->exec_path);
        if (r->exec_fd_open)
                (void) close(r->exec_fd);
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
