/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The system's resolvers, as /etc/resolv.conf lists them: where the DNS proxy forwards, and
 * what port 53 may reach with network.dns = "open". */

#include <netinet/in.h>
#include <stddef.h>

#define RESOLV_CONF_MAX_SERVERS 3       /* glibc's MAXNS */

typedef struct Nameserver {
        struct sockaddr_in6 addr;       /* IPv4 as v4-mapped, port 53 */
} Nameserver;

/* Parses resolv.conf text; returns the number of servers found (0..MAX). Lines other than
 * "nameserver ADDRESS" are ignored, as are addresses that do not parse. */
int resolv_conf_parse(const char *text, Nameserver ret[RESOLV_CONF_MAX_SERVERS]);

/* Reads and parses `path`. With no server listed, 127.0.0.1 is used, as glibc does. */
int resolv_conf_load(const char *path, Nameserver ret[RESOLV_CONF_MAX_SERVERS]);
