/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Just enough of RFC 1035 for a filtering forwarder: read the question of a query, build a
 * NXDOMAIN or SERVFAIL answer to it, and walk an upstream answer for the A and AAAA records
 * that belong to the name asked (following CNAMEs). Every byte comes from someone we do not
 * trust (the sandbox, or the network), so every read is bounds-checked and compression
 * pointers may only point backwards, with a hop limit. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_SIZE 12
#define DNS_TYPE_A 1
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_OPT 41
#define DNS_CLASS_IN 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_NAME_TEXT_MAX 254           /* 253 characters and the NUL */

typedef struct DnsQuestion {
        uint16_t id;
        uint16_t qtype;
        uint16_t qclass;
        size_t end;                     /* offset just past the question */
        bool name_ok;                   /* the name fits net_name_is_valid() after lower-casing */
        bool edns;                      /* the query has an OPT record */
        bool edns_do;                   /* ... with the DO bit */
        uint16_t edns_udp_size;         /* ... and this UDP payload size */
        char name[DNS_NAME_TEXT_MAX];   /* lower-case, no final dot; "" for the root */
} DnsQuestion;

/* Parses a query: QR=0, standard opcode, exactly one question, no compression in it, no
 * answer or authority records; additional records must be well-formed (an OPT is noted).
 * Returns 0 or -EBADMSG. A name with bytes outside [A-Za-z0-9_-] is still returned (escaped
 * bytes shown as '?') but with name_ok false, so that it can be refused and reported. */
int dns_parse_query(const uint8_t *msg, size_t size, DnsQuestion *ret);

/* Reads the id and question of a response (QR=1, one question), so that the answer can be
 * walked with dns_parse_answer() when the query it answers was not seen here. Returns 0 or
 * -EBADMSG. */
int dns_parse_response_question(const uint8_t *msg, size_t size, DnsQuestion *ret);

/* The most dns_make_forward_query() writes: header, question, an OPT record. */
#define DNS_FORWARD_QUERY_MAX (DNS_HEADER_SIZE + 255 + 4 + 11)

/* Writes the query that is sent upstream for `query` (described by `q`): its id, its RD, AD
 * and CD flags, its question, and an OPT record with only the payload size and the DO bit
 * if it had one. Nothing else the sandbox put in the message (other records, EDNS options,
 * bytes after the records) leaves the proxy. Returns its size, or -ENOBUFS. */
int dns_make_forward_query(const uint8_t *query, const DnsQuestion *q, uint8_t *out, size_t out_size);

/* Writes an answer with `rcode` to the query described by `q` (its header and question,
 * no records) into `out`. Returns its size, or -ENOBUFS. */
int dns_make_error_reply(const uint8_t *query, const DnsQuestion *q, unsigned rcode, uint8_t *out,
                         size_t out_size);

/* Called for each address record of the answer chain: addr in network order, IPv4 as
 * ::ffff:a.b.c.d. */
typedef int (*DnsAddressCallback)(const uint8_t addr[16], uint32_t ttl, void *userdata);

/* Checks that `msg` is a response to `q` (same id and question) and calls `cb` for each A/AAAA
 * record whose owner is the question's name or a name it is a CNAME (chain) of. Returns
 * the number of addresses seen or -EBADMSG. */
int dns_parse_answer(const uint8_t *msg, size_t size, const DnsQuestion *q, DnsAddressCallback cb,
                     void *userdata);
