/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* scudo's file refusal reporter: one program on the exit of every system call (tp_btf, which
 * needs only CAP_BPF and CAP_PERFMON), attached by scudo-bpfd while at least one sandbox asked
 * for file reports, and detached when none does.
 *
 * It runs for every system call of the machine, so it gives up as early as it can: on success
 * (but of chdir and fchdir, see below) or any error but ENOENT, EACCES, EPERM and EROFS (one
 * compare); on a call that takes no path (a switch); on a process in no watched cgroup (a bit
 * of watched_bits per cgroup above it, no map lookup unless one is set). Only then is the path
 * read, from the caller's memory as it is at the call's exit.
 *
 * Then it keeps the candidates (when the watch has prefixes): a failed call on a path the
 * sandbox did not change fails the same way outside, so it is no refusal, and most failed
 * calls are of that kind (module, include and library searches). What the text of the path
 * can tell is decided here; what it cannot is passed on, to be judged in user space:
 *  - an absolute path: the deepest of the watch's prefixes at or above it (components compared
 *    whole, "." and empty ones skipped, ".." going back one) says which errors make a
 *    candidate; a `.git` component below a prefix marked GIT adds the write errors;
 *  - a relative path, from the working directory: the errors its directory can reach, which
 *    this program follows through chdir() (an absolute one: the prefix above it and all below
 *    it; a relative one that stays below it: as before; fchdir(): all) per process and, for a
 *    process that never changed it, from its parents, else the directory the command started in;
 *  - a relative path whose ".." goes above the working directory, a path relative to a
 *    directory fd, a path cut at FILE_PATH_MAX: passed on. A path that reaches a changed
 *    prefix through a symlink elsewhere (or by a ".." after one) is not a candidate.
 *  - scudo's own setup of the unit (unit_setup()): no call of it is the command's refusal.
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

/* Set by scudo-bpfd before a cgroup's watch goes in, cleared when the last watch of that bit
 * went: a clear bit is a cgroup not watched, for the cost of a load. */
__u64 watched_bits[FILE_WATCH_BITS / 64] = {};

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, FILE_PREFIX_MAX);
        __type(key, struct file_prefix_key);
        __type(value, struct file_prefix);
} prefixes SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, FILE_CWD_MAX);
        __type(key, struct file_cwd_key);
        __type(value, __u8);
} cwds SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, FILE_DIRS_MAX);
        __type(key, struct file_dir_key);
        __type(value, __u8);
} file_dirs SEC(".maps");

/* How deep a walk keeps what it found at each component, so that a ".." can go back to it. */
#define WALK_DEPTH 32

struct level {
        __u64 hash;
        __u8 self, below, git, git_seen, miss;
};

/* The path being judged, and the walk's levels: too large for the stack. */
struct scratch {
        char path[FILE_PATH_MAX];
        struct level levels[WALK_DEPTH];
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct scratch);
} scratch SEC(".maps");

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

/* Whether a cgroup of this process, itself or an ancestor, may be watched: its bit is set. A
 * first walk of its own, without map lookups; a global function, so that the verifier follows
 * it once and not at each of its callers. */
__noinline int current_maybe_watched(void) {
        struct task_struct *t = bpf_get_current_task_btf();
        struct cgroup *cg = t->cgroups->dfl_cgrp;

        for (int i = 0; i < FILE_CGROUP_DEPTH && cg; i++) {
                struct cgroup_subsys_state *parent;
                __u64 id = cg->kn->id;

                if (watched_bits[(id / 64) % (FILE_WATCH_BITS / 64)] & (1ULL << (id % 64)))
                        return 1;
                parent = cg->self.parent;
                if (!parent)
                        return 0;
                cg = parent->cgroup;
        }
        return 0;
}

/* The watched cgroup this process is in, itself or an ancestor; 0 for none. t is the current
 * task (the bits are looked at for it). */
static __always_inline __u64 watched_sid(struct task_struct *t, struct file_watch **ret) {
        struct cgroup *cg = t->cgroups->dfl_cgrp;

        if (!current_maybe_watched())
                return 0;
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

#define GIT_HASH file_hash_byte(file_hash_byte(file_hash_byte(file_hash_byte(FILE_HASH_COMPONENT, \
                                                                           '.'), 'g'), 'i'), 't')

/* A walk along the components of the path in the scratch buffer. The verifier follows the
 * walk's state from one byte to the next until it repeats: so it is kept to few values (what
 * the component is so far, not its length). */
