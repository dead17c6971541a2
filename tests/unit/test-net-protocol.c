/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Unit tests of scudo-bpfd's protocol: what it accepts from an unprivileged client
 * (src/bpfd/protocol-parse.c), and the answer to USAGE as scudo checks it. */
#include <stdlib.h>
#include <string.h>

#include "bpfd/protocol-parse.h"
#include "net/net-session.h"
#include "net/usage.h"
#include "tap.h"

static void header(BpfdHeader *h, uint16_t type, size_t size) {
        *h = (BpfdHeader){
                .magic = BPFD_MAGIC, .version = BPFD_VERSION, .type = type, .size = (uint32_t) size
        };
}

static BpfdOpen good_open(void) {
        BpfdOpen o = { .dns = BPFD_DNS_FILTERED, .n_rules = 3 };
        const char *p = "/user.slice/user-1001.slice/user@1001.service/app.slice/app-scudo_x.slice";

        header(&o.header, BPFD_MSG_OPEN, sizeof(o));
        o.path_len = (uint32_t) strlen(p);
        memcpy(o.path, p, o.path_len);
        return o;
}

static void test_header(void) {
        BpfdHeader h;
        const char *reason = NULL;

        header(&h, BPFD_MSG_COMMIT, sizeof(h));
        TAP_CHECK(bpfd_message_type(&h, sizeof(h), &reason) == BPFD_MSG_COMMIT, "good header");
        TAP_CHECK(bpfd_message_type(&h, 4, &reason) == -EBADMSG, "short message refused");
        h.magic ^= 1;
        TAP_CHECK(bpfd_message_type(&h, sizeof(h), &reason) == -EBADMSG, "bad magic refused");
        header(&h, BPFD_MSG_COMMIT, sizeof(h));
        h.version = 2;
        TAP_CHECK(bpfd_message_type(&h, sizeof(h), &reason) == -EBADMSG, "unknown version refused");
        header(&h, BPFD_MSG_COMMIT, sizeof(h) + 1);
        TAP_CHECK(bpfd_message_type(&h, sizeof(h), &reason) == -EBADMSG, "size mismatch refused");
        header(&h, BPFD_MSG_COMMIT, sizeof(h));
        h.reserved = 1;
        TAP_CHECK(bpfd_message_type(&h, sizeof(h), &reason) == -EBADMSG, "reserved field refused");
        header(&h, BPFD_MSG_REPLY, sizeof(h));
        TAP_CHECK(bpfd_message_type(&h, sizeof(h), &reason) == -EBADMSG, "a REPLY from a client refused");
        header(&h, 999, sizeof(h));
        TAP_CHECK(bpfd_message_type(&h, sizeof(h), &reason) == -EBADMSG, "unknown type refused");
        header(&h, BPFD_MSG_COMMIT, sizeof(h));
        TAP_CHECK(bpfd_parse_commit(&h, sizeof(h), &reason) == 0, "COMMIT accepted");
        {
                uint8_t b[sizeof(h) + 4] = {};
                header(&h, BPFD_MSG_COMMIT, sizeof(b));
                memcpy(b, &h, sizeof(h));
                TAP_CHECK(bpfd_parse_commit(b, sizeof(b), &reason) == -EBADMSG,
                          "COMMIT with a payload refused");
        }
}

