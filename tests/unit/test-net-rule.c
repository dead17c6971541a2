/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Unit tests for src/net/net-rule.c: the network rule syntax of profiles. */
#include <arpa/inet.h>
#include <stdlib.h>

#include "net/net-rule.h"
#include "util/macro.h"
#include "tap.h"

static void test_valid(void) {
        static const struct {
                const char *in, *canonical;
                NetRuleKind kind;
                unsigned prefixlen;
                unsigned port;
        } cases[] = {
                { "example.com", "example.com", NET_RULE_HOST, 0, 0 },
                { "Example.COM.", "example.com", NET_RULE_HOST, 0, 0 },
                { "example.com:443", "example.com:443", NET_RULE_HOST, 0, 443 },
                { "*.example.com:443", "*.example.com:443", NET_RULE_DOMAIN, 0, 443 },
                { "*.com", "*.com", NET_RULE_DOMAIN, 0, 0 },
                { "localhost", "localhost", NET_RULE_HOST, 0, 0 },
                { "_srv.x-y.example", "_srv.x-y.example", NET_RULE_HOST, 0, 0 },
                { "1.2.3.4", "1.2.3.4", NET_RULE_ADDRESS, 128, 0 },
                { "1.2.3.4:80", "1.2.3.4:80", NET_RULE_ADDRESS, 128, 80 },
                { "1.2.3.0/24", "1.2.3.0/24", NET_RULE_ADDRESS, 120, 0 },
                { "10.0.0.0/8:443", "10.0.0.0/8:443", NET_RULE_ADDRESS, 104, 443 },
                { "0.0.0.0/0", "0.0.0.0/0", NET_RULE_ADDRESS, 96, 0 },
                { "[2001:db8::]/32:443", "[2001:db8::]/32:443", NET_RULE_ADDRESS, 32, 443 },
                { "[::1]:8080", "[::1]:8080", NET_RULE_ADDRESS, 128, 8080 },
                { "[::1]", "[::1]", NET_RULE_ADDRESS, 128, 0 },
                { "2001:db8::/32", "[2001:db8::]/32", NET_RULE_ADDRESS, 32, 0 },
                { "::1", "[::1]", NET_RULE_ADDRESS, 128, 0 },
                { "[::ffff:10.0.0.1]:22", "10.0.0.1:22", NET_RULE_ADDRESS, 128, 22 },
                { ":443", ":443", NET_RULE_ADDRESS, 0, 443 },
                { ":65535", ":65535", NET_RULE_ADDRESS, 0, 65535 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *reason = NULL;
                char buf[300];
                NetRule r;
                int k;

                k = net_rule_parse_reason(cases[i].in, &r, &reason);
                TAP_CHECK(k == 0, "'%s' parses%s%s", cases[i].in, reason ? ": " : "", reason ?: "");
                if (k < 0)
                        continue;
                TAP_CHECK(r.kind == cases[i].kind, "'%s' kind", cases[i].in);
                TAP_CHECK(r.kind != NET_RULE_ADDRESS || r.prefixlen == cases[i].prefixlen,
                          "'%s' prefix length %u (got %u)", cases[i].in, cases[i].prefixlen, r.prefixlen);
                TAP_CHECK(r.port == cases[i].port, "'%s' port", cases[i].in);
                (void) net_rule_format(&r, buf, sizeof(buf));
                TAP_STREQ(buf, cases[i].canonical, "'%s' formats canonically", cases[i].in);
        }
}

static void test_ipv4_mapped(void) {
        NetRule r;
        uint8_t expect[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 1, [14] = 2, [15] = 3 };

        TAP_CHECK(net_rule_parse("10.1.2.3", &r) == 0 && memcmp(r.addr, expect, 16) == 0,
                  "IPv4 is stored v4-mapped");
}

static void test_invalid(void) {
        static const char *const cases[] = {
                "", " ", "example.com ", "exa mple.com", "a\nb",
                "example.com:", "example.com:0", "example.com:65536", "example.com:http", "example.com:-1",
                ":", ":0", ":99999", "::1:",
                "*", "*:443", "a.*.com", "*example.com", "**.example.com", "*.",
                "1.2.3.4/33", "1.2.3.4/24", "1.2.3.0/", "1.2.3.0/x", "10.0.0.256", "1.2.3", "1.2.3.4.5",
                "[::1", "[::1]x", "[::1]:", "[::1]/129", "[2001:db8::1]/32", "[1.2.3.4]", "[zz::1]",
                "2001:db8::1:443x", "example..com", ".example.com", "ex$ample.com",
                "example.com/24", "é.example",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *reason = NULL;
                NetRule r;
                int k;

                k = net_rule_parse_reason(cases[i], &r, &reason);
                TAP_CHECK(k == -EINVAL && reason && *reason, "'%s' refused (%s)", cases[i],
                          reason ?: "no reason");
        }

        /* a name longer than 253 bytes */
        char long_name[300];
        memset(long_name, 'a', sizeof(long_name));
        for (size_t i = 50; i < sizeof(long_name); i += 51)
                long_name[i] = '.';
        long_name[sizeof(long_name) - 1] = 0;
        NetRule r;
        TAP_CHECK(net_rule_parse(long_name, &r) == -EINVAL, "name over 253 bytes refused");
        TAP_CHECK(net_rule_parse(NULL, &r) == -EINVAL, "NULL refused");
}

/* What inet_aton() reads as an IPv4 address (and getaddrinfo() with it, without asking DNS)
 * is refused, with the address it means; never taken as a host name that nothing would ever
 * look up. */
static void test_numeric_spellings(void) {
        static const struct {
                const char *in, *means;
        } cases[] = {
                { "0x7f.1:80", "127.0.0.1" },
                { "0x7f.1", "127.0.0.1" },
                { "0x7F.0.0.1.", "127.0.0.1" },
                { "0x7f000001", "127.0.0.1" },
                { "2130706433", "127.0.0.1" },
                { "2130706433:443", "127.0.0.1" },
                { "127.1", "127.0.0.1" },
                { "127.1:22", "127.0.0.1" },
                { "10.1/8", "10.0.0.1" },
                { "0177.0.0.1", "127.0.0.1" },
                { "010.0.0.1", "8.0.0.1" },
                { "1.2.3", "1.2.0.3" },
                { "0", "0.0.0.0" },
                { "1:80", "0.0.0.1" },
                { "*.0x7f.1", NULL },           /* a domain: no address spells "*." */
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *reason = NULL;
                NetRule r;
                int k = net_rule_parse_reason(cases[i].in, &r, &reason);
                if (!cases[i].means) {
                        TAP_CHECK(k == 0 && r.kind == NET_RULE_DOMAIN, "'%s' is a domain", cases[i].in);
                        continue;
                }
                TAP_CHECK(k == -EINVAL && reason && strstr(reason, cases[i].means) &&
                                  strstr(reason, "write"),
                          "'%s' refused, naming %s (%s)", cases[i].in, cases[i].means, reason ?: "accepted");
        }
        /* names that only look numeric stay names */
        static const char *const names[] = { "0x7g.1", "1.2.3.4.example", "123.example", "x1", "0x" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                NetRule r;
                TAP_CHECK(net_rule_parse(names[i], &r) == 0 && r.kind == NET_RULE_HOST,
                          "'%s' is a host name", names[i]);
        }
        /* IPv6: inet_pton() is the only reader, and what it refuses is refused */
        static const char *const v6[] = { "[::ffff:0x7f.1]", "[fe80::1%eth0]", "fe80::1%1", "[::1.2.3]" };
        for (size_t i = 0; i < ELEMENTSOF(v6); i++) {
                NetRule r;
                TAP_CHECK(net_rule_parse(v6[i], &r) == -EINVAL, "'%s' refused", v6[i]);
        }
        NetRule r;
        TAP_CHECK(net_rule_parse("[0:0:0:0:0:FFFF:7F00:1]:80", &r) == 0 && r.kind == NET_RULE_ADDRESS &&
                          r.prefixlen == 128 && r.addr[12] == 127 && r.addr[15] == 1,
                  "an IPv6 spelling of 127.0.0.1 is that address");
}

static void test_match(void) {
        NetRule host, dom;

        TAP_CHECK(net_rule_parse("example.com", &host) == 0 && net_rule_parse("*.example.com", &dom) == 0,
                  "match rules parse");
        TAP_CHECK(net_rule_matches_name(&host, "example.com"), "host matches itself");
        TAP_CHECK(!net_rule_matches_name(&host, "www.example.com"), "host does not match a subdomain");
        TAP_CHECK(net_rule_matches_name(&dom, "www.example.com"), "wildcard matches a subdomain");
        TAP_CHECK(net_rule_matches_name(&dom, "a.b.example.com"), "wildcard matches deeper names");
        TAP_CHECK(!net_rule_matches_name(&dom, "example.com"), "wildcard does not match the domain itself");
        TAP_CHECK(!net_rule_matches_name(&dom, "badexample.com"), "wildcard needs a label boundary");
        TAP_CHECK(!net_rule_matches_name(&dom, "example.com.evil"), "wildcard is a suffix match");
}

static void test_names(void) {
        TAP_CHECK(net_name_is_valid("a.b-c_d.e0"), "valid name");
        TAP_CHECK(!net_name_is_valid("A.com"), "upper case is not canonical");
        TAP_CHECK(!net_name_is_valid("a..b"), "empty label");
        TAP_CHECK(!net_name_is_valid("a.b."), "final dot");
        TAP_CHECK(!net_name_is_valid(""), "empty name");
}

static void test_describe(void) {
        char *allow[] = { (char *) "example.com:443", (char *) "10.0.0.0/8", NULL };
        char *deny[] = { (char *) "10.1.0.0/16", NULL };
        char *bad[] = { (char *) "10.0.0.0/99", NULL };
        char *text = NULL;

        TAP_CHECK(net_rules_describe(allow, deny, DNS_FILTERED, &text) == 0 && text, "describe");
        TAP_CHECK(text && strstr(text, "deny  10.1.0.0/16") && strstr(text, "allow example.com:443") &&
                  strstr(text, "dns filtered"), "describe lists the rules");
        free(text);
        text = NULL;
        TAP_CHECK(net_rules_describe(bad, NULL, DNS_OPEN, &text) == -EINVAL && text &&
                  strstr(text, "INVALID"), "describe names an invalid rule");
        free(text);
}

int main(void) {
        test_valid();
        test_ipv4_mapped();
        test_invalid();
        test_numeric_spellings();
        test_match();
        test_names();
        test_describe();
        return tap_done();
}
