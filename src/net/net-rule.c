/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "net/net-rule.h"
#include "util/macro.h"

static const uint8_t v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static bool is_v4_mapped(const uint8_t addr[16]) {
        return memcmp(addr, v4_mapped_prefix, sizeof(v4_mapped_prefix)) == 0;
}

bool net_name_is_valid(const char *name) {
        size_t total = 0, label = 0;

        if (!name || !*name)
                return false;
        for (const char *p = name; *p; p++) {
                char c = *p;

                if (++total > BPFD_NAME_MAX)
                        return false;
                if (c == '.') {
                        if (label == 0)
                                return false;
                        label = 0;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
                        return false;
                if (++label > 63)
                        return false;
        }
        return label > 0;
}

static int parse_port(const char *s, uint16_t *ret, const char **reason) {
        unsigned long v = 0;

        if (!*s) {
                *reason = "empty port";
                return -EINVAL;
        }
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9') {
                        *reason = "port is not a number";
                        return -EINVAL;
                }
                v = v * 10 + (unsigned long) (*p - '0');
                if (v > 65535) {
                        *reason = "port out of range (1-65535)";
                        return -EINVAL;
                }
        }
        if (v == 0) {
                *reason = "port out of range (1-65535)";
                return -EINVAL;
        }
        *ret = (uint16_t) v;
        return 0;
}

static int parse_prefixlen(const char *s, unsigned max, unsigned *ret, const char **reason) {
        unsigned v = 0;

        if (!*s || strlen(s) > 3) {
                *reason = "bad prefix length";
                return -EINVAL;
        }
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9') {
                        *reason = "bad prefix length";
                        return -EINVAL;
                }
                v = v * 10 + (unsigned) (*p - '0');
        }
        if (v > max) {
                *reason = max == 32 ? "IPv4 prefix length above 32" : "IPv6 prefix length above 128";
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

/* A spelling of an IPv4 address that inet_aton() takes and inet_pton() does not: hexadecimal
 * or octal parts, or fewer than four ("0x7f.1", "0177.0.0.1", "127.1", "2130706433").
 * getaddrinfo() reads those as addresses without asking DNS, so as a host name such a rule
 * would never match what the command reaches; and reading them as addresses here would make
 * "010.0.0.1" mean 8.0.0.1 to a reader who sees 10.0.0.1. So they are refused, with the
 * address the C library sees: the reason is written to a buffer of this thread's, valid until
 * its next call. Returns true (with *reason set) for such a spelling. */
static bool numeric_spelling(const char *s, size_t n, const char *what, const char **reason) {
        static _Thread_local char message[160];
        char buf[64], canonical[INET_ADDRSTRLEN];
        struct in_addr a;

        if (n == 0 || n >= sizeof(buf))
                return false;
        memcpy(buf, s, n);
        buf[n] = 0;
        if (inet_aton(buf, &a) == 0 || !inet_ntop(AF_INET, &a, canonical, sizeof(canonical)))
                return false;
        (void) snprintf(message, sizeof(message), "%s '%s' is the IPv4 address %s to the C library: "
                        "write %s", what, buf, canonical, canonical);
        *reason = message;
        return true;
}

static bool host_bits_clear(const uint8_t addr[16], unsigned prefixlen) {
        for (unsigned bit = prefixlen; bit < 128; bit++)
                if (addr[bit / 8] & (0x80 >> (bit % 8)))
                        return false;
        return true;
}

/* "addr[/len]" with addr in the given family; fills addr and a prefix in the 128-bit space. */
static int parse_address(const char *s, int family, NetRule *r, const char **reason) {
        char buf[INET6_ADDRSTRLEN + 8];
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t) (slash - s) : strlen(s);
        unsigned len, max = family == AF_INET ? 32 : 128;
        int k;

        if (n == 0 || n >= sizeof(buf)) {
                *reason = "bad address";
                return -EINVAL;
        }
        memcpy(buf, s, n);
        buf[n] = 0;

        if (family == AF_INET) {
                struct in_addr a;

                if (inet_pton(AF_INET, buf, &a) != 1) {
                        if (!numeric_spelling(buf, n, "address", reason))
                                *reason = "bad IPv4 address";
                        return -EINVAL;
                }
                memcpy(r->addr, v4_mapped_prefix, sizeof(v4_mapped_prefix));
                memcpy(r->addr + 12, &a, 4);
        } else if (inet_pton(AF_INET6, buf, r->addr) != 1) {
                *reason = "bad IPv6 address";
                return -EINVAL;
        }

        len = max;
        if (slash) {
                k = parse_prefixlen(slash + 1, max, &len, reason);
                if (k < 0)
                        return k;
        }
        r->prefixlen = family == AF_INET ? 96 + len : len;
        if (!host_bits_clear(r->addr, r->prefixlen)) {
                *reason = "address has bits set past the prefix length";
                return -EINVAL;
        }
        return 0;
}

static bool looks_like_ipv4(const char *s) {
        /* Digits, dots and an optional /len: a name never consists of those alone (a top-level
         * label is never all digits), so a typo such as 10.0.0.256 is an address error, not a
         * host name. */
        bool dot = false;

        for (; *s && *s != '/'; s++) {
                if (*s == '.')
                        dot = true;
                else if (*s < '0' || *s > '9')
                        return false;
        }
        return dot;
}

