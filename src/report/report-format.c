/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/report-format.h"
#include "util/macro.h"
#include "util/text-escape.h"

const char *report_kind_to_string(ReportKind k) {
        static const char *const names[_REPORT_KIND_MAX] = {
                [REPORT_FILE] = "file",
                [REPORT_NET] = "network",
                [REPORT_DNS] = "dns",
        };
        return k >= 0 && k < _REPORT_KIND_MAX ? names[k] : NULL;
}

const char *report_errno_name(int error) {
        switch (error) {
        case ENOENT:
                return "ENOENT";
        case EACCES:
                return "EACCES";
        case EPERM:
                return "EPERM";
        case EROFS:
                return "EROFS";
        default:
                return NULL;
        }
}

/* Only letters, digits and a few others stay in a command's name (as before: src/net). */
static void plain_comm(const char *comm, char *buf, size_t size) {
        size_t l = 0;

        for (const char *c = comm ?: ""; *c && l + 1 < size; c++)
                buf[l++] = (char) (((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                                    (*c >= '0' && *c <= '9') || strchr("._-+@:/ ", *c)) ? *c : '?');
        buf[l] = 0;
}

static const char *net_phrase(const char *op) {
        if (streq_ptr(op, "connect"))
                return "connection to";
        if (streq_ptr(op, "send"))
                return "datagram to";
        if (streq_ptr(op, "accept"))
                return "incoming connection from";
        if (streq_ptr(op, "receive"))
                return "incoming datagram from";
        return op ?: "access to";
}

int report_format_text(const Report *r, unsigned count, char *buf, size_t size) {
        char target[1024], resolved[1100], who[64] = "", comm[32], rule[512], origin[512], times[32] = "";
        const char *err = report_errno_name(r->error);

        (void) text_escape(r->target, target, sizeof(target));
        (void) text_escape(r->rule ?: "no rule allows it", rule, sizeof(rule));
        (void) text_escape(r->origin, origin, sizeof(origin));
        plain_comm(r->comm, comm, sizeof(comm));
        if (r->pid > 0 && comm[0])
                (void) snprintf(who, sizeof(who), " by pid %u (%s)", r->pid, comm);
        else if (r->pid > 0)
                (void) snprintf(who, sizeof(who), " by pid %u", r->pid);
        if (count > 1)
                (void) snprintf(times, sizeof(times), " (%u times)", count);

        switch (r->kind) {
        case REPORT_FILE:
                resolved[0] = 0;
                if (r->resolved && !streq(r->resolved, strempty(r->target))) {
                        char e[1024];

                        (void) text_escape(r->resolved, e, sizeof(e));
                        (void) snprintf(resolved, sizeof(resolved), " (%s)", e);
                }
                (void) snprintf(buf, size, "file: refused %s of '%s'%s (%s)%s; %s%s%s%s%s",
                                r->op ?: "access", target, resolved, err ?: "error", who,
                                r->origin ? "by " : "", r->origin ? origin : "", r->origin ? " " : "",
                                rule, times);
                return (int) strlen(buf);
        case REPORT_NET:
                if (streq_ptr(r->op, "socket"))
                        (void) snprintf(buf, size, "network: refused socket (%s, %s)%s; %s%s%s%s%s", target,
                                        strempty(r->detail), who, r->origin ? "by " : "",
                                        r->origin ? origin : "", r->origin ? " " : "", rule, times);
                else
                        (void) snprintf(buf, size, "network: refused %s %s (%s)%s; %s%s%s%s%s",
                                        net_phrase(r->op), target, strempty(r->detail), who,
                                        r->origin ? "by " : "", r->origin ? origin : "",
                                        r->origin ? " " : "", rule, times);
                return (int) strlen(buf);
        case REPORT_DNS:
                (void) snprintf(buf, size, "dns: refused name '%s' (%s)%s; %s%s%s%s%s", target,
                                strempty(r->detail), who, r->origin ? "by " : "", r->origin ? origin : "",
                                r->origin ? " " : "", rule, times);
                return (int) strlen(buf);
        default:
                return snprintf(buf, size, "refused something unknown");
        }
}

/* Appends `"key":"value"` (escaped as above, then for JSON) with a leading comma. */
static void json_string(char *buf, size_t size, size_t *l, const char *key, const char *value) {
        char e[1100];
        int n;

        if (!value || *l >= size)
                return;
        (void) text_escape(value, e, sizeof(e));
        n = snprintf(buf + *l, size - *l, ",\"%s\":\"", key);
        if (n < 0 || (size_t) n >= size - *l) {
                *l = size;
                return;
        }
        *l += (size_t) n;
        for (const char *c = e; *c && *l + 2 < size; c++) {
                if (*c == '"' || *c == '\\')
                        buf[(*l)++] = '\\';
                buf[(*l)++] = *c;
        }
        if (*l + 1 < size)
                buf[(*l)++] = '"';
        else
                *l = size;
        buf[MIN(*l, size - 1)] = 0;
}

int report_format_json(const Report *r, unsigned count, const char *time, char *buf, size_t size) {
        char comm[32];
        size_t l;
        int n;

        if (size < 64)
                return -ENOBUFS;
        n = snprintf(buf, size, "{\"kind\":\"%s\"", report_kind_to_string(r->kind) ?: "unknown");
        if (n < 0)
                return -EINVAL;
        l = (size_t) n;
        json_string(buf, size, &l, "time", time);
        json_string(buf, size, &l, "op", r->op);
        json_string(buf, size, &l,
                    r->kind == REPORT_FILE ? "path" :
                    r->kind == REPORT_DNS  ? "name" :
                                             "target",
                    r->target);
        json_string(buf, size, &l, "resolved", r->resolved);
        json_string(buf, size, &l, "detail", r->detail);
        json_string(buf, size, &l, "error", report_errno_name(r->error));
        if (r->pid > 0 && l < size) {
                n = snprintf(buf + l, size - l, ",\"pid\":%u", r->pid);
                l = n < 0 ? size : l + (size_t) n;
        }
        if (r->comm && r->comm[0]) {
                plain_comm(r->comm, comm, sizeof(comm));
                json_string(buf, size, &l, "comm", comm);
        }
        json_string(buf, size, &l, "rule", r->rule ?: "no rule allows it");
        json_string(buf, size, &l, "origin", r->origin);
        json_string(buf, size, &l, "access", r->access);
        if (l < size) {
                n = snprintf(buf + l, size - l, ",\"count\":%u}", MAX(count, 1U));
                l = n < 0 ? size : l + (size_t) n;
        }
        if (l >= size)
                return -ENOBUFS;
        return (int) l;
}
