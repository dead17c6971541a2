/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's section on git's configuration (plan-harden.h, 2b): the one walk of the
 * files git reads as its configuration, from the home's, from every repository below the
 * project at any depth (git-dir-find.h: vendored, bare, a checkout's .git file) and from each
 * .git at the top of another directory the sandbox shows. Every file they include is kept
 * read-only where the command could write it; every file shown that holds credentials, where
 * the profiles do not make it writable themselves, is shown as a copy less them
 * (PATH_SOURCE_GIT_CONFIG_COPY), which the runner makes when the run starts
 * (git/git-config-copies.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/git-config-walk.h"
#include "plan/git-dir-find.h"
#include "plan/harden-internal.h"
#include "util/file-util.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

/* How deep submodules' git directories are looked for below .git/modules (a submodule's name
 * may hold slashes, and a submodule has submodules of its own below its modules/), and how
 * many configuration files of them, at most, one run looks at. */
#define MODULES_DEPTH 6
#define MAX_NESTED_CONFIGS 256

#define WHY_CREDENTIALS "git's configuration, which holds credentials: the command sees a copy without " \
        "them, made when the run starts"

/* An include, wherever it is (an [includeIf "gitdir:~/work/"] path = ~/work/.gitconfig-work,
 * made from a run started in ~/work, would set core.fsmonitor for every git command there). */
static int keep_git_include(const char *path, void *userdata) {
        return harden_keep_runs_later(userdata, path, true, false);
}

/* Puts a and b at start[*n] and the slot after, or frees both: a NULL among them would end
 * the list early, and what came after it would not be freed. */
static int add_pair(char **start, size_t *n, char *a, char *b) {
        if (!a || !b) {
                free(a);
                free(b);
                return -ENOMEM;
        }
        start[(*n)++] = a;
        start[(*n)++] = b;
        return 0;
}

/* Whether `path` (canonical), holding credentials, is shown as a copy: where the command sees
 * it read-only (by its entry or the closest one above, or by none: ProtectSystem=strict), and
 * where it could write it only because a directory further up is writable (a repository
 * vendored deep in a project, whose .git no other entry keeps read-only): writing would not
 * take the credentials out, reading would show them. A file the profiles make writable
 * themselves, or whose directory they do (a .git the plan grants, a home written), is theirs
 * to decide: as it is. A hidden one stays hidden. */
static bool to_copy(const Plan *p, const char *path) {
        const PlanPath *g = harden_governing_entry(p, path);
        if (!g || g->access == PATH_ACCESS_READ)
                return true;
        if (g->access != PATH_ACCESS_WRITE)
                return false;
        const char *rest = path_startswith(path, g->path);
        return rest && *rest && strchr(rest, '/');
}

/* `path` shown as a copy less its credentials: scudo's own read-only entry for it says so, a
 * profile's is replaced by scudo's (explain shows both). */
static int show_as_copy(Plan *p, const char *path) {
        for (size_t i = 0; i < p->n_paths; i++) {
                PlanPath *e = &p->paths[i];
                if (!streq(e->path, path))
                        continue;
                if (!e->reason || e->source != PATH_SOURCE_SELF)
                        break;
                char *why = NULL;
                if (asprintf(&why, "%s; " WHY_CREDENTIALS, e->reason) < 0)
                        return -ENOMEM;
                free(e->reason);
                e->reason = why;
                e->source = PATH_SOURCE_GIT_CONFIG_COPY;
                return 0;
        }
        return harden_force_entry(p, PATH_ACCESS_READ, path, WHY_CREDENTIALS, PATH_SOURCE_GIT_CONFIG_COPY);
}

static int visit_config(const char *canonical, const GitConfigFiltered *f, void *userdata) {
        Plan *p = userdata;
        if (f->removed == 0 || !to_copy(p, canonical))
                return 0;
        return show_as_copy(p, canonical);
}

/* The configuration files of the git directories below `dir` (a .git's modules/ or
 * worktrees/, or a submodule's modules/), `depth` levels down at most, added to *list: each
 * one's config and config.worktree (git reads a submodule's and a linked worktree's own). */
static int add_nested_configs(char ***list, const char *dir, unsigned depth) {
        _cleanup_close_ int fd = path_open_no_symlinks(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0)
                return fd == -ENOMEM ? fd : 0;
        DIR *d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        int r = 0;
        struct dirent *e;
        while (r >= 0 && strv_length(*list) < MAX_NESTED_CONFIGS && (e = readdir(d))) {
                if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) || streq(e->d_name, ".") ||
                    streq(e->d_name, ".."))
                        continue;
                _cleanup_free_ char *sub = path_join(dir, e->d_name);
                _cleanup_free_ char *head = sub ? path_join(sub, "HEAD") : NULL;
                if (!head) {
                        r = -ENOMEM;
                        break;
                }
                struct stat st;
                if (path_stat_no_symlinks(head, &st) > 0) {
                        /* a git directory: its files, and its own submodules */
                        char *files[] = { path_join(sub, "config"), path_join(sub, "config.worktree") };
                        _cleanup_free_ char *modules = path_join(sub, "modules");
                        r = strv_push_all(list, files, ELEMENTSOF(files));
                        if (r >= 0 && depth > 1)
                                r = modules ? add_nested_configs(list, modules, depth - 1) : -ENOMEM;
                } else if (depth > 1)
                        r = add_nested_configs(list, sub, depth - 1);
        }
        (void) closedir(d);
        return r;
}

