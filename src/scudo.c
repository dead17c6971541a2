/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo: run a command confined in a transient systemd unit, as its profiles say.
 *
 * This file only dispatches: a subcommand by name, a run otherwise, or (when started through
 * a symlink named after a command) a run of that command with every argument its own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "cli/doctor.h"
#include "cli/exit-status.h"
#include "cli/run-options.h"
#include "cli/verb-link.h"
#include "cli/verb-run.h"
#include "cli/verbs.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/strv.h"

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char **argv);
} Verb;

static const Verb verbs[] = {
        { "explain",  verb_explain },
        { "check",    verb_check },
        { "profiles", verb_profiles },
        { "trust",    verb_trust },
        { "untrust",  verb_untrust },
        { "trusted",  verb_trusted },
        { "suggest",  verb_suggest },
        { "link",     verb_link },
        { "unlink",   verb_unlink },
        { "doctor",   verb_doctor },
        { "shim",     verb_shim },
        { "status",   verb_status },
        /* Not for people: what the delegation broker starts for each request
         * (cli/verb-delegated.c). */
        { "__broker-request", verb_broker_request },
        /* Not for people: what scudo-route starts when the broker says "in place"
         * (cli/verb-run.c). */
        { "__in-place", verb_in_place },
        /* Not for people: what runs inside scudo doctor's probe sandbox (cli/doctor-probe.c). */
        { "__doctor-probe", verb_doctor_probe },
        /* What the FUSE shim starts for the names of one directory (cli/verb-shim.c). */
        { "__shim-names", verb_shim_names },
};

/* Returns a negative errno once reported, or the exit status (cli/verbs.h). */
static int dispatch(int argc, char **argv) {
        _cleanup_(run_command_line_done) RunCommandLine args = {};
        int r;

        if (argc < 1 || !argv[0])
                return -EINVAL;

        if (!invoked_as_scudo(argv[0])) {
                /* Through a link: argv is the command's, untouched. */
                args.request.via_link = true;
                args.request.argv = strv_copy(argv);
                if (!args.request.argv)
                        return log_oom();
                return verb_run(&args);
        }

        if (argc >= 2)
                for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                        if (streq(argv[1], verbs[i].name))
                                return verbs[i].run(argc - 1, argv + 1);

        r = parse_run_args(argc, argv, NULL, &args);
        if (r <= 0)
                return r;
        return verb_run(&args);
}

int main(int argc, char **argv) {
        fd_ensure_std();
        return exit_status_of_verb(dispatch(argc, argv));
}