enum {
        COMPONENT_EMPTY,
        COMPONENT_DOT,
        COMPONENT_DOTDOT,
        COMPONENT_NAME,
};

struct walk {
        __u64 sid;
        __u64 hash;             /* of the path up to the last whole component */
        __u64 component;        /* of the component being read */
        __u32 depth;            /* whole components so far, less those a ".." took back */
        __u8 tree;              /* the map has them (file_watch.tree) */
        __u8 may_dotdot;        /* the text has ".." somewhere (or may have) */
        __u8 need_git;          /* the error asked about is a write error: a `.git` matters */
        __u8 kind;              /* COMPONENT_*, of the component being read */
        __u8 lookup;            /* an absolute path: each prefix is looked up */
        __u8 dotdot;            /* a ".." the text cannot follow: above the working directory,
                                 * or back to a level deeper than WALK_DEPTH */
        __u8 self, below, git, git_seen;
        __u8 miss;              /* past a component not in the map, which has the prefixes'
                                 * ancestors (tree): no prefix below */
};

static __always_inline void set_prefix(struct walk *w, const struct file_prefix *p) {
        w->self = p->self;
        w->below = p->below;
        w->git = p->flags & FILE_PREFIX_GIT;
        w->git_seen = 0;
}

/* What the walk found at its current depth, kept for a ".." that comes back to it. Field by
 * field, here and in go_up(): the walk's state as a struct level copied whole costs the
 * verifier half as many instructions again. */
static __always_inline void save_level(struct walk *w, struct scratch *s) {
        struct level *l;
        __u32 d = w->depth;

        if (!s || d >= WALK_DEPTH)
                return;
        l = &s->levels[d];
        l->hash = w->hash;
        l->self = w->self;
        l->below = w->below;
        l->git = w->git;
        l->git_seen = w->git_seen;
        l->miss = w->miss;
}

/* A ".." goes back one component, as the kernel does unless the component it leaves is a
 * symlink (which the text cannot tell, as it cannot tell a symlink anywhere else). "/.." is
 * "/"; above the working directory, or back to a level not kept, the text cannot follow. */
static __always_inline void go_up(struct walk *w, struct scratch *s) {
        struct level *l;
        __u32 d;

        if (w->depth == 0) {
                if (!w->lookup)
                        w->dotdot = 1;
                return;
        }
        d = --w->depth;
        if (!s || d >= WALK_DEPTH) {
                w->dotdot = 1;
                return;
        }
        l = &s->levels[d];
        w->hash = l->hash;
        w->self = l->self;
        w->below = l->below;
        w->git = l->git;
        w->git_seen = l->git_seen;
        w->miss = l->miss;
}

/* Whether the rest of the path can change what the walk found: not past a component with no
 * prefix below it, unless a ".." may come back, or a `.git` may follow below a GIT prefix and
 * the error is one it adds. */
static __always_inline bool walk_over(const struct walk *w) {
        return w->miss && !w->may_dotdot && !(w->git && w->need_git);
}

/* The end of a component: 1 when the walk is over. A function of its own, which the
 * verifier checks once, not at each byte that can end a component. */
__noinline int walk_end_component(struct walk *w) {
        __u32 zero = 0;
        struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
        struct file_prefix_key k;
        struct file_prefix *p;
        __u8 kind;
        __u64 component;

        if (!w)
                return 1;
        kind = w->kind;
        component = w->component;

        w->kind = COMPONENT_EMPTY;
        w->component = FILE_HASH_COMPONENT;
        if (kind == COMPONENT_EMPTY || kind == COMPONENT_DOT)
                return walk_over(w);
        if (kind == COMPONENT_DOTDOT) {
                go_up(w, s);
                return w->dotdot || walk_over(w);
        }
        w->depth++;
        w->git_seen |= component == GIT_HASH;
        w->hash = file_hash_chain(w->hash, component);
        if (w->lookup && !w->miss) {
                k.sid = w->sid;
                k.hash = w->hash;
                p = bpf_map_lookup_elem(&prefixes, &k);
                if (!p)
                        w->miss = w->tree;
                else if (!(p->flags & FILE_PREFIX_INTERIOR))
                        set_prefix(w, p);
        }
        save_level(w, s);
        return w->dotdot || walk_over(w);
}

struct walk_step {
        struct scratch *s;
        struct walk *w;
};

/* WALK_BLOCK bytes a step: a call of the callback costs more than a byte's work. */
#define WALK_BLOCK 8

