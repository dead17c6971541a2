/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Types shared by the file refusal reporter (scudo-files.bpf.c, x86-64 only) and scudo-bpfd.
 *
 * One program on the exit of every system call keeps those that failed with ENOENT, EACCES,
 * EPERM or EROFS, are file system calls, and come from a process in a cgroup the helper was
 * asked to watch (or below it). Of those it keeps the candidates: calls whose path lies where
 * the sandbox's plan changes the view (the `prefixes` of the watch, docs/reports.md), as far
 * as the kernel can tell from the path's text. It hands each to the helper whole, with the
 * path as the process named it; what the refusal means, and whether it is the sandbox's doing
 * at all, is decided outside (src/report/file-judge.c), where the real files can be looked
 * at. */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define FILE_PATH_MAX 512
#define FILE_WATCH_MAX 4096
#define FILE_PREFIX_MAX 65536
#define FILE_CWD_MAX 65536
/* A sandbox's share of the ring buffer: at most this many events per window of
 * 2^FILE_WINDOW_SHIFT ns (about 134 ms), the rest counted in `dropped`. */
#define FILE_WINDOW_SHIFT 27
#define FILE_EVENTS_PER_WINDOW 256U
/* How far up from a process's own cgroup a watched one is looked for. */
#define FILE_CGROUP_DEPTH 8
/* Bits of the watched_bits filter: bit (id % FILE_WATCH_BITS) is set while a cgroup of that id
 * is watched, so that a cgroup of the machine is known unwatched without a lookup. */
#define FILE_WATCH_BITS 4096
/* The write record (file_watch.record): directories kept for all sandboxes (preallocated: about
 * 1.5 MB; full, a record is incomplete and the check walks everything), for one, and how
 * far up from a directory its ancestors are followed. */
#define FILE_DIRS_MAX 16384
#define FILE_DIRS_PER_SANDBOX 4000U
#define FILE_DIR_DEPTH 64
/* Threads whose last call the time stamps placed (an LRU: one pushed out is `unknown`), and
 * the names of a file followed to their directories. */
#define FILE_PLACED_MAX 8192
#define FILE_ALIASES_MAX 8

/* Which errors make a candidate: the masks of net/protocol.h (BPFD_FILE_*). */
#define FILE_ENOENT 1U
#define FILE_EACCES 2U
#define FILE_EROFS 4U
#define FILE_WRITE_ERRORS (FILE_EACCES | FILE_EROFS)
#define FILE_ALL_ERRORS (FILE_ENOENT | FILE_EACCES | FILE_EROFS)
#define FILE_PREFIX_GIT 1U
/* Set by scudo-bpfd on an ancestor of a prefix that is no prefix itself: it decides nothing,
 * and says that the walk of a path through it can still reach one. */
#define FILE_PREFIX_INTERIOR 2U

/* Value of the watch map (key: the cgroup id of the watched cgroup). */
struct file_watch {
        __u64 window;
        __u32 events;           /* in the current window */
        __u32 dropped;          /* not sent since the last event that was: the window's share */
        __u32 ring_lost;        /* the same: the ring buffer was full */
        __u8 filter;            /* prefixes were given: send the candidates only */
        __u8 cwd_mask;          /* FILE_*: candidates of a relative path from the start directory */
        __u8 record;            /* record where the sandbox writes (file_dir_key) */
        __u8 tree;              /* every ancestor of a prefix is in the map (FILE_PREFIX_INTERIOR):
                                 * a path not there has no prefix below it */
        __u32 recorded;         /* directories in the record */
        __u32 unknown;          /* calls that changed something where the record cannot tell */
        __u32 chdirs;           /* a process of the command changed its working directory:
                                 * until then every one is in the start directory (cwd_mask) */
};

/* The write record: a directory in which a process of the watched cgroup `sid` made, renamed,
 * linked or changed an entry, or opened a file for writing, and each directory above it.
 * `dev` is the kernel's (major << 20 | minor). */
struct file_dir_key {
        __u64 sid;
        __u64 dev;
        __u64 ino;
};

/* The prefixes map: (watched cgroup, hash of a path) → what a call below it can be. */
struct file_prefix_key {
        __u64 sid;
        __u64 hash;
};

struct file_prefix {
        __u8 self;              /* FILE_*: errors that make a candidate, the deepest prefix deciding */
        __u8 below;             /* the union of `self` of the prefixes below it */
        __u8 flags;             /* FILE_PREFIX_GIT */
        __u8 pad;
};

/* A process's working directory, as far as the kernel tracked it (chdir): FILE_* errors that
 * a relative path from it can be a candidate with. Key: the process (tgid, start time). */
struct file_cwd_key {
        __u64 tgid;
        __u64 start_time;
};

/* The hash of a canonical path, component by component: FNV-1a over each component's bytes,
 * chained in order. "/" is FILE_HASH_ROOT. The same in the program and in the helper. */
#define FILE_HASH_ROOT 0x84222325cbf29ce4ULL
#define FILE_HASH_COMPONENT 0xcbf29ce484222325ULL

static inline __u64 file_hash_byte(__u64 h, unsigned char c) {
        return (h ^ c) * 0x100000001b3ULL;
}

static inline __u64 file_hash_chain(__u64 path, __u64 component) {
        return ((path ^ component) * 0x9e3779b97f4a7c15ULL) ^ (path >> 29);
}

struct file_event {
        __u64 sid;              /* the watched cgroup's id */
        __u32 nr;               /* the system call (x86-64 numbers) */
        __u32 flags;            /* open flags, access mode or AT_* flags, by call */
        __s32 err;              /* negative errno */
        __u32 pid;              /* in the helper's pid namespace */
        __s32 dirfd;            /* what a relative path is relative to; AT_FDCWD = -100 */
        __u32 dropped;          /* events of this sandbox dropped before this one: its share */
        __u32 ring_lost;        /* the same: the ring buffer was full */
        __u32 pad;
        char comm[16];
        char path[FILE_PATH_MAX];       /* NUL-terminated, cut at FILE_PATH_MAX - 1 bytes */
};
