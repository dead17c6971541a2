/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's leads-out rule (harden-leads-out.h): the entries that lead out of a
 * directory the command may write, found in O(n log n) rather than by comparing every pair of
 * entries, and taken out of the plan with their reason. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/harden-leads-out.h"
#include "util/path-util.h"
#include "util/strv.h"

/* The part of `raw` that resolving it walks through before its first "..", normalized: up to
 * there, every component is looked up below the one before it. */
static int walked_prefix(const char *raw, char **ret) {
        _cleanup_free_ char *s = strdup(raw);
        if (!s)
                return -ENOMEM;
        for (char *d = s; (d = strstr(d, "/..")); d++)
                if (d[3] == 0 || d[3] == '/') {
                        d[d == s ? 1 : 0] = 0;
                        break;
                }
        return path_normalize(s, ret);
}

/* Below `dir`, not `dir` itself. */
static bool strictly_below(const char *path, const char *dir) {
        const char *rest = path_startswith(path, dir);
        return rest && *rest;
}

/* walked: walked_prefix() of raw, dir_walked of dir_raw. */
static bool leads_out(const char *walked, const char *canonical, const char *dir_walked,
                      const char *dir_canonical) {
        return !path_startswith(canonical, dir_canonical) &&
                (strictly_below(walked, dir_walked) || strictly_below(walked, dir_canonical));
}

int plan_path_leads_out(const char *raw, const char *canonical, const char *dir_raw,
                        const char *dir_canonical) {
        _cleanup_free_ char *walked = NULL, *dir_walked = NULL;
        int r;

        if (path_startswith(canonical, dir_canonical))
                return 0;
        r = walked_prefix(raw, &walked);
        if (r >= 0)
                r = walked_prefix(dir_raw, &dir_walked);
        if (r < 0)
                return r;
        return leads_out(walked, canonical, dir_walked, dir_canonical);
}

/* A directory the command may write (entry `first`, and `second` when another entry names it
 * the same way; SIZE_MAX if none), under one of the names resolving an entry can walk through
 * it by: as written up to its first ".." (leads_out's dir_walked), or canonical. */
typedef struct WriteDir {
        const char *key;        /* walked or canonical name */
        const char *canonical;  /* the directory's canonical path */
        size_t first, second;   /* the two lowest entry indices with this key and canonical path */
} WriteDir;

static int compare_write_dirs(const void *a, const void *b) {
        const WriteDir *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        if (c == 0)
                c = strcmp(x->canonical, y->canonical);
        if (c == 0)
                c = (x->first > y->first) - (x->first < y->first);
        return c;
}

/* By key, then by the lowest entry index: what paths_leading_out() walks through. */
static int compare_write_dirs_by_first(const void *a, const void *b) {
        const WriteDir *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        return c != 0 ? c : (x->first > y->first) - (x->first < y->first);
}

/* The lowest index j (other than i) of a directory named `key`, among dirs[0..n), that entry i
 * leads out of: one whose canonical path does not hold canonical (leads_out's first test;
 * strictly_below(walked, key) is the caller's); below `best`, else best. Only directories that
 * hold canonical are passed over, and there are no more of them than canonical has components,
 * so this takes a few steps whatever n is. */
static size_t first_left(const WriteDir *dirs, size_t n, const char *key, const char *canonical, size_t i,
                         size_t best) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(dirs[mid].key, key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t k = lo; k < n && streq(dirs[k].key, key) && dirs[k].first < best; k++) {
                if (path_startswith(canonical, dirs[k].canonical))
                        continue;
                size_t j = dirs[k].first != i ? dirs[k].first : dirs[k].second;
                if (j < best)
                        best = j;
        }
        return best;
}

/* For each of n entries (the path as written, its canonical form, its access), the index of
 * the first write entry it leads out of (plan_path_leads_out), or SIZE_MAX for none and for
 * hide and deny entries.
 *
 * Entry i leads out of write entry j when leads_out(walked[i], canonical[i], walked[j],
 * canonical[j]): walked[i] is strictly below walked[j] or canonical[j], which are therefore
 * among the prefixes of walked[i] (at a '/', or "/"). So the writable directories are sorted
 * by those two names, and each prefix of walked[i] is looked up among them; the answer is the
 * first directory in the plan's order, as comparing every pair would find it. */