static long walk_block(__u32 i, void *ctx) {
        struct walk_step *st = ctx;
        struct scratch *s = st->s;
        struct walk *w = st->w;
        __u32 at = i * WALK_BLOCK;

        if (!s || at > FILE_PATH_MAX - WALK_BLOCK)
                return 1;
        for (int j = 0; j < WALK_BLOCK; j++) {
                char c = s->path[(at + j) & (FILE_PATH_MAX - 1)];

                if (c == '/' || c == 0) {
                        if (walk_end_component(w) || c == 0)
                                return 1;
                        continue;
                }
                if (c == '.' && w->kind == COMPONENT_EMPTY)
                        w->kind = COMPONENT_DOT;
                else if (c == '.' && w->kind == COMPONENT_DOT)
                        w->kind = COMPONENT_DOTDOT;
                else
                        w->kind = COMPONENT_NAME;
                w->component = file_hash_byte(w->component, (unsigned char) c);
        }
        return 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
#define DOTS 0x2e2e2e2e2e2e2e2eULL

struct dotdot_scan {
        const struct scratch *s;
        long n;
        __u64 last;
        bool found;
};

/* A word of the path: a bit per byte that may be '.' (the usual test for a zero byte, after
 * xor with dots: it never misses one, and may flag the byte after one), and two such next to
 * each other, in the word or across the last one's end, may be a "..". */
static long scan_word(__u32 i, void *ctx) {
        struct dotdot_scan *d = ctx;
        __u64 x, dots;

        if (!d->s || i >= FILE_PATH_MAX / 8 || (long) i * 8 >= d->n)
                return 1;
        x = *(const __u64 *) &d->s->path[i * 8] ^ DOTS;
        dots = (x - ONES) & ~x & HIGHS;
        if ((dots & (dots >> 8)) || ((d->last >> 63) & dots & 0x80)) {
                d->found = true;
                return 1;
        }
        d->last = dots;
        return 0;
}

/* Whether the first n bytes of the scratch path may hold "..", a word at a time. */
static __always_inline bool may_have_dotdot(const struct scratch *s, long n) {
        struct dotdot_scan d = { .s = s, .n = n };

        bpf_loop(FILE_PATH_MAX / 8, scan_word, &d, 0);
        return d.found;
}

/* Reads the path into the scratch buffer and walks it, for the errors `bits`: 1, or 0 for no
 * path, or -1 for a path whose text cannot tell (cut, or with a ".." it cannot follow). */
static __always_inline int walk_path(struct walk *w, struct scratch *s, __u64 sid, __u8 tree, __u8 bits,
                                      __u64 path) {
        struct file_prefix_key k = { .sid = sid, .hash = FILE_HASH_ROOT };
        struct file_prefix *p;
        long n;

        n = bpf_probe_read_user_str(s->path, sizeof(s->path), (const void *) path);
        if (n <= 1)
                return 0;
        if (n >= FILE_PATH_MAX)
                return -1;
        w->sid = sid;
        w->tree = tree;
        w->need_git = !!(bits & FILE_WRITE_ERRORS);
        w->may_dotdot = may_have_dotdot(s, n);
        w->hash = FILE_HASH_ROOT;
        w->component = FILE_HASH_COMPONENT;
        if (s->path[0] == '/') {
                w->lookup = 1;
                p = bpf_map_lookup_elem(&prefixes, &k);
                if (p && !(p->flags & FILE_PREFIX_INTERIOR))
                        set_prefix(w, p);
        }
        /* a relative path without "..": its working directory's, whatever its components */
        if (!w->lookup && !w->may_dotdot)
                return 1;
        save_level(w, s);
        struct walk_step st = { .s = s, .w = w };

        bpf_loop(FILE_PATH_MAX / WALK_BLOCK, walk_block, &st, 0);
        return w->dotdot ? -1 : 1;
}

static __always_inline __u8 walk_mask(const struct walk *w) {
        return w->self | (w->git && w->git_seen ? FILE_WRITE_ERRORS : 0);
}

/* Whether t is the service manager's child setting up a unit of the run (its namespaces, the
 * mount points of its view) or the first program it runs, which is scudo's own (scudo-confine,
 * which sets up the rest and then runs the command; a bus proxy): forked by a process outside
 * the cgroup, at most one program run since. The command is at least the second. A process of
 * the command left to the manager (which reaps orphans) has no such parent: the exec count it
 * got at fork is its own parent's, which ran programs after the manager forked it. The
 * sandbox's processes cannot change cgroup (its cgroup tree is read-only to them): a parent in
 * another cgroup is the manager. */
static __always_inline bool unit_setup(struct task_struct *t) {
        struct task_struct *p = t->real_parent;

        return p && t->self_exec_id - t->parent_exec_id <= 1 && t->parent_exec_id == p->self_exec_id &&
               p->cgroups->dfl_cgrp != t->cgroups->dfl_cgrp;
}

/* What a relative path from the process's working directory can be a candidate with. */
static __always_inline __u8 cwd_mask(struct file_watch *w, struct task_struct *t) {
        if (!w->chdirs)
                return w->cwd_mask;
        for (int i = 0; i < 4 && t; i++) {
                struct file_cwd_key k = {
                        .tgid = (__u64) t->tgid,
                        .start_time = t->group_leader ? t->group_leader->start_time : 0,
                };
                __u8 *m = bpf_map_lookup_elem(&cwds, &k);

                if (m)
                        return *m;
                t = t->real_parent;
        }
        return w->cwd_mask;
}

/* A chdir() or fchdir() that worked, in a watched cgroup with prefixes. */
static __always_inline void track_cwd(struct pt_regs *regs, __u64 nr) {
        struct task_struct *t = bpf_get_current_task_btf();
        struct file_watch *w = NULL;
        struct walk wk = {};
        struct scratch *s;
        __u32 zero = 0;
        __u64 sid;
        __u8 m = FILE_ALL_ERRORS;

        sid = watched_sid(t, &w);
        /* the unit's setup goes to the start directory, which cwd_mask is of */
        if (!sid || !w || !w->filter || unit_setup(t))
                return;
        w->chdirs = 1;
        s = bpf_map_lookup_elem(&scratch, &zero);
        if (nr == 80 && s && walk_path(&wk, s, sid, w->tree, FILE_ALL_ERRORS, regs->di) > 0) {
                if (wk.lookup)
                        m = walk_mask(&wk) | wk.below | (wk.git ? FILE_WRITE_ERRORS : 0);
                else
                        m = cwd_mask(w, t);
        }
        struct file_cwd_key k = {
                .tgid = (__u64) t->tgid,
                .start_time = t->group_leader ? t->group_leader->start_time : 0,
        };
        (void) bpf_map_update_elem(&cwds, &k, &m, BPF_ANY);
}

/* ---- The write record (file_watch.record) ----
 *
 * On the exit of a call that worked and can make, rename, link or change an entry, the
 * directory that holds the entry goes into file_dirs with every directory above it, as the
 * dentries say (no path text is trusted): a file opened for writing by the fd it got, an fd's
 * file by that fd, a name without "/" by the directory fd or the working directory it is
 * relative to. A path with "/" (git renames `refs/heads/main.lock` to `refs/heads/main`) or a
 * socket bound to a name is placed by the kernel's own change of the entries' times (below).
 * What cannot be placed (a 32-bit call, io_uring) counts in `unknown`, and the end-of-run
 * check then walks everything. */

#define O_WRITES 01103          /* O_WRONLY | O_RDWR | O_CREAT | O_TRUNC */
#define X32_SYSCALL_BIT 0x40000000
#define AF_UNIX 1
#define RENAME_EXCHANGE 2

enum {
        CHANGE_RET_FD = 1,      /* the call's result is a file it opened */
        CHANGE_FD,              /* argument `dirfd` is the file changed */
        CHANGE_PATH,            /* argument `path`, relative to `dirfd` (-1: the working directory) */
        CHANGE_UNKNOWN,
        CHANGE_BIND,            /* a socket bound: a name on the file system when AF_UNIX */
};

struct change {
        __u8 how;
        __s8 dirfd, path, flags;
};

static __always_inline bool describe_change(__u64 nr, struct change *c) {
        c->dirfd = -1;
        c->path = -1;
        c->flags = -1;
        c->how = CHANGE_PATH;
        switch (nr) {
        case 2:         /* open */
                c->how = CHANGE_RET_FD;
                c->flags = 1;
                return true;
        case 85:        /* creat */
                c->how = CHANGE_RET_FD;
                return true;
        case 257:       /* openat */
        case 437:       /* openat2: flags in its struct open_how */
        case 304:       /* open_by_handle_at */
                c->how = CHANGE_RET_FD;
                c->flags = 2;
                return true;
        case 91:        /* fchmod */
        case 93:        /* fchown */
        case 77:        /* ftruncate */
        case 190:       /* fsetxattr */
        case 199:       /* fremovexattr */
                c->how = CHANGE_FD;
                c->dirfd = 0;
                return true;
        case 83:        /* mkdir */
        case 133:       /* mknod */
        case 90:        /* chmod */
        case 92:        /* chown */
        case 94:        /* lchown */
        case 76:        /* truncate */
        case 132:       /* utime */
        case 235:       /* utimes */
        case 188:       /* setxattr */
        case 189:       /* lsetxattr */
        case 197:       /* removexattr */
        case 198:       /* lremovexattr */
                c->path = 0;
                return true;
        case 258:       /* mkdirat */
        case 259:       /* mknodat */
        case 268:       /* fchmodat */
        case 452:       /* fchmodat2 */
        case 260:       /* fchownat */
        case 261:       /* futimesat */
        case 280:       /* utimensat: no path is its dirfd */
        case 463:       /* setxattrat */
        case 466:       /* removexattrat */
                c->dirfd = 0;
                c->path = 1;
                return true;
        case 82:        /* rename: the new name */
        case 86:        /* link */
        case 88:        /* symlink */
                c->path = 1;
                return true;
        case 264:       /* renameat */
        case 316:       /* renameat2 */
        case 265:       /* linkat */
                c->dirfd = 2;
                c->path = 3;
                return true;
        case 266:       /* symlinkat */
                c->dirfd = 1;
                c->path = 2;
                return true;
        case 49:        /* bind */
                c->how = CHANGE_BIND;
                return true;
        case 425:       /* io_uring_setup: its operations are no system calls */
                c->how = CHANGE_UNKNOWN;
                return true;
        default:
                return false;
        }
}

/* The dentry of the file open at `fd` in the current process, or NULL. */
static __always_inline struct dentry *fd_dentry(struct task_struct *t, __u64 fd) {
        struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
        struct file **fds, *f = NULL;

        if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
                return NULL;
        fds = BPF_CORE_READ(fdt, fd);
        if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) < 0 || !f)
                return NULL;
        return BPF_CORE_READ(f, f_path.dentry);
}

