/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo-route: what a delegated command's names and executables lead to inside the sandbox
 * that delegates it (the routing links, and the binds over its executables:
 * plan/harden-sockets.c, broker/route.h).
 *
 * It asks the sandbox's broker, exactly as scudo there would (broker_client_route()), and it
 * starts in a fraction of scudo's time: static, without the fourteen shared libraries scudo
 * maps (libsystemd and what it needs, Lua's engine, FUSE, the terminal), whose loading was most
 * of what a delegated command cost beyond the same command run by scudo outside. Whatever is
 * not a delegated run it hands to scudo itself, with the same arguments: outside every sandbox,
 * or in one without a broker (scudo then runs as through a link named after the command), and
 * when the broker says "in place" (`scudo __in-place`, which finds the command on PATH past the
 * routing links and runs it with the sandbox's access). Errors are said once, on stderr, and
 * end it with scudo's own status (cli/exit-status.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/client.h"
#include "cli/exit-status.h"
#include "config.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/sandbox-unit.h"
#include "util/scudo-programs.h"
#include "util/strv.h"

/* scudo beside this program (a build tree), else where meson installs it. */
static char *scudo_path(void) {
        return scudo_program_beside_self("scudo") ?: strdup(SCUDO_BINDIR "/scudo");
}

/* scudo with argv (through a link: argv[0] is the command's name), or with `__in-place` and
 * argv after it. Returns only on failure, scudo's status. */
static int exec_scudo(char **argv, bool in_place) {
        _cleanup_free_ char *scudo = scudo_path();
        if (!scudo) {
                (void) log_oom();
                return EXIT_SCUDO_SETUP;
        }
        if (!in_place)
                execv(scudo, argv);
        else {
                size_t n = strv_length(argv);
                _cleanup_free_ char **a = calloc(n + 3, sizeof(char *));
                if (!a) {
                        (void) log_oom();
                        return EXIT_SCUDO_SETUP;
                }
                a[0] = (char *) "scudo";
                a[1] = (char *) "__in-place";
                memcpy(a + 2, argv, n * sizeof(char *));
                execv(scudo, a);
        }
        log_error_errno(negative_errno(), "Cannot execute %s: %m; '%s' was not run", scudo, argv[0]);
        return EXIT_SCUDO_SETUP;
}

int main(int argc, char **argv) {
        char unit[SCUDO_UNIT_NAME_MAX];
        int status = 0;

        fd_ensure_std();
        if (argc < 1 || !argv[0])
                return EXIT_SCUDO_SETUP;
        const char *base = strrchr(argv[0], '/');
        if (streq(base ? base + 1 : argv[0], SCUDO_ROUTE_NAME)) {
                fprintf(stderr, "scudo-route is what a delegated command leads to inside the sandbox that "
                        "delegates it; it is not run by its own name\n");
                return EXIT_SCUDO_SETUP;
        }
        uid_t uid = getuid();
        if (sandbox_unit_of(0, unit) <= 0 || !broker_client_present(uid))
                return exec_scudo(argv, false);
        _cleanup_strv_free_ char **a = strv_copy(argv);
        if (!a) {
                (void) log_oom();
                return EXIT_SCUDO_SETUP;
        }
        int r = broker_client_route(uid, unit, a, &status);
        if (r == BROKER_RAN)
                return status;
        if (r == BROKER_RUN_IN_PLACE)
                return exec_scudo(a, true);
        if (r == BROKER_NONE)
                return exec_scudo(argv, false);
        return exit_status_of_verb(r);
}
