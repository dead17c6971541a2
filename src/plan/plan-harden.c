/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "plan/git-config-walk.h"
#include "plan/persistence.h"
#include "plan/plan-harden.h"
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
#define WHY_SYSTEM_BUS_ALLOWED "the system bus, as dbus.system = \"allow\" asks, given back in the empty /run"
#define WHY_RUN "services put their sockets here, and connect() ignores a read-only mount: an empty " \
        "/run, with what commands need given back; a profile that names a path below it gives that back"
#define WHY_JOURNAL "journald's sockets: logging to the journal works (logger, /dev/log)"
#define WHY_RESOLV "/etc/resolv.conf leads here: names resolve"
#define WHY_MANAGER "the service manager's private socket starts units outside the sandbox"
#define WHY_BUS "the session bus starts programs outside the sandbox (dbus.session = \"allow\" gives it)"
#define WHY_BUS_PROXY "the filtered session bus (dbus.session = \"filtered\") in place of the bus"
#define WHY_SYSTEM_BUS "the system bus reaches services outside (logind kills the user's processes, " \
        "lingering outlives the run); dbus.system = \"filtered\" or \"allow\" gives it"
#define WHY_SYSTEM_BUS_PROXY "the filtered system bus (dbus.system = \"filtered\") in place of the bus"
#define WHY_PIN "a directory between a writable one and an entry inside it that keeps something from the " \
        "command, bound onto itself: a mount point cannot be renamed, so the next run finds what the entry " \
        "keeps where it is"
#define WHY_BPFD "scudo-bpfd's socket, which sets the network rules of sandboxes"
#define WHY_ROOT_MANAGER "a root container or VM manager: its group reaches it, and it mounts anything " \
        "as root; a profile that names the socket decides"
#define WHY_NAME_SERVICE "with network rules, a service that resolves names or fetches for whoever " \
        "asks, past the rules; a profile that names the socket decides"

/* Root's container and VM managers: a member of their group (docker, libvirt, lxd, ...)
 * reaches them from inside as from outside, and they start a container that mounts the home
 * directory, or anything else, as root. */
static const char * const root_managers[] = {
        "/run/docker.sock",
        "/run/containerd/containerd.sock",
        "/run/podman/podman.sock",
        "/run/libvirt/libvirt-sock",
        "/run/libvirt/virtqemud-sock",
        "/var/snap/lxd/common/lxd/unix.socket",
        "/var/lib/lxd/unix.socket",
        "/var/lib/incus/unix.socket",
};

/* With network rules, the services that look names up or fetch things for whoever asks over a
 * local socket: through them a name the rules refuse is resolved anyway (and a secret spelled
 * into it reaches that name's DNS server), and the DNS proxy never sees the answers the rules
 * for allowed names are made from. glibc then falls back to /etc/resolv.conf, whose port 53
 * leads to the proxy. */
static const char * const name_services[] = {
        "/run/systemd/resolve/io.systemd.Resolve",      /* nss-resolve (Fedora, Arch) */
        "/run/nscd/socket",                             /* glibc's name service cache */
        "/run/avahi-daemon/socket",                     /* nss-mdns */
        "/run/snapd.socket",                            /* the snap store's search */
        "/run/snapd-snap.socket",
};

