/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdlib.h>

#include "plan/request.h"
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
