/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "git/git-config-keys.h"
#include "git/persist-check.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"
#include "util/text-escape.h"

/* Names and targets in the reports are the command's choice: escaped, so that a name holding a
 * newline cannot start a line that reads as scudo's (util/text-escape.h). */
typedef struct Shown {
        char text[PATH_MAX];
} Shown;

static const char *shown(Shown *b, const char *s) {
        (void) text_escape(s, b->text, sizeof(b->text));
        return b->text;
}

/* git stops at this depth of included configuration files ("exceeded maximum include depth"):
 * what lies deeper is never read. */
#define GIT_INCLUDE_DEPTH 10
#define GIT_CONFIG_MAX (4U * 1024 * 1024)

typedef struct Check {
        const Plan *plan;
        struct timespec since;
        char **dirs;            /* the walk's directories still to look at: a stack */
        size_t n_dirs, n_alloc;
        unsigned count;
        const ino_t *written;   /* sorted; NULL: every directory is looked at */
        size_t n_written;
        unsigned visited;
} Check;

static int cmp_ino(const void *a, const void *b) {
        ino_t x = *(const ino_t *) a, y = *(const ino_t *) b;
        return x < y ? -1 : x > y;
}

/* Whether the directory with inode `ino` is to be looked at: always, without a record; with one,
 * when the command wrote in it or below it. Inode numbers alone (not the device) make a set
 * larger than the record, never smaller. */
static bool wanted(const Check *c, ino_t ino) {
        return !c->written || bsearch(&ino, c->written, c->n_written, sizeof(ino_t), cmp_ino);
}

static int push_dir(Check *c, char *path) {
        if (c->n_dirs == c->n_alloc) {
                size_t n = c->n_alloc ? 2 * c->n_alloc : 64;
                char **d = reallocarray(c->dirs, n, sizeof(char *));
                if (!d)
                        return -ENOMEM;
                c->dirs = d;
                c->n_alloc = n;
        }
        c->dirs[c->n_dirs++] = path;
        return 0;
}

static bool is_new(const Check *c, const struct stat *st) {
        return st->st_ctim.tv_sec > c->since.tv_sec ||
               (st->st_ctim.tv_sec == c->since.tv_sec && st->st_ctim.tv_nsec >= c->since.tv_nsec);
}

/* The plan's entry that decides for `path`: the longest at or above it. */
static const PlanPath *entry_for(const Plan *plan, const char *path) {
        const PlanPath *best = NULL;
        size_t best_len = 0;
        for (size_t i = 0; i < plan->n_paths; i++) {
                const PlanPath *p = &plan->paths[i];
                size_t n = strlen(p->path);
                if (path_startswith(path, p->path) && (!best || n > best_len)) {
                        best = p;
                        best_len = n;
                }
        }
        return best;
}

static bool is_writable_place(const PlanPath *p) {
        return p && p->access == PATH_ACCESS_WRITE && p->source == PATH_SOURCE_SELF;
}

static bool inside_writable(const Check *c, const char *path) {
        return is_writable_place(entry_for(c->plan, path));
}

static bool is_plan_entry(const Check *c, const char *path) {
        for (size_t i = 0; i < c->plan->n_paths; i++)
                if (streq(c->plan->paths[i].path, path))
                        return true;
        return false;
}

/* What `abs` leads to when followed: realpath(), or for a path whose end is missing, the
 * canonical form of its longest existing beginning with the rest (made clean) after it. NULL
 * when it cannot be followed at all (a loop, a directory that cannot be searched). */
static char *leads_to(const char *abs) {
        char buf[PATH_MAX];
        if (realpath(abs, buf))
                return strdup(buf);
        if (errno != ENOENT && errno != ENOTDIR)
                return NULL;
        _cleanup_free_ char *head = strdup(abs);
        if (!head)
                return NULL;
        for (;;) {
                char *slash = strrchr(head, '/');
                if (!slash)
                        return NULL;
                const char *rest = abs + (slash - head) + 1;
                if (slash == head)
                        head[1] = 0;
                else
                        *slash = 0;
                if (realpath(head, buf)) {
                        _cleanup_free_ char *joined = path_join(buf, rest);
                        char *clean = NULL;
                        if (!joined || path_normalize(joined, &clean) < 0)
                                return NULL;
                        return clean;
                }
                if ((errno != ENOENT && errno != ENOTDIR) || streq(head, "/"))
                        return NULL;
        }
}

