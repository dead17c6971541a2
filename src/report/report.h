/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A refusal report: something the sandbox turned away, who asked, and the plan entry that
 * did it. Files, connections and DNS names alike go through one feed (report-feed.h) to
 * every place the plan's log.target and --report-json name.
 *
 * Every string is borrowed; the feed copies what it keeps. Strings the command chose (a
 * path, a name, its own name) are escaped when printed (report-format.h). */

#include <stdbool.h>
#include <stdint.h>

typedef enum ReportKind {
        REPORT_FILE,
        REPORT_NET,
        REPORT_DNS,
        _REPORT_KIND_MAX,
        _REPORT_KIND_INVALID = -22,
} ReportKind;

const char *report_kind_to_string(ReportKind k);

typedef struct Report {
        ReportKind kind;
        /* file: "read", "write", "create", "remove", "rename", "change", "exec", "stat",
         * "access", "chdir", "readlink"; net: "connect", "send", "socket", "incoming";
         * dns: "resolve" */
        const char *op;
        /* file: the path as the command named it; net: "ADDR:PORT"; dns: the name */
        const char *target;
        /* file: the absolute path it was judged as (NULL when it is `target`) */
        const char *resolved;
        const char *detail;     /* "tcp", "AAAA", …; may be NULL */
        int error;              /* file: the errno (positive); 0 otherwise */
        uint32_t pid;           /* 0 when unknown */
        const char *comm;       /* may be NULL or empty */
        /* The plan entry that refused it, as written (`filesystem.deny "~/.ssh"`,
         * `network.deny "192.0.2.0/24"`, `ProtectSystem=strict`), or "no rule allows it". */
        const char *rule;
        const char *origin;     /* where that entry came from; NULL when no entry did it */
        const char *access;     /* file: the access of that entry (deny, hide, read…), or NULL */
} Report;
