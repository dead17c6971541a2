/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's section on git's configuration (plan-harden.h, 2b): the one walk of the
 * files git reads as its configuration, from the home's and from each .git at the top of a
 * directory the sandbox shows. Every file they include is kept read-only where the command
 * could write it; every file shown read-only that holds credentials is shown as a copy less
 * them (PATH_SOURCE_GIT_CONFIG_COPY), which the runner makes when the run starts
 * (git/git-config-copies.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/git-config-walk.h"
#include "plan/harden-internal.h"
#include "util/path-util.h"
#include "util/strv.h"

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

/* Whether the sandbox shows `path` (canonical) and the command cannot write it: read-only by
 * its entry or the closest one above, or by none (ProtectSystem=strict, ProtectHome=). A .git's
 * config at the top of a writable directory has its own read-only entry (harden-git.c). */
static bool shown_read_only(const Plan *p, const char *path) {
        const PlanPath *g = harden_governing_entry(p, path);
        return !g || g->access == PATH_ACCESS_READ;
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
        if (f->removed == 0 || !shown_read_only(p, canonical))
                return 0;       /* nothing to take out, or the command may write it anyway */
        return show_as_copy(p, canonical);
}

int harden_git_config(Plan *p, const HardenContext *ctx) {
        const char *home = ctx->home && path_is_absolute(ctx->home) ? ctx->home : NULL;
        size_t n = 0;
        int r;

        /* Filled by index: a plan may hold thousands of entries, and appending one at a time
         * would copy the list each time. */
        _cleanup_strv_free_ char **start = calloc(2 + 2 * p->n_paths + 1, sizeof(char *));
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
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                struct stat st;
                if (e->access != PATH_ACCESS_WRITE && e->access != PATH_ACCESS_READ)
                        continue;
                /* only where there is a .git directory (git reads no config below a .git file) */
                _cleanup_free_ char *git = path_join(e->path, ".git");
                if (!git)
                        return -ENOMEM;
                if (lstat(git, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                r = add_pair(start, &n, path_join(e->path, ".git/config"),
                             path_join(e->path, ".git/config.worktree"));
                if (r < 0)
                        return r;
        }
        r = git_config_walk(start, home, &(GitConfigVisitor) {
                .target = keep_git_include, .visit = visit_config, .userdata = p });
        /* A file that cannot be read (too large, unreadable) is not git's to read either; one
         * that the runner then cannot copy is refused there (unit-build.c). */
        return r == -ENOMEM ? r : 0;
}