static int add_entry(Plan *p, PathAccess access, const char *path, const char *why, PathCreate create,
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
static int force_entry(Plan *p, PathAccess access, const char *path, const char *why, PathSource source) {
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
        return add_entry(p, access, path, why, PATH_CREATE_NONE, source);
}

/* The entry that decides what the command can do to `path` (canonical, as the validated
 * plan's paths are): the one for the path itself or else for its closest enclosing directory,
 * as the mounts nest; NULL when none does. */
static const PlanPath *governing_entry(const Plan *p, const char *path) {
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
static bool writable_from_above(const Plan *p, const char *path) {
        const PlanPath *g = governing_entry(p, path);
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
                if (e->derived && e->over_deny && (e->access == PATH_ACCESS_READ || e->access == PATH_ACCESS_WRITE)) {
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
                        asprintf(&reasons[i], "worked out from the request, and %s denies this path: " WHY_DERIVED,
                                 strempty(origin)) :
                        asprintf(&reasons[i], "worked out from the request, and lies under %s, which %s denies: "
                                 WHY_DERIVED, deny, strempty(origin));
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
                r = add_entry(p, PATH_ACCESS_DENY, restore[i], why, PATH_CREATE_NONE, PATH_SOURCE_SELF);
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
        if (!writable_from_above(p, c))
                return 0;
        return add_entry(p, PATH_ACCESS_READ, c, WHY_PROJECT_FILE, PATH_CREATE_NONE, PATH_SOURCE_SELF);
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
                if (!writable_from_above(p, c))
                        continue;
                r = add_entry(p, PATH_ACCESS_READ, c, WHY_CONFIG, PATH_CREATE_DIR, PATH_SOURCE_SELF);
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

/* ---- 1b. what runs later, reached through a symlink ------------------------------------ */

/* `path` (a persistence root, or a file git's configuration includes) read-only when what it
 * leads to is in a directory the command may write. Made first (empty) where it is missing,
 * or the command could make it. through_symlink: only where a symlink leads there, since the
 * policy engine refuses a derived grant of such a place as it is written (build.lua), and one
 * written out in full is policy. */
static int keep_runs_later(Plan *p, const char *path, bool file, bool through_symlink) {
        _cleanup_free_ char *c = NULL, *why = NULL;
        PathCreate create = PATH_CREATE_NONE;

        if (plan_path_canonicalize(path, &c) < 0) {
                /* missing: where it would be made, its directory resolved */
                _cleanup_free_ char *dir = strdup(path), *cdir = NULL;
                char *slash = dir ? strrchr(dir, '/') : NULL;
                if (!dir)
                        return -ENOMEM;
                if (!slash || slash == dir)
                        return 0;
                *slash = 0;
                if (plan_path_canonicalize(dir, &cdir) < 0)
                        return 0;       /* nor its directory: nothing to make it in */
                c = path_join(cdir, slash + 1);
                if (!c)
                        return -ENOMEM;
                create = file ? PATH_CREATE_FILE : PATH_CREATE_DIR;
        }
        if ((through_symlink && streq(c, path)) || plan_names_path(p, c) || !writable_from_above(p, c))
                return 0;
        struct stat st;
        if (create == PATH_CREATE_NONE && lstat(c, &st) < 0)
                create = file ? PATH_CREATE_FILE : PATH_CREATE_DIR;
        int k = through_symlink ?
                asprintf(&why, "%s leads here, and %s", path, file ?
                         "what it holds runs later, outside the sandbox: read-only" :
                         "what is in it runs later, outside the sandbox: read-only") :
                asprintf(&why, "git's configuration includes %s: what it sets (programs to run among it) "
                         "applies outside the sandbox: read-only", path);
        if (k < 0)
                return -ENOMEM;
        return add_entry(p, PATH_ACCESS_READ, c, why, create, PATH_SOURCE_SELF);
}

static int keep_git_include(const char *path, void *userdata) {
        return keep_runs_later(userdata, path, true, false);
}

static int read_on(const char *canonical, const GitConfigFiltered *f, void *userdata) {
        return 0;
}

/* The places of plan/persistence.h, resolved; and the files git's configuration includes,
 * wherever they are (an [includeIf "gitdir:~/work/"] path = ~/work/.gitconfig-work, made from
 * a run started in ~/work, would set core.fsmonitor for every git command there). */
static int protect_persistence(Plan *p, const HardenContext *ctx) {
        PersistenceRoot *roots = NULL;
        size_t n = 0;
        int r;

        if (!ctx->home || !path_is_absolute(ctx->home))
                return 0;
        r = persistence_roots(&(PersistenceEnv) { .home = ctx->home, .config_home = ctx->config_home,
                                                  .data_home = ctx->data_home, .state_home = ctx->state_home,
                                                  .path = ctx->path }, &roots, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = keep_runs_later(p, roots[i].path, roots[i].file, true);
        persistence_roots_free(roots, n);
        if (r < 0)
                return r;

        _cleanup_free_ char *xdg = ctx->config_home && path_is_absolute(ctx->config_home) ?
                path_join(ctx->config_home, "git/config") : path_join(ctx->home, ".config/git/config");
        _cleanup_free_ char *dot = path_join(ctx->home, ".gitconfig");
        if (!xdg || !dot)
                return -ENOMEM;
        char *start[] = { xdg, dot, NULL };
        r = git_config_walk(start, ctx->home, &(GitConfigVisitor) {
                .target = keep_git_include, .visit = read_on, .userdata = p });
        /* a configuration that cannot be read is not git's to read either: the runner says so
         * when it cannot show it without its credentials */
        return r == -ENOMEM ? r : 0;
}

/* ---- 2. .git ---------------------------------------------------------------------------- */

static bool is_empty_dir(const char *path) {
        _cleanup_close_ int fd = path_open_no_symlinks(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0)
                return false;
        DIR *d = fdopendir(fd);
        if (!d)
                return false;
        fd = -EBADF;    /* the DIR owns it now */
        bool empty = true;
        struct dirent *e;
        while (empty && (e = readdir(d)))
                empty = streq(e->d_name, ".") || streq(e->d_name, "..");
        (void) closedir(d);
        return empty;
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
 * read-only; the runner refuses them made new (unit/gitdir-watch.h). */
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
                int r = add_entry(p, PATH_ACCESS_READ, c, WHY_GIT_CODE, PATH_CREATE_NONE, PATH_SOURCE_SELF);
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
 * runner stops the run when a name git does not make appears (unit/gitdir-watch.h). More git
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
        return force_entry(p, PATH_ACCESS_READ, top, WHY_GIT_TOO_MANY, PATH_SOURCE_SELF);
}

/* A .git file (a linked worktree's or a submodule's checkout: "gitdir: ...") that a profile
 * made writable: read-only, or the command could point git outside at a git directory of its
 * own making. */
static int keep_git_file(Plan *p, size_t i) {
        _cleanup_free_ char *path = strdup(p->paths[i].path);
        if (!path)
                return -ENOMEM;
        return force_entry(p, PATH_ACCESS_READ, path, WHY_GIT_FILE, PATH_SOURCE_SELF);
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
        if (plan_path_canonicalize(git, &target) < 0 || plan_names_path(p, target) || !writable_from_above(p, target))
                return 0;
        return add_entry(p, PATH_ACCESS_READ, target, WHY_GIT, PATH_CREATE_NONE, PATH_SOURCE_SELF);
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
                return add_entry(p, PATH_ACCESS_READ, git, WHY_GIT_PLACEHOLDER, PATH_CREATE_PLACEHOLDER,
                                 PATH_SOURCE_SELF);
        }
        if (found)
                return add_entry(p, PATH_ACCESS_READ, git, WHY_GIT, PATH_CREATE_NONE, PATH_SOURCE_SELF);
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
                if (lstat(git, &st) < 0 || plan_names_path(p, git) || !writable_from_above(p, git))
                        ;
                else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
                        r = add_entry(p, PATH_ACCESS_READ, git, WHY_GIT_NESTED, PATH_CREATE_NONE, PATH_SOURCE_SELF);
                else if (S_ISLNK(st.st_mode))
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
 * the run (unit/git-guard.h), bound the same way: an empty .git is no repository to git. A
 * plan that names the .git itself decides: a write entry for a git directory makes it one the
 * command may commit to (guard_writable_git_dir). A symlink is left alone: binding onto it
 * would bind whatever it points at. */
static int protect_git_dirs(Plan *p) {
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
                        if (streq(d, w) || writable_from_above(p, d)) {
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

/* ---- 3. sockets ------------------------------------------------------------------------- */

/* The system bus, unless the plan asks for it: through it logind kills any process of the
 * user (KillUser, TerminateUser) and sets lingering, systemd starts units, resolved looks
 * names up past the network rules. Filtered, the proxy's socket is where the bus is, read-only
 * (connecting needs no write access). The key decides: a profile's entry for the socket is
 * replaced. */
static int protect_system_bus(Plan *p) {
        if (p->dbus_system == DBUS_ALLOW)
                /* given back in the empty /run */
                return force_entry(p, PATH_ACCESS_READ, PLAN_SYSTEM_BUS_SOCKET, WHY_SYSTEM_BUS_ALLOWED,
                                   PATH_SOURCE_SELF);
        if (p->dbus_system == DBUS_FILTERED)
                return force_entry(p, PATH_ACCESS_READ, PLAN_SYSTEM_BUS_SOCKET, WHY_SYSTEM_BUS_PROXY,
                                   PATH_SOURCE_SYSTEM_BUS_PROXY);
        return force_entry(p, PATH_ACCESS_DENY, PLAN_SYSTEM_BUS_SOCKET, WHY_SYSTEM_BUS, PATH_SOURCE_SELF);
}

/* /run (and /var/run where it is a directory of its own) empty: the sockets of the services
 * on the machine are there (a screen session's, a database's, a container manager's), and a
 * read-only mount keeps none of them from being connected to. Given back: journald's sockets
 * and what /etc/resolv.conf leads to; a profile names what else (a read or write entry below
 * /run is bound over the empty one). A plan that names /run itself decides. */
static int empty_run(Plan *p) {
        static const char * const runs[] = { "/run", "/var/run" };
        struct stat st;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(runs); i++) {
                if (lstat(runs[i], &st) < 0 || !S_ISDIR(st.st_mode) || plan_names_path(p, runs[i]))
                        continue;
                r = add_entry(p, PATH_ACCESS_HIDE, runs[i], WHY_RUN, PATH_CREATE_NONE, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        if (lstat("/run/systemd/journal", &st) >= 0 && S_ISDIR(st.st_mode) &&
            !plan_names_path(p, "/run/systemd/journal")) {
                r = add_entry(p, PATH_ACCESS_READ, "/run/systemd/journal", WHY_JOURNAL, PATH_CREATE_NONE,
                              PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        /* the file itself, not its directory: systemd-resolved's holds its varlink socket too */
        _cleanup_free_ char *resolv = NULL;
        if (plan_path_canonicalize("/etc/resolv.conf", &resolv) >= 0 && path_startswith(resolv, "/run") &&
            stat(resolv, &st) >= 0 && S_ISREG(st.st_mode) && !plan_names_path(p, resolv)) {
                r = add_entry(p, PATH_ACCESS_READ, resolv, WHY_RESOLV, PATH_CREATE_NONE, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int protect_sockets(Plan *p, const HardenContext *ctx) {
        int r = empty_run(p);
        if (r >= 0)
                r = protect_system_bus(p);
        if (r < 0)
                return r;

        if (ctx->runtime_dir) {
                _cleanup_free_ char *manager = path_join(ctx->runtime_dir, "systemd");
                _cleanup_free_ char *bus = path_join(ctx->runtime_dir, "bus");
                if (!manager || !bus)
                        return -ENOMEM;
                r = force_entry(p, PATH_ACCESS_DENY, manager, WHY_MANAGER, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
                /* The proxy's socket where the bus is: read-only, as connecting to a socket needs
                 * no write access to the mount. */
                if (p->dbus == DBUS_FILTERED)
                        r = force_entry(p, PATH_ACCESS_READ, bus, WHY_BUS_PROXY, PATH_SOURCE_BUS_PROXY);
                else if (p->dbus != DBUS_ALLOW)
                        r = force_entry(p, PATH_ACCESS_DENY, bus, WHY_BUS, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(root_managers); i++)
                if (!plan_names_path(p, root_managers[i])) {
                        r = add_entry(p, PATH_ACCESS_DENY, root_managers[i], WHY_ROOT_MANAGER, PATH_CREATE_NONE,
                                      PATH_SOURCE_SELF);
                        if (r < 0)
                                return r;
                }
        if (p->network_filtered)
                for (size_t i = 0; i < ELEMENTSOF(name_services); i++)
                        if (!plan_names_path(p, name_services[i])) {
                                r = add_entry(p, PATH_ACCESS_DENY, name_services[i], WHY_NAME_SERVICE,
                                              PATH_CREATE_NONE, PATH_SOURCE_SELF);
                                if (r < 0)
                                        return r;
                        }
        if (ctx->bpfd_socket && path_is_absolute(ctx->bpfd_socket) && !streq(ctx->bpfd_socket, SCUDO_BPFD_SOCKET)) {
                r = force_entry(p, PATH_ACCESS_DENY, ctx->bpfd_socket, WHY_BPFD, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        return force_entry(p, PATH_ACCESS_DENY, SCUDO_BPFD_SOCKET, WHY_BPFD, PATH_SOURCE_SELF);
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

/* Why the hide or deny entry e changes nothing (*ret), or NULL when it may matter. */
static int unchanging_reason(const PlanPath **sorted, size_t n, const PlanPath *e, char **ret) {
        struct stat st;
        const char *verb = e->access == PATH_ACCESS_HIDE ? "hide" : "deny";

        *ret = NULL;
        if (lstat(e->path, &st) < 0) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return 0;       /* unreadable: left to the mount */
                return asprintf(ret, "does not exist: nothing to %s", verb) < 0 ? -ENOMEM : 0;
        }
        _cleanup_free_ char *buf = strdup(e->path);
        if (!buf)
                return -ENOMEM;
        const PlanPath *up = parent_entry(sorted, n, e->path, buf);
        if (!up || (up->access != PATH_ACCESS_HIDE && up->access != PATH_ACCESS_DENY))
                return 0;
        /* An empty directory inside an empty one: without the mount it would not be there at
         * all ($XDG_RUNTIME_DIR under the empty /run) */
        if (e->access == PATH_ACCESS_HIDE && up->access == PATH_ACCESS_HIDE)
                return 0;
        if (asprintf(ret, "lies under %s, which the command %s: nothing to %s", up->path,
                     up->access == PATH_ACCESS_HIDE ? "sees empty" : "cannot reach", verb) < 0)
                return -ENOMEM;
        return 0;
}

/* Drops every hide or deny entry whose mount would change nothing (see plan-harden.h): each
 * mount costs the unit's start about 0.6 ms, and most of these lie under a hidden home or
 * runtime directory. A read or write entry always stays. */
static int drop_unchanging(Plan *p) {
        size_t n = p->n_paths;
        _cleanup_free_ const PlanPath **sorted = calloc(n + 1, sizeof(PlanPath *));
        _cleanup_free_ char **reasons = calloc(n + 1, sizeof(char *));
        int r = 0;

        if (!sorted || !reasons)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sorted[i] = &p->paths[i];
        qsort(sorted, n, sizeof(PlanPath *), compare_entries);
        for (size_t i = 0; i < n && r >= 0; i++) {
                const PlanPath *e = &p->paths[i];
                if (e->access == PATH_ACCESS_HIDE || e->access == PATH_ACCESS_DENY)
                        r = unchanging_reason(sorted, n, e, &reasons[i]);
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
                r = add_entry(p, PATH_ACCESS_WRITE, pins[i], WHY_PIN, PATH_CREATE_NONE, PATH_SOURCE_SELF);
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
                r = protect_persistence(p, ctx);
        if (r >= 0)
                r = protect_git_dirs(p);
        if (r >= 0)
                r = protect_sockets(p, ctx);
        if (r >= 0)
                r = drop_unchanging(p);
        if (r >= 0)
                r = pin_ancestors(p);
        if (r < 0)
                return r;
        p->hardened = true;
        return 0;
}
