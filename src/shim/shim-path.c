/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shim/shim-path.h"
#include "util/macro.h"
#include "util/strv.h"

bool shim_name_is_listable(const char *name) {
        size_t l = name ? strlen(name) : 0;
        return l > 0 && l <= NAME_MAX && !strchr(name, '/') && !streq(name, ".") && !streq(name, "..") &&
               !streq(name, "scudo");
}

/* Whether the PATH entry p[0..len) names the directory `mount` (trailing slashes aside). */
static bool entry_is(const char *p, size_t len, const char *mount) {
        size_t m = strlen(mount);
        while (m > 1 && mount[m - 1] == '/')
                m--;
        while (len > 1 && p[len - 1] == '/')
                len--;
        return len == m && memcmp(p, mount, m) == 0;
}

int shim_search_path(const char *path_env, const char *mount, char **ret) {
        if (!path_env)
                path_env = "/usr/local/bin:/usr/bin:/bin";
        size_t n = strlen(path_env);
        _cleanup_free_ char *out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        bool after = false, seen = false;

        /* First pass: is the shim there at all? */
        for (const char *p = path_env; ; ) {
                const char *e = strchrnul(p, ':');
                if (entry_is(p, (size_t) (e - p), mount)) {
                        seen = true;
                        break;
                }
                if (!*e)
                        break;
                p = e + 1;
        }
        if (!seen) {
                *ret = NULL;
                return 0;
        }
        after = false;
        for (const char *p = path_env; ; ) {
                const char *e = strchrnul(p, ':');
                size_t len = (size_t) (e - p);
                if (entry_is(p, len, mount))
                        after = true;
                else if (after && len > 0 && p[0] == '/') {
                        if (o > 0)
                                out[o++] = ':';
                        memcpy(out + o, p, len);
                        o += len;
                }
                if (!*e)
                        break;
                p = e + 1;
        }
        out[o] = 0;
        *ret = TAKE_PTR(out);
        return 1;
}

const char *shim_environ_get(const char *block, size_t size, const char *name) {
        size_t nl = strlen(name);
        for (size_t i = 0; i < size; ) {
                const char *e = memchr(block + i, 0, size - i);
                if (!e)
                        return NULL;    /* cut short: not this one */
                size_t len = (size_t) (e - (block + i));
                if (len > nl && memcmp(block + i, name, nl) == 0 && block[i + nl] == '=')
                        return block + i + nl + 1;
                i += len + 1;
        }
        return NULL;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

int shim_names_parse(const char *text, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        size_t n = 0;
        for (const char *p = text ?: ""; *p; ) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *name = strndup(p, len);
                if (!name)
                        return -ENOMEM;
                if (shim_name_is_listable(name)) {
                        if (strv_extend(&l, name) < 0)
                                return -ENOMEM;
                        n++;
                }
                p += len;
                if (*p)
                        p++;
        }
        qsort(l, n, sizeof(char *), cmp_str);
        /* each once */
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
                if (w > 0 && streq(l[w - 1], l[i])) {
                        free(l[i]);
                        continue;
                }
                l[w++] = l[i];
        }
        l[w] = NULL;
        *ret = TAKE_PTR(l);
        return 0;
}

bool shim_names_contain(char * const *names, const char *name) {
        size_t lo = 0, hi = strv_length((char **) names);
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(names[mid], name);
                if (c == 0)
                        return true;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

bool shim_same_dir(const char *a, size_t alen, const char *b) {
        size_t bl = strlen(b);
        while (alen > 1 && a[alen - 1] == '/')
                alen--;
        while (bl > 1 && b[bl - 1] == '/')
                bl--;
        return alen == bl && memcmp(a, b, bl) == 0;
}

int shim_path_position(const char *path_env, const char *mount) {
        int i = 0;
        for (const char *p = path_env ?: ""; *p; i++) {
                const char *e = strchrnul(p, ':');
                if (shim_same_dir(p, (size_t) (e - p), mount))
                        return i;
                if (!*e)
                        break;
                p = e + 1;
        }
        return -1;
}
