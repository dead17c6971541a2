/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "report/file-judge.h"
#include "util/path-util.h"

typedef enum Need {
        NEED_EXIST,             /* the path is there outside */
        NEED_READ,
        NEED_WRITE,
        NEED_WRITE_OR_CREATE,   /* open with O_CREAT: a missing file is made in its directory */
        NEED_EXEC,
        NEED_PARENT_WRITE,      /* its directory is there and writable outside */
} Need;

struct FileJudge {
        const Plan *plan;
        const char *home;
        char resolved[PATH_MAX];
        char rule[PATH_MAX + 64];
        char path[BPFD_FILE_PATH_MAX + 1];
        char comm[17];
};

/* x86-64 numbers, as bpf/scudo-files.bpf.c knows them. */
const char *file_judge_operation(uint32_t nr, uint32_t flags) {
        switch (nr) {
        case 2: case 257: case 437: case 85:    /* open, openat, openat2, creat */
                if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
                        return "write";
                return "read";
        case 4: case 6: case 262: case 332:     /* stat, lstat, newfstatat, statx */
                return "stat";
        case 21: case 269: case 439:            /* access, faccessat, faccessat2 */
                return "access";
        case 59: case 322:                      /* execve, execveat */
                return "exec";
        case 83: case 258: case 133: case 259:  /* mkdir, mkdirat, mknod, mknodat */
        case 86: case 265: case 88: case 266:   /* link, linkat, symlink, symlinkat */
                return "create";
        case 87: case 263: case 84:             /* unlink, unlinkat, rmdir */
                return "remove";
        case 82: case 264: case 316:            /* rename, renameat, renameat2 */
                return "rename";
        case 90: case 268: case 92: case 94:    /* chmod, fchmodat, chown, lchown */
        case 260: case 280: case 76:            /* fchownat, utimensat, truncate */
                return "change";
        case 80:
                return "chdir";
        case 89: case 267:
                return "readlink";
        default:
                return NULL;
        }
}

static Need need_of(const char *op, uint32_t nr, uint32_t flags) {
        if (streq(op, "read"))
                return NEED_READ;
        if (streq(op, "write"))
                return flags & O_CREAT ? NEED_WRITE_OR_CREATE : NEED_WRITE;
        if (streq(op, "exec"))
                return NEED_EXEC;
        if (streq(op, "create") || streq(op, "remove") || streq(op, "rename"))
                return NEED_PARENT_WRITE;
        if (streq(op, "change") && nr == 76)
                return NEED_WRITE;
        if (streq(op, "access"))
                return flags & W_OK ? NEED_WRITE :
                       flags & X_OK ? NEED_EXEC :
                       flags & R_OK ? NEED_READ :
                                      NEED_EXIST;
        return NEED_EXIST;
}

int file_judge_new(const Plan *plan, const char *home, FileJudge **ret) {
        FileJudge *j = calloc(1, sizeof(FileJudge));

        if (!j)
                return -ENOMEM;
        j->plan = plan;
        j->home = home && path_is_absolute(home) && !streq(home, "/") ? home : NULL;
        *ret = j;
        return 0;
}

FileJudge *file_judge_free(FileJudge *j) {
        free(j);
        return NULL;
}

/* The absolute form of the path the process named, from /proc while it is there. */
static int resolve(FileJudge *j, const BpfdFileEvent *e, const char *path) {
        _cleanup_free_ char *joined = NULL, *n = NULL;
        char link[64], base[PATH_MAX];
        ssize_t l = -1;

        if (path[0] != '/') {
                if (e->dirfd == AT_FDCWD)
                        (void) snprintf(link, sizeof(link), "/proc/%u/cwd", e->pid);
                else if (e->dirfd >= 0)
                        (void) snprintf(link, sizeof(link), "/proc/%u/fd/%d", e->pid, e->dirfd);
                else
                        return 0;
                if (e->pid > 0)
                        l = readlink(link, base, sizeof(base) - 1);
                if (l > 0 && base[0] == '/')
                        base[l] = 0;
                else if (e->dirfd == AT_FDCWD && j->plan->working_directory)
                        (void) snprintf(base, sizeof(base), "%s", j->plan->working_directory);
                else
                        return 0;
                joined = path_join(base, path);
                if (!joined)
                        return -ENOMEM;
                path = joined;
        }
        if (path_normalize(path, &n) < 0)
                return 0;
        if (strlen(n) >= sizeof(j->resolved))
                return 0;
        strcpy(j->resolved, n);
        return 1;
}

