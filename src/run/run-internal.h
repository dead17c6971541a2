/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the files of one run share (run.h): its context, and the functions one file calls in
 * another. run.c: the context, the unit's start and its D-Bus signals, run_plan();
 * run-control.c: signals, the caller of a delegated run, stopping; run-helper.c: the run's
 * slice and scudo-bpfd's session; run-status.c: resource controllers and the exit status. */

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "broker/server.h"
#include "net/net-session.h"
#include "report/refusals.h"
#include "run/run.h"
#include "term/pty-relay.h"
#include "term/tui.h"
#include "unit/bus-proxy.h"
#include "git/git-config-copies.h"
#include "git/git-guard.h"
#include "git/gitdir-watch.h"
#include "unit/manager-bus.h"
#include "unit/transient-unit.h"
#include "unit/unit-build.h"
#include "unit/watcher.h"
#include "util/env-util.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-create.h"
#include "util/path-util.h"
#include "util/sandbox-unit.h"
#include "util/strv.h"
/* systemd's exit codes for a failed exec setup (systemd.exec(5), "Process exit codes"). */
#define EXIT_CHDIR 200
#define EXIT_EXEC 203
#define EXIT_NAMESPACE 226

typedef struct RunContext {
        sd_event *event;
        sd_bus *bus;
        char unit_name[64];
        char *unit_path;

        /* With network rules, or file reports: the run's own slice, restricted (or watched)
         * by scudo-bpfd before the service starts in it. A flat name, so that no parent slice
         * is left behind. */
        char slice_name[64];
        bool slice_asked;       /* its start was sent: it is stopped at the end */
        bool slice_job_done;
        char *slice_start_error;        /* the service manager refused it */
        char *manager_cgroup;   /* the manager's ControlGroup, asked for with the slice */
        bool in_slice;
        char *slice_job_result;
        NetSession *net;
        sd_event_source *net_source;
        Refusals *refusals;     /* the run's refusal reports (src/report/) */

        bool job_done;
        char *job_result;
        char *active_state;
        bool finished;
        bool failed_to_start;
        char *start_error;

        unsigned n_signals;
        /* A signal that would end the command, received before the unit's start was sent: the
         * unit is not started (run_interrupted_before_start()). 0: none. */
        int deferred_signal;
        /* Who gets a signal passed on: "main" with a PID namespace, whose init passes it to
         * every process in there (sent to all of them too, each would get it twice); "all"
         * without one. */
        const char *kill_whom;
        PtyRelay *pty;
        Tui *tui;               /* --tui: the screen between the pty and the terminal */
        int watcher_fd;
        BusProxy bus_proxy;     /* the session bus's; unit[0] == 0: none */
        BusProxy system_bus_proxy;      /* the system bus's; unit[0] == 0: none */
        GitGuard git_guard;
        GitdirWatch *gitdir_watch;      /* a .git the command may commit to (gitdir-watch.h) */
        bool gitdir_refused;
        GitConfigCopies git_config;     /* git's configuration less its credentials */
        bool started;           /* the unit may be running */
        struct timespec unit_start;     /* when the unit was started (the coarse clock) */
        bool accounted;         /* the run ended and its status is known: the watcher may go */

        Broker *broker;         /* the plan delegates: its broker (broker/server.h) */
        const RunCaller *caller;        /* a delegated run: who asked */
        sd_event_source *caller_source;
        sd_event_source *kill_timer;
        bool caller_gone;

        sd_event_source *notice_timer;  /* run-notice.c: floating, the loop's */
        unsigned notice_shown;
        const char *notice_file;        /* log.target, a file */
} RunContext;

void run_call_async(RunContext *c, const char *method, const char *types, ...);
/* run-notice.c: refusals the user sees when the reports go elsewhere; after the relay
 * started, and once the terminal is given back and the reports are finished. */
void run_notice_start(RunContext *c, const char *log_target);
void run_notice_finish(RunContext *c);
void run_suspend(void *userdata);
/* What the relay does with the suspend character: nothing (NULL: the kernel stops the
 * command, job control inside), or run_suspend(). */
pty_suspend_fn run_suspend_key(const RunContext *c);
int run_on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);
void run_on_gitdir_refused(const char *path, bool removed, void *userdata);
int run_on_caller(sd_event_source *s, int fd, uint32_t revents, void *userdata);
int run_caller_before_start(RunContext *c);
/* The signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) scudo received, or that is pending, before
 * the unit's start is sent: the run ends as if the command had been interrupted. 0: none. */
int run_interrupted_before_start(RunContext *c);
int run_dispatch_reports(RunContext *c);
int run_begin_slice(RunContext *c);
int run_start_restricted_slice(RunContext *c, const Plan *plan);
/* Waits for scudo-bpfd's answer to the session run_start_restricted_slice() asked for: 0 when
 * its restrictions hold, or when file reports alone could not be had (the run goes on and says
 * so); <0, logged, when the network rules could not be applied: the command must not start. */
int run_helper_session_ready(RunContext *c, const Plan *plan);
/* What stays behind (git/persist-check.h): looked for where scudo-bpfd recorded the command's
 * writes; without a complete record, everywhere it may write. Call it once the unit is gone. */
int run_check_persistence(RunContext *c, const Plan *plan);
void run_stop_slice(RunContext *c);
int run_check_resource_controllers(RunContext *c, const Plan *plan);
int run_collect_exit_status(RunContext *c, const Plan *plan, int *ret_status);
