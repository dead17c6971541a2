/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim/shim-caller.h"
#include "shim/shim-path.h"
#include "util/macro.h"

/* More environment than this is not read: PATH is near the start of nearly every block, and
 * a caller must not make the shim read megabytes per lookup. */
#define ENVIRON_READ_MAX (256U << 10)

int shim_caller_cwd(pid_t pid, char **ret) {
        char proc[64], buf[PATH_MAX + 1];
        (void) snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int) pid);
        ssize_t n = readlink(proc, buf, sizeof(buf) - 1);
        if (n < 0)
                return negative_errno();
        if ((size_t) n >= sizeof(buf) - 1)
                return -ENAMETOOLONG;
        buf[n] = 0;
        /* A deleted directory reads as "/path (deleted)"; not a path to discover files under. */
        if (buf[0] != '/' || (n >= 10 && streq(buf + n - 10, " (deleted)")))
                return -ENOENT;
        char *c = strdup(buf);
        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

int shim_caller_path(pid_t pid, char **ret) {
        char proc[64];
        *ret = NULL;
        (void) snprintf(proc, sizeof(proc), "/proc/%d/environ", (int) pid);
        _cleanup_close_ int fd = open(proc, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        _cleanup_free_ char *block = malloc(ENVIRON_READ_MAX);
        if (!block)
                return -ENOMEM;
        size_t size = 0;
        while (size < ENVIRON_READ_MAX) {
                ssize_t n = read(fd, block + size, ENVIRON_READ_MAX - size);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        const char *v = shim_environ_get(block, size, "PATH");
        if (v && !(*ret = strdup(v)))
                return -ENOMEM;
        return 0;
}

bool shim_caller_is_self(pid_t tid) {
        char p[64];
        (void) snprintf(p, sizeof(p), "/proc/self/task/%d", (int) tid);
        return access(p, F_OK) >= 0;
}