struct dir_walk {
        struct file_watch *w;
        __u64 sid;
        struct dentry *d;
        int result;
};

static long record_step(__u32 i, void *ctx) {
        struct dir_walk *dw = ctx;
        struct file_dir_key k = { .sid = dw->sid };
        struct dentry *d = dw->d, *p;
        __u8 one = 1;

        if (!d || !dw->w)
                return 1;
        k.dev = BPF_CORE_READ(d, d_sb, s_dev);
        k.ino = BPF_CORE_READ(d, d_inode, i_ino);
        if (bpf_map_lookup_elem(&file_dirs, &k)) {
                dw->result = 0;
                return 1;
        }
        if (dw->w->recorded >= FILE_DIRS_PER_SANDBOX ||
            bpf_map_update_elem(&file_dirs, &k, &one, BPF_NOEXIST) < 0) {
                dw->result = bpf_map_lookup_elem(&file_dirs, &k) ? 0 : -1;
                return 1;
        }
        __sync_fetch_and_add(&dw->w->recorded, 1);
        p = BPF_CORE_READ(d, d_parent);
        if (p == d) {
                dw->result = 0;         /* the file system's root */
                return 1;
        }
        dw->d = p;
        return 0;
}

/* Puts `d` and the directories above it in the record: 0, or -1 when it cannot. The walk up
 * stops at the first one already there, whose own were put before it (or are being put by the
 * call that put it, which ends before the run does). */
