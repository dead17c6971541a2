/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Where a plan becomes a unit: appends the properties of the transient service for `plan`
 * to an open a(sv) container of a StartTransientUnit message. */

#include <systemd/sd-bus.h>

#include "plan/plan.h"

typedef struct UnitStdio {
        /* Either fds to hand over (fd mode), or a pty path (tty mode) with fds for the streams
         * that are not the terminal. -EBADF when unused. */
        int fd[3];
        const char *tty_path;   /* /dev/pts/N, or NULL */
        bool on_tty[3];         /* stream i goes to tty_path */
} UnitStdio;

typedef struct UnitContext {
        const char *slice;              /* NULL for the manager's default */
        const char *runtime_dir;        /* the caller's $XDG_RUNTIME_DIR */
        const char *unit_name;
        const char *confine_path;       /* scudo-confine, run before the command */
        const char *bpfd_socket;        /* a helper socket other than the default, or NULL */
        const char *bus_proxy_socket;   /* the filtered session bus (bus-proxy.h), or NULL */
        char **manager_environment;     /* the service manager's own environment block */
} UnitContext;

int unit_append_properties(sd_bus_message *m, const Plan *plan, const UnitContext *ctx,
                           const UnitStdio *stdio);

/* The mount properties for the plan's paths, in the order systemd needs: every path once,
 * the most restrictive access winning when a path is named twice. Exposed for tests. */
int unit_append_paths(sd_bus_message *m, const Plan *plan, const UnitContext *ctx);

/* The names for UnsetEnvironment=: the plan's, and every variable of the manager's own
 * environment that the plan does not set; never one of `own`, the assignments scudo adds
 * itself (NULL for none). Exposed for tests. */
int unit_unset_environment(const Plan *plan, char **manager_environment, char **own, char ***ret);
