/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bpfd/protocol-parse.h"
#include "net/net-rule.h"
#include "util/macro.h"

static int bad(const char **ret_reason, const char *reason) {
        if (ret_reason)
                *ret_reason = reason;
        return -EBADMSG;
}

int bpfd_message_type(const void *buf, size_t size, const char **ret_reason) {
        BpfdHeader h;

        if (size < sizeof(h))
                return bad(ret_reason, "message shorter than its header");
        memcpy(&h, buf, sizeof(h));
        if (h.magic != BPFD_MAGIC)
                return bad(ret_reason, "bad magic");
        if (h.version != BPFD_VERSION)
                return bad(ret_reason, "unsupported protocol version");
        if (h.size != size)
                return bad(ret_reason, "size field does not match the message");
        if (h.reserved != 0)
                return bad(ret_reason, "reserved header field not zero");
        switch (h.type) {
        case BPFD_MSG_OPEN:
        case BPFD_MSG_RULES:
        case BPFD_MSG_COMMIT:
        case BPFD_MSG_USAGE:
        case BPFD_MSG_WRITTEN:
        case BPFD_MSG_FILE_PREFIXES:
                return h.type;
        default:
                return bad(ret_reason, "unknown message type");
        }
}

int bpfd_parse_open(const void *buf, size_t size, BpfdOpenRequest *ret, const char **ret_reason) {
        BpfdOpen m;
        int k;

        k = bpfd_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != BPFD_MSG_OPEN || size != sizeof(m))
                return bad(ret_reason, "malformed OPEN");
        memcpy(&m, buf, sizeof(m));

        if (m.flags & ~BPFD_OPEN_FLAGS_ALL)
                return bad(ret_reason, "unknown flags");
        if ((m.flags & BPFD_OPEN_RECORD) && !(m.flags & BPFD_OPEN_FILES))
                return bad(ret_reason, "a write record without file reports");
        if (m.flags & BPFD_OPEN_NO_NETWORK) {
                if (m.dns != 0 || m.n_rules != 0)
                        return bad(ret_reason, "network settings in a session without network rules");
                if (!(m.flags & BPFD_OPEN_FILES))
                        return bad(ret_reason, "a session that asks for nothing");
        } else if (m.dns != BPFD_DNS_FILTERED && m.dns != BPFD_DNS_OPEN)
                return bad(ret_reason, "unknown DNS mode");
        if (m.n_rules > BPFD_RULES_MAX)
                return bad(ret_reason, "too many rules");
        if (m.path_len == 0 || m.path_len >= sizeof(m.path))
                return bad(ret_reason, "bad path length");
        if (memchr(m.path, 0, m.path_len))
                return bad(ret_reason, "NUL inside the path");
        /* The rest of the field must be NUL: no hidden bytes after the terminator. */
        for (size_t i = m.path_len; i < sizeof(m.path); i++)
                if (m.path[i] != 0)
                        return bad(ret_reason, "path not NUL-padded");

        ret->dns = (BpfdDns) m.dns;
        ret->flags = m.flags;
        ret->n_rules = m.n_rules;
        memcpy(ret->path, m.path, sizeof(ret->path));
        return 0;
}

static bool zero_past_prefix(const uint8_t addr[16], unsigned prefixlen) {
        for (unsigned bit = prefixlen; bit < 128; bit++)
                if (addr[bit / 8] & (0x80 >> (bit % 8)))
                        return false;
        return true;
}

static bool all_zero(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i])
                        return false;
        return true;
}

