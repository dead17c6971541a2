/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Where a plan becomes a unit: appends the properties of the transient service for `plan`
 * to an open a(sv) container of a StartTransientUnit message. The plan is translated as it
 * is: it must have been hardened (plan/plan-harden.h), which decides everything scudo adds to
 * the profiles' filesystem view. */

#include <systemd/sd-bus.h>

#include "plan/plan.h"

typedef struct UnitStdio {
        /* The fds handed over as the command's standard streams: the caller's, or the slave
         * of scudo's pty in place of those that are terminals (run.c, open_stdio). Always fds:
         * systemd 252 cannot mix them with TTYPath= (with any fd given, it takes no path, and
         * aborts the unit's process on StandardOutput=tty). */
        int fd[3];
        /* fd[0] is scudo's pty, to be the command's controlling terminal (scudo-confine
         * --controlling-tty), as StandardInput=tty would make it. */
        bool controlling_tty;
} UnitStdio;

typedef struct UnitContext {
        const char *slice;              /* NULL for the manager's default */
        const char *runtime_dir;        /* the caller's $XDG_RUNTIME_DIR */
        const char *unit_name;
        const char *confine_path;       /* scudo-confine, run before the command */
        const char *bus_proxy_socket;   /* the filtered session bus (bus-proxy.h), or NULL */
        const char *system_bus_proxy_socket;    /* the filtered system bus, or NULL */
        char **manager_environment;     /* the service manager's own environment block */
        const struct GitConfigCopies *git_config; /* shown in place of git's configuration, or NULL */
        /* Delegation (broker/server.h): the socket and routing links of this sandbox's broker,
         * bound where the plan's entries say (PATH_SOURCE_BROKER_*), the links first on PATH;
         * NULL: this sandbox delegates nothing. */
        const char *broker_socket;
        const char *broker_bin;
} UnitContext;

/* Negative errno on failure; where the plan and the filesystem disagree (a path that turned
 * into a symlink since it was checked, a socket that is gone), *ret_error says how, for the
 * caller to report. Nothing is logged here. */
int unit_append_properties(sd_bus_message *m, const Plan *plan, const UnitContext *ctx,
                           const UnitStdio *stdio, char **ret_error);

/* The mount properties for the plan's paths (one entry per path, as a hardened plan has
 * them). Exposed for tests. */
int unit_append_paths(sd_bus_message *m, const Plan *plan, const UnitContext *ctx, char **ret_error);

/* The names for UnsetEnvironment=: the plan's, and every variable of the manager's own
 * environment that the plan does not set; never one of `own`, the assignments scudo adds
 * itself (NULL for none). Exposed for tests. */
int unit_unset_environment(const Plan *plan, char **manager_environment, char **own, char ***ret);
