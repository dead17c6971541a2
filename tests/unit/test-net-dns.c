/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Unit tests for src/bpfd/dns-packet.c, name-key.c and resolv-conf.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

#include "bpfd/dns-cache.h"
#include "bpfd/dns-packet.h"
#include "bpfd/name-key.h"
#include "bpfd/resolv-conf.h"
#include "tap.h"

typedef struct Msg {
        uint8_t b[1024];
        size_t n;
} Msg;

static void put8(Msg *m, uint8_t v) {
        m->b[m->n++] = v;
}
static void put16(Msg *m, uint16_t v) {
        put8(m, (uint8_t) (v >> 8));
        put8(m, (uint8_t) v);
}
static void put32(Msg *m, uint32_t v) {
        put16(m, (uint16_t) (v >> 16));
        put16(m, (uint16_t) v);
}
static void put_name(Msg *m, const char *name) {
        while (*name) {
                size_t l = strcspn(name, ".");
                put8(m, (uint8_t) l);
                memcpy(m->b + m->n, name, l);
                m->n += l;
                name += l;
                if (*name == '.')
                        name++;
        }
        put8(m, 0);
}
static void put_header(Msg *m, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an) {
        put16(m, id);
        put16(m, flags);
        put16(m, qd);
        put16(m, an);
        put16(m, 0);
        put16(m, 0);
}

static Msg query(const char *name, uint16_t type) {
        Msg m = {};
        put_header(&m, 0x1234, 0x0100, 1, 0);
        put_name(&m, name);
        put16(&m, type);
        put16(&m, DNS_CLASS_IN);
        return m;
}

typedef struct Seen {
        char addrs[8][INET6_ADDRSTRLEN];
        uint32_t ttls[8];
        int n;
} Seen;

static int seen_cb(const uint8_t addr[16], uint32_t ttl, void *userdata) {
        Seen *s = userdata;
        if (s->n >= 8)
                return -E2BIG;
        if (addr[10] == 0xff && addr[11] == 0xff && !addr[0])
                inet_ntop(AF_INET, addr + 12, s->addrs[s->n], INET6_ADDRSTRLEN);
        else
                inet_ntop(AF_INET6, addr, s->addrs[s->n], INET6_ADDRSTRLEN);
        s->ttls[s->n] = ttl;
        s->n++;
        return 0;
}

static void test_query(void) {
        DnsQuestion q;
        Msg m = query("WWW.Example.com", DNS_TYPE_A);

        TAP_CHECK(dns_parse_query(m.b, m.n, &q) == 0, "query parses");
        TAP_STREQ(q.name, "www.example.com", "name lower-cased");
        TAP_CHECK(q.name_ok && q.qtype == DNS_TYPE_A && q.id == 0x1234 && q.end == m.n, "question fields");

        Msg odd = query("we\x01ird.com", DNS_TYPE_A);
        TAP_CHECK(dns_parse_query(odd.b, odd.n, &q) == 0 && !q.name_ok, "odd bytes parse but are marked");

        Msg dot = query("a.b", DNS_TYPE_A);
        dot.b[DNS_HEADER_SIZE + 1] = '.';       /* "a" → "." inside a label */
        TAP_CHECK(dns_parse_query(dot.b, dot.n, &q) == 0 && !q.name_ok,
                  "a dot inside a label is not a match");

        for (size_t cut = 0; cut < m.n; cut++)
                if (dns_parse_query(m.b, cut, &q) != -EBADMSG) {
                        TAP_CHECK(false, "truncated query at %zu refused", cut);
                        goto next;
                }
        TAP_CHECK(true, "every truncation of a query refused");
next:;
        Msg resp = m;
        resp.b[2] |= 0x80;
        TAP_CHECK(dns_parse_query(resp.b, resp.n, &q) == -EBADMSG, "a response is not a query");
        Msg two = m;
        two.b[5] = 2;
        TAP_CHECK(dns_parse_query(two.b, two.n, &q) == -EBADMSG, "two questions refused");
        Msg op = m;
        op.b[2] |= 0x28;
        TAP_CHECK(dns_parse_query(op.b, op.n, &q) == -EBADMSG, "non-QUERY opcode refused");

        Msg ptr = {};
        put_header(&ptr, 1, 0x0100, 1, 0);
        put8(&ptr, 0xc0);
        put8(&ptr, 0x00);
        put16(&ptr, 1);
        put16(&ptr, 1);
        TAP_CHECK(dns_parse_query(ptr.b, ptr.n, &q) == -EBADMSG, "compression in a query refused");

        Msg root = {};
        put_header(&root, 1, 0x0100, 1, 0);
        put8(&root, 0);
        put16(&root, 2);
        put16(&root, 1);
        TAP_CHECK(dns_parse_query(root.b, root.n, &q) == 0 && !q.name_ok && q.name[0] == 0,
                  "root name parses, matches nothing");
}

