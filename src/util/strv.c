/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "strv.h"

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **s = l; *s; s++)
                free(*s);
        free(l);
        return NULL;
}

size_t strv_length(char * const *l) {
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

int strv_push(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **c = realloc(*l, sizeof(char *) * (n + 2));
        if (!c)
                return -ENOMEM;
        c[n] = s;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_push_all(char ***l, char **items, size_t n) {
        int r = 0;
        for (size_t i = 0; i < n; i++) {
                if (r >= 0 && items[i])
                        r = strv_push(l, items[i]);
                else
                        r = -ENOMEM;
                if (r < 0)
                        free(items[i]);
        }
        return r;
}

int strv_extend(char ***l, const char *s) {
        char *c = strdup(s);
        if (!c)
                return -ENOMEM;
        int r = strv_push(l, c);
        if (r < 0)
                free(c);
        return r;
}

bool strv_contains(char * const *l, const char *s) {
        STRV_FOREACH(i, l)
                if (streq(*i, s))
                        return true;
        return false;
}

char **strv_copy(char * const *l) {
        _cleanup_strv_free_ char **c = calloc(strv_length(l) + 1, sizeof(char *));
        if (!c)
                return NULL;
        size_t n = 0;
        STRV_FOREACH(s, l) {
                c[n] = strdup(*s);
                if (!c[n])
                        return NULL;
                n++;
        }
        return TAKE_PTR(c);
}
