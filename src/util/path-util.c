/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#  include <linux/openat2.h>   /* glibc 2.36 has neither the call nor struct open_how */
#  define HAVE_OPENAT2 1
#endif

#include "macro.h"
#include "path-util.h"

bool path_is_absolute(const char *p) {
        return p && p[0] == '/';
}

char *path_join(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        while (la > 0 && a[la - 1] == '/')
                la--;
        while (*b == '/') {
                b++;
                lb--;
        }
        char *r = malloc(la + 1 + lb + 1);
        if (!r)
                return NULL;
        memcpy(r, a, la);
        r[la] = '/';
        memcpy(r + la + 1, b, lb);
        r[la + 1 + lb] = 0;
        return r;
}

int path_normalize(const char *path, char **ret) {
        if (!path_is_absolute(path))
                return -EINVAL;

        size_t n = strlen(path);
        _cleanup_free_ char *out = malloc(n + 2);
        if (!out)
                return -ENOMEM;

        size_t j = 0;
        const char *p = path;
        while (*p) {
                while (*p == '/')
                        p++;
                const char *e = strchrnul(p, '/');
                size_t len = (size_t) (e - p);
                if (len == 0)
                        break;
                if (len == 1 && p[0] == '.') {
                        /* nothing */
                } else if (len == 2 && p[0] == '.' && p[1] == '.') {
                        while (j > 0 && out[j - 1] != '/')
                                j--;
                        if (j > 0)
                                j--; /* drop the slash too */
                } else {
                        out[j++] = '/';
                        memcpy(out + j, p, len);
                        j += len;
                }
                p = e;
        }
        if (j == 0)
                out[j++] = '/';
        out[j] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

const char *path_startswith(const char *path, const char *prefix) {
        if (streq(prefix, "/"))
                return path[0] == '/' ? path + 1 : NULL;
        size_t l = strlen(prefix);
        if (strncmp(path, prefix, l) != 0)
                return NULL;
        if (path[l] == 0)
                return path + l;
        if (path[l] == '/')
                return path + l + 1;
        return NULL;
}

bool path_is_lexically_clean(const char *path) {
        if (!path_is_absolute(path))
                return false;
        if (path[1] == 0)
                return true;
        for (const char *p = path + 1; ; ) {
                const char *e = strchrnul(p, '/');
                size_t len = (size_t) (e - p);
                if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (!*e)
                        return true;
                p = e + 1;
        }
}

/* openat2() of a lexically clean path with RESOLVE_NO_SYMLINKS: the fd, or -errno, -ENOSYS
 * where the call is not there. No O_NOFOLLOW is needed: with O_PATH it would open a trailing
 * symlink itself, where the resolve flag refuses it (ELOOP), as it refuses one anywhere else. */
static int openat2_no_symlinks(const char *path, int flags, mode_t mode) {
#ifdef HAVE_OPENAT2
        /* An old kernel (ENOSYS), or a seccomp filter that refuses the call (ENOSYS, EPERM):
         * it will say the same the next time, so do not ask again. */
        static bool unavailable = false;
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .mode = (flags & O_CREAT) ? mode : 0,
                .resolve = RESOLVE_NO_SYMLINKS,
        };

        if (unavailable)
                return -ENOSYS;
        int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
        if (fd >= 0)
                return fd;
        if (errno == ENOSYS || errno == EPERM) {
                unavailable = true;
                return -ENOSYS;
        }
        return -errno;
#else
        (void) path;
        (void) flags;
        (void) mode;
        return -ENOSYS;
#endif
}

int path_probe_no_symlinks(const char *path) {
        if (!path_is_lexically_clean(path))
                return -EINVAL;
        int fd = openat2_no_symlinks(path, O_PATH, 0);
        if (fd < 0)
                return fd;
        (void) close(fd);
        return 1;
}