/* The directory of an absolute normalized path, in buf. */
static void parent_of(const char *path, char *buf, size_t size) {
        const char *slash = strrchr(path, '/');
        size_t l = slash && slash != path ? (size_t) (slash - path) : 1;

        (void) snprintf(buf, size, "%.*s", (int) l, path);
}

/* Whether the access would have worked outside, as the user and without following a last
 * symlink for the existence checks. */
static bool possible_outside(const char *path, Need need, int error) {
        struct stat st;
        char parent[PATH_MAX];

        if (need == NEED_PARENT_WRITE) {
                parent_of(path, parent, sizeof(parent));
                if (error == ENOENT)
                        return fstatat(AT_FDCWD, parent, &st, AT_NO_AUTOMOUNT) >= 0 && S_ISDIR(st.st_mode);
                return faccessat(AT_FDCWD, parent, W_OK, AT_EACCESS) >= 0;
        }
        if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) < 0) {
                /* A write that creates: its directory counts. */
                if (need == NEED_WRITE_OR_CREATE && errno == ENOENT) {
                        parent_of(path, parent, sizeof(parent));
                        return error != ENOENT ? faccessat(AT_FDCWD, parent, W_OK, AT_EACCESS) >= 0 :
                                fstatat(AT_FDCWD, parent, &st, AT_NO_AUTOMOUNT) >= 0 && S_ISDIR(st.st_mode);
                }
                return false;
        }
        if (error == ENOENT)
                return true;
        switch (need) {
        case NEED_READ:
                return faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) >= 0;
        case NEED_WRITE:
        case NEED_WRITE_OR_CREATE:
                return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) >= 0;
        case NEED_EXEC:
                return faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) >= 0;
        default:
                return true;
        }
}

static const char *tilde(FileJudge *j, const char *path, char *buf, size_t size) {
        const char *rest = j->home ? path_startswith(path, j->home) : NULL;

        if (!rest)
                return path;
        (void) snprintf(buf, size, "~%s%s", *rest ? "/" : "", rest);
        return buf;
}

/* The entry of the plan closest above path, or at it. An entry the hardening step left out as
 * changing nothing (~/.ssh under the hidden home) is still the rule the profiles wrote for
 * the path: it counts too, below the plan's own entry for the same path. */
static const PlanPath *deepest_entry(const Plan *p, const char *path) {
        const PlanPath *best = NULL;
        size_t best_len = 0;

        for (size_t i = 0; i < p->n_paths + p->n_dropped; i++) {
                const PlanPath *e = i < p->n_paths ? &p->paths[i] : &p->dropped[i - p->n_paths].entry;
                size_t l = strlen(e->path);

                if (path_startswith(path, e->path) && (!best || l > best_len)) {
                        best = e;
                        best_len = l;
                }
        }
        return best;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);

        return a >= b && streq(s + a - b, suffix);
}

/* A refusal in a .git that scudo keeps read-only (plan-harden.c); false for git's optional
 * index.lock: git status takes it on its own, to refresh the index in passing, and goes on
 * without it. */
static bool git_refusal(const char *path, Report *r) {
        if (ends_with(path, "/.git/index.lock") && streq(r->op, "write"))
                return false;
        r->rule = "a .git in a writable directory is read-only unless a profile names it";
        r->origin = "<scudo>";
        r->access = "read";
        return true;
}

