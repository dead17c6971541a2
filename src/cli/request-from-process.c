/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request-from-process.h"
#include "util/env-util.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/sandbox-unit.h"
#include "util/scudo-programs.h"
#include "util/strv.h"

extern char **environ;

static int describe_caller(Request *req) {
        int r;

        /* Whether this runs inside a sandbox is the kernel's to say (util/sandbox-unit.h). Where
         * the cgroup listing cannot be read, the request counts as made outside: a run then
         * confines the command in full; the trust verbs ask again and refuse. */
        r = sandbox_unit_of(0, req->enclosing_unit);
        if (r < 0)
                log_debug("cannot read this process's cgroup, taking it for outside any sandbox: %s",
                          strerror(-r));
        req->nested = r > 0;
        if (!req->nested)
                req->enclosing_unit[0] = 0;

        req->uid = getuid();
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
                struct passwd *pw = getpwuid(req->uid);
                home = pw ? pw->pw_dir : NULL;
        }
        if (!home || home[0] != '/')
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "cannot determine the home directory "
                                       "($HOME is not set)");
        r = path_normalize(home, &req->home);
        if (r < 0)
                return log_error_errno(r, "Bad home directory '%s': %m", home);

        const char *rt = getenv("XDG_RUNTIME_DIR");
        if (rt && rt[0] == '/')
                r = path_normalize(rt, &req->runtime_dir);
        else
                r = asprintf(&req->runtime_dir, "/run/user/%u", (unsigned) req->uid) < 0 ? -ENOMEM : 0;
        if (r < 0)
                return log_error_errno(r, "Cannot describe the caller: %m");
        return 0;
}

/* The caller's environment, less what systemd could not carry. */
static int environment_to_carry(char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (char **e = environ; e && *e; e++) {
                if (!env_assignment_is_valid(*e)) {
                        log_debug("leaving out an environment variable systemd cannot carry: '%.*s'",
                                  (int) strcspn(*e, "="), *e);
                        continue;
                }
                if (strv_extend(&l, *e) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int request_from_process(Request *req) {
        int r = describe_caller(req);
        if (r < 0)
                return r;
        req->start_dir = getcwd(NULL, 0);
        if (!req->start_dir)
                return log_error_errno(negative_errno(), "Cannot determine the working directory: %m");
        if (environment_to_carry(&req->environ) < 0)
                return log_oom();
        if (!req->argv) {
                req->argv = strv_copy((char *[]) { (char *) "scudo", NULL });
                if (!req->argv)
                        return log_oom();
        }
        return 0;
}

/* The id the kernel shows for an owner this user namespace does not map (65534 unless set). */
static unsigned overflow_id(const char *which) {
        char path[64], buf[32];
        unsigned id = 65534;
        (void) snprintf(path, sizeof(path), "/proc/sys/kernel/overflow%s", which);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n > 0) {
                buf[n] = 0;
                (void) sscanf(buf, "%u", &id);
        }
        return id;
}

/* Opens the file found, the one the run is to execute, and checks it: a regular file, not scudo
 * itself. Through a link or the shim, where the user did not name the file, also that only
 * root or the user can change what it holds: a file or an interpreter line another user may
 * rewrite is not one whose check means anything. The sandbox's starter executes this file and
 * no other (unit-build.c: --exec-identity; docs/shim.md, "What runs"). */
static int open_checked_executable(Request *req, const struct stat *self) {
        struct stat st;
        int fd = open(req->exec_path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(negative_errno(), "%s: cannot open it: %m", req->exec_path);
        req->exec_fd = fd;
        req->exec_fd_open = true;
        if (fstat(fd, &st) < 0)
                return log_error_errno(negative_errno(), "%s: cannot look at it: %m", req->exec_path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EACCES), "%s: cannot be executed (not a regular "
                                       "file)", req->exec_path);
        /* Named by its full path outside a sandbox (scudo doctor's probe), scudo is the user's
         * choice; through a link or the shim, or in place of a delegated command, a loop. */
        if (st.st_dev == self->st_dev && st.st_ino == self->st_ino && (req->via_link || req->nested))
                return log_error_errno(SYNTHETIC_ERRNO(ELOOP), "%s is scudo itself%s%s%s; it was not run",
                                       req->exec_path, req->nested ? " in this sandbox (" : "",
                                       req->nested ? req->enclosing_unit : "",
                                       req->nested ? "), in place of a delegated command" : "");
        /* An owner this user namespace does not map (the overflow id: a sandbox's or a
         * testbed's view of root's files) is as far out of the user's reach as root. */
        bool others_write = (st.st_mode & S_IWOTH) ||
                ((st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != getgid() &&
                 st.st_gid != overflow_id("gid"));
        if (req->via_link &&
            ((st.st_uid != 0 && st.st_uid != req->uid && st.st_uid != overflow_id("uid")) || others_write))
                return log_error_errno(SYNTHETIC_ERRNO(EPERM), "%s: refused: %s (uid %u, mode %04o), so "
                                       "what scudo checks is not what would run; run it by its full "
                                       "path with scudo if it is meant to be", req->exec_path,
                                       others_write ? "others may write it" : "another user owns it",
                                       (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        req->exec_dev = st.st_dev;
        req->exec_ino = st.st_ino;
        return 0;
}

int request_resolve_command(Request *req) {
        struct stat self;
        int r;

        const char *base = strrchr(req->argv[0], '/');
        req->command_name = strdup(base ? base + 1 : req->argv[0]);
        if (!req->command_name)
                return log_oom();

        /* Never resolve to scudo itself, nor to scudo-route: through a link named after the
         * command (a routing link inside a sandbox that delegates leads to scudo-route), that
         * would run scudo again inside the sandbox. */
        if (stat("/proc/self/exe", &self) < 0)
                return log_error_errno(negative_errno(), "Cannot find scudo's own executable: %m");
        FileId skip[2] = { { self.st_dev, self.st_ino } };
        size_t n_skip = 1;
        _cleanup_free_ char *route = scudo_program_path(SCUDO_ROUTE_NAME);
        struct stat rst;
        if (route && stat(route, &rst) >= 0)
                skip[n_skip++] = (FileId) { rst.st_dev, rst.st_ino };
        r = path_find_executable(req->argv[0], getenv("PATH"), skip, n_skip, &req->exec_path);
        if (r == -ENOENT)
                return log_error_errno(r, "%s: command not found", req->argv[0]);
        if (r == -EACCES)
                return log_error_errno(r, "%s: cannot be executed (permission denied, or a directory)",
                                       req->argv[0]);
        if (r < 0) {
                /* as a shell would say: a command that cannot be looked up is not found */
                log_error_errno(r, "%s: cannot look up the command: %m", req->argv[0]);
                return -ENOENT;
        }
        if (req->exec_path[0] != '/') {
                /* "./build/tool": the unit needs an absolute path */
                _cleanup_free_ char *j = NULL, *n = NULL;
                if (!(j = path_join(req->start_dir, req->exec_path)) || path_normalize(j, &n) < 0)
                        return log_oom();
                free(req->exec_path);
                req->exec_path = TAKE_PTR(n);
        }
        r = open_checked_executable(req, &self);
        if (r < 0)
                return r;

        /* D-Bus carries only UTF-8: say which argument cannot be passed instead of failing
         * somewhere in the message builder. */
        for (size_t i = 0; req->argv[i]; i++)
                if (!utf8_is_valid(req->argv[i]))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "argument %zu of '%s' is not valid "
                                               "UTF-8, which systemd cannot pass on", i, req->command_name);
        return 0;
}
