/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step (plan-harden.h): the helpers its sections share, its own sections (the
 * denies kept, scudo's configuration and the project files, the mounts that change nothing,
 * the pins), and the order of them all. The others: harden-persistence.c, harden-git.c,
 * harden-git-config.c, harden-sockets.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/harden-internal.h"
#include "plan/plan-validate.h"
#include "util/path-util.h"
#include "util/strv.h"

/* The reasons, as explain shows them after "scudo". */
#define WHY_DERIVED "a grant worked out from the project, the start directory or the arguments never " \
        "overrides a deny (--fs-write, or a profile that names the path, grants it)"
#define WHY_DENY_KEPT "the deny of %s, put back: a grant worked out from the request took its place, and " \
        "never overrides a deny"
#define WHY_CONFIG "its own configuration stays read-only"
#define WHY_PROJECT_FILE "a project file it read stays as it is"
#define WHY_PIN \
        "a directory between a writable one and an entry inside it that keeps something from the " \
        "command, bound onto itself: a mount point cannot be renamed, so the next run finds what the " \
        "entry keeps where it is"

int harden_add_entry(Plan *p, PathAccess access, const char *path, const char *why, PathCreate create,
                     PathSource source) {
        int r = plan_add_path(p, access, path, PLAN_ORIGIN_SCUDO);
        if (r < 0)
                return r;
        PlanPath *e = &p->paths[p->n_paths - 1];
        e->reason = strdup(why);
        if (!e->reason)
                return -ENOMEM;
        e->create = create;
        e->source = source;
        return 0;
}

/* The entry for exactly `path`, or NULL. */
static PlanPath *find_entry(Plan *p, const char *path) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (streq(p->paths[i].path, path))
                        return &p->paths[i];
        return NULL;
}

/* scudo's entry at `path`, whatever the profiles say: a profile's entry for the same path is
 * dropped, saying so. */
int harden_force_entry(Plan *p, PathAccess access, const char *path, const char *why, PathSource source) {
        PlanPath *old = find_entry(p, path);
        if (old) {
                _cleanup_free_ char **reasons = calloc(p->n_paths + 1, sizeof(char *));
                if (!reasons)
                        return -ENOMEM;
                size_t i = (size_t) (old - p->paths);
                if (asprintf(&reasons[i], "scudo decides this path: %s", why) < 0)
                        return -ENOMEM;
                int r = plan_drop_marked(p, reasons);
                if (r < 0) {
                        free(reasons[i]);
                        return r;
                }
        }
        return harden_add_entry(p, access, path, why, PATH_CREATE_NONE, source);
}

/* The entry that decides what the command can do to `path` (canonical, as the validated
 * plan's paths are): the one for the path itself or else for its closest enclosing directory,
 * as the mounts nest; NULL when none does. */
const PlanPath *harden_governing_entry(const Plan *p, const char *path) {
        const PlanPath *best = NULL;
        size_t best_len = 0;
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                if (!path_startswith(path, e->path))
                        continue;
                size_t l = strlen(e->path);
                if (!best || l > best_len) {
                        best = e;
                        best_len = l;
                }
        }
        return best;
}

/* Whether `path` (canonical) is writable only because a directory above it is: a plan that
 * names the path itself, whatever the access, is taken at its word. */
bool harden_writable_from_above(const Plan *p, const char *path) {
        const PlanPath *g = harden_governing_entry(p, path);
        return g && g->access == PATH_ACCESS_WRITE && !streq(g->path, path);
}

/* ---- 0. a grant worked out from the request never overrides a deny ---------------------- */

/* The deny that governs e, a derived read or write entry, or NULL: the closest of the entries
 * not worked out from the request strictly above it and the denies put back (`restored`, at
 * or above it) when that is a deny; *ret_origin says where it was written. */
static const char *governing_deny(const Plan *p, const PlanPath *e, char **restored, char **restored_origin,
                                  const char **ret_origin) {
        const char *best = NULL, *origin = NULL;
        bool deny = false;
        size_t best_len = 0;

        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *x = &p->paths[i];
                size_t l = strlen(x->path);
                if (x->derived || streq(x->path, e->path) || !path_startswith(e->path, x->path))
                        continue;
                if (!best || l > best_len) {
                        best = x->path;
                        best_len = l;
                        deny = x->access == PATH_ACCESS_DENY;
                        origin = x->origin;
                }
        }
        for (size_t i = 0; restored && restored[i]; i++) {
                size_t l = strlen(restored[i]);
                if (path_startswith(e->path, restored[i]) && (!best || l > best_len)) {
                        best = restored[i];
                        best_len = l;
                        deny = true;
                        origin = restored_origin[i];
                }
        }
        *ret_origin = origin;
        return deny ? best : NULL;
}

