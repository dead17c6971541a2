/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's section on what the user's own configuration points at (plan-harden.h,
 * 1c). Programs the user runs outside find their configuration, and the programs it names, by
 * following it: a symlink under the home directory (a stow-style dotfiles checkout:
 * ~/.ssh/config, ~/.vimrc, ~/.config/nvim -> ~/dotfiles/...; a unit `systemctl --user link`ed
 * from a project; ~/.local/bin/tool -> the project), and the paths git's own configuration names
 * (core.hooksPath, core.pager, an alias's `!~/proj/x.sh`, a credential helper). What they lead
 * to is read-only where the command could write it, judged by where they lead, not by names. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "plan/git-config-walk.h"
#include "plan/harden-internal.h"
#include "plan/persistence.h"
#include "plan/plan-validate.h"
#include "util/env-util.h"
#include "util/file-util.h"
#include "util/path-util.h"
#include "util/strv.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

/* How far the walk of the home's dot-directories goes: directories read at most this many
 * levels below the home (~/.config/systemd/user/default.target.wants is 4, so its symlinks are
 * seen), and at most this many directories per run, shallowest first. */
#define USER_LINKS_DEPTH 4
#define USER_LINKS_DIRS_MAX 512U
/* How many symlinks a chain is followed through by hand when it ends nowhere (the kernel's 40
 * applies to one that ends somewhere). */
#define DANGLING_HOPS 8
/* A git configuration file larger than this is not scanned (git-config-walk.c refuses it too). */
#define GIT_CONFIG_SCAN_MAX (4u << 20)

#define WHY_LINK "%s leads here, and the program that reads it outside runs what it says: what the user's " \
        "configuration points at is read-only"
#define WHY_GIT_NAMES "%s names it in %s, and git runs it (or reads from it) outside: what the user's " \
        "configuration points at is read-only"

/* Whether the command may write `c` (canonical): the entry that governs it is a write entry. */
static bool writable(const Plan *p, const char *c) {
        const PlanPath *g = harden_governing_entry(p, c);
        return g && g->access == PATH_ACCESS_WRITE;
}

/* Whether a write entry lies at or below `c`. */
static bool holds_write_entry(const Plan *p, const char *c) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (p->paths[i].access == PATH_ACCESS_WRITE && path_startswith(p->paths[i].path, c))
                        return true;
        return false;
}

/* `c` (canonical, existing or not) read-only, with `why`: made empty when missing, as the
 * command could make it. A write entry the request worked out (${PWD}, ${project}) at or below
 * it is made read-only too: started in the dotfiles checkout, the command works on the user's
 * configuration. One written out (--fs-write, a profile) is taken at its word. demote: whether
 * to do so (a path git's configuration names is only kept when strictly inside a writable
 * place: `safe.directory = ~/proj` names the project itself). */
