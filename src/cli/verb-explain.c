/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo explain [OPTIONS] COMMAND [ARG...]: how the plan for a run comes about. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/exit-status.h"
#include "cli/policy-error.h"
#include "cli/run-options.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "plan/unit-properties.h"

int verb_explain(int argc, char **argv) {
        _cleanup_(run_command_line_done) RunCommandLine args = {};
        _cleanup_free_ char *text = NULL, *error = NULL;

        int r = parse_run_args(argc, argv, "explain", &args);
        if (r <= 0)
                return r;
        if (args.list_properties) {
                unit_property_dump(stdout);
                return 0;
        }
        r = request_from_process(&args.request);
        if (r < 0)
                return r;
        r = request_resolve_command(&args.request);
        if (r < 0)
                return exit_status_of_lookup(r);

        r = policy_explain(&args.request, args.json, &text, &error);
        if (r < 0)
                return log_policy_error(r, error, "Cannot explain the run of '%s': %m",
                                        args.request.argv[0]);
        fputs(text, stdout);
        return 0;
}
