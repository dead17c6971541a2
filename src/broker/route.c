/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/route.h"
#include "util/macro.h"
#include "util/strv.h"

static bool name_is_ok(const char *name) {
        size_t l = strlen(name);
        return l > 0 && l <= NAME_MAX && !streq(name, ".") && !streq(name, "..") && !strchr(name, '/');
}

int broker_route_links(const char *dir, char * const *commands, const char *scudo) {
        _cleanup_close_ int dfd = -EBADF;
        int n = 0;

        if (mkdir(dir, 0700) < 0)
                return negative_errno();
        dfd = open(dir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_PATH);
        if (dfd < 0)
                return negative_errno();
        STRV_FOREACH(c, commands) {
                if (!name_is_ok(*c))
                        continue;
                if ((unsigned) n >= BROKER_ROUTES_MAX)
                        break;
                if (symlinkat(scudo, dfd, *c) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return negative_errno();
                }
                n++;
        }
        /* Nothing in there changes while the sandbox runs: read-only (and bound read-only). */
        if (chmod(dir, 0500) < 0)
                return negative_errno();
        return n;
}

void broker_route_remove(const char *dir) {
        _cleanup_close_ int dfd = -EBADF;
        DIR *d;
        struct dirent *de;

        (void) chmod(dir, 0700);
        dfd = open(dir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_RDONLY);
        if (dfd < 0)
                return;
        int dup_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0 || !(d = fdopendir(dup_fd))) {
                safe_close(dup_fd);
                return;
        }
        while ((de = readdir(d)))
                if (de->d_type == DT_LNK)
                        (void) unlinkat(dfd, de->d_name, 0);
        closedir(d);
        (void) rmdir(dir);
}
