/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's .git section (plan-harden.h): a .git in or below a writable directory
 * read-only, an empty one for the run where the command starts, one the command may commit
 * to split for git and for planting, a .git file kept, a .git symlink pinned. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/harden-internal.h"
#include "util/file-util.h"
#include "plan/plan-validate.h"
#include "util/path-util.h"
#include "util/strv.h"

/* The reasons, as explain shows them after "scudo". */
#define WHY_GIT "a .git at the top of a writable directory stays read-only: code planted in it would " \
        "run at the next git command outside; a profile that names it decides"
#define WHY_GIT_PLACEHOLDER "an empty .git for the run, read-only, where the command starts: no " \
        "repository can be planted there for git outside to run; a profile that names it decides"
#define WHY_GIT_CODE "git reads code to run, or where else to read from, out of it: read-only in a .git " \
        "the command may commit to; a profile that names it decides"
#define WHY_GIT_FILE "a .git file says where the git directory is (gitdir:): it stays as it is, so " \
        "that git cannot be pointed at another"
#define WHY_GIT_TOO_MANY "more git directories in it (submodules, worktrees) than one run watches: " \
        "read-only, so git cannot commit here"
#define WHY_GIT_NESTED "a repository below a writable directory stays read-only: code planted in its " \
        ".git would run at the next git command there, outside; a profile that names it decides"

/* ---- 2. .git ---------------------------------------------------------------------------- */

static bool is_empty_dir(const char *path) {
        _cleanup_close_ int fd = path_open_no_symlinks(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        return fd >= 0 && dir_fd_is_empty(fd);
}

/* Whether `dir` is a git directory: HEAD a file, objects and refs directories. */
static bool is_git_dir(const char *dir) {
        static const struct { const char *name; bool is_dir; } parts[] = {
                { "HEAD", false }, { "objects", true }, { "refs", true },
        };
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                _cleanup_free_ char *x = path_join(dir, parts[i].name);
                struct stat st;
                if (!x || lstat(x, &st) < 0 || S_ISDIR(st.st_mode) != parts[i].is_dir)
                        return false;
        }
        return true;
}

/* What git reads code to run, or other places to read from, out of a git directory: the
 * configuration (core.fsmonitor, core.hooksPath, core.sshCommand, diff.*.textconv, filter.*,
 * include.path, ...; config.worktree with extensions.worktreeConfig), the hooks, commondir
 * (where config and hooks are taken from instead), a linked worktree's gitdir (the checkout it
 * belongs to) and the alternates (other object stores). Where they exist they are bound
 * read-only; the runner refuses them made new (git/gitdir-watch.h). */
static const char * const git_code_files[] = {
        "config", "config.worktree", "hooks", "commondir", "gitdir",
        "objects/info/alternates", "objects/info/http-alternates",
};

/* Keeps what git reads code or places from in the git directory `top` read-only, and lists
 * `top` among the directories the runner watches. */