static __always_inline int record_dir(struct file_watch *w, __u64 sid, struct dentry *d) {
        struct dir_walk dw = { .w = w, .sid = sid, .d = d, .result = -1 };

        bpf_loop(FILE_DIR_DEPTH, record_step, &dw, 0);
        return dw.result;
}

struct name_scan {
        struct scratch *s;
        __u8 slash;
        __u32 len;
};

static long scan_byte(__u32 i, void *ctx) {
        struct name_scan *n = ctx;
        char c;

        if (!n->s || i >= FILE_PATH_MAX)
                return 1;
        c = n->s->path[i];
        if (c == 0)
                return 1;
        n->len = i + 1;
        if (c == '/') {
                n->slash = 1;
                return 1;
        }
        return 0;
}

/* The directory that holds the entry a path names, when the path is one name (no "/", not "."
 * nor ".."): its dirfd's or the working directory; else NULL. */
static __always_inline struct dentry *path_parent(struct task_struct *t, __u64 path, __s32 dirfd) {
        struct name_scan n = {};
        __u32 zero = 0;

        n.s = bpf_map_lookup_elem(&scratch, &zero);
        if (!n.s || bpf_probe_read_user_str(n.s->path, sizeof(n.s->path), (const void *) path) <= 1)
                return NULL;
        bpf_loop(FILE_PATH_MAX, scan_byte, &n, 0);
        if (n.slash || n.len == 0 ||
            (n.s->path[0] == '.' && (n.len == 1 || (n.len == 2 && n.s->path[1] == '.'))))
                return NULL;
        if (dirfd == AT_FDCWD)
                return BPF_CORE_READ(t, fs, pwd.dentry);
        return dirfd >= 0 ? fd_dentry(t, (__u64) dirfd) : NULL;
}

