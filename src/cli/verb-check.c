/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo check [FILE...]: validate configuration files; non-zero on any error. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/policy-error.h"
#include "cli/request-from-process.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/strv.h"

static void help(void) {
        printf("Usage: scudo check [FILE...]\n"
               "\n"
               "Validates configuration files: TOML syntax, known keys and their types (with a\n"
               "suggestion for a misspelt key), extend chains, unit properties, network rules and\n"
               "variables. Without FILE, checks everything a run from this directory would read,\n"
               "project files included whether trusted or not (a .lua file that is not trusted is\n"
               "compiled but not run). Exits 1 when anything is wrong.\n");
}

int verb_check(int argc, char **argv) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(request_done) Request req = {};
        _cleanup_free_ char *report = NULL, *error = NULL;
        int c, errors = 0;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                default:
                        return -EINVAL;
                }

        int r = request_from_process(&req);
        if (r < 0)
                return r;
        r = policy_check(&req, (const char * const *) argv + optind, &report, &errors, &error);
        if (r < 0)
                return log_policy_error(r, error, "Cannot check the configuration: %m");
        fputs(report, stdout);
        return errors > 0 ? 1 : 0;
}