static bool below_any(const char *path, const char *const *roots) {
        for (; *roots; roots++)
                if (path_startswith(path, *roots))
                        return true;
        return false;
}

/* The unit property that makes this path read-only, hidden or inaccessible, if any. */
static const char *property_for(const Plan *p, const char *path, int error, const char **ret_value) {
        static const char *const home_dirs[] = { "/home", "/root", "/run/user", NULL };
        static const char *const tmp_dirs[] = { "/tmp", "/var/tmp", NULL };
        static const char *const full_dirs[] = { "/usr", "/boot", "/efi", "/etc", NULL };
        static const char *const yes_dirs[] = { "/usr", "/boot", "/efi", NULL };
        static const char *const open_dirs[] = { "/dev", "/proc", "/sys", "/tmp", "/var/tmp", NULL };
        const char *v;

        if ((v = plan_property(p, "PrivateTmp")) && !streq(v, "no") && !streq(v, "false") &&
            below_any(path, tmp_dirs)) {
                *ret_value = v;
                return "PrivateTmp";
        }
        if ((v = plan_property(p, "PrivateDevices")) && !streq(v, "no") && !streq(v, "false") &&
            path_startswith(path, "/dev")) {
                *ret_value = v;
                return "PrivateDevices";
        }
        if ((v = plan_property(p, "ProtectHome")) && !streq(v, "no") && !streq(v, "false") &&
            below_any(path, home_dirs)) {
                *ret_value = v;
                return "ProtectHome";
        }
        if (error != EROFS && error != EACCES && error != EPERM)
                return NULL;
        v = plan_property(p, "ProtectSystem");
        if (!v)
                return NULL;
        if ((streq(v, "strict") && !below_any(path, open_dirs)) ||
            (streq(v, "full") && below_any(path, full_dirs)) ||
            ((streq(v, "yes") || streq(v, "true")) && below_any(path, yes_dirs))) {
                *ret_value = v;
                return "ProtectSystem";
        }
        return NULL;
}

static const char *property_origin(const Plan *p, const char *name) {
        const char *o = NULL;

        for (size_t i = 0; i < p->n_properties; i++)
                if (streq(p->properties[i].name, name))
                        o = p->properties[i].origin;
        return o;
}

/* Fills in the entry that refused the access; false when none did (the access was judged
 * against the real file, through a bind of it). */
static bool attribute(FileJudge *j, const char *path, int error, Report *r) {
        const PlanPath *e = deepest_entry(j->plan, path);
        const char *prop, *value = NULL, *rest;
        char shown[PATH_MAX];

        if (e) {
                switch (e->access) {
                case PATH_ACCESS_DENY:
                case PATH_ACCESS_HIDE:
                        break;
                case PATH_ACCESS_READ:
                        /* the real directory, read-only: what is missing there is missing */
                        if (error == ENOENT)
                                return false;
                        if (e->reason && ends_with(e->path, "/.git"))
                                return git_refusal(path, r);
                        break;
                default:
                        /* the real directory, writable: what is missing there is missing, and
                         * (a file checked for, then made) may be there by the time it is
                         * looked at outside. Only a read-only .git of scudo's is refused. */
                        rest = path_startswith(path, e->path);
                        if (error == ENOENT || !rest ||
                            !(startswith(rest, ".git/") || streq(rest, ".git") || strstr(rest, "/.git/") ||
                              ends_with(rest, "/.git")))
                                return false;
                        /* a plan that was not hardened: its .git is read-only all the same */
                        return git_refusal(path, r);
                }
                (void) snprintf(j->rule, sizeof(j->rule), "filesystem.%s \"%s\"",
                                path_access_to_string(e->access), tilde(j, e->path, shown, sizeof(shown)));
                r->rule = j->rule;
                r->origin = e->origin && *e->origin ? e->origin : NULL;
                r->access = path_access_to_string(e->access);
                return true;
        }
        prop = property_for(j->plan, path, error, &value);
        if (prop) {
                (void) snprintf(j->rule, sizeof(j->rule), "%s=%s", prop, value);
                r->rule = j->rule;
                r->origin = property_origin(j->plan, prop);
                r->access = error == ENOENT ? "hide" : error == EROFS ? "read" : "deny";
                return true;
        }
        r->rule = "no rule allows it";
        r->origin = NULL;
        r->access = NULL;
        return true;
}

