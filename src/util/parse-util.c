/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "macro.h"
#include "parse-util.h"

int parse_boolean(const char *s) {
        static const char * const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char * const no[] = { "0", "no", "n", "false", "f", "off" };
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

int parse_u64_prefix(const char *s, uint64_t *ret, const char **ret_rest) {
        char *end;
        /* strtoull() would skip space and take a sign ("-1" is ULLONG_MAX): not a number here. */
        if (!isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0)
                return -EINVAL;
        *ret = v;
        *ret_rest = end;
        return 0;
}

int parse_u64(const char *s, uint64_t *ret) {
        uint64_t v;
        const char *rest;
        if (parse_u64_prefix(s, &v, &rest) < 0 || *rest)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_i64(const char *s, int64_t *ret) {
        char *end;
        if (!*s)
                return -EINVAL;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno != 0 || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_percent(const char *s, uint64_t *ret) {
        uint64_t v;
        const char *rest;
        if (parse_u64_prefix(s, &v, &rest) < 0 || !streq(rest, "%"))
                return -EINVAL;
        *ret = v;
        return 0;
}

/* v units of `unit` each, refused when it does not fit. */
static int scale(uint64_t v, uint64_t unit, uint64_t *ret) {
        if (v > UINT64_MAX / unit)
                return -EINVAL;
        *ret = v * unit;
        return 0;
}

int parse_size(const char *s, uint64_t *ret) {
        uint64_t v, unit = 1;
        const char *rest;

        if (streq(s, "infinity")) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (parse_u64_prefix(s, &v, &rest) < 0)
                return -EINVAL;
        if (*rest) {
                switch (toupper((unsigned char) *rest)) {
                case 'K': unit = UINT64_C(1) << 10; break;
                case 'M': unit = UINT64_C(1) << 20; break;
                case 'G': unit = UINT64_C(1) << 30; break;
                case 'T': unit = UINT64_C(1) << 40; break;
                default: return -EINVAL;
                }
                rest++;
                if (*rest == 'i' || *rest == 'I')
                        rest++;
                if (*rest == 'B' || *rest == 'b')
                        rest++;
                if (*rest)
                        return -EINVAL;
        }
        return scale(v, unit, ret);
}

int parse_usec(const char *s, uint64_t *ret) {
        static const struct { const char *suffix; uint64_t usec; } units[] = {
                { "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { "sec", 1000000 },
                { "m", 60000000 }, { "min", 60000000 }, { "h", UINT64_C(3600000000) },
                { "", 1000000 },
        };
        uint64_t v;
        const char *rest;

        if (streq(s, "infinity")) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (parse_u64_prefix(s, &v, &rest) < 0)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(rest, units[i].suffix))
                        return scale(v, units[i].usec, ret);
        return -EINVAL;
}