static void test_open(void) {
        BpfdOpenRequest req;
        const char *reason = NULL;
        BpfdOpen o;

        o = good_open();
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == 0 && req.n_rules == 3 &&
                  req.dns == BPFD_DNS_FILTERED && streq(req.path, o.path), "good OPEN");
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o) - 1, &req, &reason) == -EBADMSG, "truncated OPEN refused");

        o = good_open();
        o.dns = 7;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG, "unknown DNS mode refused");
        o = good_open();
        o.flags = 1U << 7;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG, "unknown flag refused");
        o = good_open();
        o.flags = BPFD_OPEN_FILES;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == 0 && req.flags == BPFD_OPEN_FILES,
                  "network rules with file reports");
        o = good_open();
        o.flags = BPFD_OPEN_FILES | BPFD_OPEN_NO_NETWORK;
        o.dns = 0;
        o.n_rules = 0;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == 0 && req.flags == o.flags &&
                          req.n_rules == 0,
                  "file reports alone");
        o.n_rules = 1;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG,
                  "rules without network refused");
        o.n_rules = 0;
        o.dns = BPFD_DNS_FILTERED;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG,
                  "a DNS mode without network refused");
        o.dns = 0;
        o.flags = BPFD_OPEN_NO_NETWORK;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG,
                  "a session asking for nothing refused");
        o = good_open();
        o.n_rules = BPFD_RULES_MAX + 1;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG, "too many rules refused");
        o = good_open();
        o.path_len = 0;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG, "empty path refused");
        o = good_open();
        o.path_len = BPFD_CGROUP_PATH_MAX;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG,
                  "path length past the field refused");
        o = good_open();
        o.path_len = 0xffffffff;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG, "huge path length refused");
        o = good_open();
        o.path[5] = 0;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG, "NUL inside the path refused");
        o = good_open();
        o.path[o.path_len + 3] = 'x';
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG, "bytes after the path refused");
        o = good_open();
        o.path_len -= 1;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &req, &reason) == -EBADMSG,
                  "path_len shorter than the path refused");
}

typedef struct Collected {
        BpfdCheckedRule rules[16];
        char names[16][256];
        int n;
} Collected;

static int collect(const BpfdCheckedRule *r, void *userdata) {
        Collected *c = userdata;

        if (c->n >= 16)
                return -E2BIG;
        c->rules[c->n] = *r;
        if (r->name) {
                snprintf(c->names[c->n], sizeof(c->names[c->n]), "%s", r->name);
                c->rules[c->n].name = c->names[c->n];
        }
        c->n++;
        return 0;
}

/* Builds a RULES message from compiled rules, as net-session.c sends them. */
static size_t build_rules(uint8_t *buf, const BpfdRule *rules, size_t n, const char *names,
                          size_t names_size) {
        BpfdRules m = { .n_rules = (uint32_t) n, .names_size = (uint32_t) names_size };
        size_t size = sizeof(m) + n * sizeof(BpfdRule) + names_size;

        header(&m.header, BPFD_MSG_RULES, size);
        memcpy(buf, &m, sizeof(m));
        memcpy(buf + sizeof(m), rules, n * sizeof(BpfdRule));
        memcpy(buf + sizeof(m) + n * sizeof(BpfdRule), names, names_size);
        return size;
}