static int check_rule(const BpfdRule *r, const char *names, size_t names_size, BpfdCheckedRule *ret,
                      const char **ret_reason) {
        if (r->action != BPFD_ACTION_ALLOW && r->action != BPFD_ACTION_DENY)
                return bad(ret_reason, "unknown rule action");
        if (r->flags != 0 || r->reserved != 0)
                return bad(ret_reason, "reserved rule field not zero");

        *ret = (BpfdCheckedRule) {
                .action = (BpfdAction) r->action,
                .port = r->port,
        };

        switch (r->kind) {
        case BPFD_RULE_ADDRESS:
                if (r->prefixlen > 128)
                        return bad(ret_reason, "prefix length above 128");
                if (!zero_past_prefix(r->addr, r->prefixlen))
                        return bad(ret_reason, "address bits set past the prefix length");
                if (r->name_len != 0 || r->name_offset != 0)
                        return bad(ret_reason, "address rule with a name");
                ret->kind = BPFD_RULE_ADDRESS;
                ret->prefixlen = r->prefixlen;
                memcpy(ret->addr, r->addr, sizeof(ret->addr));
                return 0;

        case BPFD_RULE_HOST:
        case BPFD_RULE_DOMAIN: {
                const char *name;

                if (r->prefixlen != 0 || !all_zero(r->addr, sizeof(r->addr)))
                        return bad(ret_reason, "name rule with an address");
                if (r->name_len == 0 || r->name_len > BPFD_NAME_MAX)
                        return bad(ret_reason, "bad name length");
                /* offset + len + the NUL must lie inside the name area; compare without
                 * adding, so that nothing can wrap. */
                if (r->name_offset >= names_size || names_size - r->name_offset <= r->name_len)
                        return bad(ret_reason, "name outside the name area");
                name = names + r->name_offset;
                if (name[r->name_len] != 0 || memchr(name, 0, r->name_len))
                        return bad(ret_reason, "name length does not match its terminator");
                if (!net_name_is_valid(name))
                        return bad(ret_reason, "invalid name");
                ret->kind = (BpfdRuleKind) r->kind;
                ret->name = name;
                return 0;
        }

        default:
                return bad(ret_reason, "unknown rule kind");
        }
}

int bpfd_parse_rules(const void *buf, size_t size, BpfdRuleCallback cb, void *userdata,
                     const char **ret_reason) {
        const uint8_t *p = buf;
        const char *names;
        BpfdRules m;
        size_t rules_bytes;
        int k;

        k = bpfd_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != BPFD_MSG_RULES || size < sizeof(m))
                return bad(ret_reason, "malformed RULES");
        memcpy(&m, buf, sizeof(m));

        if (m.n_rules > BPFD_RULES_PER_MESSAGE)
                return bad(ret_reason, "too many rules in one message");
        rules_bytes = (size_t) m.n_rules * sizeof(BpfdRule);
        if (size - sizeof(m) < rules_bytes || size - sizeof(m) - rules_bytes != m.names_size)
                return bad(ret_reason, "rule count and name area do not add up to the message size");
        names = (const char *) p + sizeof(m) + rules_bytes;
        if (m.names_size > 0 && names[m.names_size - 1] != 0)
                return bad(ret_reason, "name area not NUL-terminated");

        /* Check everything first: a message is taken whole or not at all. */
        for (uint32_t i = 0; i < m.n_rules; i++) {
                BpfdCheckedRule c;
                BpfdRule r;

                memcpy(&r, p + sizeof(m) + i * sizeof(BpfdRule), sizeof(r));
                k = check_rule(&r, names, m.names_size, &c, ret_reason);
                if (k < 0)
                        return k;
        }

        for (uint32_t i = 0; cb && i < m.n_rules; i++) {
                BpfdCheckedRule c;
                BpfdRule r;

                memcpy(&r, p + sizeof(m) + i * sizeof(BpfdRule), sizeof(r));
                (void) check_rule(&r, names, m.names_size, &c, NULL);
                k = cb(&c, userdata);
                if (k < 0)
                        return k;
        }
        return (int) m.n_rules;
}

int bpfd_parse_commit(const void *buf, size_t size, const char **ret_reason) {
        int k;

        k = bpfd_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != BPFD_MSG_COMMIT || size != sizeof(BpfdHeader))
                return bad(ret_reason, "malformed COMMIT");
        return 0;
}

int bpfd_parse_usage(const void *buf, size_t size, const char **ret_reason) {
        int k;

        k = bpfd_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != BPFD_MSG_USAGE || size != sizeof(BpfdHeader))
                return bad(ret_reason, "malformed USAGE");
        return 0;
}

int bpfd_parse_written(const void *buf, size_t size, const char **ret_reason) {
        int k;

        k = bpfd_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != BPFD_MSG_WRITTEN || size != sizeof(BpfdHeader))
                return bad(ret_reason, "malformed WRITTEN");
        return 0;
}

