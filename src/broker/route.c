/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/route.h"
#include "plan/broker-paths.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

static bool name_is_ok(const char *name) {
        size_t l = strlen(name);
        return l > 0 && l <= NAME_MAX && !streq(name, ".") && !streq(name, "..") && !strchr(name, '/') &&
                !streq(name, BROKER_ROUTE_MAP_NAME);
}

/* At most this much map: a path is at most PATH_MAX, a name NAME_MAX. */
#define ROUTE_MAP_MAX ((size_t) BROKER_ROUTES_MAX * 64U)

static int write_map(int dfd, char * const *map) {
        size_t n = 0;
        for (size_t i = 0; map && map[i] && map[i + 1]; i += 2)
                n += strlen(map[i]) + strlen(map[i + 1]) + 2;
        if (n == 0)
                return 0;
        if (n > ROUTE_MAP_MAX)
                return -E2BIG;
        _cleanup_close_ int fd = openat(dfd, BROKER_ROUTE_MAP_NAME,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
        if (fd < 0)
                return negative_errno();
        for (size_t i = 0; map[i] && map[i + 1]; i += 2)
                for (size_t k = 0; k < 2; k++) {
                        size_t l = strlen(map[i + k]) + 1;
                        if (write(fd, map[i + k], l) != (ssize_t) l)
                                return errno > 0 ? negative_errno() : -EIO;
                }
        return 0;
}

int broker_route_map_find(const char *buf, size_t n, bool by_target, const char *key, char **ret) {
        for (size_t i = 0; i < n;) {
                const char *target = buf + i;
                size_t tl = strnlen(target, n - i);
                if (i + tl + 1 >= n)
                        return -EBADMSG;        /* no NUL, or nothing after it */
                const char *name = target + tl + 1;
                size_t nl = strnlen(name, n - i - tl - 1);
                if (i + tl + 1 + nl >= n)
                        return -EBADMSG;
                if (streq(by_target ? target : name, key)) {
                        char *c = strdup(by_target ? name : target);
                        if (!c)
                                return -ENOMEM;
                        *ret = c;
                        return 0;
                }
                i += tl + nl + 2;
        }
        return -ENOENT;
}

/* The pair whose target (or name, !by_target) is `key`, in the map in `dir`. */
static int map_find(const char *dir, bool by_target, const char *key, char **ret) {
        _cleanup_free_ char *file = NULL, *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (asprintf(&file, "%s/" BROKER_ROUTE_MAP_NAME, dir) < 0)
                return -ENOMEM;
        fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT : negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || (size_t) st.st_size > ROUTE_MAP_MAX)
                return -EBADMSG;
        size_t n = (size_t) st.st_size;
        buf = malloc(n + 1);
        if (!buf)
                return -ENOMEM;
        if (read(fd, buf, n) != (ssize_t) n)
                return -EIO;
        return broker_route_map_find(buf, n, by_target, key, ret);
}

int broker_route_lookup(const char *dir, const char *path, char **ret_name) {
        return map_find(dir, true, path, ret_name);
}

int broker_route_executable(const char *dir, const char *name, char **ret_path) {
        return map_find(dir, false, name, ret_path);
}

int broker_route_links(const char *dir, char * const *commands, const char *scudo, char * const *map) {
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
        int r = write_map(dfd, map);
        if (r < 0)
                return r;
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
        (void) unlinkat(dfd, BROKER_ROUTE_MAP_NAME, 0);
        closedir(d);
        (void) rmdir(dir);
}

static int set_command_name(char **argv, const char *name) {
        char *n = strdup(name);
        if (!n)
                return -ENOMEM;
        free(argv[0]);
        argv[0] = n;
        return 0;
}

/* Started through an executable scudo takes the place of (a delegated command's, bound over
 * it: plan-harden.h), by a path or a name that need not be the command's (`/usr/lib/.../
 * npm-cli.js`, `exec -a x`): the command it stands for, from the routing directory's map. The
 * path is the one the kernel was given, resolved here, where the binds are. */
static int routed_executable(char **argv, const char *bin, bool *ret_routed) {
        const char *execfn = (const char *) getauxval(AT_EXECFN);
        _cleanup_free_ char *path = NULL, *name = NULL;

        *ret_routed = false;
        /* Through a routing link (the usual way, by name on PATH) there is nothing to look up.
         * Not /proc/self/exe: through a bind, that names the path it is bound at. */
        const char *rest = execfn ? path_startswith(execfn, bin) : NULL;
        if (!execfn || (rest && *rest && !strchr(rest, '/')) || !(path = realpath(execfn, NULL)))
                return 0;
        int r = broker_route_lookup(bin, path, &name);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        *ret_routed = true;
        return set_command_name(argv, name);
}

int broker_route_name(const char *bin, char **argv, bool *ret_routed) {
        char prefix[PATH_MAX];
        int r = routed_executable(argv, bin, ret_routed);
        if (r < 0 || *ret_routed)
                return r;
        (void) snprintf(prefix, sizeof(prefix), "%s/", bin);
        const char *rest = startswith(argv[0], prefix);
        if (!rest || !*rest || strchr(rest, '/'))
                return 0;
        return set_command_name(argv, rest);
}