/* Sets *reason and returns -EINVAL: the error return of the parsers below. */
static int invalid(const char **reason, const char *why) {
        *reason = why;
        return -EINVAL;
}

static int check_rule_text(const char *text) {
        if (!text || !*text)
                return -ENODATA;
        if (strlen(text) >= BPFD_NAME_MAX + 16)
                return -E2BIG;
        for (const char *p = text; *p; p++)
                if (*p == ' ' || *p == '\t' || (unsigned char) *p < 0x20 || *p == 0x7f)
                        return -EINVAL;
        return 0;
}

/* "[v6]", "[v6]:port", "[v6]/len", "[v6]/len:port" */
static int parse_bracketed(const char *text, NetRule *r, const char **reason) {
        const char *close = strchr(text, ']'), *rest, *colon;
        char addr[INET6_ADDRSTRLEN + 8];

        if (!close)
                return invalid(reason, "missing ']'");
        size_t n = (size_t) (close - text - 1);
        rest = close + 1;
        colon = strchr(rest, ':');
        if (*rest && *rest != '/' && *rest != ':')
                return invalid(reason, "unexpected text after ']'");
        /* addr plus "/len" if present */
        size_t extra = colon ? (size_t) (colon - rest) : strlen(rest);
        if (n + extra >= sizeof(addr))
                return invalid(reason, "bad IPv6 address");
        memcpy(addr, text + 1, n);
        memcpy(addr + n, rest, extra);
        addr[n + extra] = 0;

        r->kind = NET_RULE_ADDRESS;
        int k = parse_address(addr, AF_INET6, r, reason);
        if (k < 0 || !colon)
                return k;
        return parse_port(colon + 1, &r->port, reason);
}

/* A host name, or "*." and a domain, without its port. */
static int parse_name(const char *buf, NetRule *r, const char **reason) {
        const char *name = buf;

        r->kind = NET_RULE_HOST;
        if (startswith(buf, "*.")) {
                r->kind = NET_RULE_DOMAIN;
                name += 2;
        } else if (strchr(buf, '*'))
                return invalid(reason, "'*' is allowed only as a whole first label (\"*.example.com\"); "
                               "use \":PORT\" for any host");
        if (strchr(buf, '/'))
                return invalid(reason, "a prefix length needs an address, not a name");
        size_t n = strlen(name);
        if (n > 0 && name[n - 1] == '.')
                n--;
        if (r->kind == NET_RULE_HOST && numeric_spelling(name, n, "host", reason))
                return -EINVAL;
        if (n == 0 || n > BPFD_NAME_MAX)
                return invalid(reason, "bad host name");
        for (size_t i = 0; i < n; i++) {
                char c = name[i];

                r->name[i] = c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
        }
        r->name[n] = 0;
        if (!net_name_is_valid(r->name))
                return invalid(reason, "bad host name (letters, digits, '-', '_' and dots only)");
        return 0;
}

/* "host[:port]", "*.domain[:port]", "ipv4[/len][:port]" */
static int parse_host_port(const char *text, NetRule *r, const char **reason) {
        char buf[BPFD_NAME_MAX + 16];
        const char *colon = strchr(text, ':');
        size_t n = colon ? (size_t) (colon - text) : strlen(text);
        int k;

        memcpy(buf, text, n);   /* check_rule_text() bounded text's length */
        buf[n] = 0;
        if (colon) {
                k = parse_port(colon + 1, &r->port, reason);
                if (k < 0)
                        return k;
        }
        if (looks_like_ipv4(buf)) {
                r->kind = NET_RULE_ADDRESS;
                return parse_address(buf, AF_INET, r, reason);
        }
        return parse_name(buf, r, reason);
}

static int parse_rule(const char *text, NetRule *r, const char **reason) {
        if (text[0] == ':' && text[1] != ':') {
                /* ":443": any host, one port */
                r->kind = NET_RULE_ADDRESS;
                r->prefixlen = 0;
                return parse_port(text + 1, &r->port, reason);
        }
        if (text[0] == '[')
                return parse_bracketed(text, r, reason);
        if (strchr(text, ':') && strchr(text, ':') != strrchr(text, ':')) {
                /* Two colons or more: a bare IPv6 address or network, no port. */
                r->kind = NET_RULE_ADDRESS;
                int k = parse_address(text, AF_INET6, r, reason);
                if (k < 0 && strchr(text, '.') && !strchr(text, '/'))
                        *reason = "bad IPv6 address (write a port as [address]:port)";
                return k;
        }
        return parse_host_port(text, r, reason);
}

int net_rule_parse_reason(const char *text, NetRule *ret, const char **ret_reason) {
        const char *reason = NULL, *dummy;
        NetRule r = {};

        if (!ret_reason)
                ret_reason = &dummy;
        int k = check_rule_text(text);
        if (k < 0) {
                *ret_reason = k == -ENODATA ? "empty rule" : k == -E2BIG ? "rule too long" :
                              "rule contains white space or control characters";
                return -EINVAL;
        }
        k = parse_rule(text, &r, &reason);
        if (k < 0) {
                *ret_reason = reason ?: "invalid rule";
                return k;
        }
        *ret = r;
        return 0;
}