int file_judge(FileJudge *j, const BpfdFileEvent *e, Report *ret) {
        char *path = j->path, *comm = j->comm;
        const char *op;
        int error = -e->error, k;

        static_assert(sizeof(j->path) == sizeof(e->path) + 1 && sizeof(j->comm) == sizeof(e->comm) + 1,
                      "room for a NUL");
        memcpy(path, e->path, sizeof(e->path));
        path[sizeof(e->path)] = 0;
        memcpy(comm, e->comm, sizeof(e->comm));
        comm[sizeof(e->comm)] = 0;

        if (error != ENOENT && error != EACCES && error != EPERM && error != EROFS)
                return 0;
        /* systemd setting the sandbox up, and scudo-confine checking it */
        if (comm[0] == '(' || streq(comm, "scudo-confine"))
                return 0;
        op = file_judge_operation(e->nr, e->flags);
        if (!op || !path[0])
                return 0;
        k = resolve(j, e, path);
        if (k <= 0)
                return k;
        if (!possible_outside(j->resolved, need_of(op, e->nr, e->flags), error))
                return 0;

        *ret = (Report) {
                .kind = REPORT_FILE,
                .op = op,
                .target = path,
                .resolved = streq(j->resolved, path) ? NULL : j->resolved,
                .error = error,
                .pid = e->pid,
                .comm = comm,
        };
        return attribute(j, j->resolved, error, ret) ? 1 : 0;
}

/* The kernel's side of the judgement (net/protocol.h, FILE_PREFIXES): where the plan changes
 * the view, and which errors can be a refusal there, as attribute() above decides them. It
 * may take in more than attribute() reports, never less: what the kernel leaves out is lost. */
typedef struct PrefixSet {
        BpfdFilePrefix *p;
        size_t n;
        bool overflow;
} PrefixSet;

static void prefix_add(PrefixSet *s, const char *path, uint8_t self, uint8_t flags) {
        char cut[BPFD_FILE_PREFIX_PATH_MAX];
        size_t l;

        if (!path || !path_is_absolute(path))
                return;
        l = strlen(path);
        while (l > 1 && path[l - 1] == '/')
                l--;
        if (l >= sizeof(cut)) {
                /* too long to send: a shorter prefix above it takes in all of its subtree */
                const char *slash = NULL;

                for (size_t i = 0; i < sizeof(cut) - 1; i++)
                        if (path[i] == '/')
                                slash = path + i;
                l = slash && slash != path ? (size_t) (slash - path) : 1;
                self = BPFD_FILE_ALL_ERRORS;
                flags = 0;
        }
        memcpy(cut, path, l);
        cut[l] = 0;
        for (size_t i = 0; i < s->n; i++)
                if (s->p[i].path_len == l && memcmp(s->p[i].path, cut, l) == 0) {
                        s->p[i].self |= self;
                        s->p[i].flags |= flags;
                        return;
                }
        if (s->n == BPFD_FILE_PREFIXES_MAX) {
                s->overflow = true;
                return;
        }
        s->p[s->n] = (BpfdFilePrefix) { .self = self, .flags = flags, .path_len = (uint32_t) l };
        memcpy(s->p[s->n].path, cut, l);
        s->n++;
}

static void prefix_add_all(PrefixSet *s, const char *const *paths, uint8_t self) {
        for (; *paths; paths++)
                prefix_add(s, *paths, self, 0);
}

static bool property_on(const char *v) {
        return v && !streq(v, "no") && !streq(v, "false") && !streq(v, "0") && !streq(v, "");
}