/* What the time stamps of the calling thread's last call placed (key: the thread's id): the
 * call's number, and whether every directory went into the record. Cleared at the exit of
 * each call that can use it, so that an entry of the same number is that call's own. */
struct placed {
        __u32 nr;
        __u32 ok;
};

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, FILE_PLACED_MAX);
        __type(key, __u32);
        __type(value, struct placed);
} placed SEC(".maps");

/* Whether the call `nr` that worked had its directories placed by the time stamps (and
 * forgets what they placed). A function of its own, which the verifier checks once. */
__attribute__((noinline)) int placed_by_times(__u64 nr) {
        __u32 tid = (__u32) bpf_get_current_pid_tgid();
        struct placed *p = bpf_map_lookup_elem(&placed, &tid);
        int ok = p && p->nr == (__u32) nr && p->ok;

        if (p)
                (void) bpf_map_delete_elem(&placed, &tid);
        return ok;
}

static __always_inline void record_change(struct pt_regs *regs, __u64 nr, long ret) {
        struct task_struct *t = bpf_get_current_task_btf();
        struct file_watch *w = NULL;
        struct dentry *d = NULL;
        struct change c;
        bool compat;
        __u64 sid;

        if (nr == (__u64) -1)
                return;         /* no call: a return from a signal handler */
        compat = (nr & X32_SYSCALL_BIT) ||
                 (bpf_core_field_exists(t->thread_info.status) && (t->thread_info.status & TS_COMPAT));
        if (!compat && !describe_change(nr, &c))
                return;
        /* RENAME_EXCHANGE (renameat2's fifth argument): the old name's directory gets an entry too */
        if (!compat && nr == 316 && (regs->r8 & RENAME_EXCHANGE))
                c.how = CHANGE_UNKNOWN;
        if (!compat && c.how == CHANGE_RET_FD && c.flags >= 0) {
                __u64 flags = arg(regs, c.flags);

                if (nr == 437)
                        (void) bpf_probe_read_user(&flags, sizeof(flags), (const void *) flags);
                if (!(flags & O_WRITES))
                        return;         /* most opens: for reading */
        }
        if (!compat && c.how == CHANGE_BIND) {
                __u16 family = 0;
                char first = 0;
                __u64 sa = arg(regs, 1);

                if (bpf_probe_read_user(&family, sizeof(family), (const void *) sa) < 0 || family != AF_UNIX)
                        return;
                if (bpf_probe_read_user(&first, 1, (const void *) (sa + 2)) == 0 && first == 0)
                        return;         /* an abstract name: nothing on the file system */
        }
        sid = watched_sid(t, &w);
        if (!sid || !w || !w->record || unit_setup(t))
                return;
        if (compat)
                goto unknown;
        switch (c.how) {
        case CHANGE_RET_FD:
                d = fd_dentry(t, (__u64) ret);
                d = d ? BPF_CORE_READ(d, d_parent) : NULL;
                break;
        case CHANGE_FD:
                d = fd_dentry(t, arg(regs, c.dirfd));
                d = d ? BPF_CORE_READ(d, d_parent) : NULL;
                break;
        case CHANGE_PATH: {
                __s32 dirfd = c.dirfd >= 0 ? (__s32) arg(regs, c.dirfd) : AT_FDCWD;
                __u64 path = arg(regs, c.path);

                if (!path && dirfd >= 0) {
                        /* utimensat(fd, NULL, ...): the fd's file */
                        d = fd_dentry(t, (__u64) dirfd);
                        d = d ? BPF_CORE_READ(d, d_parent) : NULL;
                } else if (path)
                        d = path_parent(t, path, dirfd);
                break;
        }
        default:
                break;
        }
        /* what the stamps placed is this call's, or none's: it goes either way */
        if (d && record_dir(w, sid, d) == 0) {
                if (c.how == CHANGE_PATH)
                        (void) placed_by_times(nr);
                return;
        }
        if ((c.how == CHANGE_PATH || c.how == CHANGE_BIND) && placed_by_times(nr))
                return;
unknown:
        __sync_fetch_and_add(&w->unknown, 1);
}

