/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/peer.h"
#include "util/macro.h"
#include "util/path-util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77         /* Linux 6.5 (asm-generic/socket.h) */
#endif

void broker_peer_done(BrokerPeer *p) {
        p->pidfd = safe_close(p->pidfd);
}

/* Whether the process the pidfd was taken of still runs (or is a zombie): then the pid still
 * names it, and what was read of /proc/PID before this is its. */
static bool still_there(const BrokerPeer *p) {
        return pidfd_send_signal(p->pidfd, 0, NULL, 0) == 0;
}

int broker_peer_check(int conn, const char *unit, BrokerPeer *ret, const char **ret_reason) {
        struct ucred cred;
        socklen_t l = sizeof(cred);
        char found[SCUDO_UNIT_NAME_MAX];
        BrokerPeer p = { .pidfd = -EBADF };
        int pidfd = -EBADF;

        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0 || l != sizeof(cred))
                return negative_errno();
        if (cred.uid != getuid()) {
                *ret_reason = "the caller is another user";
                return -EPERM;
        }
        if (cred.pid <= 0) {
                *ret_reason = "the caller's process is not in this pid namespace";
                return -EPERM;
        }
        p.pid = cred.pid;
        l = sizeof(pidfd);
        if (getsockopt(conn, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) < 0 || l != sizeof(pidfd)) {
                /* Before Linux 6.5: a pidfd of the pid now, checked to be the same process by
                 * its cgroup below, as before. */
                pidfd = (int) pidfd_open(p.pid, 0);
                if (pidfd < 0) {
                        *ret_reason = "the caller is gone";
                        return -EPERM;
                }
        }
        p.pidfd = pidfd;

        int r = sandbox_unit_of(p.pid, found);
        if (r < 0 || !still_there(&p)) {
                broker_peer_done(&p);
                *ret_reason = "the caller is gone";
                return -EPERM;
        }
        if (r == 0 || !streq(found, unit)) {
                broker_peer_done(&p);
                *ret_reason = r == 0 ? "the caller runs outside every sandbox" :
                                       "the caller runs in another sandbox";
                return -EPERM;
        }
        *ret = p;
        return 0;
}

int broker_peer_cwd(const BrokerPeer *peer, int *ret_fd, char **ret_path) {
        char link[64], path[PATH_MAX];
        struct stat inside, outside;
        _cleanup_close_ int in = -EBADF, out = -EBADF;

        *ret_path = NULL;
        (void) snprintf(link, sizeof(link), "/proc/%ld/cwd", (long) peer->pid);
        in = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (in < 0)
                return negative_errno();
        /* The path as the caller sees it, in its own mount namespace. */
        ssize_t k = readlink(link, path, sizeof(path) - 1);
        if (k < 0)
                return negative_errno();
        path[k] = 0;
        if (!still_there(peer))
                return -ESRCH;
        if (fstat(in, &inside) < 0)
                return negative_errno();
        if (!(*ret_path = strdup(path)))
                return -ENOMEM;

        /* The same path outside leads, with no symlink on the way, to the same directory: not
         * a private /tmp, not the empty home directory of a sandbox, not something bound at a
         * path it does not have outside. */
        if (!path_is_lexically_clean(path))
                return -EPERM;
        out = path_open_no_symlinks(path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (out < 0)
                return -EPERM;
        if (fstat(out, &outside) < 0)
                return negative_errno();
        if (outside.st_dev != inside.st_dev || outside.st_ino != inside.st_ino)
                return -EPERM;
        *ret_fd = TAKE_FD(out);
        return 0;
}