/* The paths of a property like InaccessiblePaths=: words, each with optional leading "-" and
 * "+" and a ":options" tail. */
static void prefix_add_words(PrefixSet *s, const char *value, uint8_t self) {
        char word[PATH_MAX];

        for (const char *p = value; p && *p; ) {
                size_t n = strcspn(p, " \t");

                if (n > 0 && n < sizeof(word)) {
                        char *w = word, *colon;

                        memcpy(word, p, n);
                        word[n] = 0;
                        while (*w == '-' || *w == '+')
                                w++;
                        colon = strchr(w, ':');
                        if (colon)
                                *colon = 0;
                        prefix_add(s, w, self, 0);
                }
                p += n;
                p += strspn(p, " \t");
        }
}

static void prefix_add_properties(PrefixSet *s, const Plan *p) {
        static const char *const home_dirs[] = { "/home", "/root", "/run/user", NULL };
        static const char *const tmp_dirs[] = { "/tmp", "/var/tmp", NULL };
        static const char *const open_dirs[] = { "/dev", "/proc", "/sys", "/tmp", "/var/tmp", NULL };
        static const char *const full_dirs[] = { "/usr", "/boot", "/efi", "/etc", NULL };
        static const char *const yes_dirs[] = { "/usr", "/boot", "/efi", NULL };
        static const char *const tunables[] = { "/proc/sys", "/sys", "/proc/sysrq-trigger", NULL };
        static const char *const modules[] = { "/usr/lib/modules", "/lib/modules", NULL };
        static const char *const logs[] = { "/proc/kmsg", "/dev/kmsg", NULL };
        static const char *const words[] = { "InaccessiblePaths", "ReadOnlyPaths", "TemporaryFileSystem",
                                             "BindPaths", "BindReadOnlyPaths", "NoExecPaths", "ExecPaths",
                                             NULL };
        const uint8_t all = BPFD_FILE_ALL_ERRORS, write = BPFD_FILE_WRITE_ERRORS;

        for (size_t i = 0; i < p->n_properties; i++) {
                const char *name = p->properties[i].name, *v = p->properties[i].value;

                if (!name || !v)
                        continue;
                if (streq(name, "PrivateTmp") && property_on(v))
                        prefix_add_all(s, tmp_dirs, all);
                else if (streq(name, "PrivateDevices") && property_on(v))
                        prefix_add_all(s, (const char *const[]) { "/dev", NULL }, all);
                else if (streq(name, "ProtectHome") && property_on(v))
                        prefix_add_all(s, home_dirs, streq(v, "read-only") ? write : all);
                else if (streq(name, "ProtectSystem") && property_on(v)) {
                        if (streq(v, "strict")) {
                                prefix_add(s, "/", write, 0);
                                prefix_add_all(s, open_dirs, 0);
                        } else
                                prefix_add_all(s, streq(v, "full") ? full_dirs : yes_dirs, write);
                } else if (streq(name, "ProtectKernelTunables") && property_on(v))
                        prefix_add_all(s, tunables, write);
                else if (streq(name, "ProtectKernelModules") && property_on(v))
                        prefix_add_all(s, modules, all);
                else if (streq(name, "ProtectKernelLogs") && property_on(v))
                        prefix_add_all(s, logs, all);
                else if (streq(name, "ProtectControlGroups") && property_on(v))
                        prefix_add(s, "/sys/fs/cgroup", all, 0);
                else if ((streq(name, "ProtectProc") && !streq(v, "default")) ||
                         (streq(name, "ProcSubset") && streq(v, "pid")))
                        prefix_add(s, "/proc", all, 0);
                else if (streq(name, "RootDirectory") || streq(name, "RootImage") ||
                         streq(name, "MountImages") || streq(name, "ExtensionImages") ||
                         streq(name, "ExtensionDirectories"))
                        prefix_add(s, "/", all, 0);
                else
                        for (size_t w = 0; words[w]; w++)
                                if (streq(name, words[w]))
                                        prefix_add_words(s, v, all);
        }
}

