/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "plan/git-remote-url.h"

/* What git takes for the name of a remote helper, in "NAME::ADDRESS". */
#define HELPER_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-"

static bool is_host_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_';
}

static bool is_v6_char(char c) {
        return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') ||
               c == ':' || c == '.';
}

static int parse_port(const char *s, size_t n, unsigned *ret) {
        unsigned v = 0;
        if (n == 0 || n > 5)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        if (v == 0 || v > 65535)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* host[:port] or [v6][:port] or, in brackets, [host:port] (git's scp-like form): the n bytes at
 * a, the user part gone. */
static int host_port_rule(const char *a, size_t n, unsigned port, char *rule, size_t size) {
        const char *h = a;
        size_t hl = n;
        bool v6 = false;

        if (n > 0 && a[0] == '[') {
                const char *close = memchr(a, ']', n);
                if (!close)
                        return -EINVAL;
                h = a + 1;
                hl = (size_t) (close - h);
                const char *rest = close + 1;
                size_t rl = n - (size_t) (rest - a);
                if (rl > 0 && (rest[0] != ':' || parse_port(rest + 1, rl - 1, &port) < 0))
                        return -EINVAL;
                const char *colon = memchr(h, ':', hl);
                if (colon && !memchr(colon + 1, ':', hl - (size_t) (colon + 1 - h))) {
                        /* [host:port] */
                        if (parse_port(colon + 1, hl - (size_t) (colon + 1 - h), &port) < 0)
                                return -EINVAL;
                        hl = (size_t) (colon - h);
                } else
                        v6 = colon != NULL;
        } else {
                const char *colon = memchr(a, ':', n);
                if (colon) {
                        if (parse_port(colon + 1, n - (size_t) (colon + 1 - a), &port) < 0)
                                return -EINVAL;
                        hl = (size_t) (colon - a);
                }
        }
        if (hl == 0 || hl > GIT_REMOTE_HOST_MAX || h[0] == '-' || h[0] == '.')
                return -EINVAL;
        for (size_t i = 0; i < hl; i++)
                if (!(v6 ? is_v6_char(h[i]) : is_host_char(h[i])))
                        return -EINVAL;
        int k = v6 ? snprintf(rule, size, "[%.*s]:%u", (int) hl, h, port) :
                     snprintf(rule, size, "%.*s:%u", (int) hl, h, port);
        if (k < 0 || (size_t) k >= size)
                return -ENOBUFS;
        return 0;
}

/* The authority part after the user ("user@"), n bytes at a: git takes the last '@'. */
static const char *skip_user(const char *a, size_t *n) {
        for (size_t i = *n; i > 0; i--)
                if (a[i - 1] == '@') {
                        *n -= i;
                        return a + i;
                }
        return a;
}

int git_remote_url_rule(const char *url, char *rule, size_t size) {
        static const struct {
                const char *scheme;
                unsigned port;
        } schemes[] = {
                { "ssh://", 22 }, { "git+ssh://", 22 }, { "ssh+git://", 22 },
                { "git://", 9418 }, { "http://", 80 }, { "https://", 443 },
        };

        if (!url || !*url)
                return -EINVAL;
        const char *sep = strstr(url, "://");
        const char *helper = strstr(url, "::");
        const char *slash = strchr(url, '/');
        if (helper && helper > url && strspn(url, HELPER_CHARS) == (size_t) (helper - url) &&
            (!sep || helper < sep) && (!slash || helper < slash))
                return -ENOENT;                         /* ext::..., fd::..., a helper's */
        if (sep && (!slash || sep < slash)) {
                for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
                        size_t l = strlen(schemes[i].scheme);
                        if (strncasecmp(url, schemes[i].scheme, l) != 0)
                                continue;
                        const char *a = url + l;
                        size_t n = strcspn(a, "/?#");
                        a = skip_user(a, &n);
                        return host_port_rule(a, n, schemes[i].port, rule, size);
                }
                return strncasecmp(url, "file://", 7) == 0 ? -ENOENT : -EPROTO;
        }
        /* scp-like: a ':' before any '/', else a local path. In brackets, the ':' inside do not
         * count ([host:port]:path, [::1]:path). */
        const char *colon = NULL;
        if (url[0] == '[' || (strchr(url, '@') && strchr(url, '@')[1] == '[')) {
                const char *close = strchr(url, ']');
                if (close && close[1] == ':')
                        colon = close + 1;
        } else
                colon = strchr(url, ':');
        if (!colon || (slash && slash < colon))
                return -ENOENT;
        size_t n = (size_t) (colon - url);
        const char *a = skip_user(url, &n);
        return host_port_rule(a, n, 22, rule, size);
}
