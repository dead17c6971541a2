/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Runs a validated plan as a transient service of the user's service manager and waits for
 * it: the caller's streams (a pty of the command's own in place of those that are terminals),
 * signals forwarded, Ctrl-Z as freeze, the result as an exit status. */

#include "plan/plan.h"

/* Who a delegated run is for (src/broker/): the scudo inside a sandbox that asked for it, at
 * the other end of `fd`. What it receives is handled as if this scudo had received it, and its
 * going away (even killed) stops the command. */
typedef struct RunCaller {
        int fd;
        /* Reads what the caller sent: a signal to act on as if received (SIGCONT: the caller
         * continues after a suspension), 0 for nothing, or a negative errno: the caller is gone. */
        int (*receive)(int fd);
        /* The user typed the suspend character: the caller is to stop itself (the unit is frozen
         * meanwhile), and send SIGCONT when continued. */
        int (*suspend)(int fd);
} RunCaller;

typedef struct RunOptions {
        const char *runtime_dir;
        const char *confine_path;
        bool force_pty;         /* -t: stdout on the pty too, though not a terminal */
        bool no_pty;            /* -T: never a pty (refused with a terminal among the streams) */
        char *report_json;      /* --report-json: absolute and clean, or NULL */
        bool tui;               /* --tui: the command and its refusal reports side by side */
        const RunCaller *caller;        /* a delegated run's caller, or NULL */
} RunOptions;

/* Returns 0 once the command has ended, with its exit status as a shell reports it (its own,
 * or 128+N for signal N) in *ret_status; or a negative errno once the reason is reported on
 * stderr: -ENOEXEC when the command could not be executed inside the sandbox (the profile
 * hides it), anything else a failure of the setup, the bus or a helper. The command never
 * runs with less than the plan says. */
int run_plan(const Plan *plan, const RunOptions *opts, int *ret_status);
