/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/net-rule.h"
#include "plan/broker-paths.h"
#include "plan/harden-leads-out.h"
#include "plan/plan-validate.h"
#include "plan/unit-properties.h"
#include "util/env-util.h"
#include "util/error-message.h"
#include "util/path-util.h"
#include "util/strv.h"

static bool has_control_chars(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* ---- The memo of one plan's canonicalization ----
 *
 * A plan names many paths below a few directories (~/.ssh, ~/.aws, ... ~/.config/gh,
 * ~/.config/git, ...), and canonicalizing each one from scratch resolves the same prefixes
 * again and again. The memo keeps, for one plan_normalize() call, what resolving each prefix
 * it was asked about said (path_realpath_procfd(), path_probe_no_symlinks() or lstat()), and
 * answers from it when the answer is certain:
 *   - a prefix asked before: the same answer (resolved path, or ENOENT/ENOTDIR);
 *   - below a prefix that does not exist (ENOENT or ENOTDIR): does not exist either, with that
 *     errno. The kernel walks the prefix's components exactly as it did alone, the last one
 *     followed and required to be a directory, and fails at the same place;
 *   - a prefix (at a '/') of a canonical path: itself. A canonical path has no symlink, "." or
 *     ".." in it, or it would resolve elsewhere; so none of its prefixes has either. A path the
 *     resolution returned unchanged, and every resolution's result, is canonical;
 *   - a plain name directly in a canonical directory: canonical unless lstat() says it is a
 *     symlink (then it is resolved as any other path), or missing when lstat() says so;
 *   - a missing path that is its own canonical form all the same ("as written"): a plain name
 *     missing from a canonical directory (lstat), or a lexically clean path whose walk met no
 *     symlink before the missing component (path_probe_no_symlinks). Its longest existing
 *     prefix is canonical as written, and the components after it are appended as they are;
 *     so is any lexically clean path below it, whose walk fails at the same place. (It is a
 *     missing entry too: the rule above still holds for any path below it.)
 * Nothing else is derived, and the filesystem is asked exactly as before otherwise; a change
 * to the filesystem during one validation is seen as if all its paths had been resolved at
 * the moment each prefix was first asked about. */
struct PathMemoEntry {
        char *path;             /* owns the block, resolved after it */
        const char *resolved;   /* NULL: does not exist, with error */
        size_t len;             /* strlen(path) */
        int error;              /* ENOENT or ENOTDIR */
        bool canonical;         /* path is its own canonical form: so are its prefixes */
        bool as_written;        /* missing, yet its own canonical form: so are clean paths below */
};

/* The memo's entries are looked up by path, and by prefix, in trees (tsearch(3)): each key is
 * a path or a prefix of one at a '/', pointing into an entry's path (which stays where it is),
 * with the lowest index of an entry it stands for. A lookup asks for the path and each of its
 * prefixes, so it costs a few tree searches, not a pass over every entry; the answer is the
 * one of the lowest index, as a pass in order would find it:
 *   - by_path: every entry, by its path;
 *   - missing: the entries for paths that do not exist, by path;
 *   - canonical_prefixes: the entries for canonical paths, by each prefix (of more than "/");
 *   - links: the entries for paths that resolve to another name, by path. */
typedef struct MemoKey {
        const char *s;          /* not NUL-terminated at len */
        size_t len;
        size_t index;
} MemoKey;

static int compare_memo_keys(const void *a, const void *b) {
        const MemoKey *x = a, *y = b;
        int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
        return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* Adds the key unless there is one (with a lower index) already. Forgetting is always
 * correct (see memo_add), so a failure only costs system calls. */
static void memo_index(void **root, const char *s, size_t len, size_t index) {
        MemoKey *k = malloc(sizeof(MemoKey));
        if (!k)
                return;
        *k = (MemoKey) { s, len, index };
        MemoKey **found = tsearch(k, root, compare_memo_keys);
        if (!found || *found != k)
                free(k);
}

/* The lowest index under the key, or SIZE_MAX. */
static size_t memo_find(void *const *root, const char *s, size_t len) {
        MemoKey k = { s, len, 0 };
        MemoKey **found = tfind(&k, root, compare_memo_keys);
        return found ? (*found)->index : SIZE_MAX;
}

void path_memo_done(PathMemo *m) {
        tdestroy(m->by_path, free);
        tdestroy(m->missing, free);
        tdestroy(m->canonical_prefixes, free);
        tdestroy(m->links, free);
        for (size_t i = 0; i < m->n; i++)
                free(m->entries[i].path);
        free(m->entries);
        *m = (PathMemo) {};
}

/* Records what resolving path said; resolved NULL for ENOENT/ENOTDIR in error, as_written
 * when it is missing but canonical as written (see above). Forgetting is always correct, so an
 * allocation failure only costs system calls later. */
static void memo_add(PathMemo *m, const char *path, const char *resolved, int error, bool as_written) {
        size_t lp = strlen(path), lr = resolved ? strlen(resolved) : 0;

        if (m->n == m->allocated) {
                size_t na = m->allocated ? m->allocated * 2 : 16;
                PathMemoEntry *e = reallocarray(m->entries, na, sizeof(PathMemoEntry));
                if (!e)
                        return;
                m->entries = e;
                m->allocated = na;
        }
        char *b = malloc(lp + 1 + (resolved ? lr + 1 : 0));
        if (!b)
                return;
        memcpy(b, path, lp + 1);
        if (resolved)
                memcpy(b + lp + 1, resolved, lr + 1);
        size_t i = m->n++;
        PathMemoEntry *e = &m->entries[i];
        *e = (PathMemoEntry) {
                .path = b,
                .resolved = resolved ? b + lp + 1 : NULL,
                .len = lp,
                .error = error,
                .canonical = resolved && lp == lr && memcmp(path, resolved, lp) == 0,
                .as_written = !resolved && as_written,
        };
        memo_index(&m->by_path, b, lp, i);
        if (!resolved)
                memo_index(&m->missing, b, lp, i);
        else if (!e->canonical)
                memo_index(&m->links, b, lp, i);
        else
                for (size_t l = 2; l < lp; l++)
                        if (b[l] == '/')
                                memo_index(&m->canonical_prefixes, b, l, i);
}

/* The memo's answer for `path`: 1 with resolved filled in, 0 with errno set (ENOENT or
 * ENOTDIR) and *ret_as_written telling whether it is canonical as written all the same, or
 * -ENODATA when it does not know the path. */
static int memo_lookup(const PathMemo *m, const char *path, char resolved[static PATH_MAX],
                       bool *ret_as_written) {
        size_t l = strlen(path);

        *ret_as_written = false;
        /* The entry for the path itself; one for a prefix of it that does not exist (then
         * neither does the path); one for a canonical path it is a prefix of (then it is
         * canonical). The lowest index wins. */
        size_t same = memo_find(&m->by_path, path, l), missing = SIZE_MAX;
        for (size_t k = 1; k < l; k++)
                if (path[k] == '/') {
                        size_t i = memo_find(&m->missing, path, k);
                        if (i < missing)
                                missing = i;
                }
        size_t prefix = l > 1 ? memo_find(&m->canonical_prefixes, path, l) : SIZE_MAX;

        if (same < missing && same < prefix) {
                const PathMemoEntry *e = &m->entries[same];
                if (!e->resolved) {
                        *ret_as_written = e->as_written;
                        errno = e->error;
                        return 0;
                }
                memcpy(resolved, e->resolved, strlen(e->resolved) + 1);
                return 1;
        }
        if (missing < prefix) {
                const PathMemoEntry *e = &m->entries[missing];
                *ret_as_written = e->as_written && path_is_lexically_clean(path);
                errno = e->error;
                return 0;
        }
        if (prefix != SIZE_MAX) {
                memcpy(resolved, path, l + 1);
                return 1;
        }
        return -ENODATA;
}

/* A path whose parent the memo knows to be canonical, and whose last component is a plain
 * name: one lstat() tells whether it is canonical too (anything but a symlink is), or does not
 * exist (and is then canonical as written: the parent's canonical form and the name).
 * 1: canonical; -ENOENT or -ENOTDIR: does not exist; -ELOOP: a symlink, to be resolved the
 * long way; -EINVAL: not such a path; another negative errno: lstat() could not tell. It
 * costs one path walk, where opening it and reading /proc/self/fd back costs several. */
static int resolve_below_canonical(PathMemo *m, const char *path) {
        char parent[PATH_MAX];
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : NULL;
        size_t pl;
        struct stat st;
        bool as_written;

        if (!slash || slash == path || !*name || streq(name, ".") || streq(name, ".."))
                return -EINVAL;
        pl = (size_t) (slash - path);
        if (pl >= sizeof(parent) || path[pl - 1] == '/')
                return -EINVAL;
        memcpy(parent, path, pl);
        parent[pl] = 0;
        char presolved[PATH_MAX];
        if (memo_lookup(m, parent, presolved, &as_written) != 1 || !streq(presolved, parent))
                return -EINVAL;
        if (lstat(path, &st) < 0)
                return negative_errno();
        return S_ISLNK(st.st_mode) ? -ELOOP : 1;
}

/* Whether the memo knows a prefix of path (at a '/') that resolves to another name: a symlink
 * in it, for a lexically clean path (see resolve_prefix). */
static bool memo_below_link(const PathMemo *m, const char *path) {
        for (size_t k = 1; path[k]; k++)
                if (path[k] == '/' && memo_find(&m->links, path, k) != SIZE_MAX)
                        return true;
        return false;
}

/* Resolves `path`, through the memo when there is one: 1 with resolved filled in; 0 when it
 * does not exist (ENOENT, ENOTDIR), with *ret_as_written telling whether it is canonical as
 * written all the same (see the memo); or negative errno. In that order: the memo, one lstat()
 * (resolve_below_canonical), one openat2() (path_probe_no_symlinks), then open() and readlink
 * of /proc/self/fd (path_realpath_procfd), each only when the one before cannot tell.
 *
 * openat2() is skipped where it could only refuse (ELOOP), which would make the path cost one
 * system call more than it did before it: when lstat() just found the last component to be a
 * symlink; when the memo knows a prefix that resolves elsewhere (a symlinked home directory:
 * every path below it); and once a probe met a symlink in a path that *symlink_seen is kept
 * for (the prefixes of one path, stripped one by one while they are missing: any of them that
 * is missing holds that symlink too, since the components before it exist and are no
 * symlinks; the first that does not hold it exists, and costs the old three calls). Skipping it
 * only ever leaves the answer to path_realpath_procfd(), which is always right. */
static int resolve_prefix(PathMemo *m, const char *path, char resolved[static PATH_MAX],
                          bool *ret_as_written, bool *symlink_seen) {
        size_t l = strlen(path);
        int r = -ENODATA;       /* nothing asked yet */

        *ret_as_written = false;
        if (l >= PATH_MAX)
                return -ENAMETOOLONG;
        if (m) {
                r = memo_lookup(m, path, resolved, ret_as_written);
                if (r >= 0)
                        return r;
                r = resolve_below_canonical(m, path);
                if (r > 0) {
                        memcpy(resolved, path, l + 1);
                        memo_add(m, path, resolved, 0, false);
                        return 1;
                }
                if (r == -ENOENT || r == -ENOTDIR) {
                        memo_add(m, path, NULL, -r, true);
                        *ret_as_written = true;
                        return 0;
                }
        }
        if (r != -ELOOP && !*symlink_seen && !(m && memo_below_link(m, path))) {
                r = path_probe_no_symlinks(path);
                if (r == -ELOOP)
                        *symlink_seen = true;
                if (r > 0) {
                        memcpy(resolved, path, l + 1);
                        if (m)
                                memo_add(m, path, resolved, 0, false);
                        return 1;
                }
                if (r == -ENOENT || r == -ENOTDIR) {
                        if (m)
                                memo_add(m, path, NULL, -r, true);
                        *ret_as_written = true;
                        return 0;
                }
        }
        if (!path_realpath_procfd(path, resolved)) {
                int error = errno;
                if (error != ENOENT && error != ENOTDIR)
                        return error > 0 ? -error : -EIO;
                if (m)
                        memo_add(m, path, NULL, error, false);
                return 0;
        }
        if (m) {
                memo_add(m, path, resolved, 0, false);
                if (!streq(path, resolved))
                        memo_add(m, resolved, resolved, 0, false);
        }
        return 1;
}

int plan_path_canonicalize_memo(PathMemo *memo, const char *path, char **ret) {
        char work[PATH_MAX], resolved[PATH_MAX];
        /* The stripped components, as [start, end) ranges of `path`, innermost first. */
        struct { size_t start, end; } rest[PATH_MAX / 2];
        size_t nrest = 0, cut;

        if (!path_is_absolute(path) || has_control_chars(path))
                return -EINVAL;
        cut = strlen(path);
        if (cut >= sizeof(work))
                return -ENAMETOOLONG;
        memcpy(work, path, cut + 1);

        /* Strip components from the end until what is left exists ("/" always does), or is
         * known to be canonical as written though it does not: then its longest existing
         * prefix resolves to itself, and the components after that are applied as below. */
        bool symlink_seen = false;
        for (;;) {
                bool as_written;
                int r = resolve_prefix(memo, work, resolved, &as_written, &symlink_seen);
                if (r < 0)
                        return r;
                if (r > 0)
                        break;
                if (as_written) {
                        memcpy(resolved, work, cut + 1);
                        break;
                }
                char *slash = strrchr(work, '/');
                size_t pos = (size_t) (slash - work);
                if (pos + 1 < cut && nrest < ELEMENTSOF(rest)) {
                        rest[nrest].start = pos + 1;
                        rest[nrest].end = cut;
                        nrest++;
                }
                if (pos == 0) {
                        work[1] = 0;
                        cut = 1;
                } else {
                        work[pos] = 0;
                        cut = pos;
                }
        }

        /* Apply them, outermost first, with "." and ".." taken lexically: nothing below an
         * existing prefix exists, so no symlink can change their meaning. */
        size_t len = strlen(resolved);
        for (size_t i = nrest; i > 0; i--) {
                const char *c = path + rest[i - 1].start;
                size_t cl = rest[i - 1].end - rest[i - 1].start;
                if (cl == 0 || (cl == 1 && c[0] == '.'))
                        continue;
                if (cl == 2 && c[0] == '.' && c[1] == '.') {
                        char *s = strrchr(resolved, '/');
                        if (s == resolved)
                                len = 1;
                        else
                                len = (size_t) (s - resolved);
                        resolved[len] = 0;
                        continue;
                }
                bool root = len == 1;
                if (len + !root + cl >= sizeof(resolved))
                        return -ENAMETOOLONG;
                if (!root)
                        resolved[len++] = '/';
                memcpy(resolved + len, c, cl);
                len += cl;
                resolved[len] = 0;
        }

        char *r = strdup(resolved);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

int plan_path_canonicalize(const char *path, char **ret) {
        return plan_path_canonicalize_memo(NULL, path, ret);
}

static int compare_indexed_paths(const void *a, const void *b, void *userdata) {
        const PlanPath *paths = userdata;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        int c = strcmp(paths[x].path, paths[y].path);
        return c != 0 ? c : (x > y) - (x < y);
}

/* One entry per path: the later one wins, as it did in the profiles. Among the entries not
 * dropped, sorted by path then position, each but the last of a path goes. A derived entry
 * that wins over a deny (two paths as written that are one path) says where the deny was, as
 * build.lua does for one path as written: the hardening step decides (plan-harden.h). */
static int drop_repeated(Plan *p, bool *drop) {
        _cleanup_free_ size_t *order = calloc(p->n_paths + 1, sizeof(size_t));

        if (!order)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < p->n_paths; i++)
                if (!drop[i])
                        order[n++] = i;
        qsort_r(order, n, sizeof(size_t), compare_indexed_paths, p->paths);
        for (size_t k = 0; k + 1 < n; k++) {
                PlanPath *old = &p->paths[order[k]], *e = &p->paths[order[k + 1]];
                if (!streq(old->path, e->path))
                        continue;
                drop[order[k]] = true;
                const char *deny = old->access == PATH_ACCESS_DENY ? old->origin : old->over_deny;
                if (e->derived && e->access != PATH_ACCESS_DENY && deny && !e->over_deny &&
                    !(e->over_deny = strdup(strempty(deny))))
                        return -ENOMEM;
                if (e->derived && e->access == PATH_ACCESS_WRITE && old->access != PATH_ACCESS_DENY &&
                    !e->over_origin) {
                        if (!(e->over_origin = strdup(strempty(old->origin))))
                                return -ENOMEM;
                        e->over_access = old->access;
                }
        }
        return 0;
}

/* Every path canonical, what the hardening step's leads-out rule takes out of the plan taken
 * out (harden-leads-out.h: before one entry per path, as which entry wins depends on it), then
 * one entry per path. */
static int normalize_paths(Plan *p, char **ret_error) {
        if (p->n_paths > PLAN_PATHS_MAX) {
                const PlanPath *e = &p->paths[PLAN_PATHS_MAX];
                return error_message(ret_error, -EINVAL, "%s: filesystem.%s: more than %d filesystem paths "
                                     "in one plan; that is the most scudo takes (each one is a mount in the "
                                     "sandbox)", strempty(e->origin), path_access_to_string(e->access),
                                     PLAN_PATHS_MAX);
        }

        _cleanup_(path_memo_done) PathMemo memo = {};
        for (size_t i = 0; i < p->n_paths; i++) {
                PlanPath *e = &p->paths[i];
                _cleanup_free_ char *c = NULL;

                if (e->access < 0 || e->access >= _PATH_ACCESS_MAX)
                        return error_message(ret_error, -EINVAL, "%s: bad access mode", strempty(e->origin));
                if (!e->path || !path_is_absolute(e->path))
                        return error_message(
                                ret_error, -EINVAL, "%s: filesystem.%s: '%s' is not an absolute path",
                                strempty(e->origin), path_access_to_string(e->access), strempty(e->path));
                int r = plan_path_canonicalize_memo(&memo, e->path, &c);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_message(ret_error, -EINVAL, "%s: filesystem.%s: cannot resolve '%s': "
                                             "%s", strempty(e->origin), path_access_to_string(e->access),
                                             e->path, strerror(-r));
                /* Refused as it is seen, as a later entry for "/" would take its place. */
                if (streq(c, "/") && (e->access == PATH_ACCESS_HIDE || e->access == PATH_ACCESS_DENY))
                        return error_message(ret_error, -EINVAL,
                                             "%s: filesystem.%s: '/' would leave nothing to run",
                                             strempty(e->origin), path_access_to_string(e->access));
                /* The path as given is kept for the leads-out rule (and the warning it makes),
                 * and for explain, which shows the entry as it was written by it. */
                free(e->given);
                e->given = e->path;
                e->path = TAKE_PTR(c);
        }

        int r = plan_harden_leads_out(p);
        if (r < 0)
                return r;

        _cleanup_free_ bool *drop = calloc(p->n_paths + 1, sizeof(bool));
        if (!drop)
                return -ENOMEM;
        r = drop_repeated(p, drop);
        if (r < 0)
                return r;
        size_t k = 0;
        for (size_t i = 0; i < p->n_paths; i++) {
                if (drop[i]) {
                        plan_path_done(&p->paths[i]);
                        continue;
                }
                p->paths[k++] = p->paths[i];
        }
        p->n_paths = k;
        return 0;
}

static int validate_rules(char **rules, const char *key, char **ret_error) {
        STRV_FOREACH(r, rules) {
                NetRule rule;
                const char *reason = NULL;
                if (net_rule_parse_reason(*r, &rule, &reason) < 0)
                        return error_message(ret_error, -EINVAL, "%s: bad rule '%s': %s", key, *r,
                                             reason ?: "does not parse");
        }
        return 0;
}

/* The log target's directory canonical, as scudo opens the file refusing any symlink on the
 * way (net-session.c); the file's own name is kept: a symlink there is refused, not followed.
 * What is not an absolute path to a file is left for plan_check() to refuse. */
static int normalize_log_target(Plan *p, char **ret_error) {
        _cleanup_free_ char *n = NULL, *dir = NULL, *c = NULL;

        if (!p->log_target || streq(p->log_target, "stderr") || streq(p->log_target, "journald") ||
            !path_is_absolute(p->log_target))
                return 0;
        int r = path_normalize(p->log_target, &n);
        if (r == -ENOMEM)
                return r;
        char *slash = r < 0 ? NULL : strrchr(n, '/');
        if (!slash || !slash[1])
                return 0;
        dir = strndup(n, slash == n ? 1 : (size_t) (slash - n));
        if (!dir)
                return -ENOMEM;
        r = plan_path_canonicalize(dir, &c);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_message(ret_error, -EINVAL, "log.target: cannot resolve '%s': %s", dir,
                                     strerror(-r));
        char *t = path_join(c, slash + 1);
        if (!t)
                return -ENOMEM;
        free(p->log_target);
        p->log_target = t;
        return 0;
}

int plan_normalize(Plan *p, char **ret_error) {
        int r = normalize_paths(p, ret_error);
        if (r < 0)
                return r;
        return normalize_log_target(p, ret_error);
}

int plan_check(const Plan *p, char **ret_error) {
        int r;

        if (!p->exec_path || !path_is_absolute(p->exec_path))
                return error_message(ret_error, -EINVAL, "the command's executable '%s' is not an absolute "
                                     "path", strempty(p->exec_path));
        if (strv_length(p->argv) == 0)
                return error_message(ret_error, -EINVAL, "the command line is empty");
        if (p->working_directory && !path_is_absolute(p->working_directory))
                return error_message(ret_error, -EINVAL, "the working directory '%s' is not absolute",
                                     p->working_directory);

        /* No grant reaches a delegation broker: only the hardening step binds one, and only
         * into the sandbox it serves (broker-paths.h). */
        _cleanup_free_ char *broker_root = NULL;
        r = plan_broker_root(getuid(), &broker_root);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                if ((e->access == PATH_ACCESS_WRITE || e->access == PATH_ACCESS_READ) &&
                    path_startswith(e->path, broker_root))
                        return error_message(ret_error, -EINVAL, "%s: %s is where the delegation brokers' "
                                             "sockets are, which no profile can grant", strempty(e->origin),
                                             e->path);
        }

        for (size_t i = 0; i < p->n_properties; i++) {
                const PlanProperty *q = &p->properties[i];
                _cleanup_free_ char *error = NULL;
                if (!q->name || !q->value)
                        return error_message(ret_error, -EINVAL, "%s: incomplete unit property",
                                             strempty(q->origin));
                r = unit_property_check(q->name, q->value, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_message(ret_error, -EINVAL, "%s: %s", strempty(q->origin),
                                             error ?: "invalid unit property");
        }

        r = validate_rules(p->net_allow, "network.allow", ret_error);
        if (r < 0)
                return r;
        r = validate_rules(p->net_deny, "network.deny", ret_error);
        if (r < 0)
                return r;
        if (!p->network_filtered && (p->net_allow || p->net_deny))
                return error_message(ret_error, -EINVAL, "network rules in a plan whose network is not "
                                     "filtered");
        if (p->dns < 0 || p->dns >= _DNS_MODE_MAX)
                return error_message(ret_error, -EINVAL, "network.dns: bad mode");
        if (p->dbus < 0 || p->dbus >= _DBUS_MODE_MAX)
                return error_message(ret_error, -EINVAL, "dbus.session: bad mode");
        if (p->dbus == DBUS_ALLOW && strv_length(p->delegate) > 0)
                return error_message(ret_error, -EINVAL, "delegate needs a sealed sandbox, but dbus.session "
                                     "= \"allow\" gives the command the real session bus; refusing the "
                                     "combination");
        if (p->dbus_system < 0 || p->dbus_system >= _DBUS_MODE_MAX)
                return error_message(ret_error, -EINVAL, "dbus.system: bad mode");
        if (p->dbus_system == DBUS_ALLOW && strv_length(p->delegate) > 0)
                return error_message(ret_error, -EINVAL,
                                     "delegate needs a sealed sandbox, but dbus.system = \"allow\" gives "
                                     "the command the real system bus; refusing the combination");

        STRV_FOREACH(e, p->environment) {
                if (!env_assignment_is_valid(*e))
                        return error_message(ret_error, -EINVAL, "environment: '%s' is not NAME=VALUE (or "
                                             "holds what systemd cannot carry)", *e);
        }
        STRV_FOREACH(e, p->unset_environment)
                if (!env_name_is_valid(*e, strlen(*e)))
                        return error_message(ret_error, -EINVAL, "environment: '%s' is not a variable name",
                                             *e);

        if (p->log_target && !streq(p->log_target, "stderr") && !streq(p->log_target, "journald")) {
                if (!path_is_absolute(p->log_target))
                        return error_message(ret_error, -EINVAL, "log.target: '%s' is not stderr, journald "
                                             "or an absolute path", p->log_target);
                _cleanup_free_ char *n = NULL;
                r = path_normalize(p->log_target, &n);
                if (r < 0)
                        return r == -ENOMEM ? r : error_message(ret_error, -EINVAL, "log.target: bad path "
                                                                "'%s'", p->log_target);
                if (!strrchr(n, '/')[1])
                        return error_message(ret_error, -EINVAL, "log.target: '%s' is a directory, not a "
                                             "file", p->log_target);
        }
        STRV_FOREACH(k, p->log_report)
                if (!streq(*k, "file") && !streq(*k, "net") && !streq(*k, "dns"))
                        return error_message(ret_error, -EINVAL, "log.report: unknown kind '%s'", *k);
        return 0;
}
