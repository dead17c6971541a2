/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the shim learns about the process that looks a name up (FUSE gives its thread id):
 * its working directory and PATH, read from /proc and trusted for nothing but choosing what to
 * list. */

#include <stdbool.h>
#include <sys/types.h>

/* The caller's working directory, or -errno (unreadable, or deleted: its profiles are then the
 * global ones alone). */
int shim_caller_cwd(pid_t pid, char **ret);

/* The caller's PATH as it was when it started (/proc/PID/environ), or NULL in *ret when it had
 * none (the default PATH then applies) or it cannot be read. */
int shim_caller_path(pid_t pid, char **ret);

/* Whether the thread `tid` is one of this process's own (a lookup the shim made itself). */
bool shim_caller_is_self(pid_t tid);
