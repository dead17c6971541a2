/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net-rule.h"
#include "report/net-judge.h"
#include "util/strv.h"

typedef struct DenyRule {
        NetRule rule;
        const char *text;
        const char *origin;
} DenyRule;

struct NetJudge {
        DenyRule *deny;
        size_t n_deny;
        char target[INET6_ADDRSTRLEN + 16];
        char detail[32];
        char name[BPFD_NAME_MAX + 4];
        char comm[17];
        char rule[BPFD_NAME_MAX + 64];
};

int net_judge_new(const Plan *plan, NetJudge **ret) {
        size_t n = strv_length(plan->net_deny), n_origin = strv_length(plan->net_deny_origin);
        NetJudge *j = calloc(1, sizeof(NetJudge));

        if (!j)
                return -ENOMEM;
        j->deny = calloc(MAX(n, 1U), sizeof(DenyRule));
        if (!j->deny) {
                free(j);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                DenyRule *d = &j->deny[j->n_deny];

                if (net_rule_parse(plan->net_deny[i], &d->rule) < 0)
                        continue;       /* plan_check() refused those already */
                d->text = plan->net_deny[i];
                d->origin = i < n_origin ? plan->net_deny_origin[i] : NULL;
                j->n_deny++;
        }
        *ret = j;
        return 0;
}

NetJudge *net_judge_free(NetJudge *j) {
        if (!j)
                return NULL;
        free(j->deny);
        free(j);
        return NULL;
}

static bool address_covered(const NetRule *r, const uint8_t addr[16], uint16_t port) {
        if (r->kind != NET_RULE_ADDRESS || (r->port != 0 && r->port != port))
                return false;
        for (unsigned bit = 0; bit < r->prefixlen; bit++) {
                uint8_t m = (uint8_t) (0x80 >> (bit % 8));

                if ((r->addr[bit / 8] & m) != (addr[bit / 8] & m))
                        return false;
        }
        return true;
}

static void attribute(NetJudge *j, const DenyRule *d, Report *r) {
        if (!d) {
                r->rule = "no rule allows it";
                r->origin = NULL;
                return;
        }
        (void) snprintf(j->rule, sizeof(j->rule), "network.deny \"%s\"", d->text);
        r->rule = j->rule;
        r->origin = d->origin && *d->origin ? d->origin : NULL;
}

static const char *protocol_name(uint8_t p, char *buf, size_t size) {
        switch (p) {
        case IPPROTO_TCP:
                return "tcp";
        case IPPROTO_UDP:
                return "udp";
        case IPPROTO_ICMP:
                return "icmp";
        case IPPROTO_ICMPV6:
                return "icmpv6";
        case IPPROTO_RAW:
                return "raw";
        case IPPROTO_SCTP:
                return "sctp";
        default:
                (void) snprintf(buf, size, "proto %u", p);
                return buf;
        }
}

static const char *qtype_name(uint16_t t, char *buf, size_t size) {
        static const struct { uint16_t t; const char *n; } names[] = {
                { 1, "A" }, { 28, "AAAA" }, { 5, "CNAME" }, { 15, "MX" }, { 16, "TXT" }, { 33, "SRV" },
                { 65, "HTTPS" }, { 12, "PTR" },
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (names[i].t == t)
                        return names[i].n;
        (void) snprintf(buf, size, "type %u", t);
        return buf;
}

/* A DNS name or a process name is the command's choice: only letters, digits and
 * "._-+@:/ " stay as they are (as reports always did), the rest becomes '?'. */
static void keep_plain(char *s) {
        for (char *c = s; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      strchr("._-+@:/ ", *c)))
                        *c = '?';
}

static void format_address(const uint8_t addr[16], uint16_t port, char *buf, size_t size) {
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        char a[INET6_ADDRSTRLEN];

        if (memcmp(addr, mapped, sizeof(mapped)) == 0) {
                (void) inet_ntop(AF_INET, addr + 12, a, sizeof(a));
                (void) snprintf(buf, size, "%s:%u", a, port);
        } else {
                (void) inet_ntop(AF_INET6, addr, a, sizeof(a));
                (void) snprintf(buf, size, "[%s]:%u", a, port);
        }
}

int net_judge(NetJudge *j, const BpfdEvent *e, Report *ret, unsigned *ret_lost) {
        const DenyRule *d = NULL;
        char num[32];

        *ret_lost = 0;
        memcpy(j->comm, e->comm, sizeof(e->comm));
        j->comm[sizeof(e->comm)] = 0;
        keep_plain(j->comm);
        *ret = (Report) {
                .kind = REPORT_NET,
                .pid = e->pid,
                .comm = j->comm,
                .target = j->target,
                .detail = j->detail,
        };

        switch (e->kind) {
        case BPFD_EVENT_CONNECT:
        case BPFD_EVENT_SENDMSG:
        case BPFD_EVENT_INBOUND:
                format_address(e->addr, e->port, j->target, sizeof(j->target));
                (void) snprintf(j->detail, sizeof(j->detail), "%s",
                                protocol_name(e->protocol, num, sizeof(num)));
                ret->op = e->kind == BPFD_EVENT_CONNECT ? "connect" :
                          e->kind == BPFD_EVENT_SENDMSG ? "send" :
                          e->protocol == IPPROTO_TCP    ? "accept" :
                                                          "receive";
                for (size_t i = 0; i < j->n_deny && !d; i++)
                        if (address_covered(&j->deny[i].rule, e->addr, e->port))
                                d = &j->deny[i];
                attribute(j, d, ret);
                return 1;
        case BPFD_EVENT_SOCKET:
                (void) snprintf(j->target, sizeof(j->target), "family %u, type %u", e->family, e->sock_type);
                (void) snprintf(j->detail, sizeof(j->detail), "%s",
                                protocol_name(e->protocol, num, sizeof(num)));
                ret->op = "socket";
                ret->rule = "only TCP and UDP sockets with network rules";
                ret->origin = "<scudo>";
                return 1;
        case BPFD_EVENT_DNS:
                memcpy(j->name, e->name, sizeof(e->name));
                j->name[sizeof(e->name)] = 0;
                keep_plain(j->name);
                ret->kind = REPORT_DNS;
                ret->op = "resolve";
                ret->target = j->name;
                (void) snprintf(j->detail, sizeof(j->detail), "%s", qtype_name(e->qtype, num, sizeof(num)));
                for (size_t i = 0; i < j->n_deny && !d; i++)
                        if (j->deny[i].rule.kind != NET_RULE_ADDRESS && j->deny[i].rule.port == 0 &&
                            net_rule_matches_name(&j->deny[i].rule, j->name))
                                d = &j->deny[i];
                attribute(j, d, ret);
                return 1;
        case BPFD_EVENT_LOST:
                *ret_lost = e->count;
                return 0;
        default:
                return 0;
        }
}
