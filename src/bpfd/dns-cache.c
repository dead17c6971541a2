/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfd/dns-cache.h"
#include "bpfd/dns-packet.h"

/* The key: the transport, then the query without its id (flags, counts, question, EDNS). */
static bool key_matches(const DnsCacheEntry *e, bool tcp, const uint8_t *query, size_t query_len) {
        return e->key && e->key_len == query_len - 1 && e->key[0] == (uint8_t) tcp &&
                memcmp(e->key + 1, query + 2, query_len - 2) == 0;
}

static void entry_clear(DnsCacheEntry *e) {
        free(e->key);
        free(e->answer);
        *e = (DnsCacheEntry) {};
}

const DnsCacheEntry *dns_cache_lookup(DnsCache *c, bool tcp, const uint8_t *query, size_t query_len,
                                      uint64_t now_usec) {
        if (query_len < DNS_HEADER_SIZE)
                return NULL;
        for (size_t i = 0; i < DNS_CACHE_ENTRIES; i++) {
                DnsCacheEntry *e = &c->entries[i];

                if (!key_matches(e, tcp, query, query_len))
                        continue;
                if (now_usec >= e->expires_usec) {
                        entry_clear(e);
                        return NULL;
                }
                return e;
        }
        return NULL;
}

int dns_cache_store(DnsCache *c, bool tcp, const uint8_t *query, size_t query_len, const uint8_t *answer,
                    size_t answer_len, const DnsCachedAddress *addrs, size_t n_addrs, uint32_t ttl,
                    uint64_t now_usec) {
        DnsCacheEntry *slot = NULL;
        uint8_t *key, *copy;

        if (ttl == 0 || n_addrs == 0 || n_addrs > DNS_CACHE_ADDRESSES || answer_len > DNS_CACHE_ANSWER_MAX ||
            query_len < DNS_HEADER_SIZE || answer_len < DNS_HEADER_SIZE)
                return 0;

        /* The same query, an expired or empty slot, or else the oldest. */
        for (size_t i = 0; i < DNS_CACHE_ENTRIES; i++) {
                DnsCacheEntry *e = &c->entries[i];

                if (!e->key || key_matches(e, tcp, query, query_len) || now_usec >= e->expires_usec) {
                        slot = e;
                        break;
                }
                if (!slot || e->stored_usec < slot->stored_usec)
                        slot = e;
        }

        key = malloc(query_len - 1);
        copy = malloc(answer_len);
        if (!key || !copy) {
                free(key);
                free(copy);
                return -ENOMEM;
        }
        key[0] = (uint8_t) tcp;
        memcpy(key + 1, query + 2, query_len - 2);
        memcpy(copy, answer, answer_len);

        entry_clear(slot);
        slot->key = key;
        slot->key_len = query_len - 1;
        slot->answer = copy;
        slot->answer_len = answer_len;
        slot->stored_usec = now_usec;
        slot->expires_usec = now_usec + (uint64_t) ttl * 1000000U;
        memcpy(slot->addrs, addrs, n_addrs * sizeof(DnsCachedAddress));
        slot->n_addrs = n_addrs;
        return 1;
}

void dns_cache_clear(DnsCache *c) {
        for (size_t i = 0; i < DNS_CACHE_ENTRIES; i++)
                entry_clear(&c->entries[i]);
}
