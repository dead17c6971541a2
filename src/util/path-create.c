/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-util.h"
#include "macro.h"
#include "path-create.h"
#include "path-util.h"

/* dfd's entry `name` as a directory, without following it: an fd (O_PATH), -ENOENT, -ELOOP
 * for a symlink, -ENOTDIR for anything else. */
static int open_dir_nofollow(int dfd, const char *name) {
        struct stat st;
        int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();
                (void) close(fd);
                return r;
        }
        if (!S_ISDIR(st.st_mode)) {
                (void) close(fd);
                return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
        }
        return fd;
}

/* dfd's directory `name`, made (0700) when missing: its fd, with *made telling whether it was
 * made here. */
static int open_or_make_dir(int dfd, const char *name, bool *made) {
        *made = false;
        /* Twice at most: another process may make it between our look and our mkdirat(). */
        for (int tries = 0; tries < 2; tries++) {
                int fd = open_dir_nofollow(dfd, name);
                if (fd != -ENOENT)
                        return fd;
                if (mkdirat(dfd, name, 0700) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return negative_errno();
                }
                /* Opened for reading, which fchmod() needs (not O_PATH): the mode mkdirat()
                 * gave was cut by the umask. O_NOFOLLOW: a symlink put in its place at once is
                 * refused, not followed. */
                fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                if (fchmod(fd, 0700) < 0) {
                        int r = negative_errno();
                        (void) close(fd);
                        return r;
                }
                *made = true;
                return fd;
        }
        return -EEXIST;
}

/* dfd's file `name`, made (0600) holding `content` (NULL: empty) when nothing is there: 1
 * made, 0 there already (any kind of file but a symlink), or -errno. */
static int make_file(int dfd, const char *name, const char *content) {
        struct stat st;
        /* O_EXCL: an existing name, a symlink included, is never opened through. */
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd >= 0) {
                int r = fchmod(fd, 0600) < 0 ? negative_errno() : 1;
                if (r > 0 && content)
                        r = fd_write_all(fd, content, strlen(content)) ?: 1;
                (void) close(fd);
                /* Half written, it would be the corrupt file the content is there to avoid. */
                if (r < 0)
                        (void) unlinkat(dfd, name, 0);
                return r;
        }
        if (errno != EEXIST)
                return negative_errno();
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        return S_ISLNK(st.st_mode) ? -ELOOP : 0;
}

static int create_walk(const char *path, bool directory, const char *content) {
        if (!path_is_lexically_clean(path) || streq(path, "/"))
                return -EINVAL;

        _cleanup_close_ int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        for (const char *p = path + 1;;) {
                char name[NAME_MAX + 1];
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t) (slash - p) : strlen(p);
                bool made;

                if (len > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, p, len);
                name[len] = 0;
                if (!slash && !directory)
                        return make_file(dfd, name, content);
                if (!slash) {
                        /* The end: a symlink is refused, anything else that is there is left as
                         * it is (the grant binds what it finds). */
                        struct stat st;
                        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                                return S_ISLNK(st.st_mode) ? -ELOOP : 0;
                        if (errno != ENOENT)
                                return negative_errno();
                }
                int fd = open_or_make_dir(dfd, name, &made);
                if (fd < 0)
                        return fd;
                (void) safe_close(dfd);
                dfd = fd;
                if (!slash)
                        return made ? 1 : 0;
                p = slash + 1;
        }
}

int path_create_no_symlinks(const char *path, bool directory) {
        return create_walk(path, directory, NULL);
}

int path_create_file_holding(const char *path, const char *content) {
        return create_walk(path, false, content);
}