/* ---- The time stamps that place a path with "/" ----
 *
 * A call that makes, renames or links an entry changes the time stamps of the directory that
 * holds it; one that changes an entry (chmod, utimes) those of the entry. The file systems do
 * so through inode_set_ctime_current(), in the caller's thread, and its trace points give the
 * inode: a directory goes into the record as it is, another inode by the directories of its
 * names (at most FILE_ALIASES_MAX). The path's text is never read. A call none of whose stamps
 * was traced (a concurrent change of the same directory kept the other's time) has no entry,
 * and is `unknown`. A stamp of a call that then fails only makes the record larger. */

#define S_IFMT 00170000
#define S_IFDIR 0040000

struct alias_walk {
        struct hlist_node *next;
        struct file_watch *w;
        __u64 sid;
        bool ok;
};

static long record_alias(__u32 i, void *ctx) {
        struct alias_walk *a = ctx;
        struct hlist_node *n = a->next;
        struct dentry *d;

        if (!n)
                return 1;
        if (i + 1 >= FILE_ALIASES_MAX) {
                a->ok = false;
                return 1;
        }
        d = (struct dentry *) ((char *) n - bpf_core_field_offset(struct dentry, d_u.d_alias));
        if (record_dir(a->w, a->sid, BPF_CORE_READ(d, d_parent)) < 0)
                a->ok = false;
        a->next = BPF_CORE_READ(n, next);
        return 0;
}

static __always_inline void stamped(struct inode *inode) {
        struct task_struct *t = bpf_get_current_task_btf();
        struct file_watch *w = NULL;
        struct alias_walk a = { .ok = true };
        struct hlist_node *first;
        struct pt_regs *regs;
        struct placed p = {}, *old;
        __u32 tid;
        __u64 sid;

        sid = watched_sid(t, &w);
        if (!sid || !w || !w->record || unit_setup(t))
                return;
        regs = (struct pt_regs *) bpf_task_pt_regs(t);
        if (!regs)
                return;
        p.nr = (__u32) BPF_CORE_READ(regs, orig_ax);
        first = BPF_CORE_READ(inode, i_dentry.first);
        if (!first)
                return;         /* a new inode, not yet given its name: its directory's stamp places it */
        if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFDIR) {
                struct dentry *d = (struct dentry *) ((char *) first -
                                                      bpf_core_field_offset(struct dentry, d_u.d_alias));

                a.ok = record_dir(w, sid, d) == 0;
        } else {
                a.w = w;
                a.sid = sid;
                a.next = first;
                bpf_loop(FILE_ALIASES_MAX, record_alias, &a, 0);
        }
        tid = (__u32) bpf_get_current_pid_tgid();
        old = bpf_map_lookup_elem(&placed, &tid);
        /* the call's earlier stamps: one not placed makes the call unplaced */
        p.ok = a.ok && !(old && old->nr == p.nr && !old->ok);
        (void) bpf_map_update_elem(&placed, &tid, &p, BPF_ANY);
}

SEC("tp_btf/inode_set_ctime_to_ts")
int BPF_PROG(scudo_stamp_set, struct inode *inode) {
        stamped(inode);
        return 0;
}

SEC("tp_btf/ctime_xchg_skip")
int BPF_PROG(scudo_stamp_skip, struct inode *inode) {
        stamped(inode);
        return 0;
}

SEC("tp_btf/ctime_ns_xchg")
int BPF_PROG(scudo_stamp_xchg, struct inode *inode) {
        stamped(inode);
        return 0;
}

/* Whether the failed call can be a refusal, as far as its path's text tells: 1, 0, or -1 to
 * pass it on without the scratch buffer's copy (it could not be read whole). */
