/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Checking what an unprivileged client sent. Every function takes the bytes as received and
 * either accepts them whole or names what is wrong; nothing here trusts a length, offset or
 * count before it has been compared with the message size. Pure functions, no I/O: the unit
 * tests and the fuzzer call them directly. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/protocol.h"

/* Checks the header of a message of `size` bytes; returns its type or -EBADMSG. */
int bpfd_message_type(const void *buf, size_t size, const char **ret_reason);

typedef struct BpfdOpenRequest {
        BpfdDns dns;                    /* 0 with BPFD_OPEN_NO_NETWORK */
        uint32_t flags;                 /* BPFD_OPEN_* */
        uint32_t n_rules;
        char path[BPFD_CGROUP_PATH_MAX];
} BpfdOpenRequest;

int bpfd_parse_open(const void *buf, size_t size, BpfdOpenRequest *ret, const char **ret_reason);

/* A rule after checking; `name` points into the message buffer (valid while it is). */
typedef struct BpfdCheckedRule {
        BpfdAction action;
        BpfdRuleKind kind;
        unsigned prefixlen;
        uint16_t port;
        uint8_t addr[16];
        const char *name;
} BpfdCheckedRule;

typedef int (*BpfdRuleCallback)(const BpfdCheckedRule *rule, void *userdata);

/* Checks a RULES message whole, then calls `cb` for each rule in order. Returns the number of
 * rules, -EBADMSG for a malformed message, or the first negative value `cb` returned. */
int bpfd_parse_rules(const void *buf, size_t size, BpfdRuleCallback cb, void *userdata,
                     const char **ret_reason);

/* A COMMIT message is a bare header. */
int bpfd_parse_commit(const void *buf, size_t size, const char **ret_reason);

/* So is USAGE. */
int bpfd_parse_usage(const void *buf, size_t size, const char **ret_reason);

/* And WRITTEN. */
int bpfd_parse_written(const void *buf, size_t size, const char **ret_reason);

typedef int (*BpfdFilePrefixCallback)(const BpfdFilePrefix *prefix, void *userdata);

/* Checks a FILE_PREFIXES message whole (every prefix absolute, canonical, NUL-padded, its
 * masks and flags known), then calls `cb` for each prefix. Returns the number of prefixes,
 * -EBADMSG, or the first negative value `cb` returned. */
int bpfd_parse_file_prefixes(const void *buf, size_t size, BpfdFilePrefixCallback cb, void *userdata,
                             uint32_t *ret_cwd_mask, const char **ret_reason);

/* Lexical check of a cgroup path against the caller's uid: it must lie strictly below
 * /user.slice/user-UID.slice/user@UID.service/, with no empty, "." or ".." component, no
 * trailing slash and no control characters. Returns 0 or -EPERM/-EINVAL. */
int bpfd_check_cgroup_path(const char *path, uid_t uid, const char **ret_reason);