int path_open_no_symlinks(const char *path, int flags, mode_t mode) {
        if (!path_is_lexically_clean(path))
                return -EINVAL;
        int fd = openat2_no_symlinks(path, flags, mode);
        if (fd != -ENOSYS)
                return fd;

        /* Without openat2: not following a trailing symlink, and then the kernel's name for
         * what was opened, which differs from the path if a symlink was followed on the way. */
        char link[64], name[PATH_MAX];
        fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, name, sizeof(name) - 1);
        if (n < 0 || (size_t) n >= sizeof(name) - 1) {
                int r = n < 0 ? -errno : -ENAMETOOLONG;
                (void) close(fd);
                return r;
        }
        name[n] = 0;
        if (!streq(name, path)) {
                (void) close(fd);
                return -ELOOP;
        }
        return fd;
}

int path_stat_no_symlinks(const char *path, struct stat *ret) {
        int fd = path_open_no_symlinks(path, O_PATH, 0);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd < 0)
                return fd;
        int r = fstat(fd, ret) < 0 ? -errno : 1;
        (void) close(fd);
        if (r > 0 && S_ISLNK(ret->st_mode))
                r = -ELOOP;     /* O_PATH|O_NOFOLLOW opened a trailing symlink itself */
        return r;
}

char *path_realpath_procfd(const char *path, char resolved[static PATH_MAX]) {
        char link[64];
        int fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return NULL;    /* errno as realpath() would set it */
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, resolved, PATH_MAX - 1);
        (void) close(fd);
        if (n <= 0 || resolved[0] != '/' || (size_t) n >= PATH_MAX - 1 ||
            (n >= 10 && memcmp(resolved + n - 10, " (deleted)", 10) == 0))
                return realpath(path, resolved);
        resolved[n] = 0;
        return resolved;
}

char *path_realpath_fast(const char *path, char resolved[static PATH_MAX]) {
        size_t l = strlen(path);
        int r = path_probe_no_symlinks(path);

        if (r > 0 && l < PATH_MAX) {
                memcpy(resolved, path, l + 1);
                return resolved;
        }
        if (r == -ENOENT || r == -ENOTDIR) {
                errno = -r;     /* as open() would have said */
                return NULL;
        }
        return path_realpath_procfd(path, resolved);
}

static bool is_skipped(const struct stat *st, const FileId *skip, size_t n_skip) {
        for (size_t i = 0; i < n_skip; i++)
                if (st->st_dev == skip[i].dev && st->st_ino == skip[i].ino)
                        return true;
        return false;
}

int path_find_executable(const char *name, const char *search_path, const FileId *skip, size_t n_skip,
                         char **ret) {
        bool found_non_exec = false;

        if (strchr(name, '/')) {
                struct stat st;
                if (stat(name, &st) < 0)
                        return negative_errno();
                if (S_ISDIR(st.st_mode) || access(name, X_OK) < 0)
                        return -EACCES;
                char *c = strdup(name);
                if (!c)
                        return -ENOMEM;
                *ret = c;
                return 0;
        }

        if (!search_path || !*search_path)
                search_path = "/usr/local/bin:/usr/bin:/bin";

        for (const char *p = search_path; ; ) {
                const char *e = strchrnul(p, ':');
                size_t len = (size_t) (e - p);
                /* An empty entry or "." would mean the working directory; that is how a
                 * project could plant a binary in front of the real one, so skip those. */
                if (len > 0 && p[0] == '/') {
                        _cleanup_free_ char *dir = strndup(p, len);
                        if (!dir)
                                return -ENOMEM;
                        _cleanup_free_ char *cand = path_join(dir, name);
                        if (!cand)
                                return -ENOMEM;
                        struct stat st;
                        if (stat(cand, &st) >= 0 && !S_ISDIR(st.st_mode)) {
                                if (is_skipped(&st, skip, n_skip)) {
                                        /* scudo itself under the command's name: look further */
                                } else if (access(cand, X_OK) >= 0) {
                                        *ret = TAKE_PTR(cand);
                                        return 0;
                                } else
                                        found_non_exec = true;
                        }
                }
                if (!*e)
                        break;
                p = e + 1;
        }
        return found_non_exec ? -EACCES : -ENOENT;
}

int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}
