/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Network rules as written in profiles (`network.allow`, `network.deny`, --net-allow):
 *
 *   host              a DNS name, any port          example.com
 *   host:port         a DNS name, one port          example.com:443
 *   *.domain[:port]   any name below domain         *.example.com:443
 *   addr[/len][:port] an IPv4 address or network    10.0.0.0/8, 192.0.2.1:53
 *   [v6][/len][:port] an IPv6 address or network    [2001:db8::]/32:443, [::1]:8080
 *   v6[/len]          the same, without a port      2001:db8::/32
 *   :port             any host, one port            :443
 *
 * Addresses are kept in the 128-bit space, IPv4 as ::ffff:a.b.c.d, so a rule for an IPv4
 * address also covers an AF_INET6 socket reaching it v4-mapped. Names are lower-cased and
 * lose a final dot. Pure functions: nothing here logs or touches the system. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "net/protocol.h"

/* What DNS a sandbox with network rules gets (`network.dns`). */
typedef enum DnsMode {
        DNS_FILTERED,           /* answered only for allowed names, by scudo-bpfd */
        DNS_OPEN,               /* the system's resolvers, as they are */
        _DNS_MODE_MAX,
        _DNS_MODE_INVALID = -EINVAL,
} DnsMode;

const char *dns_mode_to_string(DnsMode m);
DnsMode dns_mode_from_string(const char *s);

typedef enum NetRuleKind {
        NET_RULE_ADDRESS,               /* addr/prefixlen (also ":port": prefixlen 0) */
        NET_RULE_HOST,                  /* name exactly */
        NET_RULE_DOMAIN,                /* any name below name */
        _NET_RULE_KIND_MAX,
        _NET_RULE_KIND_INVALID = -EINVAL,
} NetRuleKind;

typedef struct NetRule {
        NetRuleKind kind;
        uint8_t addr[16];               /* network order; IPv4 v4-mapped */
        unsigned prefixlen;             /* 0..128 in the 128-bit space */
        uint16_t port;                  /* 0 = any */
        char name[BPFD_NAME_MAX + 1];   /* HOST/DOMAIN: without "*." */
} NetRule;

/* Parses one rule. Returns 0, or -EINVAL; net_rule_parse_reason() also says why (a static
 * string, or this thread's buffer until its next call). A spelling of an IPv4 address other
 * than the dotted quad ("0x7f.1", "127.1", "2130706433": inet_aton()'s, which getaddrinfo()
 * reads as addresses without asking DNS) is refused, naming the address it means. */
int net_rule_parse(const char *text, NetRule *ret);
int net_rule_parse_reason(const char *text, NetRule *ret, const char **ret_reason);

/* Formats a parsed rule back to its canonical text ("10.0.0.0/8:443", "*.example.com").
 * Returns the length written (truncated like snprintf). */
int net_rule_format(const NetRule *rule, char *buf, size_t size);

/* True if `name` (lower-case, no final dot) is covered by a HOST or DOMAIN rule. */
bool net_rule_matches_name(const NetRule *rule, const char *name);

/* Checks a DNS name in text form: labels of [a-z0-9_-], 1..63 bytes each, 253 at most in
 * all, no empty label. Lower-case only. */
bool net_name_is_valid(const char *name);

/* A human-readable summary of what a plan's network keys mean, for `scudo explain`:
 * one line per rule, with deny rules first, and what happens to DNS. Returns 0, -EINVAL if a
 * rule does not parse (the text then says which), or -ENOMEM. */
int net_rules_describe(char * const *allow, char * const *deny, DnsMode dns, char **ret_text);