static void test_rules(void) {
        char *allow[] = { (char *) "example.com:443", (char *) "10.0.0.0/8", (char *) "[::1]:53",
                          (char *) "*.example.org", NULL };
        char *deny[] = { (char *) "10.1.0.0/16", NULL };
        _cleanup_free_ BpfdRule *rules = NULL;
        _cleanup_free_ char *names = NULL;
        static uint8_t buf[BPFD_MESSAGE_MAX], copy[BPFD_MESSAGE_MAX];
        const char *reason = NULL;
        size_t n = 0, names_size = 0, size;
        Collected c = {};
        BpfdRule *r;

        TAP_CHECK(net_rules_compile(allow, deny, &rules, &n, &names, &names_size) == 0 && n == 5,
                  "rules compile");
        size = build_rules(buf, rules, n, names, names_size);
        TAP_CHECK(bpfd_parse_rules(buf, size, collect, &c, &reason) == 5 && c.n == 5,
                  "compiled rules accepted");
        TAP_CHECK(c.rules[0].action == BPFD_ACTION_DENY && c.rules[0].kind == BPFD_RULE_ADDRESS &&
                  c.rules[0].prefixlen == 112, "deny rule comes first, /16 in the 128-bit space");
        TAP_CHECK(c.rules[1].kind == BPFD_RULE_HOST && c.rules[1].port == 443 &&
                  streq(c.names[1], "example.com"), "host rule with its name and port");
        TAP_CHECK(c.rules[4].kind == BPFD_RULE_DOMAIN && streq(c.names[4], "example.org"), "domain rule");

#define MUTATE(what, stmt)                                                              \
        do {                                                                            \
                memcpy(copy, buf, size);                                                \
                r = (BpfdRule *) (copy + sizeof(BpfdRules));                            \
                (void) r;                                                               \
                stmt;                                                                   \
                c.n = 0;                                                                \
                TAP_CHECK(bpfd_parse_rules(copy, size, collect, &c, &reason) == -EBADMSG && c.n == 0, \
                          what " refused, nothing applied");                            \
        } while (0)

        MUTATE("unknown action", r[2].action = 9);
        MUTATE("unknown kind", r[2].kind = 9);
        MUTATE("rule flags", r[2].flags = 1);
        MUTATE("rule reserved", r[2].reserved = 1);
        MUTATE("prefix length 129", r[2].prefixlen = 129);
        MUTATE("address bits past the prefix", r[2].addr[15] = 1);
        MUTATE("address rule with a name", r[2].name_len = 3);
        MUTATE("name rule with an address", r[1].addr[0] = 1);
        MUTATE("name rule with a prefix", r[1].prefixlen = 8);
        MUTATE("name offset past the area", r[1].name_offset = 4096);
        MUTATE("name offset near 2^32", r[1].name_offset = 0xfffffff0);
        MUTATE("name longer than its string", r[1].name_len += 1);
        MUTATE("name shorter than its string", r[1].name_len -= 1);
        MUTATE("name of length 0", r[1].name_len = 0);
        MUTATE("name over 253 bytes", r[1].name_len = 300);
        MUTATE("upper case in a name", copy[size - names_size] = 'E');
        MUTATE("bad byte in a name", copy[size - names_size] = '/');
        MUTATE("name area not terminated", copy[size - 1] = 'x');
        MUTATE("rule count past the message", ((BpfdRules *) copy)->n_rules = 6);
        MUTATE("rule count below the message", ((BpfdRules *) copy)->n_rules = 4);
        MUTATE("huge rule count", ((BpfdRules *) copy)->n_rules = 0x7fffffff);
        MUTATE("name area size mismatch", ((BpfdRules *) copy)->names_size += 1);

        TAP_CHECK(bpfd_parse_rules(buf, size - 1, collect, &c, &reason) == -EBADMSG,
                  "truncated RULES refused");
        {
                BpfdRules empty = { .n_rules = 0, .names_size = 0 };
                header(&empty.header, BPFD_MSG_RULES, sizeof(empty));
                TAP_CHECK(bpfd_parse_rules(&empty, sizeof(empty), collect, &c, &reason) == 0,
                          "empty RULES accepted");
        }
}

static void test_paths(void) {
        static const struct {
                const char *path;
                uid_t uid;
                int expect;
        } cases[] = {
                { "/user.slice/user-1001.slice/user@1001.service/app.slice/app-scudo_1.slice", 1001, 0 },
                { "/user.slice/user-1001.slice/user@1001.service/x", 1001, 0 },
                { "/user.slice/user-1001.slice/user@1001.service/app.slice/app-scudo_1.slice", 1002,
                  -EPERM },
                { "/user.slice/user-1001.slice/user@1001.service/", 1001, -EPERM },
                { "/user.slice/user-1001.slice/user@1001.service", 1001, -EPERM },
                { "/system.slice/cron.service", 1001, -EPERM },
                { "/", 1001, -EPERM },
                { "user.slice/user-1001.slice/user@1001.service/x", 1001, -EPERM },
                { "/user.slice/user-1001.slice/user@1001.service/../../user-1002.slice", 1001, -EINVAL },
                { "/user.slice/user-1001.slice/user@1001.service/app.slice/..", 1001, -EINVAL },
                { "/user.slice/user-1001.slice/user@1001.service/./x", 1001, -EINVAL },
                { "/user.slice/user-1001.slice/user@1001.service//x", 1001, -EINVAL },
                { "/user.slice/user-1001.slice/user@1001.service/x/", 1001, -EINVAL },
                { "/user.slice/user-1001.slice/user@1001.service/x\n", 1001, -EINVAL },
                { "/user.slice/user-10011.slice/user@10011.service/x", 1001, -EPERM },
                { "/user.slice/user-0.slice/user@0.service/x", 1001, -EPERM },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *reason = NULL;
                int k = bpfd_check_cgroup_path(cases[i].path, cases[i].uid, &reason);

                /* up to a line break: the rest of a TAP line would end the test's output line */
                TAP_CHECK(k == cases[i].expect, "path '%.*s' for uid %u: %d (%s)",
                          (int) strcspn(cases[i].path, "\n"), cases[i].path,
                          (unsigned) cases[i].uid, k, reason ?: "ok");
        }
}

