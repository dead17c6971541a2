/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* One filtering DNS forwarder per filtered cgroup, on its own address 127.53.X.Y port 53 (and
 * a port of its own on [::1]), where the BPF programs send every port-53 datagram and
 * connection from that cgroup. The address says which cgroup asks: UDP carries no
 * credentials, but each cgroup can only reach its own.
 *
 * A name the rules mention is forwarded to the system's resolver; the addresses of the
 * answer are put into the cgroup's allow map *before* the answer is passed on, so that the
 * connect() that follows finds them. Any other name gets NXDOMAIN at once (and is reported
 * refused).
 *
 * The parts: dns-proxy.c (the listeners, the queries from the sandbox and their lifecycle,
 * its TCP connections), dns-upstream.c (sending queries to the servers and taking their
 * answers), dns-fastpath.c (what the BPF fast path drops for the proxy), dns-bind.c (the
 * addresses and ports it listens on). */

#include <stdint.h>

#include "bpfd/manager.h"

int dns_proxy_new(FilteredCgroup *fc, DnsProxy **ret);
DnsProxy *dns_proxy_free(DnsProxy *p);
/* The IPv4 address it listens on, network order. */
uint32_t dns_proxy_address(DnsProxy *p);
/* The port of its IPv6 side on [::1], network order; 0 when it has none. */
uint16_t dns_proxy_port6(DnsProxy *p);
/* The resolvers of the fast path: those on IPv4 loopback, when this proxy can answer for
 * them. Returns how many (0: no fast path). */
unsigned dns_proxy_direct_servers(DnsProxy *p, uint32_t ret[NET_DNS_DIRECT_MAX]);
void dns_proxy_handle_dropped(DnsProxy *p, const struct net_dns_event *e);
