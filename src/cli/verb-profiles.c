/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo profiles: every profile, where it is defined, what selects it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/policy-error.h"
#include "cli/request-from-process.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "util/log.h"

int verb_profiles(int argc, char **argv) {
        _cleanup_(request_done) Request req = {};
        _cleanup_free_ char *text = NULL, *error = NULL;

        if (argc > 1) {
                if (streq(argv[1], "-h") || streq(argv[1], "--help")) {
                        printf("Usage: scudo profiles\n\n"
                               "Lists every profile the configuration defines, as seen from this\n"
                               "directory (trusted project files included): its description, what\n"
                               "selects it, what it extends, and where each definition is.\n");
                        return 0;
                }
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "profiles takes no arguments");
        }
        int r = request_from_process(&req);
        if (r < 0)
                return r;
        r = policy_profiles(&req, &text, &error);
        if (r < 0)
                return log_policy_error(r, error, "Cannot list the profiles: %m");
        fputs(text, stdout);
        return 0;
}