/* USAGE and its answer: a bare request the helper takes, and an answer scudo checks whole. */
static void test_usage(void) {
        const char *reason = NULL;
        BpfdUsage *u = calloc(1, sizeof(BpfdUsage));
        BpfdHeader h;

        header(&h, BPFD_MSG_USAGE, sizeof(h));
        TAP_CHECK(bpfd_parse_usage(&h, sizeof(h), &reason) == 0, "USAGE accepted");
        TAP_CHECK(bpfd_parse_commit(&h, sizeof(h), &reason) == -EBADMSG, "USAGE is no COMMIT");
        {
                uint8_t b[sizeof(h) + 1] = {};
                header(&h, BPFD_MSG_USAGE, sizeof(b));
                memcpy(b, &h, sizeof(h));
                TAP_CHECK(bpfd_parse_usage(b, sizeof(b), &reason) == -EBADMSG,
                          "USAGE with a payload refused");
        }

        TAP_CHECK(u != NULL, "memory");
        if (!u)
                return;
        /* 5 rules, the first 2 deny rules: bits 2..4 may be set */
        header(&u->header, BPFD_MSG_USAGE_REPLY, sizeof(*u));
        u->n_rules = 5;
        u->reached[0] = 0x14;
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 5, 2, &reason) == 0 && bpfd_usage_bit(u, 2) &&
                  !bpfd_usage_bit(u, 3) && bpfd_usage_bit(u, 4), "an answer for allow rules 2 and 4");
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u) - 1, 5, 2, &reason) == -EBADMSG, "a short answer refused");
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 6, 2, &reason) == -EBADMSG,
                  "an answer for other rules refused");
        u->reached[0] = 0x01;
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 5, 2, &reason) == -EBADMSG,
                  "a deny rule reached: refused");
        u->reached[0] = 0x20;
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 5, 2, &reason) == -EBADMSG,
                  "a rule not sent reached: refused");
        u->reached[0] = 0;
        u->reached[BPFD_RULES_MAX / 8 - 1] = 0x80;
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 5, 2, &reason) == -EBADMSG, "the last bit set: refused");
        u->reached[BPFD_RULES_MAX / 8 - 1] = 0;
        u->error = -ENODATA;
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 5, 2, &reason) == -ENODATA,
                  "the helper's error passed on");
        u->error = 7;
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 5, 2, &reason) == -EBADMSG, "a positive error refused");
        u->error = 0;
        u->header.type = BPFD_MSG_REPLY;
        TAP_CHECK(bpfd_usage_check(u, sizeof(*u), 5, 2, &reason) == -EBADMSG, "another message refused");
        free(u);
}

/* WRITTEN is a bare header; its answer is checked before a directory of it is used. */
static void test_written(void) {
        struct {
                BpfdWritten w;
                BpfdDirId d[2];
        } a = {};
        const char *reason = NULL;
        uint8_t b[sizeof(BpfdHeader) + 1] = {};
        BpfdHeader h;
        BpfdOpen o = good_open();

        header(&h, BPFD_MSG_WRITTEN, sizeof(h));
        TAP_CHECK(bpfd_parse_written(&h, sizeof(h), &reason) == 0, "WRITTEN accepted");
        header((BpfdHeader *) b, BPFD_MSG_WRITTEN, sizeof(b));
        TAP_CHECK(bpfd_parse_written(b, sizeof(b), &reason) == -EBADMSG, "WRITTEN with a payload refused");
        o.flags = BPFD_OPEN_RECORD;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &(BpfdOpenRequest) {}, &reason) == -EBADMSG,
                  "a write record without file reports refused");
        o.flags = BPFD_OPEN_RECORD | BPFD_OPEN_FILES;
        TAP_CHECK(bpfd_parse_open(&o, sizeof(o), &(BpfdOpenRequest) {}, &reason) == 0,
                  "a write record with file reports accepted");

        header(&a.w.header, BPFD_MSG_WRITTEN_REPLY, sizeof(a));
        a.w.n = 2;
        TAP_CHECK(bpfd_written_check(&a, sizeof(a), &reason) == 2, "an answer with 2 directories");
        TAP_CHECK(bpfd_written_check(&a, sizeof(a) - 1, &reason) == -EBADMSG, "a short answer refused");
        a.w.n = 3;
        TAP_CHECK(bpfd_written_check(&a, sizeof(a), &reason) == -EBADMSG, "a count past the size refused");
        a.w.n = 2;
        a.w.flags = 2;
        TAP_CHECK(bpfd_written_check(&a, sizeof(a), &reason) == -EBADMSG, "an unknown flag refused");
        a.w.flags = 0;
        a.w.error = -ENODATA;
        TAP_CHECK(bpfd_written_check(&a, sizeof(a), &reason) == -EBADMSG, "an error with dirs refused");
        header(&a.w.header, BPFD_MSG_WRITTEN_REPLY, sizeof(a.w));
        a.w.n = 0;
        TAP_CHECK(bpfd_written_check(&a, sizeof(a.w), &reason) == -ENODATA, "the helper's error passed on");
        a.w.error = 0;
        a.w.header.type = BPFD_MSG_USAGE_REPLY;
        TAP_CHECK(bpfd_written_check(&a, sizeof(a.w), &reason) == -EBADMSG, "another message refused");
}

