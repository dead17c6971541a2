/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The filtered copies of git's configuration (git-config-copies.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit/git-config-copies.h"
#include "plan/git-config-walk.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"


/* The plan's access at `path` (canonical): that of the deepest entry naming it or a directory
 * above it, the most restrictive among entries naming that same path; -1 when none does. Also
 * the rest of `path` below that entry. */
static int access_at(const Plan *plan, const char *path, const char **ret_rest) {
        size_t best_len = 0;
        int best = -1;
        for (size_t i = 0; i < plan->n_paths; i++) {
                const PlanPath *p = &plan->paths[i];
                const char *rest = path_startswith(path, p->path);
                size_t l = strlen(p->path);
                if (!rest)
                        continue;
                if (best < 0 || l > best_len || (l == best_len && (int) p->access > best)) {
                        best = (int) p->access;
                        best_len = l;
                        *ret_rest = rest;
                }
        }
        return best;
}

/* Whether the sandbox shows `path` (canonical) and the command cannot write it: read-only by
 * the plan, or by no entry (ProtectSystem, ProtectHome), or the config of a .git at the top of
 * a writable directory, which unit-build.c binds read-only unless the plan names it. */
static bool shown_read_only(const Plan *plan, const char *path) {
        const char *rest = NULL;
        int a = access_at(plan, path, &rest);
        if (a < 0 || a == PATH_ACCESS_READ)
                return true;
        return a == PATH_ACCESS_WRITE && rest && startswith(rest, ".git/");
}

static int make_dir(GitConfigCopies *c, const char *runtime_dir, const char *unit_name) {
        _cleanup_free_ char *top = path_join(runtime_dir, "scudo");
        _cleanup_free_ char *name = NULL;
        if (!top || asprintf(&name, "git-config-%s", unit_name) < 0)
                return -ENOMEM;
        if (mkdir(top, 0700) < 0 && errno != EEXIST)
                return -errno;
        char *dir = path_join(top, name);
        if (!dir)
                return -ENOMEM;
        if (mkdir(dir, 0700) < 0) {
                int r = -errno;
                free(dir);
                return r;
        }
        c->dir = dir;
        return 0;
}

/* Writes the copy of `path` (canonical) and records it. */
static int add_copy(GitConfigCopies *c, const char *path, const GitConfigFiltered *f, const char *runtime_dir,
                    const char *unit_name) {
        int r;
        if (!c->dir) {
                r = make_dir(c, runtime_dir, unit_name);
                if (r < 0)
                        return log_error_errno(r, "Cannot make a directory for git's filtered configuration "
                                               "in %s: %m", runtime_dir);
        }
        _cleanup_free_ char *src = NULL;
        if (asprintf(&src, "%s/%zu", c->dir, strv_length(c->src)) < 0)
                return log_oom();
        _cleanup_close_ int fd = path_open_no_symlinks(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return log_error_errno(fd, "Cannot write %s: %m", src);
        /* Recorded at once, so that it is removed whatever happens next. */
        r = strv_push(&c->src, src);
        if (r < 0) {
                (void) unlink(src);
                return log_oom();
        }
        const char *name = TAKE_PTR(src);
        for (size_t done = 0; done < f->len;) {
                ssize_t w = write(fd, f->text + done, f->len - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return log_error_errno(w < 0 ? -errno : -EIO, "Cannot write %s: %m", name);
                done += (size_t) w;
        }
        if (strv_extend(&c->dst, path) < 0)
                return log_oom();
        return 0;
}

typedef struct CopiesWalk {
        const Plan *plan;
        const char *runtime_dir, *unit_name;
        GitConfigCopies *c;
        bool logged;            /* add_copy() said why it failed */
} CopiesWalk;

static bool want_copy(const char *canonical, void *userdata) {
        const CopiesWalk *w = userdata;
        /* a file the command can write anyway is shown as it is, and what it includes with it */
        return shown_read_only(w->plan, canonical);
}

static int copy_filtered(const char *canonical, const GitConfigFiltered *f, void *userdata) {
        CopiesWalk *w = userdata;
        int r = f->removed > 0 ? add_copy(w->c, canonical, f, w->runtime_dir, w->unit_name) : 0;
        w->logged = r < 0;
        return r;
}

int git_config_copies_make(const Plan *plan, const char *home, const char *config_home,
                           const char *runtime_dir, const char *unit_name, GitConfigCopies *ret) {
        _cleanup_strv_free_ char **start = NULL;
        GitConfigCopies c = {};

        *ret = (GitConfigCopies) {};
        if (!runtime_dir || !path_is_absolute(runtime_dir))
                return 0;       /* nowhere to put a copy: nothing run.c can start either */

        /* The files git starts from: the user's, and each .git's at the top of a directory
         * the sandbox shows. */
        if (home && path_is_absolute(home)) {
                _cleanup_free_ char *xdg = config_home && path_is_absolute(config_home) ?
                        path_join(config_home, "git/config") : path_join(home, ".config/git/config");
                _cleanup_free_ char *dot = path_join(home, ".gitconfig");
                if (!xdg || !dot || strv_extend(&start, xdg) < 0 || strv_extend(&start, dot) < 0)
                        return log_oom();
        }
        for (size_t i = 0; i < plan->n_paths; i++) {
                const PlanPath *p = &plan->paths[i];
                if (p->access != PATH_ACCESS_WRITE && p->access != PATH_ACCESS_READ)
                        continue;
                for (const char *const *f = (const char *const[]) { ".git/config", ".git/config.worktree", NULL };
                     *f; f++) {
                        _cleanup_free_ char *cfg = path_join(p->path, *f);
                        if (!cfg || strv_extend(&start, cfg) < 0)
                                return log_oom();
                }
        }

        CopiesWalk w = { .plan = plan, .runtime_dir = runtime_dir, .unit_name = unit_name, .c = &c };
        int r = git_config_walk(start, home && path_is_absolute(home) ? home : NULL, &(GitConfigVisitor) {
                .want = want_copy, .visit = copy_filtered, .userdata = &w });
        if (r < 0) {
                git_config_copies_remove(&c);
                if (w.logged)
                        return r;
                if (r == -ENOMEM)
                        return log_oom();
                return log_error_errno(r, "Cannot read git's configuration to show it without its credentials: %m");
        }
        *ret = c;
        return 0;
}

const char *git_config_copy_of(const GitConfigCopies *c, const char *path) {
        for (size_t i = 0; c && c->dst && c->dst[i]; i++)
                if (streq(c->dst[i], path))
                        return c->src[i];
        return NULL;
}

void git_config_copies_remove(GitConfigCopies *c) {
        STRV_FOREACH(s, c->src)
                if (unlink(*s) < 0 && errno != ENOENT)
                        log_warning_errno(-errno, "Cannot remove %s: %m", *s);
        if (c->dir && rmdir(c->dir) < 0 && errno != ENOENT)
                log_warning_errno(-errno, "Cannot remove %s: %m", c->dir);
        free(c->dir);
        strv_free(c->src);
        strv_free(c->dst);
        *c = (GitConfigCopies) {};
}
