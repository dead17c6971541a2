/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target: the DNS messages scudo-bpfd's proxy reads, queries from a sandbox and
 * answers from the network (also those the fast path's BPF programs hand over), plus
 * resolv.conf. */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "bpfd/dns-packet.h"
#include "bpfd/name-key.h"
#include "bpfd/resolv-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_address(const uint8_t addr[16], uint32_t ttl, void *userdata) {
        assert(ttl <= INT32_MAX);
        (*(int *) userdata)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *msg, reply[DNS_HEADER_SIZE + DNS_NAME_TEXT_MAX + 8], fwd[DNS_FORWARD_QUERY_MAX];
        DnsQuestion q, q2;
        int n = 0, k;

        msg = malloc(size ?: 1);
        if (!msg)
                return 0;
        memcpy(msg, data, size);

        /* As a query. */
        if (dns_parse_query(msg, size, &q) == 0) {
                assert(strlen(q.name) < DNS_NAME_TEXT_MAX);
                assert(q.end <= size);
                k = dns_make_error_reply(msg, &q, DNS_RCODE_NXDOMAIN, reply, sizeof(reply));
                assert(k < 0 || (size_t) k == q.end);

                /* What goes upstream: the question and at most a bare OPT, and it reads back
                 * as the same question. */
                k = dns_make_forward_query(msg, &q, fwd, sizeof(fwd));
                assert(k > 0 && (size_t) k == q.end + (q.edns ? 11 : 0));
                assert(dns_parse_query(fwd, (size_t) k, &q2) == 0);
                assert(strcmp(q2.name, q.name) == 0 && q2.qtype == q.qtype && q2.qclass == q.qclass);
                assert(q2.end == q.end && q2.edns == q.edns && q2.edns_do == q.edns_do);
        }

        /* As an answer to its own question: read the question from a copy turned into a
         * query, then parse the bytes as the response. */
        if (size >= DNS_HEADER_SIZE) {
                uint8_t *query = malloc(size);

                if (query) {
                        memcpy(query, data, size);
                        query[2] &= 0x07;       /* QR=0, opcode 0 */
                        memset(query + 6, 0, 6);
                        if (dns_parse_query(query, size, &q) == 0) {
                                msg[2] |= 0x80;
                                k = dns_parse_answer(msg, size, &q, on_address, &n);
                                assert(k < 0 || k == n);
                        }
                        free(query);
                }
        }

        /* As an answer the BPF programs left to the helper: its own question is all there
         * is to go by; and as the key a name rule of that name would have. */
        if (dns_parse_response_question(msg, size, &q) == 0) {
                struct net_name_key key;

                assert(q.end <= size && strlen(q.name) < DNS_NAME_TEXT_MAX);
                n = 0;
                k = dns_parse_answer(msg, size, &q, on_address, &n);
                assert(k < 0 || k == n);
                if (q.name_ok && net_name_key_make(1, q.name, &key) == 0)
                        assert(key.name[NET_NAME_KEY_SIZE - 1] == 0 && key.name[NET_NAME_KEY_SIZE - 2] != 0);
        }

        /* As resolv.conf. */
        if (size < 4096) {
                Nameserver ns[RESOLV_CONF_MAX_SERVERS];
                char text[4096];

                memcpy(text, data, size);
                text[size] = 0;
                k = resolv_conf_parse(text, ns);
                assert(k >= 0 && k <= RESOLV_CONF_MAX_SERVERS);
        }
        free(msg);
        return 0;
}