/* A read or write entry worked out from the request (${PWD}, ${project} and other lookups,
 * ${arg_*}, a relative path: `derived`) is whatever the start directory or the arguments make
 * it: started in ~/.aws with a .git in it, git-project's ${project} is ~/.aws. So it never
 * overrides a deny: one in the place of a deny of the same path (over_deny) is dropped and the
 * deny put back; one below a deny, with no entry written out between them, is dropped (so are
 * git-project's ${project}/.git and the like below a deny put back). A grant written out
 * (--fs-write, a profile's "~/.aws/cache") still overrides a deny. */
static int keep_denies(Plan *p) {
        size_t n = p->n_paths;
        _cleanup_free_ char **reasons = calloc(n + 1, sizeof(char *));
        _cleanup_strv_free_ char **restore = NULL, **restore_origin = NULL;
        int r = 0;

        if (!reasons)
                return -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const PlanPath *e = &p->paths[i];
                if (e->derived && e->over_deny &&
                    (e->access == PATH_ACCESS_READ || e->access == PATH_ACCESS_WRITE)) {
                        r = strv_extend(&restore, e->path);
                        if (r >= 0)
                                r = strv_extend(&restore_origin, e->over_deny);
                }
        }
        for (size_t i = 0; i < n && r >= 0; i++) {
                const PlanPath *e = &p->paths[i];
                const char *origin = NULL;
                if (!e->derived || (e->access != PATH_ACCESS_READ && e->access != PATH_ACCESS_WRITE))
                        continue;
                const char *deny = governing_deny(p, e, restore, restore_origin, &origin);
                if (!deny)
                        continue;
                int k = streq(deny, e->path) ?
                        asprintf(&reasons[i], "worked out from the request, and %s denies this path: "
                                 WHY_DERIVED, strempty(origin)) :
                        asprintf(&reasons[i], "worked out from the request, and lies under %s, which %s "
                                 "denies: " WHY_DERIVED, deny, strempty(origin));
                if (k < 0) {
                        reasons[i] = NULL;
                        r = -ENOMEM;
                }
        }
        if (r >= 0)
                r = plan_drop_marked(p, reasons);       /* takes the reasons it moves */
        for (size_t i = 0; i < n; i++)
                free(reasons[i]);
        for (size_t i = 0; r >= 0 && restore && restore[i]; i++) {
                _cleanup_free_ char *why = NULL;
                if (asprintf(&why, WHY_DENY_KEPT, restore_origin[i]) < 0)
                        return -ENOMEM;
                r = harden_add_entry(p, PATH_ACCESS_DENY, restore[i], why, PATH_CREATE_NONE,
                                     PATH_SOURCE_SELF);
        }
        return r;
}

/* ---- 1. scudo's configuration and the project files ------------------------------------ */

/* The project file at `path` read-only inside, when a writable directory holds it.
 * canonical_dir: its directory is its own canonical path already (a discovered file): unless
 * the file is a symlink, its path is too, one lstat where resolving it costs three calls. A
 * symlink named .scudo.toml: the file it leads to, which is what was read. */