/* The configuration files of the submodules and linked worktrees of the git directory `git`. */
static int add_git_dir_nested(char ***list, const char *git) {
        _cleanup_free_ char *modules = path_join(git, "modules"), *worktrees = path_join(git, "worktrees");
        if (!modules || !worktrees)
                return -ENOMEM;
        int r = add_nested_configs(list, modules, MODULES_DEPTH);
        if (r >= 0)
                r = add_nested_configs(list, worktrees, 1);
        return r;
}

/* The first line of the small file at `path`, with `prefix` taken off when given (NULL when it
 * does not start so), trailing blanks off; NULL when unreadable, or with errno ENOMEM. */
static char *first_line(const char *path, const char *prefix) {
        _cleanup_free_ char *text = NULL;
        size_t size;
        errno = 0;
        if (read_regular_file(path, 4096, &text, &size) < 0) {
                if (errno != ENOMEM)
                        errno = 0;
                return NULL;
        }
        size_t pl = prefix ? strlen(prefix) : 0;
        if (pl && strncmp(text, prefix, pl) != 0)
                return NULL;
        size_t l = strcspn(text + pl, "\n");
        while (l > 0 && (text[pl + l - 1] == ' ' || text[pl + l - 1] == '\r' || text[pl + l - 1] == '\t'))
                l--;
        return l > 0 ? strndup(text + pl, l) : NULL;
}

/* A linked worktree or a submodule's checkout shown in the sandbox (`dir` holds a .git file,
 * "gitdir: PATH"): the configuration git reads for it, its own config.worktree and the
 * repository's config (through commondir), wherever they are. */
static int add_git_file_configs(char ***list, const char *dir, const char *git) {
        _cleanup_free_ char *target = first_line(git, "gitdir: ");
        if (!target)
                return errno == ENOMEM ? -ENOMEM : 0;
        _cleanup_free_ char *gitdir = path_is_absolute(target) ? strdup(target) : path_join(dir, target);
        _cleanup_free_ char *commondir_file = gitdir ? path_join(gitdir, "commondir") : NULL;
        if (!commondir_file)
                return -ENOMEM;
        _cleanup_free_ char *common = first_line(commondir_file, NULL);
        if (!common && errno == ENOMEM)
                return -ENOMEM;
        _cleanup_free_ char *common_dir = !common ? strdup(gitdir) :
                path_is_absolute(common) ? strdup(common) : path_join(gitdir, common);
        char *files[] = {
                path_join(gitdir, "config"), path_join(gitdir, "config.worktree"),
                common_dir ? path_join(common_dir, "config") : NULL,
        };
        return strv_push_all(list, files, ELEMENTSOF(files));
}

/* A git directory found below the project (git-dir-find.h): the files git reads as its
 * configuration there, and in its submodules and linked worktrees. */