/* Absolute and canonical: "/" alone, or "/" followed by components that are neither empty,
 * "." nor "..", with no trailing slash and no control characters. */
static bool canonical_path(const char *path, size_t len) {
        if (len == 0 || path[0] != '/')
                return false;
        if (len == 1)
                return true;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) path[i] < 0x20 || path[i] == 0x7f)
                        return false;
        for (size_t i = 1; i <= len; ) {
                size_t j = i;

                while (j < len && path[j] != '/')
                        j++;
                if (j == i || (j - i == 1 && path[i] == '.') ||
                    (j - i == 2 && path[i] == '.' && path[i + 1] == '.'))
                        return false;
                i = j + 1;
        }
        return true;
}

int bpfd_parse_file_prefixes(const void *buf, size_t size, BpfdFilePrefixCallback cb, void *userdata,
                             uint32_t *ret_cwd_mask, const char **ret_reason) {
        const uint8_t *p = buf;
        BpfdFilePrefixes m;
        int k;

        k = bpfd_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != BPFD_MSG_FILE_PREFIXES || size < sizeof(m))
                return bad(ret_reason, "malformed FILE_PREFIXES");
        memcpy(&m, buf, sizeof(m));
        if (m.n == 0 || m.n > BPFD_FILE_PREFIXES_MAX)
                return bad(ret_reason, "bad number of file prefixes");
        /* n is small: the product cannot wrap */
        if (size - sizeof(m) != (size_t) m.n * sizeof(BpfdFilePrefix))
                return bad(ret_reason, "prefix count does not match the message size");
        if (m.cwd_mask & ~BPFD_FILE_ALL_ERRORS)
                return bad(ret_reason, "unknown error bits");

        for (uint32_t i = 0; i < m.n; i++) {
                BpfdFilePrefix f;

                memcpy(&f, p + sizeof(m) + i * sizeof(f), sizeof(f));
                if ((f.self | f.below) & ~BPFD_FILE_ALL_ERRORS)
                        return bad(ret_reason, "unknown error bits");
                if (f.flags & ~BPFD_FILE_PREFIX_GIT || f.reserved != 0)
                        return bad(ret_reason, "unknown prefix flags");
                if (f.path_len == 0 || f.path_len >= sizeof(f.path))
                        return bad(ret_reason, "bad prefix length");
                if (memchr(f.path, 0, f.path_len))
                        return bad(ret_reason, "NUL inside a prefix");
                for (size_t j = f.path_len; j < sizeof(f.path); j++)
                        if (f.path[j] != 0)
                                return bad(ret_reason, "prefix not NUL-padded");
                if (!canonical_path(f.path, f.path_len))
                        return bad(ret_reason, "prefix not absolute and canonical");
        }
        for (uint32_t i = 0; cb && i < m.n; i++) {
                BpfdFilePrefix f;

                memcpy(&f, p + sizeof(m) + i * sizeof(f), sizeof(f));
                k = cb(&f, userdata);
                if (k < 0)
                        return k;
        }
        if (ret_cwd_mask)
                *ret_cwd_mask = m.cwd_mask;
        return (int) m.n;
}

int bpfd_check_cgroup_path(const char *path, uid_t uid, const char **ret_reason) {
        char prefix[128];
        const char *rest, *dummy;

        if (!ret_reason)
                ret_reason = &dummy;

        (void) snprintf(prefix, sizeof(prefix), "/user.slice/user-%u.slice/user@%u.service/",
                        (unsigned) uid, (unsigned) uid);
        rest = startswith(path, prefix);
        if (!rest) {
                *ret_reason = "path not under the caller's user manager";
                return -EPERM;
        }
        if (!*rest) {
                *ret_reason = "path is the user manager itself, not a unit below it";
                return -EPERM;
        }

        for (const char *p = path; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f) {
                        *ret_reason = "control character in path";
                        return -EINVAL;
                }

        /* Every component after the prefix: not empty, not "." and not "..". */
        for (const char *c = rest; ; ) {
                const char *e = strchrnul(c, '/');
                size_t n = (size_t) (e - c);

                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
                        *ret_reason = "empty, '.' or '..' path component";
                        return -EINVAL;
                }
                if (!*e)
                        break;
                c = e + 1;
        }
        return 0;
}