static int keep_project_file(Plan *p, const char *path, bool canonical_dir) {
        _cleanup_free_ char *c = NULL;
        struct stat st;

        if (canonical_dir && lstat(path, &st) >= 0 && S_ISREG(st.st_mode)) {
                c = strdup(path);
                if (!c)
                        return -ENOMEM;
        } else if (plan_path_canonicalize(path, &c) < 0 || stat(c, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;       /* gone: made again inside, it is untrusted */
        if (!harden_writable_from_above(p, c))
                return 0;
        return harden_add_entry(p, PATH_ACCESS_READ, c, WHY_PROJECT_FILE, PATH_CREATE_NONE,
                                PATH_SOURCE_SELF);
}

/* A sandboxed command that can write the directory holding scudo's user configuration or its
 * trust store could add profiles, or trust its own .scudo.toml, for the next run outside the
 * sandbox: when a writable entry covers either directory, it is read-only inside (made by the
 * runner first when missing, since a bind needs something to bind). So is every project file
 * the plan was made from, and every project hook file it ran: edited inside, a trusted file
 * would be untrusted at the next run and ignored, and what it took away given back; as a mount
 * point it cannot be removed or renamed either. */
static int protect_config_files(Plan *p, const HardenContext *ctx) {
        _cleanup_free_ char *config = NULL, *state = NULL;
        int r;

        if (ctx->home) {
                bool xc = ctx->config_home && path_is_absolute(ctx->config_home);
                bool xs = ctx->state_home && path_is_absolute(ctx->state_home);
                config = path_join(xc ? ctx->config_home : ctx->home, xc ? "scudo" : ".config/scudo");
                state = path_join(xs ? ctx->state_home : ctx->home, xs ? "scudo" : ".local/state/scudo");
                if (!config || !state)
                        return -ENOMEM;
        }
        const char *dirs[] = { config, state };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *c = NULL;
                if (!dirs[i] || plan_path_canonicalize(dirs[i], &c) < 0)
                        continue;       /* cannot be resolved: nothing binds it writable either */
                if (!harden_writable_from_above(p, c))
                        continue;
                r = harden_add_entry(p, PATH_ACCESS_READ, c, WHY_CONFIG, PATH_CREATE_DIR, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }

        STRV_FOREACH(f, p->config_files) {
                r = keep_project_file(p, *f, true);
                if (r < 0)
                        return r;
        }
        STRV_FOREACH(f, p->hook_files) {
                r = keep_project_file(p, *f, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- 4. mounts that would change nothing ------------------------------------------------ */

static int compare_entries(const void *a, const void *b) {
        return strcmp((*(const PlanPath * const *) a)->path, (*(const PlanPath * const *) b)->path);
}

/* The closest entry strictly above `path`: each of its ancestors looked up among the entries
 * sorted by path (`sorted`, n of them), longest first. buf: room for a copy of path. */
static const PlanPath *parent_entry(const PlanPath **sorted, size_t n, const char *path, char *buf) {
        strcpy(buf, path);
        while (!streq(buf, "/")) {
                char *slash = strrchr(buf, '/');
                if (slash == buf)
                        buf[1] = 0;
                else
                        *slash = 0;
                const PlanPath key = { .path = buf }, *k = &key;
                const PlanPath **hit = bsearch(&k, sorted, n, sizeof(PlanPath *), compare_entries);
                if (hit)
                        return *hit;
        }
        return NULL;
}

/* Why the hide or deny entry e changes nothing (*ret), or NULL when it may matter. runtime_dir:
 * the caller's, canonical, or NULL. */
static int unchanging_reason(const PlanPath **sorted, size_t n, const PlanPath *e, const char *runtime_dir,
                             char **ret) {
        struct stat st;
        const char *verb = e->access == PATH_ACCESS_HIDE ? "hide" : "deny";

        *ret = NULL;
        if (lstat(e->path, &st) < 0) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return 0;       /* unreadable: left to the mount */
                if (e->source != PATH_SOURCE_SELF)
                        return 0;       /* the runner makes it before the unit starts */
                return asprintf(ret, "does not exist: nothing to %s", verb) < 0 ? -ENOMEM : 0;
        }
        _cleanup_free_ char *buf = strdup(e->path);
        if (!buf)
                return -ENOMEM;
        const PlanPath *up = parent_entry(sorted, n, e->path, buf);
        if (!up || (up->access != PATH_ACCESS_HIDE && up->access != PATH_ACCESS_DENY))
                return 0;
        /* An empty directory inside an empty one only makes the directory be there: kept for
         * $XDG_RUNTIME_DIR under the empty /run, where commands are told to put their sockets
         * and could not make it themselves; any other (/run/log/journal) changes nothing. */
        if (e->access == PATH_ACCESS_HIDE && up->access == PATH_ACCESS_HIDE && runtime_dir &&
            streq(e->path, runtime_dir))
                return 0;
        if (asprintf(ret, "lies under %s, which the command %s: nothing to %s", up->path,
                     up->access == PATH_ACCESS_HIDE ? "sees empty" : "cannot reach", verb) < 0)
                return -ENOMEM;
        return 0;
}

/* Drops every hide or deny entry whose mount would change nothing (see plan-harden.h): each
 * mount adds to the unit's start, and most of these lie under a hidden home or runtime
 * directory. A read or write entry always stays. */
static int drop_unchanging(Plan *p, const HardenContext *ctx) {
        size_t n = p->n_paths;
        _cleanup_free_ char *runtime_dir = NULL;
        _cleanup_free_ const PlanPath **sorted = calloc(n + 1, sizeof(PlanPath *));
        _cleanup_free_ char **reasons = calloc(n + 1, sizeof(char *));
        int r = 0;

        if (!sorted || !reasons)
                return -ENOMEM;
        if (ctx->runtime_dir && path_is_absolute(ctx->runtime_dir) &&
            plan_path_canonicalize(ctx->runtime_dir, &runtime_dir) == -ENOMEM)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sorted[i] = &p->paths[i];
        qsort(sorted, n, sizeof(PlanPath *), compare_entries);
        for (size_t i = 0; i < n && r >= 0; i++) {
                const PlanPath *e = &p->paths[i];
                if (e->access == PATH_ACCESS_HIDE || e->access == PATH_ACCESS_DENY)
                        r = unchanging_reason(sorted, n, e, runtime_dir, &reasons[i]);
        }
        if (r >= 0)
                r = plan_drop_marked(p, reasons);       /* takes the reasons it moves */
        for (size_t i = 0; i < n; i++)
                free(reasons[i]);
        return r;
}

/* ---- 5. the directories above what is kept from a writable area ------------------------- */

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* A read, hide or deny entry inside a writable directory protects its path, not its name: the
 * command could rename a directory above it (`mv config cfg`), and the next run would find the
 * file at cfg/master.key, under no entry at all, and a new config/ where the entry points. A
 * mount point cannot be renamed or removed (EBUSY): so each directory between such an entry
 * and the writable entry above it is bound onto itself, writable as it was. Only directories
 * that exist are bound (a missing one holds nothing yet: a read entry of a missing path is
 * checked to be missing inside). Each is one more mount at the unit's start: the entries the
 * recommended profiles keep inside a writable directory are at its top, which needs none. */
static int pin_ancestors(Plan *p) {
        size_t n = p->n_paths;
        _cleanup_free_ const PlanPath **sorted = calloc(n + 1, sizeof(PlanPath *));
        _cleanup_strv_free_ char **pins = NULL;
        int r;

        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sorted[i] = &p->paths[i];
        qsort(sorted, n, sizeof(PlanPath *), compare_entries);
        for (size_t i = 0; i < n; i++) {
                const PlanPath *e = &p->paths[i];
                if (e->access == PATH_ACCESS_WRITE)
                        continue;
                _cleanup_free_ char *buf = strdup(e->path);
                if (!buf)
                        return -ENOMEM;
                const PlanPath *up = parent_entry(sorted, n, e->path, buf);
                if (!up || up->access != PATH_ACCESS_WRITE)
                        continue;
                /* Every directory strictly between up and e. */
                size_t top = strlen(up->path);
                strcpy(buf, e->path);
                for (char *slash = strrchr(buf, '/'); slash && (size_t) (slash - buf) > top;
                     slash = strrchr(buf, '/')) {
                        struct stat st;
                        *slash = 0;
                        if (path_stat_no_symlinks(buf, &st) <= 0 || !S_ISDIR(st.st_mode))
                                continue;
                        r = strv_extend(&pins, buf);
                        if (r < 0)
                                return r;
                }
        }
        size_t m = strv_length(pins);
        if (m == 0)
                return 0;
        qsort(pins, m, sizeof(char *), compare_strings);
        for (size_t i = 0; i < m; i++) {
                if (i > 0 && streq(pins[i], pins[i - 1]))
                        continue;
                r = harden_add_entry(p, PATH_ACCESS_WRITE, pins[i], WHY_PIN, PATH_CREATE_NONE,
                                     PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_harden(Plan *p, const HardenContext *ctx) {
        int r = keep_denies(p);
        if (r >= 0)
                r = protect_config_files(p, ctx);
        if (r >= 0)
                r = harden_persistence(p, ctx);
        if (r >= 0)
                r = harden_user_config(p, ctx);
        if (r >= 0)
                r = harden_git_dirs(p);
        if (r >= 0)
                r = harden_git_config(p, ctx);
        if (r >= 0)
                r = harden_tool_config(p, ctx);
        if (r >= 0)
                r = harden_sockets(p, ctx);
        if (r >= 0)
                r = drop_unchanging(p, ctx);
        if (r >= 0)
                r = pin_ancestors(p);
        if (r < 0)
                return r;
        p->hardened = true;
        return 0;
}
