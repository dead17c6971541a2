/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* scudo's file refusal reporter: one program on the exit of every system call (tp_btf, which
 * needs only CAP_BPF and CAP_PERFMON), attached by scudo-bpfd while at least one sandbox asked
 * for file reports, and detached when none does.
 *
 * It runs for every system call of the machine, so it gives up as early as it can: on success
 * or any error but ENOENT, EACCES, EPERM and EROFS (one compare); on a call that takes no path
 * (a switch); on a process in no watched cgroup (a few map lookups). Only then is the path
 * read, from the caller's memory as it is at the call's exit.
 *
 * x86-64 only: the arguments are read from the registers of the x86-64 calling convention and
 * the calls are known by their x86-64 numbers. */

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "scudo-files.h"

#define EPERM 1
#define ENOENT 2
#define EACCES 13
#define EROFS 30
#define AT_FDCWD -100
#define O_CREAT_WRONLY_TRUNC 01101
#define TS_COMPAT 0x0002

/* The helper's pid namespace, so that reported pids are the ones it (and scudo) see. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, FILE_WATCH_MAX);
        __type(key, __u64);
        __type(value, struct file_watch);
} watched SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 512 * 1024);
} file_events SEC(".maps");

__u64 file_events_lost = 0;

/* Where a call's path, directory and flags are: argument numbers, -1 for none. */
struct call {
        __s8 path, dirfd, flags;
        __u32 fixed_flags;
};

static __always_inline bool describe(__u64 nr, struct call *c) {
        c->dirfd = -1;
        c->flags = -1;
        c->fixed_flags = 0;
        switch (nr) {
        case 2:         /* open */
                c->path = 0;
                c->flags = 1;
                return true;
        case 85:        /* creat */
                c->path = 0;
                c->fixed_flags = O_CREAT_WRONLY_TRUNC;
                return true;
        case 257:       /* openat */
        case 437:       /* openat2: flags read from its struct open_how */
                c->dirfd = 0;
                c->path = 1;
                c->flags = 2;
                return true;
        case 4:         /* stat */
        case 6:         /* lstat */
        case 59:        /* execve */
        case 80:        /* chdir */
        case 83:        /* mkdir */
        case 84:        /* rmdir */
        case 87:        /* unlink */
        case 82:        /* rename */
        case 76:        /* truncate */
        case 89:        /* readlink */
        case 90:        /* chmod */
        case 92:        /* chown */
        case 94:        /* lchown */
        case 133:       /* mknod */
                c->path = 0;
                return true;
        case 21:        /* access */
                c->path = 0;
                c->flags = 1;
                return true;
        case 86:        /* link: the new name */
        case 88:        /* symlink: the new name */
                c->path = 1;
                return true;
        case 262:       /* newfstatat */
                c->dirfd = 0;
                c->path = 1;
                c->flags = 3;
                return true;
        case 332:       /* statx */
        case 263:       /* unlinkat */
        case 269:       /* faccessat */
        case 439:       /* faccessat2 */
                c->dirfd = 0;
                c->path = 1;
                c->flags = 2;
                return true;
        case 322:       /* execveat */
        case 258:       /* mkdirat */
        case 259:       /* mknodat */
        case 264:       /* renameat */
        case 316:       /* renameat2 */
        case 267:       /* readlinkat */
        case 268:       /* fchmodat */
        case 260:       /* fchownat */
        case 280:       /* utimensat */
                c->dirfd = 0;
                c->path = 1;
                return true;
        case 265:       /* linkat: the new name */
                c->dirfd = 2;
                c->path = 3;
                return true;
        case 266:       /* symlinkat: the new name */
                c->dirfd = 1;
                c->path = 2;
                return true;
        default:
                return false;
        }
}

static __always_inline __u64 arg(struct pt_regs *regs, int i) {
        switch (i) {
        case 0:
                return regs->di;
        case 1:
                return regs->si;
        case 2:
                return regs->dx;
        case 3:
                return regs->r10;
        default:
                return 0;
        }
}

/* The watched cgroup this process is in, itself or an ancestor; 0 for none. */
static __always_inline __u64 watched_sid(struct task_struct *t, struct file_watch **ret) {
        struct cgroup *cg = t->cgroups->dfl_cgrp;

        for (int i = 0; i < FILE_CGROUP_DEPTH; i++) {
                struct cgroup_subsys_state *parent;
                struct file_watch *w;
                __u64 id;

                if (!cg)
                        return 0;
                id = cg->kn->id;
                w = bpf_map_lookup_elem(&watched, &id);
                if (w) {
                        *ret = w;
                        return id;
                }
                parent = cg->self.parent;
                if (!parent)
                        return 0;
                cg = parent->cgroup;
        }
        return 0;
}

static __always_inline bool within_budget(struct file_watch *w) {
        __u64 window = bpf_ktime_get_ns() >> FILE_WINDOW_SHIFT;

        if (w->window != window) {
                /* racy between CPUs, and it need not be more than roughly right */
                w->window = window;
                w->events = 0;
        }
        if (__sync_fetch_and_add(&w->events, 1) < FILE_EVENTS_PER_WINDOW)
                return true;
        __sync_fetch_and_add(&w->dropped, 1);
        return false;
}

static __always_inline __u32 current_pid(void) {
        struct bpf_pidns_info ns = {};

        if (pidns_ino != 0 &&
            bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) == 0)
                return ns.tgid;
        return (__u32) (bpf_get_current_pid_tgid() >> 32);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(scudo_file_exit, struct pt_regs *regs, long ret) {
        struct task_struct *t;
        struct file_event *e;
        struct file_watch *w = NULL;
        struct call c;
        __u64 sid, nr, path;

        if (ret != -ENOENT && ret != -EACCES && ret != -EPERM && ret != -EROFS)
                return 0;
        nr = regs->orig_ax;
        if (!describe(nr, &c))
                return 0;
        t = bpf_get_current_task_btf();
        /* a 32-bit call of a 64-bit process has numbers of another table */
        if (bpf_core_field_exists(t->thread_info.status) && (t->thread_info.status & TS_COMPAT))
                return 0;
        sid = watched_sid(t, &w);
        if (!sid || !w)
                return 0;
        path = arg(regs, c.path);
        if (!path)
                return 0;
        if (!within_budget(w))
                return 0;

        e = bpf_ringbuf_reserve(&file_events, sizeof(*e), 0);
        if (!e) {
                __sync_fetch_and_add(&file_events_lost, 1);
                __sync_fetch_and_add(&w->dropped, 1);
                return 0;
        }
        e->sid = sid;
        e->nr = (__u32) nr;
        e->err = (__s32) ret;
        e->pid = current_pid();
        e->dirfd = c.dirfd >= 0 ? (__s32) arg(regs, c.dirfd) : AT_FDCWD;
        if (nr == 437) {
                __u64 how = 0;

                (void) bpf_probe_read_user(&how, sizeof(how), (const void *) arg(regs, 2));
                e->flags = (__u32) how;
        } else
                e->flags = c.flags >= 0 ? (__u32) arg(regs, c.flags) : c.fixed_flags;
        e->dropped = __sync_lock_test_and_set(&w->dropped, 0);
        bpf_get_current_comm(e->comm, sizeof(e->comm));
        if (bpf_probe_read_user_str(e->path, sizeof(e->path), (const void *) path) <= 0)
                e->path[0] = 0;
        bpf_ringbuf_submit(e, 0);
        return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