/* FILE_PREFIXES: taken whole or not at all; every prefix absolute and canonical. */
static void test_file_prefixes(void) {
        struct {
                BpfdFilePrefixes m;
                BpfdFilePrefix p[2];
        } msg = {}, bad;
        const char *paths[] = { "/", "/home/u/.ssh" }, *reason = NULL;
        const char *wrong[] = { "home", "/home//u", "/home/./u", "/home/../etc", "/home/", "/a\nb" };
        uint32_t cwd = 0;

        header(&msg.m.header, BPFD_MSG_FILE_PREFIXES, sizeof(msg));
        msg.m.n = 2;
        msg.m.cwd_mask = BPFD_FILE_WRITE_ERRORS;
        for (size_t i = 0; i < 2; i++) {
                msg.p[i].self = BPFD_FILE_ALL_ERRORS;
                msg.p[i].path_len = (uint32_t) strlen(paths[i]);
                memcpy(msg.p[i].path, paths[i], strlen(paths[i]));
        }
        TAP_CHECK(bpfd_parse_file_prefixes(&msg, sizeof(msg), NULL, NULL, &cwd, &reason) == 2 &&
                  cwd == BPFD_FILE_WRITE_ERRORS, "prefixes accepted");
        TAP_CHECK(bpfd_parse_file_prefixes(&msg, sizeof(msg) - 1, NULL, NULL, NULL, &reason) == -EBADMSG,
                  "a message cut short refused");
        bad = msg;
        bad.m.n = 3;
        TAP_CHECK(bpfd_parse_file_prefixes(&bad, sizeof(bad), NULL, NULL, NULL, &reason) == -EBADMSG,
                  "a count past the message refused: %s", reason);
        bad = msg;
        bad.p[1].self = 8;
        TAP_CHECK(bpfd_parse_file_prefixes(&bad, sizeof(bad), NULL, NULL, NULL, &reason) == -EBADMSG,
                  "unknown error bits refused");
        bad = msg;
        bad.p[1].path[20] = 'x';
        TAP_CHECK(bpfd_parse_file_prefixes(&bad, sizeof(bad), NULL, NULL, NULL, &reason) == -EBADMSG,
                  "bytes after the path refused: %s", reason);
        for (size_t i = 0; i < ELEMENTSOF(wrong); i++) {
                bad = msg;
                memset(bad.p[1].path, 0, sizeof(bad.p[1].path));
                bad.p[1].path_len = (uint32_t) strlen(wrong[i]);
                memcpy(bad.p[1].path, wrong[i], strlen(wrong[i]));
                TAP_CHECK(bpfd_parse_file_prefixes(&bad, sizeof(bad), NULL, NULL, NULL, &reason) == -EBADMSG,
                          "a prefix that is not absolute and canonical refused: %s", wrong[i]);
        }
}

int main(void) {
        test_file_prefixes();
        test_header();
        test_usage();
        test_written();
        test_open();
        test_rules();
        test_paths();
        return tap_done();
}
