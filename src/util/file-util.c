/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-util.h"
#include "macro.h"

int read_regular_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size < 0 || (uint64_t) st.st_size > max)
                return -EFBIG;
        /* No file is read past what one read() can return: this keeps max + 1 and the
         * doubling below from overflowing. */
        max = MIN(max, (size_t) SSIZE_MAX - 1);

        /* One byte more than announced, and one for the NUL. */
        size_t size = (size_t) st.st_size, cap = size + 1, n = 0;
        _cleanup_free_ char *buf = malloc(cap + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (n == cap) {
                        /* The file grew since fstat(); read on, up to the limit. */
                        if (cap > max)
                                return -EFBIG;
                        size_t ncap = MIN(cap * 2, max + 1);
                        char *b = realloc(buf, ncap + 1);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        cap = ncap;
                }
                size_t want = cap - n;
                ssize_t k = read(fd, buf + n, want);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                n += (size_t) k;
                /* Everything fstat() announced, and not the byte more there was room for: the
                 * end of a regular file (one that grew fills the buffer, and is read on). */
                if (n == size && (size_t) k < want)
                        break;
        }
        if (n > max)
                return -EFBIG;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

int read_regular_file(const char *path, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        return read_regular_fd(fd, max, ret, ret_size);
}

bool dir_fd_is_empty(int fd) {
        int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d < 0)
                return false;
        DIR *dir = fdopendir(d);
        if (!dir) {
                (void) close(d);
                return false;
        }
        bool empty = true;
        struct dirent *e;
        while (empty && (e = readdir(dir)))
                empty = streq(e->d_name, ".") || streq(e->d_name, "..");
        (void) closedir(dir);
        return empty;
}

int fd_write_all(int fd, const void *p, size_t n) {
        const char *b = p;
        while (n > 0) {
                ssize_t k = write(fd, b, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? negative_errno() : -EIO;
                b += k;
                n -= (size_t) k;
        }
        return 0;
}

int file_replace(const char *path, const FilePart *parts, size_t n_parts, bool sync) {
        _cleanup_free_ char *tmp = NULL;
        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        _cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n_parts; i++)
                r = fd_write_all(fd, parts[i].data, parts[i].size);
        if (r >= 0 && sync && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

void fd_ensure_std(void) {
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
                        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
                        if (n >= 0 && n != fd) {
                                (void) dup2(n, fd);
                                (void) close(n);
                        }
                }
}
