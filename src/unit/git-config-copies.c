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
#include "plan/git-config-filter.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

/* git's own limit of nested includes */
#define MAX_INCLUDE_DEPTH 10
/* A configuration file larger than this is refused rather than shown unfiltered. */
#define MAX_CONFIG_SIZE (4u << 20)

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

/* The file an include names: ~/ from the home directory, a relative path from the directory
 * of the file that includes it (as git resolves it). NULL for what git would not read as a
 * path here (an empty value, %(prefix)). */
static char *include_target(const char *value, const char *from, const char *home) {
        char *p = NULL;
        if (!value[0] || startswith(value, "%("))
                return NULL;
        if (startswith(value, "~/"))
                return home ? path_join(home, value + 2) : NULL;
        if (path_is_absolute(value))
                return strdup(value);
        _cleanup_free_ char *dir = strdup(from);
        if (!dir)
                return NULL;
        char *slash = strrchr(dir, '/');
        if (!slash)
                return NULL;
        slash[slash == dir ? 1 : 0] = 0;
        p = path_join(dir, value);
        return p;
}

int git_config_copies_make(const Plan *plan, const char *home, const char *config_home,
                           const char *runtime_dir, const char *unit_name, GitConfigCopies *ret) {
        _cleanup_strv_free_ char **queue = NULL, **seen = NULL;
        _cleanup_free_ unsigned *depth = NULL;
        GitConfigCopies c = {};
        int r = 0;

        *ret = (GitConfigCopies) {};
        if (!runtime_dir || !path_is_absolute(runtime_dir))
                return 0;       /* nowhere to put a copy: nothing run.c can start either */

        /* The files to look at, as git would open them; their includes are appended as they
         * are read (depth[i]: how many includes deep queue[i] is). */
        if (home && path_is_absolute(home)) {
                _cleanup_free_ char *xdg = config_home && path_is_absolute(config_home) ?
                        path_join(config_home, "git/config") : path_join(home, ".config/git/config");
                _cleanup_free_ char *dot = path_join(home, ".gitconfig");
                if (!xdg || !dot || strv_extend(&queue, xdg) < 0 || strv_extend(&queue, dot) < 0)
                        return log_oom();
        }
        for (size_t i = 0; i < plan->n_paths; i++) {
                const PlanPath *p = &plan->paths[i];
                if (p->access != PATH_ACCESS_WRITE && p->access != PATH_ACCESS_READ)
                        continue;
                for (const char *const *f = (const char *const[]) { ".git/config", ".git/config.worktree", NULL };
                     *f; f++) {
                        _cleanup_free_ char *cfg = path_join(p->path, *f);
                        if (!cfg || strv_extend(&queue, cfg) < 0)
                                return log_oom();
                }
        }
        depth = calloc(strv_length(queue) + 1, sizeof(unsigned));
        if (!depth)
                return log_oom();

        for (size_t i = 0; queue && queue[i]; i++) {
                char canon[PATH_MAX];
                struct stat st;
                _cleanup_free_ char *text = NULL;
                size_t size;
                GitConfigFiltered f = {};

                if (!path_realpath_fast(queue[i], canon))
                        continue;       /* missing: git reads nothing there either */
                if (path_stat_no_symlinks(canon, &st) <= 0 || !S_ISREG(st.st_mode))
                        continue;
                if (strv_contains(seen, canon) || !shown_read_only(plan, canon))
                        continue;
                if (strv_extend(&seen, canon) < 0) {
                        r = log_oom();
                        goto fail;
                }
                r = read_regular_file(canon, MAX_CONFIG_SIZE, &text, &size);
                if (r < 0) {
                        log_error_errno(r, "Cannot read git's configuration %s to show it without its "
                                        "credentials: %m", canon);
                        goto fail;
                }
                r = git_config_filter(text, size, &f);
                if (r < 0) {
                        log_oom();
                        goto fail;
                }
                if (f.removed > 0)
                        r = add_copy(&c, canon, &f, runtime_dir, unit_name);
                /* Its includes, with git's limit of depth. */
                for (char **inc = f.includes; r >= 0 && inc && *inc && depth[i] < MAX_INCLUDE_DEPTH; inc++) {
                        _cleanup_free_ char *target = include_target(*inc, queue[i], home);
                        if (!target)
                                continue;
                        size_t n = strv_length(queue);
                        unsigned *d = realloc(depth, (n + 2) * sizeof(unsigned));
                        if (!d) {
                                r = log_oom();
                                break;
                        }
                        depth = d;
                        depth[n] = depth[i] + 1;
                        r = strv_extend(&queue, target);
                        if (r < 0)
                                log_oom();
                }
                git_config_filtered_done(&f);
                if (r < 0)
                        goto fail;
        }
        *ret = c;
        return 0;
fail:
        git_config_copies_remove(&c);
        return r;
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