static int add_found(const char *dir, GitDirKind kind, void *userdata) {
        char ***list = userdata;
        _cleanup_free_ char *git = kind == GIT_DIR_BARE ? strdup(dir) : path_join(dir, ".git");
        if (!git)
                return -ENOMEM;
        if (kind == GIT_DIR_GIT_FILE)
                return add_git_file_configs(list, dir, git);
        char *files[] = { path_join(git, "config"), path_join(git, "config.worktree") };
        int r = strv_push_all(list, files, ELEMENTSOF(files));
        return r < 0 ? r : add_git_dir_nested(list, git);
}

/* The project: the topmost directory the sandbox shows (read-only or writable) that holds the
 * directory the command starts in, below the home directory; NULL when there is none. Every
 * repository below it is one git's discovery finds from a directory of the project. */
static const char *project_root(const Plan *p, const char *home) {
        const char *top = NULL;
        if (!p->working_directory)
                return NULL;
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                if (e->access != PATH_ACCESS_WRITE && e->access != PATH_ACCESS_READ)
                        continue;
                if (streq(e->path, "/") || !path_startswith(p->working_directory, e->path) ||
                    (home && path_startswith(home, e->path)))
                        continue;
                if (!top || strlen(e->path) < strlen(top))
                        top = e->path;
        }
        return top;
}

int harden_git_config(Plan *p, const HardenContext *ctx) {
        const char *home = ctx->home && path_is_absolute(ctx->home) ? ctx->home : NULL;
        size_t n = 0;
        int r;

        /* Filled by index: a plan may hold thousands of entries, and appending one at a time
         * would copy the list each time. */
        _cleanup_strv_free_ char **start = calloc(2 + 2 * p->n_paths + 1, sizeof(char *)), **nested = NULL;
        if (!start)
                return -ENOMEM;
        if (home) {
                bool xdg = ctx->config_home && path_is_absolute(ctx->config_home);
                r = add_pair(start, &n, xdg ? path_join(ctx->config_home, "git/config") :
                                              path_join(home, ".config/git/config"),
                             path_join(home, ".gitconfig"));
                if (r < 0)
                        return r;
        }
        /* Every repository below the project, at any depth (a copy of the path: the entries
         * move as the walk's files are added). A project too large to walk is refused (-E2BIG):
         * a configuration left unread could be shown with its credentials. */
        _cleanup_free_ char *project = project_root(p, home) ? strdup(project_root(p, home)) : NULL;
        if (project) {
                r = git_dirs_find(project, ctx->git_dir_cache, add_found, &nested, NULL);
                if (r < 0)
                        return r;
        }
        /* And at the top of each other directory shown. */
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                struct stat st;
                if (e->access != PATH_ACCESS_WRITE && e->access != PATH_ACCESS_READ)
                        continue;
                if (project && path_startswith(e->path, project))
                        continue;
                /* a .git directory, or a .git file that leads to one (a linked worktree) */
                _cleanup_free_ char *git = path_join(e->path, ".git");
                if (!git)
                        return -ENOMEM;
                if (lstat(git, &st) < 0)
                        continue;
                if (S_ISREG(st.st_mode)) {
                        r = add_git_file_configs(&nested, e->path, git);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!S_ISDIR(st.st_mode))
                        continue;
                r = add_pair(start, &n, path_join(e->path, ".git/config"),
                             path_join(e->path, ".git/config.worktree"));
                if (r >= 0)
                        r = add_git_dir_nested(&nested, git);
                if (r < 0)
                        return r;
        }
        /* The git directories a profile's .git to commit to holds (harden-git.c found them). */
        STRV_FOREACH(g, p->git_watch) {
                r = add_git_dir_nested(&nested, *g);
                if (r < 0)
                        return r;
        }
        if (nested) {
                size_t m = strv_length(nested);
                char **all = realloc(start, (n + m + 1) * sizeof(char *));
                if (!all)
                        return -ENOMEM;
                start = all;
                memcpy(start + n, nested, m * sizeof(char *));
                start[n + m] = NULL;
                free(nested);
                nested = NULL;
        }
        r = git_config_walk(start, home, &(GitConfigVisitor) {
                .target = keep_git_include, .visit = visit_config, .userdata = p });
        /* A file that cannot be read (too large, unreadable) is not git's to read either; one
         * that the runner then cannot copy is refused there (unit-build.c). */
        return r == -ENOMEM ? r : 0;
}
