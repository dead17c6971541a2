/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo-confine's seccomp filter (src/confine/seccomp.c), installed in a child process: what
 * it refuses and what it lets through. The refused calls name an id nobody has (a uid, a
 * process group, a pid that does not exist), so that without the filter they fail with ESRCH
 * and change nothing, whatever the machine runs. */
#include <errno.h>
#include <linux/ioprio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine/seccomp.h"
#include "tap.h"

#define NOBODY_ID 3999999       /* a uid, pgrp and pid no process has */

enum {
        SETUP,
        PRIO_BY_USER, PRIO_BY_PGRP, PRIO_OF_SELF,
        IOPRIO_BY_USER, IOPRIO_BY_PGRP, IOPRIO_OF_SELF,
        PRLIMIT_SET_OTHER, PRLIMIT_SET_SELF, PRLIMIT_READ_OTHER,
        N_RESULTS
};

/* errno of the call, 0 on success */
static int result(long r) {
        return r < 0 ? errno : 0;
}

static void child(int fd, pid_t parent) {
        int res[N_RESULTS] = {};
        struct rlimit64 lim;

        res[SETUP] = -confine_seccomp();
        int nice_now = getpriority(PRIO_PROCESS, 0);
        res[PRIO_BY_USER] = result(setpriority(PRIO_USER, NOBODY_ID, nice_now));
        res[PRIO_BY_PGRP] = result(setpriority(PRIO_PGRP, NOBODY_ID, nice_now));
        res[PRIO_OF_SELF] = result(setpriority(PRIO_PROCESS, 0, nice_now));

        long io_now = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
        res[IOPRIO_BY_USER] = result(syscall(SYS_ioprio_set, IOPRIO_WHO_USER, NOBODY_ID, io_now));
        res[IOPRIO_BY_PGRP] = result(syscall(SYS_ioprio_set, IOPRIO_WHO_PGRP, NOBODY_ID, io_now));
        res[IOPRIO_OF_SELF] = result(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, io_now));

        (void) getrlimit64(RLIMIT_NOFILE, &lim);
        res[PRLIMIT_SET_OTHER] = result(prlimit64(NOBODY_ID, RLIMIT_NOFILE, &lim, NULL));
        res[PRLIMIT_SET_SELF] = result(prlimit64(0, RLIMIT_NOFILE, &lim, NULL));
        res[PRLIMIT_READ_OTHER] = result(prlimit64(parent, RLIMIT_NOFILE, NULL, &lim));

        ssize_t w = write(fd, res, sizeof(res));
        _exit(w == (ssize_t) sizeof(res) ? 0 : 1);
}

int main(void) {
        int res[N_RESULTS], fds[2];

        if (pipe(fds) < 0)
                return 1;
        pid_t parent = getpid(), pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                (void) close(fds[0]);
                child(fds[1], parent);
        }
        (void) close(fds[1]);
        int status;
        ssize_t n = read(fds[0], res, sizeof(res));
        (void) waitpid(pid, &status, 0);
        TAP_CHECK(n == (ssize_t) sizeof(res), "the child reported");
        if (n != (ssize_t) sizeof(res))
                return tap_done();

        TAP_CHECK(res[SETUP] == 0, "the filter installs (errno %d)", res[SETUP]);
        TAP_CHECK(res[PRIO_BY_USER] == EPERM, "setpriority(PRIO_USER) refused (errno %d)",
                  res[PRIO_BY_USER]);
        TAP_CHECK(res[PRIO_BY_PGRP] == EPERM, "setpriority(PRIO_PGRP) refused (errno %d)",
                  res[PRIO_BY_PGRP]);
        TAP_CHECK(res[PRIO_OF_SELF] == 0, "setpriority(PRIO_PROCESS, 0) allowed (errno %d)",
                  res[PRIO_OF_SELF]);
        TAP_CHECK(res[IOPRIO_BY_USER] == EPERM, "ioprio_set(IOPRIO_WHO_USER) refused (errno %d)",
                  res[IOPRIO_BY_USER]);
        TAP_CHECK(res[IOPRIO_BY_PGRP] == EPERM, "ioprio_set(IOPRIO_WHO_PGRP) refused (errno %d)",
                  res[IOPRIO_BY_PGRP]);
        TAP_CHECK(res[IOPRIO_OF_SELF] == 0, "ioprio_set(IOPRIO_WHO_PROCESS, 0) allowed (errno %d)",
                  res[IOPRIO_OF_SELF]);
        TAP_CHECK(res[PRLIMIT_SET_OTHER] == EPERM,
                  "prlimit64 setting another pid's limit refused (errno %d)", res[PRLIMIT_SET_OTHER]);
        TAP_CHECK(res[PRLIMIT_SET_SELF] == 0, "prlimit64 setting its own limit allowed (errno %d)",
                  res[PRLIMIT_SET_SELF]);
        TAP_CHECK(res[PRLIMIT_READ_OTHER] == 0,
                  "prlimit64 reading another process's limit allowed (errno %d)", res[PRLIMIT_READ_OTHER]);
        return tap_done();
}