static int guard_git_top(Plan *p, const char *top) {
        for (size_t i = 0; i < ELEMENTSOF(git_code_files); i++) {
                _cleanup_free_ char *x = path_join(top, git_code_files[i]), *c = NULL;
                struct stat st;
                if (!x)
                        return -ENOMEM;
                if (lstat(x, &st) < 0)
                        continue;               /* made new, it is refused as it is made */
                /* a symlink (hooks -> ../.githooks): what it leads to, which is what git reads */
                if (plan_path_canonicalize(x, &c) < 0 || plan_names_path(p, c))
                        continue;
                int r = harden_add_entry(p, PATH_ACCESS_READ, c, WHY_GIT_CODE, PATH_CREATE_NONE,
                                         PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        return strv_extend(&p->git_watch, top);
}

/* The git directories below `dir` (a .git's modules/ or worktrees/), at most `depth` levels
 * down: a submodule's name may hold slashes. Each is guarded; the counting stops at
 * PLAN_GIT_WATCH_MAX (-E2BIG). */
static int guard_nested_git_dirs(Plan *p, const char *dir, unsigned depth, bool worktrees) {
        _cleanup_close_ int fd = path_open_no_symlinks(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0)
                return fd == -ENOENT || fd == -ENOTDIR ? 0 : fd;
        DIR *d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        int r = 0;
        struct dirent *e;
        while (r >= 0 && (e = readdir(d))) {
                if (e->d_type != DT_DIR || streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                _cleanup_free_ char *sub = path_join(dir, e->d_name);
                if (!sub) {
                        r = -ENOMEM;
                        break;
                }
                if (strv_length(p->git_watch) >= PLAN_GIT_WATCH_MAX)
                        r = -E2BIG;
                else if (worktrees || is_git_dir(sub))
                        /* a linked worktree's directory: HEAD, commondir, gitdir, no objects */
                        r = guard_git_top(p, sub);
                else if (depth > 1)
                        r = guard_nested_git_dirs(p, sub, depth - 1, false);
        }
        (void) closedir(d);
        return r;
}

/* A .git the command may commit to (a profile's write entry for a git directory): git writes
 * it as it works, so it stays writable, but what git reads code or other places from is
 * read-only in it and in the git directories of its submodules and linked worktrees, and the
 * runner stops the run when a name git does not make appears (git/gitdir-watch.h). More git
 * directories than one run watches, and the .git is read-only. */
static int guard_writable_git_dir(Plan *p, size_t i) {
        size_t n_paths = p->n_paths, n_watch = strv_length(p->git_watch);
        _cleanup_free_ char *top = strdup(p->paths[i].path);
        _cleanup_free_ char *modules = NULL, *worktrees = NULL;

        if (!top)
                return -ENOMEM;
        modules = path_join(top, "modules");
        worktrees = path_join(top, "worktrees");
        if (!modules || !worktrees)
                return -ENOMEM;
        int r = guard_git_top(p, top);
        if (r >= 0)
                r = guard_nested_git_dirs(p, modules, 4, false);
        if (r >= 0)
                r = guard_nested_git_dirs(p, worktrees, 1, true);
        if (r != -E2BIG)
                return r;
        /* Undone: the entries added, the directories listed; the .git read-only instead. */
        while (p->n_paths > n_paths)
                plan_path_done(&p->paths[--p->n_paths]);
        if (p->git_watch) {
                for (size_t k = n_watch; p->git_watch[k]; k++)
                        free(p->git_watch[k]);
                p->git_watch[n_watch] = NULL;
        }
        return harden_force_entry(p, PATH_ACCESS_READ, top, WHY_GIT_TOO_MANY, PATH_SOURCE_SELF);
}

/* A .git file (a linked worktree's or a submodule's checkout: "gitdir: ...") that a profile
 * made writable: read-only, or the command could point git outside at a git directory of its
 * own making. */
static int keep_git_file(Plan *p, size_t i) {
        _cleanup_free_ char *path = strdup(p->paths[i].path);
        if (!path)
                return -ENOMEM;
        return harden_force_entry(p, PATH_ACCESS_READ, path, WHY_GIT_FILE, PATH_SOURCE_SELF);
}

/* A .git that is a symlink, in a directory the command may write: no mount can keep the link
 * itself, so the runner puts it back if it goes (Plan.git_pins); and what it leads to, when the
 * command may write that, is read-only like any other .git. */
static int pin_git_symlink(Plan *p, const char *git) {
        _cleanup_free_ char *target = NULL;
        if (strv_contains(p->git_pins, git))
                return 0;
        int r = strv_extend(&p->git_pins, git);
        if (r < 0)
                return r;
        if (plan_path_canonicalize(git, &target) < 0 || plan_names_path(p, target) ||
            !harden_writable_from_above(p, target))
                return 0;
        return harden_add_entry(p, PATH_ACCESS_READ, target, WHY_GIT, PATH_CREATE_NONE, PATH_SOURCE_SELF);
}

/* dir/.git, for a directory `dir` the command may write: read-only where there is one, and
 * where the command starts (`start`) an empty one for the run where there is none. */
static int protect_git_at(Plan *p, const char *dir, bool start, size_t *placeholders) {
        _cleanup_free_ char *git = path_join(dir, ".git");
        struct stat st;

        if (!git)
                return -ENOMEM;
        if (plan_names_path(p, git))
                return 0;
        int r = path_stat_no_symlinks(git, &st);
        if (r < 0 && r != -EACCES && r != -ELOOP)
                return r;
        /* A symlink on the way (the directory changed since it was checked): the guard
         * refuses the run when it makes the placeholder. */
        struct stat lst;
        if (r == -ELOOP && lstat(git, &lst) >= 0 && S_ISLNK(lst.st_mode))
                return pin_git_symlink(p, git);
        bool missing = r == 0 || r == -ELOOP;
        bool found = r > 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
        if (start && *placeholders < PLAN_GIT_PLACEHOLDERS_MAX &&
            (missing || (found && S_ISDIR(st.st_mode) && is_empty_dir(git)))) {
                (*placeholders)++;
                return harden_add_entry(p, PATH_ACCESS_READ, git, WHY_GIT_PLACEHOLDER,
                                        PATH_CREATE_PLACEHOLDER, PATH_SOURCE_SELF);
        }
        if (found)
                return harden_add_entry(p, PATH_ACCESS_READ, git, WHY_GIT, PATH_CREATE_NONE,
                                        PATH_SOURCE_SELF);
        return 0;
}

/* How far below a writable directory repositories are looked for (~/src/foo/.git,
 * third_party/lib/.git), and how many directories one run reads at most doing so. */
#define NESTED_GIT_DEPTH 3
#define NESTED_GIT_DIRS_MAX 1024U

/* The .git directories and files below `dir` (a writable directory, or one below it), read-only,
 * `depth` levels down; *budget directories read at most, then no more are. Symlinks are not
 * followed, and nothing below a .git is looked at. */
static int protect_nested_git(Plan *p, const char *dir, unsigned depth, unsigned *budget) {
        if (*budget == 0)
                return 0;
        (*budget)--;
        _cleanup_close_ int fd = path_open_no_symlinks(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0)
                return 0;       /* unreadable or gone: nothing to bind either */
        DIR *d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        _cleanup_strv_free_ char **subdirs = NULL;
        int r = 0;
        struct dirent *e;
        while (r >= 0 && (e = readdir(d))) {
                if (e->d_type != DT_DIR || streq(e->d_name, ".") || streq(e->d_name, "..") ||
                    streq(e->d_name, ".git"))
                        continue;
                r = strv_extend(&subdirs, e->d_name);
        }
        (void) closedir(d);
        STRV_FOREACH(n, subdirs) {
                if (r < 0)
                        break;
                _cleanup_free_ char *sub = path_join(dir, *n), *git = NULL;
                struct stat st;
                if (!sub || !(git = path_join(sub, ".git")))
                        return -ENOMEM;
                bool ours = lstat(git, &st) >= 0 && !plan_names_path(p, git) &&
                            harden_writable_from_above(p, git);
                if (ours && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
                        r = harden_add_entry(p, PATH_ACCESS_READ, git, WHY_GIT_NESTED, PATH_CREATE_NONE,
                                             PATH_SOURCE_SELF);
                else if (ours && S_ISLNK(st.st_mode))
                        r = pin_git_symlink(p, git);
                if (r >= 0 && depth > 1)
                        r = protect_nested_git(p, sub, depth - 1, budget);
        }
        return r;
}

/* A .git at the top of a writable directory is bound read-only onto itself: code planted in it
 * (a hook, a config, a `commondir` pointing git at another config) would run at the next git
 * command, outside any sandbox; and a mount point cannot be renamed away and replaced. Where
 * the command starts (the writable directories that hold the working directory) and there is
 * none, or only an empty one (another run's placeholder), the runner makes an empty one for
 * the run (git/git-guard.h), bound the same way: an empty .git is no repository to git. A
 * plan that names the .git itself decides: a write entry for a git directory makes it one the
 * command may commit to (guard_writable_git_dir). A symlink is left alone: binding onto it
 * would bind whatever it points at. */
int harden_git_dirs(Plan *p) {
        size_t n = p->n_paths, placeholders = 0;
        unsigned budget = NESTED_GIT_DIRS_MAX;

        /* The git directories and .git files the profiles made writable themselves. Entries may
         * be added and dropped on the way: the same index is looked at again after a drop. */
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                struct stat st;
                if (e->access != PATH_ACCESS_WRITE || e->reason)
                        continue;
                const char *base = strrchr(e->path, '/');
                bool named_git = base && streq(base + 1, ".git");
                int r = 0;
                if (is_git_dir(e->path))
                        r = guard_writable_git_dir(p, i);
                else if (named_git && lstat(e->path, &st) >= 0 && S_ISREG(st.st_mode))
                        r = keep_git_file(p, i);
                if (r < 0)
                        return r;
                if (i < p->n_paths && p->paths[i].access != PATH_ACCESS_WRITE)
                        i--;    /* dropped for a read-only entry at the end: the next is at i now */
        }
        n = p->n_paths;

        for (size_t i = 0; i < n; i++) {
                if (p->paths[i].access != PATH_ACCESS_WRITE)
                        continue;
                const char *w = p->paths[i].path;
                int k = is_git_dir(w) ? 0 : protect_nested_git(p, w, NESTED_GIT_DEPTH, &budget);
                if (k < 0)
                        return k;
                w = p->paths[i].path;   /* the entries may have moved */
                if (!p->working_directory || !path_startswith(p->working_directory, w)) {
                        int r = protect_git_at(p, w, false, &placeholders);
                        if (r < 0)
                                return r;
                        continue;
                }
                /* Where the command starts: each directory from there up to the writable one,
                 * since git outside, run there, looks at each on its way up. */
                _cleanup_free_ char *d = strdup(p->working_directory);
                if (!d)
                        return -ENOMEM;
                for (;;) {
                        if (streq(d, w) || harden_writable_from_above(p, d)) {
                                int r = protect_git_at(p, d, true, &placeholders);
                                if (r < 0)
                                        return r;
                        }
                        if (streq(d, w) || streq(d, "/"))
                                break;
                        char *slash = strrchr(d, '/');
                        if (slash == d)
                                slash[1] = 0;
                        else
                                *slash = 0;
                }
        }
        return 0;
}
