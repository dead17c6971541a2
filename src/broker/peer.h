/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Who asks the broker, and from where, as the kernel says: never as the request says.
 *
 * The process at the other end of the socket is the one that connected (SO_PEERCRED, and a
 * pidfd of it, SO_PEERPIDFD, so that its pid cannot have been reused by the time it is looked
 * at): it must be the broker's user's, in the cgroup of the sandbox the broker serves
 * (util/sandbox-unit.h). Its working directory is the kernel's record of it, /proc/PID/cwd,
 * and must be the very same directory outside the sandbox, at the same path. */

#include <sys/types.h>

#include "util/sandbox-unit.h"

typedef struct BrokerPeer {
        pid_t pid;              /* in the broker's pid namespace */
        int pidfd;
} BrokerPeer;

void broker_peer_done(BrokerPeer *p);

/* Checks that the peer of `conn` is a process of the sandbox `unit`, run by this user. Returns
 * 0, or -EPERM with *ret_reason (static) saying why not, or another -errno. */
int broker_peer_check(int conn, const char *unit, BrokerPeer *ret, const char **ret_reason);

/* The peer's working directory: *ret_fd (O_PATH, opened outside the sandbox, no symlink on the
 * way) and *ret_path, when it is the very directory the peer is in (same device and inode at
 * the same path). -EPERM with *ret_path set (or NULL) when it is not; another -errno. */
int broker_peer_cwd(const BrokerPeer *peer, int *ret_fd, char **ret_path);
