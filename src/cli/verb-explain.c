/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo explain [OPTIONS] COMMAND [ARG...]: how the plan for a run comes about. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/run-options.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "plan/unit-properties.h"
#include "run/run.h"
#include "util/log.h"

int verb_explain(int argc, char **argv) {
        _cleanup_(run_args_done) RunArgs args = {};
        _cleanup_free_ char *text = NULL, *error = NULL;

        int r = parse_run_args(argc, argv, "explain", &args);
        if (r <= 0)
                return r < 0 ? EXIT_SCUDO_SETUP : 0;
        if (args.list_properties) {
                unit_property_dump(stdout);
                return 0;
        }
        r = request_complete(&args.request);
        if (r != 0)
                return r;

        r = policy_explain(&args.request, args.json, &text, &error);
        if (r < 0) {
                if (error)
                        log_error("%s", error);
                else
                        log_error_errno(r, "Cannot explain the run of '%s': %m", args.request.argv[0]);
                return EXIT_SCUDO_SETUP;
        }
        fputs(text, stdout);
        return 0;
}
