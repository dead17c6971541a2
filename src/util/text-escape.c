/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "util/text-escape.h"

/* The length of the valid UTF-8 sequence at `s` that is not a C1 control, or 0. */
static size_t utf8_ok(const unsigned char *s) {
        size_t n;
        unsigned cp;

        if (s[0] >= 0xc2 && s[0] <= 0xdf) {
                n = 2;
                cp = s[0] & 0x1fU;
        } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                n = 3;
                cp = s[0] & 0x0fU;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                n = 4;
                cp = s[0] & 0x07U;
        } else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3fU);
        }
        /* overlong forms, surrogates, past U+10FFFF, and the C1 controls U+0080..U+009F */
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
                return 0;
        return n;
}

size_t text_escape(const char *s, char *buf, size_t size) {
        const unsigned char *p = (const unsigned char *) (s ?: "");
        size_t l = 0;

        if (size == 0)
                return 0;
        while (*p) {
                char esc[5];
                size_t n;

                if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
                        if (l + 1 >= size)
                                break;
                        buf[l++] = (char) *p++;
                        continue;
                }
                if (*p >= 0x80 && (n = utf8_ok(p)) > 0) {
                        if (l + n >= size)
                                break;
                        memcpy(buf + l, p, n);
                        l += n;
                        p += n;
                        continue;
                }
                if (*p == '\\')
                        memcpy(esc, "\\\\", 3);
                else
                        (void) snprintf(esc, sizeof(esc), "\\x%02x", *p);
                n = strlen(esc);
                if (l + n >= size)
                        break;
                memcpy(buf + l, esc, n);
                l += n;
                p++;
        }
        buf[l] = 0;
        return l;
}