static uint8_t entry_mask(PathAccess a, uint8_t *ret_flags) {
        *ret_flags = 0;
        switch (a) {
        case PATH_ACCESS_DENY:
        case PATH_ACCESS_HIDE:
                return BPFD_FILE_ALL_ERRORS;
        case PATH_ACCESS_READ:
                return BPFD_FILE_WRITE_ERRORS;
        default:
                /* only a .git below it can be refused (git_refusal) */
                *ret_flags = BPFD_FILE_PREFIX_GIT;
                return 0;
        }
}

static bool strictly_below(const BpfdFilePrefix *a, const BpfdFilePrefix *above) {
        if (a->path_len <= above->path_len || memcmp(a->path, above->path, above->path_len) != 0)
                return false;
        return above->path_len == 1 || a->path[above->path_len] == '/';
}

static uint8_t reach(const BpfdFilePrefix *p) {
        return p->self | p->below | (p->flags & BPFD_FILE_PREFIX_GIT ? BPFD_FILE_WRITE_ERRORS : 0);
}

int file_judge_prefixes(const Plan *plan, BpfdFilePrefixes **ret, size_t *ret_size) {
        _cleanup_free_ BpfdFilePrefix *all = NULL;
        PrefixSet s = {};
        BpfdFilePrefixes *m;
        const BpfdFilePrefix *cwd = NULL;
        size_t size;

        all = calloc(BPFD_FILE_PREFIXES_MAX, sizeof(BpfdFilePrefix));
        if (!all)
                return -ENOMEM;
        s.p = all;
        prefix_add(&s, "/", 0, 0);
        for (size_t i = 0; i < plan->n_paths + plan->n_dropped; i++) {
                const PlanPath *e = i < plan->n_paths ? &plan->paths[i] :
                                                        &plan->dropped[i - plan->n_paths].entry;
                uint8_t flags, self = entry_mask(e->access, &flags);

                prefix_add(&s, e->path, self, flags);
        }
        prefix_add_properties(&s, plan);
        if (s.overflow) {
                /* more than one message holds: every failed call is a candidate */
                s.n = 0;
                prefix_add(&s, "/", BPFD_FILE_ALL_ERRORS, 0);
        }
        for (size_t i = 0; i < s.n; i++)
                for (size_t j = 0; j < s.n; j++)
                        if (strictly_below(&s.p[j], &s.p[i]))
                                s.p[i].below |= s.p[j].self | (s.p[j].flags & BPFD_FILE_PREFIX_GIT ?
                                                                BPFD_FILE_WRITE_ERRORS : 0);
        if (s.overflow)
                s.p[0].below = BPFD_FILE_ALL_ERRORS;

        size = sizeof(BpfdFilePrefixes) + s.n * sizeof(BpfdFilePrefix);
        m = calloc(1, size);
        if (!m)
                return -ENOMEM;
        *m = (BpfdFilePrefixes) {
                .header = {
                        .magic = BPFD_MAGIC,
                        .version = BPFD_VERSION,
                        .type = BPFD_MSG_FILE_PREFIXES,
                        .size = (uint32_t) size,
                },
                .n = (uint32_t) s.n,
                .cwd_mask = BPFD_FILE_ALL_ERRORS,
        };
        memcpy(m + 1, s.p, s.n * sizeof(BpfdFilePrefix));
        /* a relative path from the start directory: what the deepest prefix at or above it and
         * every prefix below that can be */
        if (plan->working_directory && path_is_absolute(plan->working_directory)) {
                for (size_t i = 0; i < s.n; i++)
                        if ((s.p[i].path_len == 1 ||
                             path_startswith(plan->working_directory, s.p[i].path)) &&
                            (!cwd || s.p[i].path_len > cwd->path_len))
                                cwd = &s.p[i];
                if (cwd)
                        m->cwd_mask = reach(cwd);
        }
        *ret = m;
        *ret_size = size;
        return 0;
}
