/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Types shared by the file refusal reporter (scudo-files.bpf.c, x86-64 only) and scudo-bpfd.
 *
 * One program on the exit of every system call keeps those that failed with ENOENT, EACCES,
 * EPERM or EROFS, are file system calls, and come from a process in a cgroup the helper was
 * asked to watch (or below it). It hands each to the helper whole, with the path as the
 * process named it; what the refusal means, and whether it is the sandbox's doing at all, is
 * decided outside (src/report/file-judge.c), where the real files can be looked at. */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define FILE_PATH_MAX 512
#define FILE_WATCH_MAX 4096
/* A sandbox's share of the ring buffer: at most this many events per window of
 * 2^FILE_WINDOW_SHIFT ns (about 134 ms), the rest counted in `dropped`. */
#define FILE_WINDOW_SHIFT 27
#define FILE_EVENTS_PER_WINDOW 256U
/* How far up from a process's own cgroup a watched one is looked for. */
#define FILE_CGROUP_DEPTH 8

/* Value of the watch map (key: the cgroup id of the watched cgroup). */
struct file_watch {
        __u64 window;
        __u32 events;           /* in the current window */
        __u32 dropped;          /* not sent since the last event that was */
};

struct file_event {
        __u64 sid;              /* the watched cgroup's id */
        __u32 nr;               /* the system call (x86-64 numbers) */
        __u32 flags;            /* open flags, access mode or AT_* flags, by call */
        __s32 err;              /* negative errno */
        __u32 pid;              /* in the helper's pid namespace */
        __s32 dirfd;            /* what a relative path is relative to; AT_FDCWD = -100 */
        __u32 dropped;          /* events of this sandbox dropped before this one */
        char comm[16];
        char path[FILE_PATH_MAX];       /* NUL-terminated, cut at FILE_PATH_MAX - 1 bytes */
};
