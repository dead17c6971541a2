/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target: every message scudo-bpfd accepts from an unprivileged client goes
 * through these checks first. Beyond not crashing, a message they accept must hold what
 * the helper then relies on. */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "bpfd/protocol-parse.h"
#include "net/net-rule.h"
#include "net/usage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_rule(const BpfdCheckedRule *r, void *userdata) {
        size_t *n = userdata;

        assert(r->action == BPFD_ACTION_ALLOW || r->action == BPFD_ACTION_DENY);
        if (r->kind == BPFD_RULE_ADDRESS) {
                assert(r->prefixlen <= 128);
                assert(!r->name);
        } else {
                assert(r->kind == BPFD_RULE_HOST || r->kind == BPFD_RULE_DOMAIN);
                assert(r->name && strlen(r->name) <= BPFD_NAME_MAX);
                assert(net_name_is_valid(r->name));
        }
        (*n)++;
        return 0;
}

static int check_prefix(const BpfdFilePrefix *p, void *userdata) {
        size_t *n = userdata;

        assert(((p->self | p->below) & ~BPFD_FILE_ALL_ERRORS) == 0);
        assert((p->flags & ~BPFD_FILE_PREFIX_GIT) == 0);
        assert(p->path_len > 0 && p->path_len < sizeof(p->path));
        assert(p->path[0] == '/' && strlen(p->path) == p->path_len);
        assert(p->path_len == 1 || p->path[p->path_len - 1] != '/');
        assert(!strstr(p->path, "//") && !strstr(p->path, "/./") && !strstr(p->path, "/../"));
        (*n)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *reason = NULL;
        BpfdOpenRequest open;
        uint8_t *copy;
        size_t n = 0;
        int k;

        /* A copy of exactly `size` bytes, so that ASan sees any read past the message. */
        copy = malloc(size ?: 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);

        k = bpfd_message_type(copy, size, &reason);
        if (k == BPFD_MSG_OPEN && bpfd_parse_open(copy, size, &open, &reason) == 0) {
                assert(memchr(open.path, 0, sizeof(open.path)));
                assert(open.n_rules <= BPFD_RULES_MAX);
                (void) bpfd_check_cgroup_path(open.path, 1001, &reason);
        }
        if (k == BPFD_MSG_RULES) {
                k = bpfd_parse_rules(copy, size, check_rule, &n, &reason);
                assert(k < 0 || (size_t) k == n);
                assert(k < 0 || n <= BPFD_RULES_PER_MESSAGE);
        }
        if (k == BPFD_MSG_FILE_PREFIXES) {
                uint32_t cwd_mask = 0;

                n = 0;
                k = bpfd_parse_file_prefixes(copy, size, check_prefix, &n, &cwd_mask, &reason);
                assert(k < 0 || ((size_t) k == n && n >= 1 && n <= BPFD_FILE_PREFIXES_MAX));
                assert(k < 0 || size == sizeof(BpfdFilePrefixes) + n * sizeof(BpfdFilePrefix));
                assert(k < 0 || (cwd_mask & ~BPFD_FILE_ALL_ERRORS) == 0);
        }
        if (k == BPFD_MSG_COMMIT)
                (void) bpfd_parse_commit(copy, size, &reason);
        if (k == BPFD_MSG_USAGE)
                (void) bpfd_parse_usage(copy, size, &reason);
        if (k == BPFD_MSG_WRITTEN)
                assert(bpfd_parse_written(copy, size, &reason) < 0 || size == sizeof(BpfdHeader));

        /* And scudo's check of the helper's answer to WRITTEN: a count it accepts is what the
         * message holds. */
        k = bpfd_written_check(copy, size, &reason);
        assert(k < 0 || ((unsigned) k <= BPFD_WRITTEN_MAX &&
                         size == sizeof(BpfdWritten) + (size_t) k * sizeof(BpfdDirId)));

        /* And scudo's check of the helper's answer to USAGE: what it accepts marks allow
         * rules only. */
        if (size == sizeof(BpfdUsage)) {
                const BpfdUsage *u = (const BpfdUsage *) copy;
                uint32_t n_rules = u->n_rules % (BPFD_RULES_MAX + 1), n_deny = n_rules / 3;

                if (bpfd_usage_check(copy, size, n_rules, n_deny, &reason) == 0)
                        for (uint32_t i = 0; i < BPFD_RULES_MAX; i++)
                                assert(!bpfd_usage_bit(u, i) || (i >= n_deny && i < n_rules));
        }

        /* The same bytes as a cgroup path and as a rule in text form. */
        if (size < 1024) {
                char s[1024];
                NetRule r;

                memcpy(s, data, size);
                s[size] = 0;
                (void) bpfd_check_cgroup_path(s, 1001, &reason);
                if (net_rule_parse_reason(s, &r, &reason) == 0) {
                        char buf[512];

                        assert(r.prefixlen <= 128);
                        (void) net_rule_format(&r, buf, sizeof(buf));
                }
        }
        free(copy);
        return 0;
}
