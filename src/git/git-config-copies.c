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

#include "git/git-config-copies.h"
#include "plan/config-filter.h"
#include "plan/git-config-walk.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

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

/* Writes the copy of `path` (canonical), the len bytes at text, and records it. */
static int add_copy(GitConfigCopies *c, const char *path, const char *text, size_t len,
                    const char *runtime_dir, const char *unit_name)
{
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
        for (size_t done = 0; done < len;) {
                ssize_t w = write(fd, text + done, len - done);
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

/* A tool's configuration (plan/config-filter.h), filtered by its format. */
static int tool_config_copy(GitConfigCopies *c, const char *path, const char *runtime_dir,
                            const char *unit_name)
{
        ConfigFiltered f = {};
        int r = config_read_filtered(path, &f);
        if (r < 0)
                r = r == -ENOMEM ? log_oom() :
                        log_error_errno(r, "Cannot read %s to show it without its credentials: %m", path);
        else
                r = add_copy(c, path, f.text, f.len, runtime_dir, unit_name);
        config_filtered_done(&f);
        return r;
}

int git_config_copies_make(const Plan *plan, const char *runtime_dir, const char *unit_name,
                           GitConfigCopies *ret) {
        GitConfigCopies c = {};
        int r = 0;

        *ret = (GitConfigCopies) {};
        for (size_t i = 0; r >= 0 && i < plan->n_paths; i++) {
                const PlanPath *p = &plan->paths[i];
                GitConfigFiltered f = {};
                struct stat st;

                if (p->source != PATH_SOURCE_GIT_CONFIG_COPY && p->source != PATH_SOURCE_CONFIG_COPY)
                        continue;
                if (!runtime_dir || !path_is_absolute(runtime_dir)) {
                        r = log_error_errno(-EINVAL, "No runtime directory to show git's configuration %s "
                                            "without its credentials in", p->path);
                        break;
                }
                /* Gone since the plan was made: then it is checked to be missing inside, and one
                 * that is there without a copy is refused (unit-build.c). */
                if (path_stat_no_symlinks(p->path, &st) <= 0 || !S_ISREG(st.st_mode))
                        continue;
                if (p->source == PATH_SOURCE_CONFIG_COPY) {
                        r = tool_config_copy(&c, p->path, runtime_dir, unit_name);
                        continue;
                }
                r = git_config_read_filtered(p->path, &f);
                if (r < 0)
                        r = r == -ENOMEM ? log_oom() :
                                log_error_errno(r, "Cannot read git's configuration %s to show it without "
                                                "its credentials: %m", p->path);
                else
                        r = add_copy(&c, p->path, f.text, f.len, runtime_dir, unit_name);
                git_config_filtered_done(&f);
        }
        if (r < 0) {
                git_config_copies_remove(&c);
                return r;
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
