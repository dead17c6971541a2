/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The walk for the git directories below a project (git-dir-find.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plan/git-dir-find.h"
#include "util/macro.h"
#include "util/path-util.h"

typedef struct Walk {
        GitDirFound found;
        void *userdata;
        size_t n_dirs;
        char path[PATH_MAX];
        _Alignas(struct dirent64) char buf[32768];     /* getdents64's, one directory at a time */
} Walk;

/* The type of `name` in the directory `dfd`, from getdents' d_type or else lstat. */
static unsigned char entry_type(int dfd, const char *name, unsigned char type) {
        if (type != DT_UNKNOWN)
                return type;
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return DT_UNKNOWN;
        return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK :
                DT_UNKNOWN;
}

static bool is_dot_or_dotdot(const char *n) {
        return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* The directory open at `fd` (taken over), named w->path (len bytes), `depth` below the root.
 * One pass over its entries: what makes it a git directory, or holds one, and the names of
 * its subdirectories, gone into afterwards (the directory stays open: its children are opened
 * from it). */
static int walk_dir(Walk *w, int fd, size_t len, unsigned depth) {
        _cleanup_close_ int dfd = fd;
        if (w->n_dirs >= GIT_DIR_FIND_MAX_DIRS || depth > GIT_DIR_FIND_MAX_DEPTH)
                return -E2BIG;
        w->n_dirs++;
        bool head = false, objects = false, refs = false;
        unsigned char git_type = DT_UNKNOWN;
        _cleanup_free_ char *names = NULL;      /* the subdirectories' names, each NUL-ended */
        size_t used = 0, size = 0;
        int r = 0;
        for (;;) {
                /* getdents64 into the walk's one buffer: no DIR to allocate, fstat and fcntl */
                ssize_t got = syscall(SYS_getdents64, dfd, w->buf, sizeof(w->buf));
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        break;          /* the end, or unreadable: what was read is what there is */
                for (ssize_t at = 0; r >= 0 && at < got;) {
                        struct dirent64 *e = (struct dirent64 *) (w->buf + at);
                        at += e->d_reclen;
                        if (is_dot_or_dotdot(e->d_name))
                                continue;
                        unsigned char t = entry_type(dfd, e->d_name, e->d_type);
                        if (streq(e->d_name, ".git")) {
                                git_type = t;
                                continue;       /* its submodules and worktrees are the caller's */
                        }
                        if (streq(e->d_name, "HEAD"))
                                head = t == DT_REG || t == DT_LNK;
                        else if (streq(e->d_name, "objects"))
                                objects = t == DT_DIR;
                        else if (streq(e->d_name, "refs"))
                                refs = t == DT_DIR;
                        if (t != DT_DIR)
                                continue;
                        size_t l = strlen(e->d_name) + 1;
                        if (used + l > size) {
                                size_t n = MAX(2 * size, used + l + 256);
                                char *m = realloc(names, n);
                                if (!m) {
                                        r = -ENOMEM;
                                        break;
                                }
                                names = m;
                                size = n;
                        }
                        memcpy(names + used, e->d_name, l);
                        used += l;
                }
                if (r < 0)
                        return r;
        }
        if (head && objects && refs) {
                /* A git directory (bare): nothing below it is a repository of its own. */
                r = w->found(w->path, GIT_DIR_BARE, w->userdata);
                used = 0;
        } else if (git_type == DT_DIR || git_type == DT_LNK || git_type == DT_REG)
                r = w->found(w->path, git_type == DT_REG ? GIT_DIR_GIT_FILE : GIT_DIR_DOT_GIT, w->userdata);
        for (size_t at = 0; r >= 0 && at < used; at += strlen(names + at) + 1) {
                const char *name = names + at;
                size_t l = strlen(name);
                if (len + 1 + l >= sizeof(w->path))
                        continue;       /* past PATH_MAX: no one opens it by its path either */
                int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0) {
                        if (errno == ENOMEM)
                                r = -ENOMEM;
                        continue;       /* unreadable, gone or a symlink by now */
                }
                w->path[len] = '/';
                memcpy(w->path + len + 1, name, l + 1);
                r = walk_dir(w, sub, len + 1 + l, depth + 1);
                w->path[len] = 0;
        }
        return r;
}

int git_dirs_find(const char *root, GitDirFound found, void *userdata, size_t *n_dirs) {
        _cleanup_free_ Walk *w = calloc(1, sizeof(Walk));
        if (!w)
                return -ENOMEM;
        size_t len = strlen(root);
        if (!path_is_absolute(root) || len >= sizeof(w->path))
                return -EINVAL;
        *w = (Walk) { .found = found, .userdata = userdata };
        memcpy(w->path, root, len + 1);
        int r = 0, fd = path_open_no_symlinks(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd >= 0)
                r = walk_dir(w, fd, len, 0);
        else if (fd == -ENOMEM)
                r = fd;
        if (n_dirs)
                *n_dirs = w->n_dirs;
        return r;
}
