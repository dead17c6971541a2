/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A small cache of answers per DNS proxy (one per filtered cgroup), so that a name asked
 * again within its TTL is answered without a round trip to the resolver. Keyed by the
 * query's bytes (all but its id) and the transport; only complete, successful answers with
 * addresses are kept, for the smallest TTL among those addresses. The addresses travel with
 * the entry, so that a hit puts them into the allow map again before the answer goes out. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_CACHE_ENTRIES 128U
#define DNS_CACHE_ADDRESSES 16U
#define DNS_CACHE_ANSWER_MAX 4096U

typedef struct DnsCachedAddress {
        uint8_t addr[16];
        uint32_t ttl;
} DnsCachedAddress;

typedef struct DnsCacheEntry {
        uint8_t *key;
        size_t key_len;
        uint8_t *answer;
        size_t answer_len;
        uint64_t stored_usec, expires_usec;
        DnsCachedAddress addrs[DNS_CACHE_ADDRESSES];
        size_t n_addrs;
} DnsCacheEntry;

typedef struct DnsCache {
        DnsCacheEntry entries[DNS_CACHE_ENTRIES];
} DnsCache;

/* The entry for this query, or NULL. */
const DnsCacheEntry *dns_cache_lookup(DnsCache *c, bool tcp, const uint8_t *query, size_t query_len,
                                      uint64_t now_usec);
/* Keeps `answer` to `query` until now + ttl seconds; replaces the oldest entry when full. */
int dns_cache_store(DnsCache *c, bool tcp, const uint8_t *query, size_t query_len, const uint8_t *answer,
                    size_t answer_len, const DnsCachedAddress *addrs, size_t n_addrs, uint32_t ttl,
                    uint64_t now_usec);
void dns_cache_clear(DnsCache *c);
