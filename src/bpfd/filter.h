/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The loaded BPF programs and their maps. One Filter per helper process; every filtered
 * cgroup is a set of entries keyed by its sid (cgroup id) in the shared maps, plus an
 * attachment of each program to the cgroup. Programs are always attached with BPF_F_ALLOW_MULTI: an
 * exclusive attachment could be detached by anyone who can open the cgroup, while a
 * multi one needs the program fd, which never leaves this process. */

#include <stdbool.h>
#include <stdint.h>

#include "scudo-net.h"

typedef struct Filter Filter;

typedef int (*FilterEventCallback)(const struct net_event *e, void *userdata);
/* A DNS message the skb programs dropped for the helper; `e->len` is checked against the
 * sample's size before the call. */
typedef int (*FilterDnsCallback)(const struct net_dns_event *e, void *userdata);

int filter_new(FilterEventCallback cb, FilterDnsCallback dns_cb, void *userdata, Filter **ret);
Filter *filter_free(Filter *f);

/* Attaches every program to the cgroup (the DNS egress program only with `dns_direct`); on
 * failure detaches what it attached. */
int filter_attach(Filter *f, int cgroup_fd, bool dns_direct);
void filter_detach(Filter *f, int cgroup_fd, bool dns_direct);

/* The cgroup's configuration slot exists once the programs are attached. -ENOENT before. */
int filter_layer_get(Filter *f, uint64_t cgid, struct net_layer *ret);
int filter_layer_set(Filter *f, uint64_t cgid, const struct net_layer *layer);

/* A rule: addr in the 128-bit space (IPv4 v4-mapped), prefixlen 0..128, port 0 = any. */
int filter_rule_add(Filter *f, bool deny, uint64_t sid, uint16_t port, const uint8_t addr[16],
                    unsigned prefixlen);
/* Whether the programs let something through by an allow rule stored with filter_rule_add():
 * 1 or 0, or -ENOENT. */
int filter_rule_reached(Filter *f, uint64_t sid, uint16_t port, const uint8_t addr[16], unsigned prefixlen);
/* An address learned from DNS, until `expires_ns` (CLOCK_MONOTONIC). */
int filter_learned_add(Filter *f, bool deny, uint64_t sid, uint16_t port, const uint8_t addr[16],
                       uint64_t expires_ns);

/* The rules of a name pattern, for the DNS fast path: `name` in text form, lower case; with
 * `domain` it stands for the names below it ("*.name"). -EINVAL for a name that does not fit
 * a key (net_name_key_make()). */
int filter_name_set(Filter *f, uint64_t sid, bool domain, const char *name,
                    const struct net_name_rules *rules);

/* Whether the fast path let a query for a name the pattern covers through, and read its
 * answer: 1 or 0, or a negative errno (-ENOENT: not stored). */
int filter_name_reached(Filter *f, uint64_t sid, bool domain, const char *name);

/* Removes every rule and learned address of `sid`. Returns how many were removed. */
int filter_forget(Filter *f, uint64_t sid);
/* Removes learned addresses that have expired, of all filtered cgroups. */
int filter_expire(Filter *f, uint64_t now_ns);

int filter_events_fd(Filter *f);
int filter_events_consume(Filter *f);
uint64_t filter_events_lost(Filter *f);
bool filter_reports_comm(Filter *f);
