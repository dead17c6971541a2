/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include <errno.h>

/* scudo's own exit statuses, never used for the command's (docs/man/scudo.1, "EXIT STATUS").
 * Below the verbs every function returns a negative errno; a verb turns its result into one
 * of these once, on its way out. */
enum {
        EXIT_SCUDO_SETUP = 125,         /* configuration, sandbox setup, bus or helper error */
        EXIT_SCUDO_NOEXEC = 126,        /* the command exists but cannot be executed */
        EXIT_SCUDO_NOTFOUND = 127,      /* the command was not found */
};

/* A verb's result, on its way out of main(): a negative errno (reported already) is scudo's
 * own failure; 0 or a positive status stands as it is. */
static inline int exit_status_of_verb(int r) {
        return r < 0 ? EXIT_SCUDO_SETUP : r;
}

/* The command's lookup on PATH (request_resolve_command()): -ENOENT is "not found", -EACCES
 * "cannot be executed", anything else scudo's own. */
static inline int exit_status_of_lookup(int r) {
        return r == -ENOENT ? EXIT_SCUDO_NOTFOUND : r == -EACCES ? EXIT_SCUDO_NOEXEC : EXIT_SCUDO_SETUP;
}

/* A run (run_plan()): -ENOEXEC, the command could not be executed inside the sandbox, is "not
 * found" as the command sees it; anything else is scudo's own. */
static inline int exit_status_of_run(int r) {
        return r == -ENOEXEC ? EXIT_SCUDO_NOTFOUND : EXIT_SCUDO_SETUP;
}
