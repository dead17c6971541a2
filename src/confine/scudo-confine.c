/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo-confine: the first program run inside every sandbox, before the command.
 *
 *   scudo-confine EXECUTABLE ARGV0 [ARG...]
 *
 * systemd has set up the namespaces, mounts and filters of the unit; what it cannot do in
 * version 252 is keep the command away from the rest of the user's session through the two
 * channels that mounts do not cover:
 *   - abstract unix sockets (an X server's @/tmp/.X11-unix/X0, some D-Bus daemons): they live
 *     in the network namespace, which the sandbox shares with the session;
 *   - signals: there is no PID namespace, so the command could kill or stop any process of
 *     the user.
 * A Landlock domain scoped for both (kernel ≥ 6.12, Landlock ABI 6) closes them: from inside,
 * connecting to an abstract socket created outside fails with EPERM, and so does kill() of a
 * process outside. Nothing else is restricted, then the command is executed in place.
 *
 * Kept tiny and free of scudo's libraries: it runs on every start, and it must work when only
 * this one file is bound into the sandbox. Exit 127 when the command cannot be executed, 125
 * when the domain cannot be set up on a kernel that supports it (fail closed). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* Debian 12's kernel headers predate the scoped field (ABI 6); the layout is fixed by ABI. */
struct confine_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

#define CONFINE_CREATE_RULESET_VERSION (1U << 0)
#define CONFINE_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define CONFINE_SCOPE_SIGNAL (1ULL << 1)
#define CONFINE_ABI_SCOPES 6

static int landlock_scope(void) {
        long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, CONFINE_CREATE_RULESET_VERSION);
        if (abi < CONFINE_ABI_SCOPES)
                return 0;       /* no Landlock, or too old for scopes: nothing to add here */

        struct confine_ruleset_attr attr = {
                .scoped = CONFINE_SCOPE_ABSTRACT_UNIX_SOCKET | CONFINE_SCOPE_SIGNAL,
        };
        int fd = (int) syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
        if (fd < 0)
                return -errno;
        /* NoNewPrivileges is set on the unit already; this is for when it is run by hand. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            syscall(__NR_landlock_restrict_self, fd, 0) < 0) {
                int r = -errno;
                (void) close(fd);
                return r;
        }
        (void) close(fd);
        return 1;
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: scudo-confine EXECUTABLE ARGV0 [ARG...]\n");
                return 125;
        }
        int r = landlock_scope();
        if (r < 0) {
                fprintf(stderr, "scudo: cannot confine the command (landlock: %s)\n", strerror(-r));
                return 125;
        }
        execv(argv[1], argv + 2);
        fprintf(stderr, "scudo: '%s' cannot be executed inside the sandbox: %s\n", argv[1], strerror(errno));
        return errno == ENOENT ? 127 : 126;
}
