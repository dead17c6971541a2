/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-create.h"
#include "plan/plan-validate.h"
#include "util/macro.h"
#include "util/error-message.h"
#include "util/path-util.h"

/* A place creating may start from: the directory as written (normalized) and as the kernel
 * resolves it. Left empty when it is unset, relative, "/" or cannot be resolved. */
typedef struct Root {
        char *written, *canonical;
} Root;

static void root_done(Root *r) {
        free(r->written);
        free(r->canonical);
}

static int root_init(Root *r, const char *dir) {
        *r = (Root) {};
        if (!dir || !path_is_absolute(dir))
                return 0;
        int k = path_normalize(dir, &r->written);
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                return 0;
        k = plan_path_canonicalize(dir, &r->canonical);
        if (k == -ENOMEM)
                return k;
        if (k < 0 || streq(r->canonical, "/") || streq(r->written, "/")) {
                root_done(r);
                *r = (Root) {};
        }
        return 0;
}

/* The path the kernel reaches when nothing below the root is a symlink: the normalized path,
 * with the root as written (or as resolved) replaced by the root as resolved. 1 with *ret set,
 * 0 when the path does not lie below the root, or -ENOMEM. */
static int through_root(const Root *r, const char *normalized, char **ret) {
        if (!r->canonical)
                return 0;
        const char *rest = path_startswith(normalized, r->written);
        if (!rest)
                rest = path_startswith(normalized, r->canonical);
        if (!rest || !*rest)
                return 0;
        *ret = path_join(r->canonical, rest);
        return *ret ? 1 : -ENOMEM;
}

int plan_create_check(const Plan *p, const char *home, const char *runtime_dir, char **ret_error) {
        _cleanup_(root_done) Root h = {}, rt = {};
        bool any = false;
        int r;

        for (size_t i = 0; i < p->n_paths && !any; i++)
                any = p->paths[i].create != PATH_CREATE_NONE;
        if (!any)
                return 0;
        if ((r = root_init(&h, home)) < 0 || (r = root_init(&rt, runtime_dir)) < 0)
                return r;

        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                const char *key = path_access_to_string(e->access), *origin = strempty(e->origin);
                _cleanup_free_ char *normalized = NULL, *canonical = NULL, *expected = NULL;

                if (e->create == PATH_CREATE_NONE)
                        continue;
                if (e->create < 0 || e->create >= PATH_CREATE_PLACEHOLDER)
                        return error_message(ret_error, -EINVAL, "%s: filesystem.%s: bad create kind",
                                             origin, strempty(key));
                if (e->access != PATH_ACCESS_WRITE && e->access != PATH_ACCESS_READ)
                        return error_message(ret_error, -EINVAL, "%s: filesystem.%s: '%s': only a path "
                                             "granted (write or read) can be created", origin, strempty(key),
                                             strempty(e->path));
                r = e->path ? path_normalize(e->path, &normalized) : -EINVAL;
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_message(ret_error, -EINVAL,
                                             "%s: filesystem.%s: '%s' is not an absolute path", origin, key,
                                             strempty(e->path));
                r = plan_path_canonicalize(e->path, &canonical);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_message(ret_error, -EINVAL, "%s: filesystem.%s: cannot resolve '%s': "
                                             "%s", origin, key, e->path, strerror(-r));

                /* Below which root the kernel puts it, whatever the spelling. */
                const Root *root = NULL;
                if (h.canonical && path_startswith(canonical, h.canonical) && !streq(canonical, h.canonical))
                        root = &h;
                else if (rt.canonical && path_startswith(canonical, rt.canonical) &&
                         !streq(canonical, rt.canonical))
                        root = &rt;
                if (!root)
                        return error_message(ret_error, -EINVAL, "%s: filesystem.%s: '%s' is to be created "
                                             "when missing, but %s lies outside the home directory (%s) and "
                                             "the runtime directory (%s): scudo creates nothing anywhere "
                                             "else", origin, key, e->path, canonical,
                                             h.canonical ?: "unknown", rt.canonical ?: "unknown");

                /* And the path as written reaches it with no symlink below the root. */
                r = through_root(root, normalized, &expected);
                if (r == 0)
                        r = through_root(root == &h ? &rt : &h, normalized, &expected);
                if (r == 0)
                        r = (expected = strdup(normalized)) ? 1 : -ENOMEM;
                if (r < 0)
                        return r;
                if (!streq(expected, canonical))
                        return error_message(ret_error, -EINVAL, "%s: filesystem.%s: '%s' is to be created "
                                             "when missing, but it leads through a symlink (to %s): scudo "
                                             "creates nothing through a symlink, which a command that could "
                                             "write there may have planted", origin, key, e->path,
                                             canonical);
        }
        return 0;
}
