/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo doctor: the host checks and the live probe (cli/doctor.h), printed for people or as JSON.
 * Exit status 0: can confine, nothing degraded; 1: degraded; 2: cannot confine. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli/doctor.h"
#include "cli/verbs.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/sandbox-unit.h"

static const char *const verdicts[_CHECK_STATE_MAX] = {
        [CHECK_OK] = "can confine",
        [CHECK_DEGRADED] = "can confine, degraded",
        [CHECK_MISSING] = "cannot confine",
};

static void print_text(const Doctor *d) {
        for (size_t i = 0; i < d->n_checks; i++) {
                const Check *c = &d->checks[i];
                printf("%-9s %-22s %s\n", check_state_to_string(c->state), c->name,
                       c->detail ? c->detail : "");
                if (c->meaning)
                        printf("%-32s means: %s\n", "", c->meaning);
                if (c->fix)
                        printf("%-32s fix: %s\n", "", c->fix);
        }
        printf("\n%s\n", verdicts[doctor_worst(d)]);
}

static int print_json(const Doctor *d) {
        json_object *root = json_object_new_object(), *checks = json_object_new_array();
        if (!root || !checks) {
                json_object_put(root);
                json_object_put(checks);
                return -ENOMEM;
        }
        for (size_t i = 0; i < d->n_checks; i++) {
                const Check *c = &d->checks[i];
                json_object *o = json_object_new_object();
                if (!o)
                        break;
                json_object_object_add(o, "name", json_object_new_string(c->name));
                json_object_object_add(o, "state", json_object_new_string(check_state_to_string(c->state)));
                json_object_object_add(o, "detail", c->detail ? json_object_new_string(c->detail) : NULL);
                json_object_object_add(o, "meaning", c->meaning ? json_object_new_string(c->meaning) : NULL);
                json_object_object_add(o, "fix", c->fix ? json_object_new_string(c->fix) : NULL);
                json_object_array_add(checks, o);
        }
        CheckState worst = doctor_worst(d);
        json_object_object_add(root, "verdict", json_object_new_string(verdicts[worst]));
        json_object_object_add(root, "status", json_object_new_int(worst));
        json_object_object_add(root, "checks", checks);
        puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(root);
        return 0;
}

int verb_doctor(int argc, char **argv) {
        static const struct option options[] = {
                { "json",     no_argument, NULL, 'j' },
                { "no-probe", no_argument, NULL, 'n' },
                { "help",     no_argument, NULL, 'h' },
                {}
        };
        _cleanup_(doctor_done) Doctor d = {};
        bool json = false, probe = true;
        int c, r;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'n':
                        probe = false;
                        break;
                case 'h':
                        printf("Usage: scudo doctor [--json] [--no-probe]\n\n"
                               "Checks whether this host can confine commands, and what is degraded:\n"
                               "the user manager, user namespaces, cgroup controllers, Landlock, the\n"
                               "network helper and scudo's links; then starts one real sandbox under\n"
                               "the built-in profile that tries to read a hidden file, write a read-only\n"
                               "path and /tmp, and reach a refused address, and says which held.\n\n"
                               "  --json       the same as JSON\n"
                               "  --no-probe   the host checks alone (declared settings, no evidence)\n\n"
                               "Exit status: 0 can confine; 1 degraded; 2 cannot confine.\n");
                        return 0;
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "doctor: unknown option '%s'",
                                               argv[optind - 1]);
                }
        if (optind < argc)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "doctor takes no arguments");
        char unit[SCUDO_UNIT_NAME_MAX];
        if (sandbox_unit_of(0, unit) > 0)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "doctor runs outside a sandbox (this is %s): it checks the host",
                                       unit);

        r = doctor_check_host(&d);
        if (r < 0)
                return log_oom();
        /* The probe only when the user manager answers: without it there is nothing to start. */
        if (probe && (d.n_checks == 0 || d.checks[0].state != CHECK_MISSING)) {
                r = doctor_probe(&d, doctor_helper_reachable());
                if (r < 0)
                        return log_oom();
        }
        if (json) {
                if (print_json(&d) < 0)
                        return log_oom();
        } else
                print_text(&d);
        return (int) doctor_worst(&d);
}
