/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git-guard.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"

/* Whether dfd's ".git" is still the directory open at fd. */
static bool same_entry(int dfd, int fd) {
        struct stat a, b;
        return fstat(fd, &a) >= 0 && fstatat(dfd, ".git", &b, AT_SYMLINK_NOFOLLOW) >= 0 &&
               a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* dir's placeholder, at *git (dir/.git), which g takes when it holds one. */
static int guard_dir(GitGuard *g, const char *dir, char **git) {
        _cleanup_close_ int dfd = path_open_no_symlinks(dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (dfd == -ENOENT || dfd == -ENOTDIR)
                return 0;       /* nothing there to plant in */
        if (dfd < 0)
                return dfd;

        /* A few tries: another run may remove its placeholder just as this one joins it. */
        for (int tries = 0; tries < 3; tries++) {
                bool made = mkdirat(dfd, ".git", 0700) >= 0;
                if (!made && errno != EEXIST)
                        /* Not even the user may make one here (a read-only filesystem, a
                         * directory of someone else's): neither may the command. */
                        return errno == EACCES || errno == EPERM || errno == EROFS ? 0 : -errno;
                int fd = openat(dfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        if (errno == ENOENT)
                                continue;
                        /* A file (a worktree's "gitdir:"), a symlink, or a directory the user
                         * cannot read: a .git of the user's own, which unit-build.c handles. */
                        return 0;
                }
                /* An empty .git (another run's placeholder, or one left by a run that could not
                 * remove it) is no repository: this run shares it. Anything else is the user's. */
                if (!made && !dir_fd_is_empty(fd)) {
                        (void) close(fd);
                        return 0;
                }
                if (flock(fd, LOCK_SH) < 0) {
                        int r = -errno;
                        (void) close(fd);
                        return r;
                }
                if (!same_entry(dfd, fd)) {
                        (void) close(fd);
                        continue;
                }
                g->path[g->n] = TAKE_PTR(*git);
                g->fd[g->n] = fd;
                g->n++;
                return 0;
        }
        return -EBUSY;
}

int git_guard_acquire(const Plan *plan, GitGuard *g) {
        *g = (GitGuard) {};
        for (size_t i = 0; i < plan->n_paths && g->n < GIT_GUARD_MAX; i++) {
                const PlanPath *p = &plan->paths[i];
                if (p->create != PATH_CREATE_PLACEHOLDER)
                        continue;
                const char *slash = strrchr(p->path, '/');
                if (!slash || !streq(slash, "/.git"))
                        return -EINVAL;
                _cleanup_free_ char *git = strdup(p->path);
                _cleanup_free_ char *dir =
                        slash == p->path ? strdup("/") : strndup(p->path, (size_t) (slash - p->path));
                if (!git || !dir) {
                        git_guard_release(g);
                        return -ENOMEM;
                }
                int r = guard_dir(g, dir, &git);
                if (r < 0) {
                        git_guard_release(g);
                        return r;
                }
        }
        return 0;
}

/* Removes the placeholder at path if no run holds it (an exclusive lock, which a shared one
 * of another run keeps from being taken) and it is still an empty directory (this run's own,
 * when held is its fd of it; else what the watcher was told of). */
static void remove_placeholder(const char *path, int held) {
        const char *slash = strrchr(path, '/');
        if (!slash || !streq(slash, "/.git"))
                return;
        _cleanup_free_ char *dir = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        if (!dir)
                return;
        _cleanup_close_ int dfd = path_open_no_symlinks(dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (dfd < 0)
                return;
        _cleanup_close_ int own =
                held < 0 ? openat(dfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -EBADF;
        int fd = held >= 0 ? held : own;
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
                return;         /* another run holds it: the last one removes it */
        if (same_entry(dfd, fd) && dir_fd_is_empty(fd) && unlinkat(dfd, ".git", AT_REMOVEDIR) < 0)
                log_debug_errno(errno, "Cannot remove the placeholder %s: %m", path);
}

void git_guard_release(GitGuard *g) {
        for (size_t i = 0; i < g->n; i++)
                remove_placeholder(g->path[i], g->fd[i]);
        git_guard_drop(g);
}

void git_guard_drop(GitGuard *g) {
        for (size_t i = 0; i < g->n; i++) {
                safe_close(g->fd[i]);
                free(g->path[i]);
        }
        *g = (GitGuard) {};
}

void git_guard_remove(const char *path) {
        remove_placeholder(path, -1);
}