int net_rule_parse(const char *text, NetRule *ret) {
        return net_rule_parse_reason(text, ret, NULL);
}

int net_rule_format(const NetRule *r, char *buf, size_t size) {
        char host[INET6_ADDRSTRLEN + 8], port[8] = "";

        if (r->port > 0)
                (void) snprintf(port, sizeof(port), ":%u", r->port);

        switch (r->kind) {
        case NET_RULE_HOST:
                return snprintf(buf, size, "%s%s", r->name, port);
        case NET_RULE_DOMAIN:
                return snprintf(buf, size, "*.%s%s", r->name, port);
        case NET_RULE_ADDRESS:
                if (r->prefixlen == 0)
                        return snprintf(buf, size, "%s", r->port > 0 ? port : "any host, any port");
                if (is_v4_mapped(r->addr) && r->prefixlen >= 96) {
                        (void) inet_ntop(AF_INET, r->addr + 12, host, sizeof(host));
                        if (r->prefixlen < 128)
                                return snprintf(buf, size, "%s/%u%s", host, r->prefixlen - 96, port);
                        return snprintf(buf, size, "%s%s", host, port);
                }
                (void) inet_ntop(AF_INET6, r->addr, host, sizeof(host));
                if (r->prefixlen < 128)
                        return snprintf(buf, size, "[%s]/%u%s", host, r->prefixlen, port);
                return snprintf(buf, size, "[%s]%s", host, port);
        default:
                return snprintf(buf, size, "?");
        }
}

bool net_rule_matches_name(const NetRule *r, const char *name) {
        size_t n, m;

        switch (r->kind) {
        case NET_RULE_HOST:
                return streq(r->name, name);
        case NET_RULE_DOMAIN:
                /* "*.example.com" covers a.example.com and a.b.example.com, not example.com */
                n = strlen(name);
                m = strlen(r->name);
                return n > m + 1 && name[n - m - 1] == '.' && streq(name + n - m, r->name);
        default:
                return false;
        }
}

typedef struct Text {
        char *buf;
        size_t len, size;
} Text;

static int text_append(Text *t, const char *s) {
        size_t n = strlen(s);

        if (t->len + n + 1 > t->size) {
                size_t size = MAX(t->size * 2, t->len + n + 256);
                char *b = realloc(t->buf, size);

                if (!b)
                        return -ENOMEM;
                t->buf = b;
                t->size = size;
        }
        memcpy(t->buf + t->len, s, n + 1);
        t->len += n;
        return 0;
}

static int describe_list(Text *t, char * const *rules, const char *verb) {
        char line[BPFD_NAME_MAX + 128], canon[BPFD_NAME_MAX + 16];
        int k;

        for (char * const *s = rules; s && *s; s++) {
                const char *reason = NULL;
                NetRule r;

                k = net_rule_parse_reason(*s, &r, &reason);
                if (k < 0) {
                        (void) snprintf(line, sizeof(line), "  INVALID '%s': %s\n", *s, reason);
                        (void) text_append(t, line);
                        return k;
                }
                (void) net_rule_format(&r, canon, sizeof(canon));
                (void) snprintf(line, sizeof(line), "  %s %s%s\n", verb, canon,
                                r.kind == NET_RULE_ADDRESS ? "" : " (addresses from its DNS answers)");
                k = text_append(t, line);
                if (k < 0)
                        return k;
        }
        return 0;
}

int net_rules_describe(char * const *allow, char * const *deny, DnsMode dns, char **ret_text) {
        Text t = {};
        int k;

        k = text_append(&t, "network: filtered by scudo-bpfd; anything not allowed is refused\n");
        if (k >= 0)
                k = describe_list(&t, deny, "deny ");
        if (k >= 0)
                k = describe_list(&t, allow, "allow");
        if (k >= 0 && (!allow || !*allow))
                k = text_append(&t, "  (no allow rules: every connection is refused)\n");
        if (k >= 0)
                k = text_append(&t, dns == DNS_OPEN ?
                                "  dns open: queries go to the system's resolvers unfiltered\n" :
                                "  dns filtered: only names the rules mention are answered, "
                                "others are answered as if they did not exist (NXDOMAIN)\n");
        if (k < 0 && k != -EINVAL) {
                free(t.buf);
                return k;
        }
        *ret_text = t.buf;
        return k;
}

static const char * const dns_mode_table[_DNS_MODE_MAX] = {
        [DNS_FILTERED] = "filtered",
        [DNS_OPEN] = "open",
};

const char *dns_mode_to_string(DnsMode m) {
        return m >= 0 && m < _DNS_MODE_MAX ? dns_mode_table[m] : NULL;
}

DnsMode dns_mode_from_string(const char *s) {
        for (size_t i = 0; s && i < _DNS_MODE_MAX; i++)
                if (streq(dns_mode_table[i], s))
                        return (DnsMode) i;
        return _DNS_MODE_INVALID;
}