static int keep_read_only(Plan *p, const char *c, const char *why, bool demote) {
        _cleanup_strv_free_ char **derived = NULL;
        struct stat st;
        int r;

        if (demote)
                for (size_t i = 0; i < p->n_paths; i++) {
                        const PlanPath *e = &p->paths[i];
                        if (e->access == PATH_ACCESS_WRITE && e->derived && path_startswith(e->path, c)) {
                                r = strv_extend(&derived, e->path);
                                if (r < 0)
                                        return r;
                        }
                }
        STRV_FOREACH(d, derived) {
                r = harden_force_entry(p, PATH_ACCESS_READ, *d, why, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        if (plan_names_path(p, c) || !harden_writable_from_above(p, c))
                return 0;
        PathCreate create = lstat(c, &st) < 0 ? PATH_CREATE_FILE : PATH_CREATE_NONE;
        return harden_add_entry(p, PATH_ACCESS_READ, c, why, create, PATH_SOURCE_SELF);
}

/* Where the symlink at `link` leads, canonical (*ret), also when it ends nowhere: then what it
 * names, its directory resolved. 0, or -errno when it cannot be told. */
static int link_target(const char *link, char **ret) {
        char buf[PATH_MAX];
        _cleanup_free_ char *cur = NULL;

        if (path_realpath_fast(link, buf)) {
                *ret = strdup(buf);
                return *ret ? 0 : -ENOMEM;
        }
        cur = strdup(link);
        if (!cur)
                return -ENOMEM;
        for (unsigned hop = 0; hop < DANGLING_HOPS; hop++) {
                struct stat st;
                if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
                        return plan_path_canonicalize(cur, ret);
                ssize_t n = readlink(cur, buf, sizeof(buf) - 1);
                if (n <= 0)
                        return -errno;
                buf[n] = 0;
                char *next;
                if (buf[0] == '/')
                        next = strdup(buf);
                else {
                        _cleanup_free_ char *dir = strdup(cur);
                        char *slash = dir ? strrchr(dir, '/') : NULL;
                        if (!slash)
                                return -ENOMEM;
                        slash[slash == dir ? 1 : 0] = 0;
                        next = path_join(dir, buf);
                }
                if (!next)
                        return -ENOMEM;
                free(cur);
                cur = next;
        }
        return -ELOOP;
}

static int check_target(Plan *p, const char *home, const char *link, const char *target) {
        _cleanup_free_ char *why = NULL;
        /* A way to the whole file system or the home (wine's dosdevices/z: -> /) is no
         * configuration of its own: what lies below it that the user's programs read, they
         * reach by the other links. */
        if (path_startswith(home, target))
                return 0;
        if (!writable(p, target) && !holds_write_entry(p, target))
                return 0;
        if (asprintf(&why, WHY_LINK, link) < 0)
                return -ENOMEM;
        return keep_read_only(p, target, why, true);
}

static int check_link(Plan *p, const char *home, const char *link) {
        _cleanup_free_ char *target = NULL;
        if (link_target(link, &target) < 0)
                return 0;       /* cannot be followed: nothing outside follows it either */
        return check_target(p, home, link, target);
}

/* Whether `dir` (canonical) is the mount of a FUSE shim (docs/shim.md): every entry there is a
 * link to scudo, listed per caller, and reading them costs the shim a round trip each. */
static bool is_shim_mount(const char *dir) {
        struct statfs fs;
        if (statfs(dir, &fs) < 0 || fs.f_type != FUSE_SUPER_MAGIC)
                return false;
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return false;
        char *line = NULL;
        size_t n = 0, l = strlen(dir);
        bool found = false;
        while (!found && getline(&line, &n, f) > 0) {
                /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER-OPTIONS */
                char *mp = line;
                for (int i = 0; i < 4 && mp; i++)
                        if ((mp = strchr(mp, ' ')))
                                mp++;
                const char *sep = mp ? strstr(mp, " - ") : NULL;
                found = sep && strncmp(mp, dir, l) == 0 && mp[l] == ' ' &&
                        startswith(sep, " - fuse.scudo-shim ");
        }
        free(line);
        fclose(f);
        return found;
}

typedef struct Walk {
        Plan *p;
        char **queue;           /* directories to read, shallowest first */
        unsigned *depth;
        size_t n, allocated, next;
        unsigned budget;
        bool below_home;        /* the directory read lies in the home */
        const char *home;       /* canonical */
} Walk;

static int walk_push(Walk *w, const char *dir, unsigned depth) {
        if (w->n == w->allocated) {
                size_t a = w->allocated ? w->allocated * 2 : 64;
                char **q = reallocarray(w->queue, a, sizeof(char *));
                if (!q)
                        return -ENOMEM;
                w->queue = q;
                unsigned *d = reallocarray(w->depth, a, sizeof(unsigned));
                if (!d)
                        return -ENOMEM;
                w->depth = d;
                w->allocated = a;
        }
        w->queue[w->n] = strdup(dir);
        if (!w->queue[w->n])
                return -ENOMEM;
        w->depth[w->n++] = depth;
        return 0;
}

/* Reads `dir` when the user owns it (the user's configuration is what the user owns): every
 * symlink in it checked, in the home itself only the dot-files; gone into below the home, its
 * dot-directories, below them every directory, to max_depth. A directory the command may write
 * is the run's own, not the user's configuration: not gone into (what the run makes there is
 * judged when it ends). max_depth 0: the directory alone ($PATH's). */
static int walk_dir(Walk *w, const char *dir, unsigned depth, unsigned max_depth) {
        _cleanup_close_ int fd = path_open_no_symlinks(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        struct stat dst;
        if (fd < 0)
                return fd == -ENOMEM ? fd : 0;  /* gone, unreadable, or reached through a symlink */
        /* /usr/bin's links are the system's, and so are root's directories outside its home
         * when root runs scudo. */
        if (fstat(fd, &dst) < 0 || dst.st_uid != geteuid() ||
            (depth > 0 && dst.st_uid == 0 && !w->below_home))
                return 0;
        DIR *d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        int r = 0;
        struct dirent *e;
        while (r >= 0 && (e = readdir(d))) {
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                unsigned char type = e->d_type;
                _cleanup_free_ char *x = path_join(dir, e->d_name);
                if (!x) {
                        r = -ENOMEM;
                        break;
                }
                if (type == DT_UNKNOWN) {
                        struct stat st;
                        if (lstat(x, &st) < 0)
                                continue;
                        type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
                }
                /* In the home itself only the dot-files are configuration (~/src -> /data/src is
                 * a way to the user's work); ~/bin is read as a place of $PATH. */
                if (type == DT_LNK && (depth > 0 || e->d_name[0] == '.'))
                        r = check_link(w->p, w->home, x);
                else if (type == DT_DIR && depth < max_depth && (depth > 0 || e->d_name[0] == '.') &&
                         !writable(w->p, x))
                        r = walk_push(w, x, depth + 1);
        }
        (void) closedir(d);
        return r;
}

/* Whether `c` lies in a dot-directory of `home` (the walk of the home reads it anyway). */
static bool in_dot_dir(const char *home, const char *c) {
        const char *rest = path_startswith(c, home);
        return rest && rest[0] == '/' && rest[1] == '.';
}

/* The symlinks of the home, of its dot-directories to USER_LINKS_DEPTH, and of the places of
 * plan/persistence.h elsewhere ($PATH's directories, ~/bin, $XDG_CONFIG_HOME's outside the
 * home): what each leads to, read-only where the command could write it. */
static int walk_user_links(Plan *p, const HardenContext *ctx, const char *home) {
        Walk w = { .p = p, .budget = USER_LINKS_DIRS_MAX, .home = home };
        const PersistenceRoot *roots = ctx->persistence;
        _cleanup_strv_free_ char **seen = NULL;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ctx->n_persistence; i++) {
                char c[PATH_MAX];
                if (roots[i].file || !path_realpath_fast(roots[i].path, c) || in_dot_dir(home, c) ||
                    strv_contains(seen, c) || writable(p, c))
                        continue;
                r = strv_extend(&seen, c);
                /* The shim's entries all lead to scudo: that one target is judged, and the
                 * directory is not read (a listing of it is made for this caller, and every
                 * entry looked up: milliseconds on every run through the shim). */
                if (r >= 0 && is_shim_mount(c)) {
                        char self[PATH_MAX];
                        _cleanup_free_ char *entries = path_join(c, "*");
                        if (!entries)
                                r = -ENOMEM;
                        else if (path_realpath_fast("/proc/self/exe", self))
                                r = check_target(p, home, entries, self);
                        continue;
                }
                if (r >= 0 && w.budget > 0) {
                        w.budget--;
                        w.below_home = path_startswith(c, home);
                        r = walk_dir(&w, c, 1, roots[i].deep ? USER_LINKS_DEPTH : 0);
                }
        }
        w.below_home = true;
        if (r >= 0)
                r = walk_push(&w, home, 0);
        for (; r >= 0 && w.next < w.n && w.budget > 0; w.next++, w.budget--)
                r = walk_dir(&w, w.queue[w.next], w.depth[w.next], USER_LINKS_DEPTH);
        for (size_t i = 0; i < w.n; i++)
                free(w.queue[i]);
        free(w.queue);
        free(w.depth);
        return r;
}

/* ---- git's configuration: the paths its values name ------------------------------------ */

typedef struct GitScan {
        Plan *p;
        const char *home;
} GitScan;

static char lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static bool is_separator(char c) {
        return strchr(" \t\r\n\"'=;|&()<>`,", c) != NULL;
}

/* Each word of `value` that is a path (absolute, ~/, $HOME/ or ${HOME}/; after a leading `!`,
 * an alias's shell command), read-only when it lies strictly inside a writable place. */
static int scan_value(GitScan *s, const char *what, const char *where, const char *value, size_t len) {
        size_t i = 0;
        while (i < len) {
                while (i < len && is_separator(value[i]))
                        i++;
                size_t start = i;
                while (i < len && !is_separator(value[i]))
                        i++;
                const char *word = value + start;
                size_t wl = i - start;
                while (wl > 0 && (*word == '!' || *word == ':')) {
                        word++;
                        wl--;
                }
                _cleanup_free_ char *path = NULL, *c = NULL, *why = NULL;
                static const char * const home_forms[] = { "~/", "$HOME/", "${HOME}/" };
                if (wl > 0 && word[0] == '/')
                        path = strndup(word, wl);
                else
                        for (size_t k = 0; k < ELEMENTSOF(home_forms) && s->home; k++) {
                                size_t hl = strlen(home_forms[k]);
                                if (wl > hl && strncmp(word, home_forms[k], hl) == 0) {
                                        _cleanup_free_ char *rest = strndup(word + hl, wl - hl);
                                        if (!rest)
                                                return -ENOMEM;
                                        path = path_join(s->home, rest);
                                        if (!path)
                                                return -ENOMEM;
                                        break;
                                }
                        }
                if (!path) {
                        if (wl > 0 && word[0] == '/')
                                return -ENOMEM;
                        continue;
                }
                if (plan_path_canonicalize(path, &c) < 0 || !harden_writable_from_above(s->p, c))
                        continue;
                if (asprintf(&why, WHY_GIT_NAMES, what, where) < 0)
                        return -ENOMEM;
                int r = keep_read_only(s->p, c, why, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The values of the git configuration `text`, each scanned (scan_value). Read line by line:
 * a section header sets the section ([includeIf "gitdir:~/work/"]'s condition is no path git
 * runs or reads), `name = value` gives a value, continued lines included. safe.directory names
 * a repository to work in, not something git runs: skipped; so are includes, which the walk
 * follows (git_target). */
static int scan_config_text(GitScan *s, const char *where, const char *text, size_t n) {
        char section[64] = "", key[128];
        size_t i = 0;
        while (i < n) {
                const char *nl = memchr(text + i, '\n', n - i);
                size_t eol = nl ? (size_t) (nl - text) : n;
                /* a value continued on the next line by a backslash */
                while (eol < n && eol > i && text[eol - 1] == '\\') {
                        nl = memchr(text + eol + 1, '\n', n - eol - 1);
                        eol = nl ? (size_t) (nl - text) : n;
                }
                size_t p = i;
                while (p < eol && (text[p] == ' ' || text[p] == '\t'))
                        p++;
                if (p < eol && text[p] == '[') {
                        size_t l = 0;
                        for (p++; p < eol && l < sizeof(section) - 1 && !strchr(" \t\".]", text[p]); p++)
                                section[l++] = lower(text[p]);
                        section[l] = 0;
                        /* an entry may follow the header on its line: [core] pager = x */
                        const char *close = memchr(text + p, ']', eol - p);
                        p = close ? (size_t) (close - text) + 1 : eol;
                        while (p < eol && (text[p] == ' ' || text[p] == '\t'))
                                p++;
                }
                const char *eq = p < eol ? memchr(text + p, '=', eol - p) : NULL;
                if (eq && text[p] != '#' && text[p] != ';') {
                        size_t kl = 0;
                        for (size_t k = p; k < (size_t) (eq - text) && kl < sizeof(key) - 1; k++)
                                if (text[k] != ' ' && text[k] != '\t')
                                        key[kl++] = lower(text[k]);
                        key[kl] = 0;
                        bool include = streq(key, "path") &&
                                       (streq(section, "include") || streq(section, "includeif"));
                        if (!include && !(streq(section, "safe") && streq(key, "directory"))) {
                                char what[200];
                                (void) snprintf(what, sizeof(what), "%s.%s", section, key);
                                int r = scan_value(s, what, where, eq + 1, eol - (size_t) (eq + 1 - text));
                                if (r < 0)
                                        return r;
                        }
                }
                i = eol < n ? eol + 1 : n;
        }
        return 0;
}

/* An include's file, or $GIT_CONFIG_GLOBAL's: read-only where the command could write it. */
static int keep_config_file(Plan *p, const char *path, const char *who) {
        _cleanup_free_ char *c = NULL, *why = NULL;
        if (plan_path_canonicalize(path, &c) < 0 || !harden_writable_from_above(p, c))
                return 0;
        if (asprintf(&why, "%s %s, git's configuration: what it sets (programs to run among it) applies "
                     "outside the sandbox: read-only", who, path) < 0)
                return -ENOMEM;
        return keep_read_only(p, c, why, true);
}

static int git_target(const char *path, void *userdata) {
        GitScan *s = userdata;
        return keep_config_file(s->p, path, "git's configuration includes");
}

static int git_visit(const char *canonical, const GitConfigFiltered *f, void *userdata) {
        GitScan *s = userdata;
        _cleanup_free_ char *text = NULL;
        size_t size;
        (void) f;       /* less its credentials: a credential helper is a program too */
        if (read_regular_file(canonical, GIT_CONFIG_SCAN_MAX, &text, &size) < 0)
                return 0;
        return scan_config_text(s, canonical, text, size);
}

/* The user's git configuration (git-config.txt, FILES): $GIT_CONFIG_GLOBAL's file in place of
 * ~/.gitconfig and $XDG_CONFIG_HOME/git/config, $GIT_CONFIG_SYSTEM's in place of
 * /etc/gitconfig, and the GIT_CONFIG_COUNT pairs of the environment; every file they include. */
static int scan_git_config(Plan *p, const HardenContext *ctx, const char *home) {
        GitScan s = { .p = p, .home = home };
        const char *global = env_get(ctx->environ, "GIT_CONFIG_GLOBAL");
        const char *system = env_get(ctx->environ, "GIT_CONFIG_SYSTEM");
        _cleanup_strv_free_ char **start = NULL;
        int r = 0;

        if (global && *global) {
                r = keep_config_file(p, global, "$GIT_CONFIG_GLOBAL names");
                if (r >= 0)
                        r = strv_extend(&start, global);
        } else if (home) {
                bool xdg = ctx->config_home && path_is_absolute(ctx->config_home);
                _cleanup_free_ char *a = xdg ? path_join(ctx->config_home, "git/config") :
                                               path_join(home, ".config/git/config");
                _cleanup_free_ char *b = path_join(home, ".gitconfig");
                if (!a || !b)
                        return -ENOMEM;
                r = strv_extend(&start, a);
                if (r >= 0)
                        r = strv_extend(&start, b);
        }
        if (r >= 0 && system && *system) {
                r = keep_config_file(p, system, "$GIT_CONFIG_SYSTEM names");
                if (r >= 0)
                        r = strv_extend(&start, system);
        } else if (r >= 0)
                r = strv_extend(&start, "/etc/gitconfig");
        if (r < 0)
                return r;
        r = git_config_walk(start, home, &(GitConfigVisitor) {
                .target = git_target, .visit = git_visit, .userdata = &s });
        if (r == -ENOMEM)
                return r;

        /* GIT_CONFIG_COUNT=n, GIT_CONFIG_KEY_i, GIT_CONFIG_VALUE_i: configuration too */
        const char *count = env_get(ctx->environ, "GIT_CONFIG_COUNT");
        unsigned long n = count ? strtoul(count, NULL, 10) : 0;
        for (unsigned long i = 0; i < n && i < 1024; i++) {
                char name[64];
                (void) snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%lu", i);
                const char *v = env_get(ctx->environ, name);
                (void) snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%lu", i);
                const char *k = env_get(ctx->environ, name);
                if (!v || (k && strcasecmp(k, "safe.directory") == 0))
                        continue;
                r = scan_value(&s, k ? k : name, "the environment (GIT_CONFIG_COUNT)", v, strlen(v));
                if (r < 0)
                        return r;
        }
        return 0;
}

int harden_user_config(Plan *p, const HardenContext *ctx) {
        _cleanup_free_ char *home = NULL;
        if (ctx->home && path_is_absolute(ctx->home) && plan_path_canonicalize(ctx->home, &home) == -ENOMEM)
                return -ENOMEM;
        int r = home ? walk_user_links(p, ctx, home) : 0;
        if (r >= 0)
                r = scan_git_config(p, ctx, home);
        return r;
}
