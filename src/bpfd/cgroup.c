/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "bpfd/cgroup.h"
#include "util/macro.h"

/* Walks the path one component at a time from the cgroup2 root, each step with O_NOFOLLOW
 * and checked to be on cgroup2 still: no symlink and no other mount is ever followed. The
 * path was checked lexically before (no "..", "." or empty component). */
static int open_beneath(const char *path, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        char name[256];

        fd = open(CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        for (const char *p = path; *p; ) {
                const char *e;
                struct statfs sfs;
                size_t n;
                int next;

                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                e = strchrnul(p, '/');
                n = (size_t) (e - p);
                if (n >= sizeof(name) || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return -EINVAL;
                memcpy(name, p, n);
                name[n] = 0;

                next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return negative_errno();
                safe_close(fd);
                fd = next;
                if (fstatfs(fd, &sfs) < 0)
                        return negative_errno();
                if (sfs.f_type != CGROUP2_SUPER_MAGIC)
                        return -EXDEV;
                p = e;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int cgroup_open_owned(const char *path, uid_t uid, int *ret_fd, uint64_t *ret_id, const char **ret_reason) {
        _cleanup_close_ int fd = -EBADF;
        struct statfs sfs;
        struct stat st;
        int k;

        k = open_beneath(path, &fd);
        if (k < 0) {
                *ret_reason = k == -ENOENT ? "no such cgroup" : "cannot open the cgroup";
                return k;
        }
        if (fstatfs(fd, &sfs) < 0) {
                *ret_reason = "cannot fstatfs the cgroup";
                return negative_errno();
        }
        if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
                *ret_reason = "not a cgroup2 directory";
                return -EPERM;
        }
        if (fstat(fd, &st) < 0) {
                *ret_reason = "cannot fstat the cgroup";
                return negative_errno();
        }
        if (!S_ISDIR(st.st_mode)) {
                *ret_reason = "not a directory";
                return -EPERM;
        }
        if (st.st_uid != uid) {
                *ret_reason = "the cgroup is not owned by the caller";
                return -EPERM;
        }
        *ret_id = (uint64_t) st.st_ino;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int cgroup_exists(const char *path, uint64_t id) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int k;

        k = open_beneath(path, &fd);
        if (k == -ENOENT || k == -ENOTDIR)
                return 0;
        if (k < 0)
                return k;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        return (uint64_t) st.st_ino == id;
}