static __always_inline int candidate(struct file_watch *w, struct task_struct *t, struct scratch *s,
                                     __u64 sid, __u64 path, __s32 dirfd, __u8 bit) {
        struct walk wk = {};
        int k;

        k = walk_path(&wk, s, sid, w->tree, bit, path);
        if (k <= 0)
                return k;
        if (wk.lookup)
                return !!(walk_mask(&wk) & bit);
        if (dirfd != AT_FDCWD)
                return 1;
        return !!(cwd_mask(w, t) & bit);
}

/* The calls describe_change() places by a path or a bound name, as a bit per number (a
 * switch there costs the verifier too much on this path). */
static const __u64 path_calls[8] = {
        0x2000000000000ULL, 0x554c1000ULL, 0x3000000000000030ULL, 0x80000000060ULL,
        0x100000000100173cULL, 0x0ULL, 0x0ULL, 0x48010ULL,
};

/* A failed call that can be placed by its stamps: what they placed is not for the next one. */
static __always_inline void forget_stamps(__u64 nr) {
        __u32 tid;

        if (nr >= 512 || !((path_calls[nr >> 6] >> (nr & 63)) & 1))
                return;
        tid = (__u32) bpf_get_current_pid_tgid();
        (void) bpf_map_delete_elem(&placed, &tid);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(scudo_file_exit, struct pt_regs *regs, long ret) {
        struct task_struct *t;
        struct file_event *e;
        struct file_watch *w = NULL;
        struct scratch *s = NULL;
        struct call c;
        __u64 sid, nr, path;
        __u32 zero = 0, flags;
        __s32 dirfd;
        __u8 bit;
        int k = -1;

        nr = regs->orig_ax;
        if (ret >= 0) {
                if (ret == 0 && (nr == 80 || nr == 81))
                        track_cwd(regs, nr);
                else
                        record_change(regs, nr, ret);
                return 0;
        }
        forget_stamps(nr);
        /* What depends on the error and the call is worked out here, once: past this point the
         * verifier need not follow each kind of call on its own. */
        if (ret == -ENOENT)
                bit = FILE_ENOENT;
        else if (ret == -EACCES || ret == -EPERM)
                bit = FILE_EACCES;
        else if (ret == -EROFS)
                bit = FILE_EROFS;
        else
                return 0;
        if (!describe(nr, &c))
                return 0;
        path = arg(regs, c.path);
        dirfd = c.dirfd >= 0 ? (__s32) arg(regs, c.dirfd) : AT_FDCWD;
        flags = c.flags >= 0 ? (__u32) arg(regs, c.flags) : c.fixed_flags;
        if (!path)
                return 0;
        if (nr == 437) {
                /* openat2: the flags are in its struct open_how */
                __u64 how = 0;

                (void) bpf_probe_read_user(&how, sizeof(how), (const void *) (__u64) flags);
                flags = (__u32) how;
        }
        t = bpf_get_current_task_btf();
        /* a 32-bit call of a 64-bit process has numbers of another table */
        if (bpf_core_field_exists(t->thread_info.status) && (t->thread_info.status & TS_COMPAT))
                return 0;
        sid = watched_sid(t, &w);
        if (!sid || !w || unit_setup(t))
                return 0;
        if (w->filter) {
                s = bpf_map_lookup_elem(&scratch, &zero);
                if (s) {
                        k = candidate(w, t, s, sid, path, dirfd, bit);
                        if (k == 0)
                                return 0;
                }
        }
        if (!within_budget(w))
                return 0;

        e = bpf_ringbuf_reserve(&file_events, sizeof(*e), 0);
        if (!e) {
                __sync_fetch_and_add(&file_events_lost, 1);
                __sync_fetch_and_add(&w->ring_lost, 1);
                return 0;
        }
        e->sid = sid;
        e->nr = (__u32) nr;
        e->err = (__s32) ret;
        e->pid = current_pid();
        e->dirfd = dirfd;
        e->flags = flags;
        e->dropped = __sync_lock_test_and_set(&w->dropped, 0);
        e->ring_lost = __sync_lock_test_and_set(&w->ring_lost, 0);
        e->pad = 0;
        bpf_get_current_comm(e->comm, sizeof(e->comm));
        if (k > 0 && s) {
                if (bpf_probe_read_kernel(e->path, sizeof(e->path), s->path) < 0)
                        e->path[0] = 0;
        } else if (bpf_probe_read_user_str(e->path, sizeof(e->path), (const void *) path) <= 0)
                e->path[0] = 0;
        bpf_ringbuf_submit(e, 0);
        return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