static int paths_leading_out(size_t n_paths, char *const *raw, char *const *canonical,
                             const PathAccess *access, size_t *ret) {
        _cleanup_strv_free_ char **walked = calloc(n_paths + 1, sizeof(char *));
        _cleanup_free_ WriteDir *dirs = calloc(2 * n_paths + 1, sizeof(WriteDir));
        size_t n = 0;

        if (!walked || !dirs)
                return -ENOMEM;
        for (size_t i = 0; i < n_paths; i++) {
                int r = walked_prefix(raw[i], &walked[i]);
                if (r < 0)
                        return r;
                if (access[i] != PATH_ACCESS_WRITE)
                        continue;
                dirs[n++] = (WriteDir) { walked[i], canonical[i], i, SIZE_MAX };
                if (!streq(walked[i], canonical[i]))
                        dirs[n++] = (WriteDir) { canonical[i], canonical[i], i, SIZE_MAX };
        }
        /* One per key and canonical path, with its two lowest entries. */
        qsort(dirs, n, sizeof(WriteDir), compare_write_dirs);
        size_t m = 0;
        for (size_t k = 0; k < n; k++) {
                if (m > 0 && streq(dirs[m - 1].key, dirs[k].key) &&
                    streq(dirs[m - 1].canonical, dirs[k].canonical)) {
                        if (dirs[m - 1].second == SIZE_MAX && dirs[k].first != dirs[m - 1].first)
                                dirs[m - 1].second = dirs[k].first;
                        continue;
                }
                dirs[m++] = dirs[k];
        }
        qsort(dirs, m, sizeof(WriteDir), compare_write_dirs_by_first);

        for (size_t i = 0; i < n_paths; i++) {
                const char *w = walked[i];

                ret[i] = SIZE_MAX;
                if (access[i] != PATH_ACCESS_READ && access[i] != PATH_ACCESS_WRITE)
                        continue;
                size_t best = SIZE_MAX;
                if (w[0] == '/' && w[1])
                        best = first_left(dirs, m, "/", canonical[i], i, best);
                _cleanup_free_ char *prefix = strdup(w);
                if (!prefix)
                        return -ENOMEM;
                for (size_t l = 1; w[l]; l++) {
                        if (w[l] != '/' || !w[l + 1])
                                continue;
                        prefix[l] = 0;
                        best = first_left(dirs, m, prefix, canonical[i], i, best);
                        prefix[l] = '/';
                }
                ret[i] = best;
        }
        return 0;
}

/* The reason, as explain and --dry-run show it, and as a run warns (policy_resolve). */
#define WHY_LEADS_OUT "leads out of '%s', which the command may write (through a symlink it could have " \
        "planted there)"

int plan_harden_leads_out(Plan *p) {
        size_t n = p->n_paths;
        _cleanup_free_ char **raw = calloc(n + 1, sizeof(char *));
        _cleanup_free_ char **canonical = calloc(n + 1, sizeof(char *));
        _cleanup_free_ PathAccess *access = calloc(n + 1, sizeof(PathAccess));
        _cleanup_free_ size_t *out = calloc(n + 1, sizeof(size_t));
        _cleanup_free_ char **reasons = calloc(n + 1, sizeof(char *));

        if (!raw || !canonical || !access || !out || !reasons)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                raw[i] = p->paths[i].given ?: p->paths[i].path;
                canonical[i] = p->paths[i].path;
                access[i] = p->paths[i].access;
        }
        int r = paths_leading_out(n, raw, canonical, access, out);
        if (r < 0)
                return r;
        /* reasons[] has holes: what plan_drop_marked() did not take is freed here, up to n. */
        bool any = false;
        for (size_t i = 0; i < n; i++) {
                if (out[i] == SIZE_MAX)
                        continue;
                if (asprintf(&reasons[i], WHY_LEADS_OUT, p->paths[out[i]].path) < 0) {
                        reasons[i] = NULL;
                        r = -ENOMEM;
                        break;
                }
                any = true;
        }
        size_t before = p->n_dropped;
        if (r >= 0 && any)
                r = plan_drop_marked(p, reasons);
        for (size_t i = 0; i < n; i++)
                free(reasons[i]);
        if (r < 0)
                return r;
        for (size_t i = before; i < p->n_dropped; i++)
                p->dropped[i].warn = true;
        return 0;
}