static void test_error_reply(void) {
        DnsQuestion q;
        Msg m = query("evil.example", DNS_TYPE_AAAA);
        uint8_t out[512];
        int n;

        TAP_CHECK(dns_parse_query(m.b, m.n, &q) == 0, "query for refusal parses");
        n = dns_make_error_reply(m.b, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
        TAP_CHECK(n == (int) m.n, "NXDOMAIN reply has the question only");
        TAP_CHECK(out[0] == 0x12 && out[1] == 0x34 && (out[2] & 0x80) && (out[2] & 0x01) &&
                          (out[3] & 0x0f) == 3,
                  "same id, QR, RD kept, rcode 3");
        TAP_CHECK(out[5] == 1 && out[7] == 0 && out[9] == 0 && out[11] == 0, "counts 1/0/0/0");
        TAP_CHECK(dns_make_error_reply(m.b, &q, 5, out, 10) == -ENOBUFS, "small buffer refused");
}

static Msg answer(const char *name, uint16_t type) {
        Msg a = {};
        put_header(&a, 0x1234, 0x8180, 1, 0);
        put_name(&a, name);
        put16(&a, type);
        put16(&a, DNS_CLASS_IN);
        return a;
}

static void add_rr(Msg *a, const char *owner_or_null, uint16_t type, uint32_t ttl, const void *rdata,
                   uint16_t len) {
        if (owner_or_null)
                put_name(a, owner_or_null);
        else {
                put8(a, 0xc0);          /* pointer to the question's name */
                put8(a, DNS_HEADER_SIZE);
        }
        put16(a, type);
        put16(a, DNS_CLASS_IN);
        put32(a, ttl);
        put16(a, len);
        memcpy(a->b + a->n, rdata, len);
        a->n += len;
        a->b[7]++;                      /* ANCOUNT */
}

static void test_answer(void) {
        DnsQuestion q;
        Msg m = query("www.example.com", DNS_TYPE_A);
        uint8_t v4[4] = { 192, 0, 2, 7 }, v4b[4] = { 192, 0, 2, 8 }, other[4] = { 6, 6, 6, 6 };
        uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
        Seen s = {};

        TAP_CHECK(dns_parse_query(m.b, m.n, &q) == 0, "query for answer parses");

        Msg a = answer("www.example.com", DNS_TYPE_A);
        add_rr(&a, NULL, DNS_TYPE_A, 300, v4, 4);
        TAP_CHECK(dns_parse_answer(a.b, a.n, &q, seen_cb, &s) == 1 && s.n == 1, "one A record");
        TAP_STREQ(s.addrs[0], "192.0.2.7", "A address");
        TAP_CHECK(s.ttls[0] == 300, "TTL kept");

        /* CNAME chain, listed after the address it leads to, plus an unrelated record */
        Msg c = answer("www.example.com", DNS_TYPE_A);
        add_rr(&c, "cdn.example.net", DNS_TYPE_A, 60, v4b, 4);
        add_rr(&c, "unrelated.evil", DNS_TYPE_A, 60, other, 4);
        {
                Msg target = {};
                put_name(&target, "cdn.example.net");
                add_rr(&c, NULL, DNS_TYPE_CNAME, 60, target.b, (uint16_t) target.n);
        }
        add_rr(&c, "cdn.example.net", DNS_TYPE_AAAA, 0x90000000U, v6, 16);
        memset(&s, 0, sizeof(s));
        TAP_CHECK(dns_parse_answer(c.b, c.n, &q, seen_cb, &s) == 2 && s.n == 2,
                  "CNAME chain followed, stranger ignored");
        TAP_STREQ(s.addrs[0], "192.0.2.8", "address of the CNAME target");
        TAP_STREQ(s.addrs[1], "2001:db8::1", "AAAA of the CNAME target");
        TAP_CHECK(s.ttls[1] == 0, "TTL over 2^31 counts as 0");

        Msg wrong = answer("other.example.com", DNS_TYPE_A);
        add_rr(&wrong, NULL, DNS_TYPE_A, 300, v4, 4);
        TAP_CHECK(dns_parse_answer(wrong.b, wrong.n, &q, seen_cb, &s) == -EBADMSG,
                  "answer to another question refused");
        Msg wrong_id = a;
        wrong_id.b[1] ^= 1;
        TAP_CHECK(dns_parse_answer(wrong_id.b, wrong_id.n, &q, seen_cb, &s) == -EBADMSG,
                  "answer with another id refused");

        Msg loop = answer("www.example.com", DNS_TYPE_A);
        put8(&loop, 0xc0);
        put8(&loop, (uint8_t) loop.n - 1);      /* a pointer to itself */
        put16(&loop, DNS_TYPE_A);
        put16(&loop, DNS_CLASS_IN);
        put32(&loop, 1);
        put16(&loop, 4);
        memcpy(loop.b + loop.n, v4, 4);
        loop.n += 4;
        loop.b[7] = 1;
        TAP_CHECK(dns_parse_answer(loop.b, loop.n, &q, seen_cb, &s) == -EBADMSG, "pointer loop refused");

        Msg bad_len = a;
        bad_len.b[bad_len.n - 5] = 200;          /* rdlength past the end */
        TAP_CHECK(dns_parse_answer(bad_len.b, bad_len.n, &q, seen_cb, &s) == -EBADMSG,
                  "rdlength past the end refused");

        Msg odd_a = answer("www.example.com", DNS_TYPE_A);
        add_rr(&odd_a, NULL, DNS_TYPE_A, 300, v6, 16);
        memset(&s, 0, sizeof(s));
        TAP_CHECK(dns_parse_answer(odd_a.b, odd_a.n, &q, seen_cb, &s) == 0 && s.n == 0,
                  "A record of 16 bytes ignored");

        int bad = 0;
        for (size_t cut = 0; cut < c.n; cut++)
                if (dns_parse_answer(c.b, cut, &q, NULL, NULL) >= 2)
                        bad++;
        TAP_CHECK(bad == 0, "no truncation of an answer yields its records");
}

static void test_response_question(void) {
        DnsQuestion q;
        Seen s = {};
        uint8_t v4[4] = { 192, 0, 2, 9 };
        Msg a = answer("Cdn.Example.com", DNS_TYPE_AAAA);

        add_rr(&a, NULL, DNS_TYPE_A, 30, v4, 4);
        TAP_CHECK(dns_parse_response_question(a.b, a.n, &q) == 0, "the question of an answer is read");
        TAP_STREQ(q.name, "cdn.example.com", "... lower-cased");
        TAP_CHECK(q.id == 0x1234 && q.qtype == DNS_TYPE_AAAA && q.qclass == DNS_CLASS_IN && q.name_ok,
                  "... with its id, type and class");
        /* what the helper does with an answer the BPF programs left to it */
        TAP_CHECK(dns_parse_answer(a.b, a.n, &q, seen_cb, &s) == 1 && s.n == 1,
                  "and the answer walked with it");

        Msg query_msg = query("cdn.example.com", DNS_TYPE_A);
        TAP_CHECK(dns_parse_response_question(query_msg.b, query_msg.n, &q) == -EBADMSG,
                  "a query is no answer");
        TAP_CHECK(dns_parse_query(a.b, a.n, &q) == -EBADMSG, "an answer is no query");
        Msg two = a;
        two.b[5] = 2;
        TAP_CHECK(dns_parse_response_question(two.b, two.n, &q) == -EBADMSG, "two questions refused");
        int bad = 0;
        for (size_t cut = 0; cut < DNS_HEADER_SIZE + 17 + 4; cut++)
                if (dns_parse_response_question(a.b, cut, &q) == 0)
                        bad++;
        TAP_CHECK(bad == 0, "no truncated question is read");
}

static void test_name_key(void) {
        struct net_name_key k;
        const uint8_t wire[] = { 7, 'a', 'l', 'l', 'o', 'w', 'e', 'd', 4, 't', 'e', 's', 't', 0 };
        char longest[NET_NAME_KEY_SIZE], label64[70];
        int zeros = 0;

        TAP_CHECK(net_name_key_make(42, "allowed.test", &k) == 0, "name key made");
        TAP_CHECK(k.sid == 42, "... for the sandbox");
        TAP_CHECK(memcmp(k.name + sizeof(k.name) - sizeof(wire), wire, sizeof(wire)) == 0,
                  "... the name in wire format, right-aligned");
        for (size_t i = 0; i < sizeof(k.name) - sizeof(wire); i++)
                zeros += k.name[i] == 0;
        TAP_CHECK(zeros == (int) (sizeof(k.name) - sizeof(wire)), "... zeros before it");

        /* the parent's key is the name's with its first label zeroed: what the programs
         * look up for "*.test" */
        struct net_name_key parent;
        TAP_CHECK(net_name_key_make(42, "test", &parent) == 0, "parent key made");
        memset(k.name + sizeof(k.name) - sizeof(wire), 0, 8);
        TAP_CHECK(memcmp(&k, &parent, sizeof(k)) == 0,
                  "... and equal to the name's with its first label zeroed");

        /* 126 characters fit (with the first length byte and the root: 128) */
        memset(longest, 'a', sizeof(longest));
        for (size_t i = 60; i < 126; i += 61)
                longest[i] = '.';
        longest[126] = 0;
        TAP_CHECK(net_name_key_make(1, longest, &k) == 0 && k.name[0] == 60,
                  "a name of 126 characters fits");
        longest[126] = 'a';
        longest[127] = 0;
        TAP_CHECK(net_name_key_make(1, longest, &k) == -EINVAL, "one of 127 does not");
        memset(label64, 'b', 64);
        label64[64] = 0;
        TAP_CHECK(net_name_key_make(1, label64, &k) == -EINVAL, "a label of 64 characters does not");
        TAP_CHECK(net_name_key_make(1, "", &k) == -EINVAL, "the empty name does not");
        TAP_CHECK(net_name_key_make(1, "a..b", &k) == -EINVAL, "an empty label does not");
        TAP_CHECK(net_name_key_make(1, "a.b.", &k) == -EINVAL, "a final dot does not");
}

static void test_resolv_conf(void) {
        Nameserver ns[RESOLV_CONF_MAX_SERVERS];
        char a[INET6_ADDRSTRLEN];

        TAP_CHECK(resolv_conf_parse("# comment\nsearch x\nnameserver 127.0.0.53\n  nameserver\t::1 # c\n"
                                    "nameserver bogus\nnameserver 10.0.0.1\nnameserver 10.0.0.2\n", ns) == 3,
                  "three servers, a bogus one skipped");
        inet_ntop(AF_INET6, &ns[0].addr.sin6_addr, a, sizeof(a));
        TAP_STREQ(a, "::ffff:127.0.0.53", "IPv4 server v4-mapped");
        inet_ntop(AF_INET6, &ns[1].addr.sin6_addr, a, sizeof(a));
        TAP_STREQ(a, "::1", "IPv6 server");
        TAP_CHECK(ntohs(ns[0].addr.sin6_port) == 53, "port 53");
        TAP_CHECK(resolv_conf_parse("", ns) == 0, "no servers");
        TAP_CHECK(resolv_conf_load("/nonexistent/resolv.conf", ns) == 1, "missing file: 127.0.0.1 as glibc");
}

static void test_cache(void) {
        static DnsCache c;
        Msg q = query("www.example.com", DNS_TYPE_A), q2 = q, other = query("x.example.com", DNS_TYPE_A);
        Msg a = answer("www.example.com", DNS_TYPE_A);
        DnsCachedAddress addr = { .addr = { [10] = 0xff, [11] = 0xff, [12] = 192, [15] = 7 }, .ttl = 5 };
        const DnsCacheEntry *e;

        uint8_t v4[4] = { 192, 0, 2, 7 };
        add_rr(&a, NULL, DNS_TYPE_A, 5, v4, 4);
        TAP_CHECK(dns_cache_store(&c, false, q.b, q.n, a.b, a.n, &addr, 1, 5, 1000000) == 1,
                  "answer cached");
        q2.b[0] = 0x77;                 /* another id: same key */
        e = dns_cache_lookup(&c, false, q2.b, q2.n, 2000000);
        TAP_CHECK(e && e->answer_len == a.n && e->n_addrs == 1, "hit with another id");
        TAP_CHECK(!dns_cache_lookup(&c, true, q.b, q.n, 2000000), "TCP and UDP kept apart");
        TAP_CHECK(!dns_cache_lookup(&c, false, other.b, other.n, 2000000), "other name misses");
        TAP_CHECK(!dns_cache_lookup(&c, false, q.b, q.n, 6000001), "expired after the TTL");
        TAP_CHECK(dns_cache_store(&c, false, q.b, q.n, a.b, a.n, &addr, 1, 0, 1000000) == 0,
                  "TTL 0 not cached");
        TAP_CHECK(dns_cache_store(&c, false, q.b, q.n, a.b, a.n, &addr, 0, 5, 1000000) == 0,
                  "no address, not cached");
        for (unsigned i = 0; i < DNS_CACHE_ENTRIES + 10; i++) {
                char n[32];
                snprintf(n, sizeof(n), "h%u.example", i);
                Msg qi = query(n, DNS_TYPE_A);
                (void) dns_cache_store(&c, false, qi.b, qi.n, a.b, a.n, &addr, 1, 60, 1000000 + i);
        }
        TAP_CHECK(dns_cache_lookup(&c, false, query("h137.example", DNS_TYPE_A).b,
                                   query("h137.example", DNS_TYPE_A).n, 2000000),
                  "newest entry kept when full");
        TAP_CHECK(!dns_cache_lookup(&c, false, query("h0.example", DNS_TYPE_A).b,
                                    query("h0.example", DNS_TYPE_A).n, 2000000), "oldest entry replaced");
        dns_cache_clear(&c);
}

int main(void) {
        test_cache();
        test_query();
        test_error_reply();
        test_answer();
        test_response_question();
        test_name_key();
        test_resolv_conf();
        return tap_done();
}
