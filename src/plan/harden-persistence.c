/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's section on what runs later, outside (plan-harden.h): what a place of
 * plan/persistence.h leads to through a symlink, read-only where the command could write it;
 * and the rule harden-git-config.c applies to every file git's configuration includes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/harden-internal.h"
#include "plan/persistence.h"
#include "plan/plan-validate.h"
#include "util/path-util.h"

/* ---- 1b. what runs later, reached through a symlink ------------------------------------ */

/* `path` (a persistence root, or a file git's configuration includes) read-only when what it
 * leads to is in a directory the command may write. Made first (empty) where it is missing,
 * or the command could make it. through_symlink: only where a symlink leads there, since the
 * policy engine refuses a derived grant of such a place as it is written (build.lua), and one
 * written out in full is policy. */
int harden_keep_runs_later(Plan *p, const char *path, bool file, bool through_symlink) {
        _cleanup_free_ char *c = NULL, *why = NULL;
        PathCreate create = PATH_CREATE_NONE;

        if (plan_path_canonicalize(path, &c) < 0) {
                /* missing: where it would be made, its directory resolved */
                _cleanup_free_ char *dir = strdup(path), *cdir = NULL;
                char *slash = dir ? strrchr(dir, '/') : NULL;
                if (!dir)
                        return -ENOMEM;
                if (!slash || slash == dir)
                        return 0;
                *slash = 0;
                if (plan_path_canonicalize(dir, &cdir) < 0)
                        return 0;       /* nor its directory: nothing to make it in */
                c = path_join(cdir, slash + 1);
                if (!c)
                        return -ENOMEM;
                create = file ? PATH_CREATE_FILE : PATH_CREATE_DIR;
        }
        if ((through_symlink && streq(c, path)) || plan_names_path(p, c) ||
            !harden_writable_from_above(p, c))
                return 0;
        struct stat st;
        if (create == PATH_CREATE_NONE && lstat(c, &st) < 0)
                create = file ? PATH_CREATE_FILE : PATH_CREATE_DIR;
        int k = through_symlink ?
                asprintf(&why, "%s leads here, and %s", path, file ?
                         "what it holds runs later, outside the sandbox: read-only" :
                         "what is in it runs later, outside the sandbox: read-only") :
                asprintf(&why, "git's configuration includes %s: what it sets (programs to run among it) "
                         "applies outside the sandbox: read-only", path);
        if (k < 0)
                return -ENOMEM;
        return harden_add_entry(p, PATH_ACCESS_READ, c, why, create, PATH_SOURCE_SELF);
}

/* The places of plan/persistence.h, resolved. */
int harden_persistence(Plan *p, const HardenContext *ctx) {
        PersistenceRoot *roots = NULL;
        size_t n = 0;
        int r;

        if (!ctx->home || !path_is_absolute(ctx->home))
                return 0;
        r = persistence_roots(&(PersistenceEnv) { .home = ctx->home, .config_home = ctx->config_home,
                                                  .data_home = ctx->data_home, .state_home = ctx->state_home,
                                                  .path = ctx->path }, &roots, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = harden_keep_runs_later(p, roots[i].path, roots[i].file, true);
        persistence_roots_free(roots, n);
        return r;
}
