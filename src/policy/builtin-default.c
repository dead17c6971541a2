/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Temporary: the built-in default profile in plain C, until the Lua policy engine resolves
 * policies/default.toml. Home hidden except the start directory, $XDG_RUNTIME_DIR hidden,
 * the rest read-only, a private /tmp. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "unit/properties.h"
#include "util/path-util.h"
#include "util/strv.h"

static int add_list(Plan *p, PathAccess a, char **list, const char *origin, char **ret_error) {
        STRV_FOREACH(s, list) {
                _cleanup_free_ char *n = NULL;
                if (path_normalize(*s, &n) < 0) {
                        if (asprintf(ret_error, "%s: path '%s' is not absolute", origin, *s) < 0)
                                *ret_error = NULL;
                        return -EINVAL;
                }
                int r = plan_add_path(p, a, n, origin);
                if (r < 0)
                        return r;
        }
        return 0;
}

int policy_resolve(const Request *req, Plan **ret_plan, char **ret_error) {
        _cleanup_(plan_freep) Plan *p = plan_new();
        int r;

        if (!p)
                return -ENOMEM;
        p->exec_path = strdup(req->exec_path);
        p->argv = strv_copy(req->argv);
        p->working_directory = strdup(req->start_dir);
        p->environment = strv_copy(req->environ);
        if (!p->exec_path || !p->argv || !p->working_directory || !p->environment)
                return -ENOMEM;

        r = plan_add_path(p, PATH_ACCESS_HIDE, req->home, "built-in");
        if (r >= 0 && req->runtime_dir)
                r = plan_add_path(p, PATH_ACCESS_HIDE, req->runtime_dir, "built-in");
        if (r >= 0)
                r = plan_add_path(p, PATH_ACCESS_WRITE, req->start_dir, "built-in");
        if (r >= 0)
                r = plan_add_property(p, "ProtectSystem", "strict", "built-in");
        if (r >= 0)
                r = plan_add_property(p, "PrivateTmp", "yes", "built-in");
        if (r < 0)
                return r;

        r = add_list(p, PATH_ACCESS_WRITE, req->fs_write, "--fs-write", ret_error);
        if (r >= 0)
                r = add_list(p, PATH_ACCESS_READ, req->fs_read, "--fs-read", ret_error);
        if (r >= 0)
                r = add_list(p, PATH_ACCESS_HIDE, req->fs_hide, "--fs-hide", ret_error);
        if (r >= 0)
                r = add_list(p, PATH_ACCESS_DENY, req->fs_deny, "--fs-deny", ret_error);
        if (r < 0)
                return r;

        if (req->net_allow || req->net_deny || req->no_network) {
                p->network_filtered = true;
                if (!req->no_network) {
                        p->net_allow = strv_copy(req->net_allow ?: (char *[]) { NULL });
                        p->net_deny = strv_copy(req->net_deny ?: (char *[]) { NULL });
                        if (!p->net_allow || !p->net_deny)
                                return -ENOMEM;
                }
        }

        STRV_FOREACH(kv, req->properties) {
                _cleanup_free_ char *name = strndup(*kv, strcspn(*kv, "="));
                const char *value = strchr(*kv, '=');
                if (!name || !value)
                        return -ENOMEM;
                r = unit_property_check(name, value + 1, ret_error);
                if (r < 0)
                        return r;
                r = plan_add_property(p, name, value + 1, "--property");
                if (r < 0)
                        return r;
        }

        *ret_plan = TAKE_PTR(p);
        return 0;
}

int policy_explain(const Request *req, bool json, char **ret_text, char **ret_error) {
        return -EOPNOTSUPP;
}
