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
#include "util/strv.h"

/* ---- 0b. no grant worked out from the request on or around what runs later ------------- */

#define WHY_RUNS_LATER "would make %s writable, whose contents run later outside " \
        "the sandbox (a directory on $PATH, user units, autostart, shell or git configuration, scudo's " \
        "own configuration or trust store); --fs-write grants it for one run"

/* Each root as the policy engine spelled the start directory: cleaned, a path under the home
 * directory moved onto the real one (no system call per path). In ret, in the roots' order. */
static int roots_as_written(const HardenContext *ctx, char ***ret) {
        _cleanup_free_ char *home = NULL, *real = realpath(ctx->home, NULL);
        _cleanup_strv_free_ char **l = NULL;

        if (path_normalize(ctx->home, &home) < 0)
                return -ENOMEM;
        size_t lh = strlen(home);
        for (size_t i = 0; i < ctx->n_persistence; i++) {
                _cleanup_free_ char *c = NULL;
                if (path_normalize(ctx->persistence[i].path, &c) < 0)
                        return -ENOMEM;
                if (real && !streq(real, home) && !streq(home, "/") && strncmp(c, home, lh) == 0 &&
                    (c[lh] == 0 || c[lh] == '/')) {
                        char *m = NULL;
                        if (asprintf(&m, "%s%s", real, c + lh) < 0)
                                return -ENOMEM;
                        free(c);
                        c = m;
                }
                int r = strv_push(&l, c);
                if (r < 0)
                        return r;
                c = NULL;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* The root a derived write of e is refused for, or NULL. Its path as the policy engine gave
 * it, as the start directory spells it. */
static const char *refused_root(const PlanPath *e, const HardenContext *ctx, char **written) {
        _cleanup_free_ char *c = NULL;

        if (!e->derived || e->access != PATH_ACCESS_WRITE || path_normalize(e->given ?: e->path, &c) < 0)
                return NULL;
        size_t lc = strlen(c);
        for (size_t i = 0; i < ctx->n_persistence; i++)
                if (persistence_related(c, lc, written[i], strlen(written[i]), ctx->persistence[i].deep))
                        return written[i];
        return NULL;
}

/* Moves what reasons marks to p->refused, with its reason (taken), and gives each path back
 * the entry it had replaced: the deny or other entry of that path the policy engine had. */
static int refuse_giving_back(Plan *p, char **reasons) {
        size_t n = p->n_paths, n_refused = 0, k = 0;
        _cleanup_strv_free_ char **back = NULL, **back_origin = NULL;
        _cleanup_free_ PathAccess *access = calloc(n + 1, sizeof(PathAccess));
        size_t n_back = 0;
        int r = access ? 0 : -ENOMEM;

        for (size_t i = 0; i < n && r >= 0; i++) {
                const PlanPath *e = &p->paths[i];
                n_refused += reasons[i] != NULL;
                if (!reasons[i] || (!e->over_deny && !e->over_origin))
                        continue;
                access[n_back++] = e->over_deny ? PATH_ACCESS_DENY : e->over_access;
                r = strv_extend(&back, e->path);
                if (r >= 0)
                        r = strv_extend(&back_origin, e->over_deny ?: e->over_origin);
        }
        if (r < 0 || n_refused == 0)
                return r;
        PlanDrop *d = reallocarray(p->refused, p->n_refused + n_refused, sizeof(PlanDrop));
        if (!d)
                return -ENOMEM;
        p->refused = d;
        for (size_t i = 0; i < n; i++) {
                if (reasons[i])
                        p->refused[p->n_refused++] = (PlanDrop) {
                                .entry = p->paths[i], .reason = TAKE_PTR(reasons[i]), .warn = true };
                else
                        p->paths[k++] = p->paths[i];
        }
        p->n_paths = k;
        for (size_t i = 0; r >= 0 && i < n_back; i++)
                r = plan_add_path(p, access[i], back[i], back_origin[i]);
        return r;
}

/* A write worked out from the request (${PWD}, a lookup, an argument) is whatever the start
 * directory makes it: started in ~/bin, or above a directory on $PATH, it would let the
 * command leave programs that run later, outside the sandbox. So it is refused on, above or
 * (where what lies below counts) below a place of plan/persistence.h; one written out in full
 * (--fs-write, a profile's "~/.local/bin") is policy, and given. */
int plan_refuse_persistence_writes(Plan *p, const HardenContext *ctx) {
        _cleanup_strv_free_ char **written = NULL;
        size_t np = p->n_paths;
        char **reasons = NULL;
        int r;

        if (ctx->n_persistence == 0)
                return 0;
        r = roots_as_written(ctx, &written);
        if (r >= 0 && !(reasons = calloc(np + 1, sizeof(char *))))
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < np; i++) {
                const char *root = refused_root(&p->paths[i], ctx, written);
                if (root && asprintf(&reasons[i], WHY_RUNS_LATER, root) < 0) {
                        reasons[i] = NULL;
                        r = -ENOMEM;
                }
        }
        if (r >= 0)
                r = refuse_giving_back(p, reasons);     /* takes the reasons it moves */
        for (size_t i = 0; reasons && i < np; i++)
                free(reasons[i]);
        free(reasons);
        return r;
}

/* ---- 1b. what runs later, reached through a symlink ------------------------------------ */

/* `path` (a persistence root, or a file git's configuration includes) read-only when what it
 * leads to is in a directory the command may write. Made first (empty) where it is missing,
 * or the command could make it. through_symlink: only where a symlink leads there, since a
 * derived grant of such a place as it is written is refused (plan_refuse_persistence_writes),
 * and one written out in full is policy. */
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

/* The places of plan/persistence.h, as harden_context_resolve() found them. */
int harden_persistence(Plan *p, const HardenContext *ctx) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < ctx->n_persistence; i++)
                r = harden_keep_runs_later(p, ctx->persistence[i].path, ctx->persistence[i].file, true);
        return r;
}

int harden_context_resolve(HardenContext *ctx) {
        harden_context_done(ctx);
        if (!ctx->home || !path_is_absolute(ctx->home))
                return 0;
        const PersistenceEnv env = {
                .home = ctx->home, .config_home = ctx->config_home, .data_home = ctx->data_home,
                .state_home = ctx->state_home, .path = ctx->path,
        };
        return persistence_roots(&env, &ctx->persistence, &ctx->n_persistence);
}

void harden_context_done(HardenContext *ctx) {
        persistence_roots_free(ctx->persistence, ctx->n_persistence);
        ctx->persistence = NULL;
        ctx->n_persistence = 0;
}
