/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan/persistence.h"
#include "util/macro.h"
#include "util/path-util.h"

/* Below $XDG_CONFIG_HOME: read by the service manager, the desktop session, git, fish, and
 * scudo itself (written from a sandbox, its configuration or trust store would widen the next
 * one). */
static const char * const config_dirs[] = { "systemd", "autostart", "environment.d", "git", "fish" };

/* In the home directory: run or read as commands by a shell, a login, readline (a key bound to
 * a command line), the X session or pam_env; git's configuration names programs. */
static const char * const home_files[] = {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshenv", ".zprofile",
        ".zshrc", ".zlogin", ".zlogout", ".inputrc", ".xprofile", ".xsessionrc", ".xinitrc",
        ".pam_environment", ".gitconfig",
};

static const char *xdg(const char *value) {
        return value && path_is_absolute(value) ? value : NULL;
}

typedef struct List {
        PersistenceRoot *r;
        size_t n, allocated;
} List;

static int add(List *l, char *path, bool deep, bool file) {
        if (!path)
                return -ENOMEM;
        if (l->n == l->allocated) {
                size_t a = l->allocated ? l->allocated * 2 : 32;
                PersistenceRoot *r = reallocarray(l->r, a, sizeof(PersistenceRoot));
                if (!r) {
                        free(path);
                        return -ENOMEM;
                }
                l->r = r;
                l->allocated = a;
        }
        l->r[l->n++] = (PersistenceRoot) { .path = path, .deep = deep, .file = file };
        return 0;
}

static char *below(const char *dir, const char *fallback_home, const char *fallback, const char *name) {
        _cleanup_free_ char *base = dir ? strdup(dir) : path_join(fallback_home, fallback);
        return base ? path_join(base, name) : NULL;
}

int persistence_roots(const PersistenceEnv *env, PersistenceRoot **ret, size_t *ret_n) {
        List l = {};
        const char *config = xdg(env->config_home), *data = xdg(env->data_home),
                   *state = xdg(env->state_home);
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(config_dirs); i++)
                r = add(&l, below(config, env->home, ".config", config_dirs[i]), true, false);
        if (r >= 0)
                r = add(&l, below(data, env->home, ".local/share", "systemd"), true, false);
        if (r >= 0)
                r = add(&l, below(config, env->home, ".config", "scudo"), true, false);
        if (r >= 0)
                r = add(&l, below(state, env->home, ".local/state", "scudo"), true, false);
        if (r >= 0)
                r = add(&l, path_join(env->home, ".local/bin"), false, false);
        if (r >= 0)
                r = add(&l, path_join(env->home, "bin"), false, false);
        for (const char *p = env->path ? env->path : ""; r >= 0 && *p;) {
                const char *e = strchrnul(p, ':');
                if (*p == '/')
                        r = add(&l, strndup(p, (size_t) (e - p)), false, false);
                p = *e ? e + 1 : e;
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(home_files); i++)
                r = add(&l, path_join(env->home, home_files[i]), false, true);
        if (r < 0) {
                persistence_roots_free(l.r, l.n);
                return r;
        }
        *ret = l.r;
        *ret_n = l.n;
        return 0;
}

void persistence_roots_free(PersistenceRoot *r, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(r[i].path);
        free(r);
}

/* p lies below directory d, as strings: p starts with d and a "/" and goes on; below "/" (or
 * "") is everything. */
static bool below_dir(const char *p, size_t lp, const char *d, size_t ld) {
        if (ld == 0 || (ld == 1 && d[0] == '/'))
                return true;
        return lp > ld + 1 && memcmp(p, d, ld) == 0 && p[ld] == '/';
}

bool persistence_related(const char *c, size_t lc, const char *root, size_t lr, bool deep) {
        return (lc == lr && memcmp(c, root, lc) == 0) || below_dir(root, lr, c, lc) ||
                (deep && below_dir(c, lc, root, lr));
}
