/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "env-util.h"

bool env_name_is_valid(const char *name, size_t len) {
        if (len == 0 || len > 4096 || isdigit((unsigned char) name[0]))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char) name[i]) && name[i] != '_')
                        return false;
        return true;
}

bool utf8_is_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        while (*p) {
                uint32_t cp;
                int n;
                if (*p < 0x80) {
                        p++;
                        continue;
                } else if ((*p & 0xe0) == 0xc0) {
                        cp = *p & 0x1f;
                        n = 1;
                } else if ((*p & 0xf0) == 0xe0) {
                        cp = *p & 0x0f;
                        n = 2;
                } else if ((*p & 0xf8) == 0xf0) {
                        cp = *p & 0x07;
                        n = 3;
                } else
                        return false;
                for (int i = 1; i <= n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (p[i] & 0x3f);
                }
                if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
                    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                p += n + 1;
        }
        return true;
}

bool env_assignment_is_valid(const char *e) {
        const char *eq = strchr(e, '=');
        if (!eq || !env_name_is_valid(e, (size_t) (eq - e)))
                return false;
        for (const char *p = eq + 1; *p; p++)
                if ((unsigned char) *p < 0x20 && *p != '\t' && *p != '\n')
                        return false;
        return utf8_is_valid(eq + 1);
}

char **env_find(char * const *env, const char *name, size_t len) {
        for (char * const *e = env; e && *e; e++)
                if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
                        return (char **) e;
        return NULL;
}

const char *env_get(char * const *env, const char *name) {
        size_t len = strlen(name);
        char **e = env_find(env, name, len);
        return e ? *e + len + 1 : NULL;
}