/* Moves dir/name aside to name.scudo-inert (or .scudo-inert.N), never over anything. */
static int move_aside(int dfd, const char *name, char **ret_name) {
        for (unsigned i = 0; i < 100; i++) {
                char to[NAME_MAX + 1];
                int n = i == 0 ? snprintf(to, sizeof(to), "%s.scudo-inert", name)
                               : snprintf(to, sizeof(to), "%s.scudo-inert.%u", name, i);
                if (n < 0 || (size_t) n >= sizeof(to))
                        return -ENAMETOOLONG;
                if (renameat2(dfd, name, dfd, to, RENAME_NOREPLACE) >= 0) {
                        if (ret_name)
                                *ret_name = strdup(to);
                        return 0;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Whether `path` (canonical) is another user's that this one cannot write, nor make where it is
 * missing: the system's programs and libraries (a venv's bin/python -> /usr/bin/python3).
 * Following a symlink to it gives a program outside nothing it could not do without it. */
static bool nothing_to_write(const char *path) {
        _cleanup_free_ char *p = strdup(path);
        struct stat st;
        if (!p)
                return false;
        for (;;) {
                if (lstat(p, &st) >= 0)
                        return st.st_uid != geteuid() && faccessat(AT_FDCWD, p, W_OK, AT_EACCESS) < 0;
                if (errno != ENOENT)
                        return false;
                char *slash = strrchr(p, '/');
                if (!slash || slash == p)
                        return false;
                *slash = 0;     /* missing: what would be made in its parent */
        }
}

/* Whether following `target` from the directory `dir` goes through /proc: /proc/self/cwd,
 * /dev/fd/N and the like lead wherever the process following them is, so where they lead when
 * checked here says nothing of where they lead a program outside later. */
static bool through_proc(const char *dir, const char *target) {
        char buf[PATH_MAX];
        _cleanup_free_ char *walked = strdup(target[0] == '/' ? "/" : dir);
        _cleanup_free_ char *rest = strdup(target);
        char *save = NULL;
        if (!walked || !rest)
                return true;    /* cannot tell: refused */
        for (char *name = strtok_r(rest, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
                _cleanup_free_ char *next = path_join(walked, name);
                if (!next)
                        return true;
                if (!realpath(next, buf))
                        return false;   /* missing: the kernel stops there too */
                if (path_startswith(buf, "/proc"))
                        return true;
                free(walked);
                walked = strdup(buf);
                if (!walked)
                        return true;
        }
        return false;
}

static void judge_symlink(Check *c, int dfd, const char *dir, const char *name) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
        if (n < 0)
                return;
        target[n] = 0;
        _cleanup_free_ char *link = path_join(dir, name);
        if (!link || strv_contains(c->plan->git_pins, link))
                return;         /* a .git symlink of the user's, put back as it was (gitdir-watch.h) */
        _cleanup_free_ char *abs = target[0] == '/' ? strdup(target) : path_join(dir, target);
        if (!abs)
                return;
        _cleanup_free_ char *to = leads_to(abs);
        bool proc = through_proc(dir, target);
        if (to && !proc && (inside_writable(c, to) || nothing_to_write(to)))
                return;
        Shown a, b;
        if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
                log_error("%s, a symlink the command made, leads to %s, outside what it may write, and "
                          "could not be removed (%m): remove it before a program follows it",
                          shown(&a, link), shown(&b, target));
                return;
        }
        c->count++;
        if (proc)
                log_warning("%s, a symlink the command made, led to %s, through /proc: removed (it leads "
                            "wherever the program following it later is)", shown(&a, link),
                            shown(&b, target));
        else
                log_warning("%s, a symlink the command made, led to %s, outside what it may write: "
                            "removed (a program following it later would read or write there)",
                            shown(&a, link), shown(&b, to ?: target));
}

/* A ".git" file the command made, or a ".git" symlink to a file (git reads that file the same
 * way; the symlink, judged first, led inside): it stays when it leads into the writable places,
 * where the git directory it names is judged like any other. */
static void judge_gitfile(Check *c, int dfd, const char *dir) {
        _cleanup_free_ char *git = path_join(dir, ".git");
        if (!git || strv_contains(c->plan->git_pins, git))
                return;         /* the user's .git symlink, put back by the watch */
        _cleanup_close_ int fd = openat(dfd, ".git", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        size_t size;
        if (fd < 0 || read_regular_fd(fd, PATH_MAX + 16, &text, &size) < 0 || !text)
                return;
        const char *v = startswith(text, "gitdir:");
        if (!v)
                return;         /* git refuses it: not a repository */
        v += strspn(v, " \t");
        _cleanup_free_ char *target = strndup(v, strcspn(v, "\r\n"));
        _cleanup_free_ char *abs = !target ? NULL :
                                   target[0] == '/' ? strdup(target) : path_join(dir, target);
        _cleanup_free_ char *to = abs ? leads_to(abs) : NULL;
        if (to && inside_writable(c, to))
                return;
        Shown a, b;
        int r = move_aside(dfd, ".git", NULL);
        if (r < 0) {
                log_error("%s, a \"gitdir:\" file the command made, leads to %s, outside what it may write, "
                          "and could not be moved aside (%s): remove it before running git there",
                          shown(&a, git ?: ".git"), shown(&b, target ?: "?"), strerror(-r));
                return;
        }
        c->count++;
        log_warning("%s, a \"gitdir:\" file the command made, led to %s, outside what it may write: moved "
                    "aside to .git.scudo-inert (git run there would take that repository)",
                    shown(&a, git ?: ".git"), shown(&b, target ?: "?"));
}

typedef struct GitJudge {
        bool changed;           /* a code-bearing part changed during the run */
        bool benign;            /* nothing in it git would run or follow elsewhere */
        const char *what;       /* the first part found changed */
} GitJudge;

static void judge_config_file(Check *c, const char *path, unsigned depth, GitJudge *j);

typedef struct IncludeContext {
        Check *c;
        const char *path;
        unsigned depth;
        GitJudge *j;
} IncludeContext;

/* The include at `value` of the configuration file `path`, as git finds it. */
static void judge_include(Check *c, const char *path, const char *value, unsigned depth, GitJudge *j) {
        _cleanup_free_ char *v = strdup(value);
        if (!v)
                return;
        size_t n = strlen(v);
        while (n > 0 && isspace((unsigned char) v[n - 1]))
                v[--n] = 0;
        if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                v[n - 1] = 0;
                memmove(v, v + 1, n - 1);
        }
        _cleanup_free_ char *dir = strdup(path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (!slash)
                return;
        *slash = 0;
        const char *home = getenv("HOME");
        _cleanup_free_ char *abs = NULL;
        if (startswith(v, "~/") && home)
                abs = path_join(home, v + 2);
        else if (v[0] == '/')
                abs = strdup(v);
        else
                abs = path_join(dir[0] ? dir : "/", v);
        if (abs)
                judge_config_file(c, abs, depth + 1, j);
}

static void on_include(const char *value, void *userdata) {
        IncludeContext *ic = userdata;
        judge_include(ic->c, ic->path, value, ic->depth, ic->j);
}

/* A configuration file of a git directory (or one it includes): whether it changed in the run
 * and whether it sets only benign keys; what it includes, likewise. */
static void judge_config_file(Check *c, const char *path, unsigned depth, GitJudge *j) {
        struct stat st, lst;
        if (depth > GIT_INCLUDE_DEPTH || stat(path, &st) < 0)
                return;
        /* the file, or a symlink to it made in the run (to a file of the project's, say) */
        if ((is_new(c, &st) || (lstat(path, &lst) >= 0 && is_new(c, &lst))) && !j->changed) {
                j->changed = true;
                j->what = depth == 0 ? "configuration" : "included configuration";
        }
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        _cleanup_free_ char *text = NULL;
        size_t size;
        if (fd < 0 || read_regular_fd(fd, GIT_CONFIG_MAX, &text, &size) < 0 || !text) {
                j->benign = false;      /* what git would make of it cannot be told */
                return;
        }
        IncludeContext ic = { .c = c, .path = path, .depth = depth, .j = j };
        if (!git_config_keys_benign(text, on_include, &ic))
                j->benign = false;
}

/* hooks/ of a git directory: changed in the run, and holding anything but git's samples. */
static void judge_hooks(Check *c, int gfd, GitJudge *j) {
        struct stat st;
        if (fstatat(gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return;
        if (is_new(c, &st) && !j->changed) {
                j->changed = true;
                j->what = "hooks";
        }
        if (!S_ISDIR(st.st_mode)) {
                j->benign = false;
                return;
        }
        _cleanup_close_ int fd = openat(gfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                j->benign = false;
                return;
        }
        fd = -EBADF;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                size_t n = strlen(e->d_name);
                bool sample = n > 7 && streq(e->d_name + n - 7, ".sample");
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
                    !sample)
                        j->benign = false;
                else if (is_new(c, &st) && !j->changed) {
                        j->changed = true;
                        j->what = "hooks";
                }
        }
        (void) closedir(d);
}

/* The code-bearing parts of the git directory open at gfd (at path). */
static void judge_gitdir_parts(Check *c, int gfd, const char *path, GitJudge *j) {
        static const char * const configs[] = { "config", "config.worktree" };
        struct stat st;
        for (size_t i = 0; i < ELEMENTSOF(configs); i++) {
                _cleanup_free_ char *p = path_join(path, configs[i]);
                if (p)
                        judge_config_file(c, p, 0, j);
        }
        judge_hooks(c, gfd, j);
        if (fstatat(gfd, "commondir", &st, 0) >= 0) {
                if (is_new(c, &st) && !j->changed) {
                        j->changed = true;
                        j->what = "commondir";
                }
                j->benign = false;      /* it takes its configuration from another directory */
        }
}

static void judge_gitdir(Check *c, int gfd, const char *path) {
        GitJudge j = { .benign = true };
        judge_gitdir_parts(c, gfd, path, &j);
        if (!j.changed || j.benign)
                return;
        _cleanup_free_ char *head = NULL;
        Shown a;
        int r = move_aside(gfd, "HEAD", &head);
        if (r < 0) {
                log_error("%s is a git repository whose %s the command changed, and git run there outside "
                          "would run or follow what it says; it could not be made inert (%s): look at it "
                          "before running git there", shown(&a, path), j.what, strerror(-r));
                return;
        }
        (void) move_aside(gfd, "config", NULL);
        c->count++;
        log_warning("%s is a git repository whose %s the command made or changed: git run there outside "
                    "would run or follow what it says; made inert (HEAD and config moved aside to "
                    "*.scudo-inert): look at its config and hooks before moving them back", shown(&a, path),
                    j.what);
}

/* A directory of the user's the command took the read permission from (git outside can still go
 * through it, with x alone): given back its owner's read and search, and opened. */
static int open_unreadable(const char *path) {
        _cleanup_close_ int pfd = path_open_no_symlinks(path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        struct stat st;
        char proc[64];
        if (pfd < 0)
                return pfd;
        if (fstat(pfd, &st) < 0 || st.st_uid != geteuid())
                return -EACCES;
        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
        if (chmod(proc, (st.st_mode & 07777) | S_IRUSR | S_IXUSR) < 0)
                return -errno;
        return path_open_no_symlinks(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
}

/* One entry of the directory open at fd (at path): a subdirectory is pushed to be looked at, a
 * symlink made in the run added to *links. 1 for a ".git" file made in the run. */
static int look_at_entry(Check *c, int fd, const char *path, const char *n, unsigned char type,
                         char ***links) {
        struct stat st;
        ino_t ino = 0;
        if (streq(n, ".") || streq(n, ".."))
                return 0;
        if (type == DT_UNKNOWN) {
                if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return 0;
                type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK :
                       S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
                ino = st.st_ino;
        }
        if (type == DT_DIR) {
                /* the entry's d_ino is no inode number on overlayfs: what stat() says is (and is
                 * what the kernel's dentry has) */
                if (c->written && ino == 0 && fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        ino = st.st_ino;
                if (!wanted(c, ino))
                        return 0;       /* nothing written in it or below it */
                char *sub = path_join(path, n);
                if (!sub)
                        return -ENOMEM;
                if (is_plan_entry(c, sub) || push_dir(c, sub) < 0) {   /* its own entry decides for it */
                        bool oom = !is_plan_entry(c, sub);
                        free(sub);
                        return oom ? -ENOMEM : 0;
                }
                return 0;
        }
        if (type == DT_LNK) {
                if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0 || !is_new(c, &st))
                        return 0;
                int r = strv_extend(links, n);
                return r < 0 ? r : streq(n, ".git") ? 1 : 0;
        }
        if (type == DT_REG && streq(n, ".git"))
                return fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) >= 0 && is_new(c, &st) ? 1 : 0;
        return 0;
}

/* Looks at the directory `path`: its new symlinks and ".git" files, whether it is a git
 * directory, and its subdirectories (pushed onto c->dirs). */
static int visit(Check *c, const char *path) {
        _cleanup_close_ int fd = path_open_no_symlinks(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd == -EACCES)
                fd = open_unreadable(path);
        if (fd < 0)
                return fd == -ENOMEM ? fd : 0;  /* gone, or not a directory (a file entry) */
        c->visited++;
        _cleanup_strv_free_ char **links = NULL;
        bool head = false, objects = false, refs = false, commondir = false, gitfile = false;
        /* getdents64() itself: two system calls for most directories, where readdir() on a
         * dup of the fd takes five */
        union {
                struct dirent64 align;
                char buf[32 * 1024];
        } u;
        int r = 0;
        for (;;) {
                ssize_t got = syscall(SYS_getdents64, fd, u.buf, sizeof(u.buf));
                if (got < 0)
                        return -errno;
                if (got == 0)
                        break;
                for (ssize_t off = 0; r >= 0 && off < got;) {
                        const struct dirent64 *e = (const struct dirent64 *) (u.buf + off);
                        off += e->d_reclen;
                        r = look_at_entry(c, fd, path, e->d_name, e->d_type, &links);
                        head = head || streq(e->d_name, "HEAD");
                        objects = objects || streq(e->d_name, "objects");
                        refs = refs || streq(e->d_name, "refs");
                        commondir = commondir || streq(e->d_name, "commondir");
                        if (r > 0)
                                gitfile = true;
                }
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        STRV_FOREACH(l, links)
                judge_symlink(c, fd, path, *l);
        if (gitfile)
                judge_gitfile(c, fd, path);
        /* git's is_git_directory(): HEAD, with objects/ and refs/ here or in commondir's */
        if (head && (commondir || (objects && refs)))
                judge_gitdir(c, fd, path);
        return 0;
}

static int check(Check *c) {
        int r = 0;

        for (size_t i = 0; i < c->plan->n_paths && r >= 0; i++)
                if (is_writable_place(&c->plan->paths[i])) {
                        struct stat st;
                        if (c->written && (stat(c->plan->paths[i].path, &st) < 0 || !wanted(c, st.st_ino)))
                                continue;       /* gone, or nothing written in or below it */
                        char *p = strdup(c->plan->paths[i].path);
                        r = p ? push_dir(c, p) : -ENOMEM;
                        if (r < 0)
                                free(p);
                }
        /* depth first, without recursion: no depth is too deep to look at */
        while (r >= 0 && c->n_dirs > 0) {
                _cleanup_free_ char *dir = c->dirs[--c->n_dirs];
                r = visit(c, dir);
        }
        while (c->n_dirs > 0)
                free(c->dirs[--c->n_dirs]);
        free(c->dirs);
        log_debug("What stays behind: looked at %u directories, %s", c->visited,
                  c->written ? "where scudo-bpfd recorded a write" : "every one of the writable places");
        if (r < 0)
                return log_error_errno(r, "Cannot look at what the command left in the places it may "
                                       "write: %m");
        return (int) c->count;
}

int persist_check(const Plan *plan, const struct timespec *since) {
        Check c = { .plan = plan, .since = *since };
        return check(&c);
}

int persist_check_written(const Plan *plan, const struct timespec *since, const ino_t *written, size_t n) {
        _cleanup_free_ ino_t *sorted = malloc(MAX(n, (size_t) 1) * sizeof(ino_t));
        if (!sorted)
                return persist_check(plan, since);
        if (n > 0)
                memcpy(sorted, written, n * sizeof(ino_t));
        qsort(sorted, n, sizeof(ino_t), cmp_ino);
        Check c = { .plan = plan, .since = *since, .written = sorted, .n_written = n };
        return check(&c);
}
