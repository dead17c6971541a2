/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <string.h>

#include "bpfd/dns-packet.h"
#include "net/net-rule.h"
#include "util/macro.h"

#define MAX_POINTER_HOPS 32
#define MAX_CHAIN 16

static uint16_t get16(const uint8_t *p) {
        return (uint16_t) ((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p) {
        return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* Reads a (possibly compressed) name starting at *pos into text form; advances *pos past the
 * name as it appears at that place. `allow_pointers` is false for the question of a query.
 * Sets *ok to false if the name has bytes that a rule can never match. */
static int read_name(const uint8_t *msg, size_t size, size_t *pos, bool allow_pointers, char *out,
                     bool *ok) {
        size_t p = *pos, len = 0, end = 0;
        unsigned hops = 0;
        bool jumped = false;

        *ok = true;
        for (;;) {
                uint8_t l;

                if (p >= size)
                        return -EBADMSG;
                l = msg[p];
                if ((l & 0xc0) == 0xc0) {
                        size_t target;

                        if (!allow_pointers || p + 1 >= size || ++hops > MAX_POINTER_HOPS)
                                return -EBADMSG;
                        target = ((size_t) (l & 0x3f) << 8) | msg[p + 1];
                        /* Only backwards, to a place before this pointer: no loops. */
                        if (target >= p)
                                return -EBADMSG;
                        if (!jumped) {
                                end = p + 2;
                                jumped = true;
                        }
                        p = target;
                        continue;
                }
                if (l & 0xc0)
                        return -EBADMSG;        /* 0x40/0x80: extended label types, unsupported */
                if (l == 0) {
                        p++;
                        break;
                }
                if (p + 1 + l > size)
                        return -EBADMSG;
                if (len + (len > 0) + l > DNS_NAME_TEXT_MAX - 1)
                        return -EBADMSG;
                if (len > 0)
                        out[len++] = '.';
                for (size_t i = 0; i < l; i++) {
                        uint8_t c = msg[p + 1 + i];

                        if (c >= 'A' && c <= 'Z')
                                c = (uint8_t) (c - 'A' + 'a');
                        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                                *ok = false;
                                c = '?';
                        }
                        out[len++] = (char) c;
                }
                p += 1 + (size_t) l;
        }
        out[len] = 0;
        *pos = jumped ? end : p;
        return 0;
}

/* The header checks both kinds of message share, and the one question. */
static int read_question(const uint8_t *msg, size_t size, bool response, DnsQuestion *q) {
        size_t pos = DNS_HEADER_SIZE;
        bool ok;
        int k;

        if (size < DNS_HEADER_SIZE)
                return -EBADMSG;
        if (!!(msg[2] & 0x80) != response)      /* QR */
                return -EBADMSG;
        if ((msg[2] >> 3) & 0x0f)               /* OPCODE: only QUERY */
                return -EBADMSG;
        if (get16(msg + 4) != 1)                /* QDCOUNT */
                return -EBADMSG;

        *q = (DnsQuestion) { .id = get16(msg) };
        /* a question is never compressed: there is nothing before it to point to */
        k = read_name(msg, size, &pos, false, q->name, &ok);
        if (k < 0)
                return k;
        if (pos + 4 > size)
                return -EBADMSG;
        q->qtype = get16(msg + pos);
        q->qclass = get16(msg + pos + 2);
        q->end = pos + 4;
        q->name_ok = ok && net_name_is_valid(q->name);
        return 0;
}

int dns_parse_response_question(const uint8_t *msg, size_t size, DnsQuestion *ret) {
        return read_question(msg, size, true, ret);
}

int dns_parse_query(const uint8_t *msg, size_t size, DnsQuestion *ret) {
        DnsQuestion q;
        size_t pos;
        int k;

        k = read_question(msg, size, false, &q);
        if (k < 0)
                return k;
        if (get16(msg + 6) != 0 || get16(msg + 8) != 0)
                return -EBADMSG;                /* answers or authority in a query */

        /* The additional records (EDNS): read only to find the OPT; none is forwarded as is. */
        pos = q.end;
        for (unsigned i = 0, n = get16(msg + 10); i < n; i++) {
                char owner[DNS_NAME_TEXT_MAX];
                uint16_t type, rdlength;
                bool owner_ok;

                k = read_name(msg, size, &pos, true, owner, &owner_ok);
                if (k < 0)
                        return k;
                if (pos + 10 > size)
                        return -EBADMSG;
                type = get16(msg + pos);
                rdlength = get16(msg + pos + 8);
                if (rdlength > size - pos - 10)
                        return -EBADMSG;
                if (type == DNS_TYPE_OPT && owner[0] == 0 && !q.edns) {
                        q.edns = true;
                        q.edns_udp_size = get16(msg + pos + 2);
                        q.edns_do = (msg[pos + 6] & 0x80) != 0;
                }
                pos += 10 + (size_t) rdlength;
        }
        *ret = q;
        return 0;
}

int dns_make_forward_query(const uint8_t *query, const DnsQuestion *q, uint8_t *out, size_t out_size) {
        size_t n = q->end;

        if (q->end < DNS_HEADER_SIZE || q->end > DNS_FORWARD_QUERY_MAX - 11 ||
            out_size < q->end + (q->edns ? 11 : 0))
                return -ENOBUFS;
        memcpy(out, query, q->end);
        out[2] = (uint8_t) (query[2] & 0x01);           /* RD; QR=0, opcode 0, no AA/TC */
        out[3] = (uint8_t) (query[3] & 0x30);           /* AD, CD; no Z, no rcode */
        out[4] = 0;
        out[5] = 1;
        memset(out + 6, 0, 6);
        if (q->edns) {
                uint16_t udp = (uint16_t) MIN(MAX(q->edns_udp_size, 512U), 4096U);

                out[11] = 1;
                out[n++] = 0;                           /* the root */
                out[n++] = 0;
                out[n++] = DNS_TYPE_OPT;
                out[n++] = (uint8_t) (udp >> 8);
                out[n++] = (uint8_t) udp;
                out[n++] = 0;                           /* extended rcode, version 0 */
                out[n++] = 0;
                out[n++] = q->edns_do ? 0x80 : 0;
                out[n++] = 0;
                out[n++] = 0;                           /* no options */
                out[n++] = 0;
        }
        return (int) n;
}

int dns_make_error_reply(const uint8_t *query, const DnsQuestion *q, unsigned rcode, uint8_t *out,
                         size_t out_size) {
        if (q->end > out_size || q->end < DNS_HEADER_SIZE)
                return -ENOBUFS;
        memcpy(out, query, q->end);
        out[2] = (uint8_t) (0x80 | (query[2] & 0x01));  /* QR, keep RD, opcode 0, no AA/TC */
        out[3] = (uint8_t) (0x80 | (rcode & 0x0f));     /* RA, the rcode */
        out[4] = 0;
        out[5] = 1;
        memset(out + 6, 0, 6);
        return (int) q->end;
}

static bool chain_has(char chain[][DNS_NAME_TEXT_MAX], size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(chain[i], name))
                        return true;
        return false;
}

typedef struct Chain {
        char names[MAX_CHAIN][DNS_NAME_TEXT_MAX];
        size_t n;
} Chain;

/* One walk over the answer section. With `cb` NULL it only adds CNAME targets of names
 * already in the chain; otherwise it reports the chain's addresses. */
static int walk_answers(const uint8_t *msg, size_t size, size_t pos, unsigned ancount, Chain *c,
                        DnsAddressCallback cb, void *userdata) {
        int found = 0, k;

        for (unsigned i = 0; i < ancount; i++) {
                char owner[DNS_NAME_TEXT_MAX];
                uint16_t type, class, rdlength;
                uint32_t ttl;
                bool ok;

                k = read_name(msg, size, &pos, true, owner, &ok);
                if (k < 0)
                        return k;
                if (pos + 10 > size)
                        return -EBADMSG;
                type = get16(msg + pos);
                class = get16(msg + pos + 2);
                ttl = get32(msg + pos + 4);
                rdlength = get16(msg + pos + 8);
                pos += 10;
                if (rdlength > size - pos)
                        return -EBADMSG;

                if (class == DNS_CLASS_IN && ok && chain_has(c->names, c->n, owner)) {
                        if (!cb && type == DNS_TYPE_CNAME) {
                                char target[DNS_NAME_TEXT_MAX];
                                size_t t = pos;
                                bool tok;

                                k = read_name(msg, pos + rdlength, &t, true, target, &tok);
                                if (k < 0)
                                        return k;
                                if (tok && c->n < MAX_CHAIN && !chain_has(c->names, c->n, target))
                                        strcpy(c->names[c->n++], target);
                        } else if (cb && ((type == DNS_TYPE_A && rdlength == 4) ||
                                          (type == DNS_TYPE_AAAA && rdlength == 16))) {
                                uint8_t addr[16] = { [10] = 0xff, [11] = 0xff };

                                if (type == DNS_TYPE_A)
                                        memcpy(addr + 12, msg + pos, 4);
                                else
                                        memcpy(addr, msg + pos, 16);
                                /* TTLs above 2^31 count as 0 (RFC 2181 section 8). */
                                k = cb(addr, ttl > INT32_MAX ? 0 : ttl, userdata);
                                if (k < 0)
                                        return k;
                                found++;
                        }
                }
                pos += rdlength;
        }
        return found;
}

static int count_address(const uint8_t addr[16], uint32_t ttl, void *userdata) {
        return 0;
}

int dns_parse_answer(const uint8_t *msg, size_t size, const DnsQuestion *q, DnsAddressCallback cb,
                     void *userdata) {
        _cleanup_free_ Chain *c = NULL;
        size_t pos = DNS_HEADER_SIZE, before;
        char name[DNS_NAME_TEXT_MAX];
        unsigned ancount;
        bool ok;
        int k;

        if (size < DNS_HEADER_SIZE)
                return -EBADMSG;
        if (!(msg[2] & 0x80) || get16(msg) != q->id || get16(msg + 4) != 1)
                return -EBADMSG;
        ancount = get16(msg + 6);

        /* The question must be the one we forwarded. */
        k = read_name(msg, size, &pos, true, name, &ok);
        if (k < 0)
                return k;
        if (pos + 4 > size || !streq(name, q->name) || get16(msg + pos) != q->qtype ||
            get16(msg + pos + 2) != q->qclass)
                return -EBADMSG;
        pos += 4;

        c = calloc(1, sizeof(Chain));
        if (!c)
                return -ENOMEM;
        strcpy(c->names[c->n++], q->name);

        /* Collect the CNAME chain until it stops growing (records may come in any order),
         * then report the addresses of every name in it. */
        do {
                before = c->n;
                k = walk_answers(msg, size, pos, ancount, c, NULL, NULL);
                if (k < 0)
                        return k;
        } while (c->n != before && c->n < MAX_CHAIN);

        return walk_answers(msg, size, pos, ancount, c, cb ?: count_address, userdata);
}
