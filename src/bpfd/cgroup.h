/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Opening a client's cgroup so that what is checked is what is attached to. */

#include <stdint.h>
#include <sys/types.h>

#define CGROUP_ROOT "/sys/fs/cgroup"

/* Opens `path` (relative to the cgroup2 root, already passed through bpfd_check_cgroup_path)
 * without following any symlink or leaving the cgroup filesystem, and checks that it is a
 * cgroup2 directory owned by `uid`. Returns the fd (attach through it, nothing else) and
 * the cgroup id, which is the directory's inode number. */
int cgroup_open_owned(const char *path, uid_t uid, int *ret_fd, uint64_t *ret_id, const char **ret_reason);

/* 1 if the cgroup `path` still exists with id `id`, 0 if it is gone, <0 on error. */
int cgroup_exists(const char *path, uint64_t id);
