/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A run's signals, its delegated caller, and stopping it (run-internal.h). */
#include <poll.h>
#include <signal.h>

#include "run/run-internal.h"
#include "util/macro.h"

/* With a PID namespace, the command's init passes signals on and the command's process group
 * is one the kernel stops (src/confine/pid-init.c): job control happens inside, as outside, and
 * scudo hears of each stop (SIGURG). Without one, the command's group is orphaned and the
 * kernel discards its stops: scudo freezes the unit itself, on the suspend character. */
static bool job_control_inside(const RunContext *c) {
        return streq(c->kill_whom, "main");
}

/* … continued (fg or bg): the terminal raw again, the unit thawed, and the command continued
 * (it redraws its screen, as on any fg; the window may have changed meanwhile). */
static void run_resume(RunContext *c) {
        if (c->pty) {
                (void) pty_relay_raw_terminal(c->pty);
                pty_relay_pause_input(c->pty, false);
        }
        (void) sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER, "ThawUnit", NULL, NULL,
                                  "s", c->unit_name);
        if (c->pty)
                pty_relay_resize(c->pty);
        if (job_control_inside(c))
                run_call_async(c, "KillUnit", "ssi", c->unit_name, c->kill_whom, SIGCONT);
}

/* Freeze the unit, stop ourselves like any job would on ^Z, and thaw when continued. A
 * delegated run's caller is the job the user's shell knows: it stops, and says when it goes on. */
void run_suspend(void *userdata) {
        RunContext *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        (void) sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER, "FreezeUnit", &e, NULL,
                                  "s", c->unit_name);
        /* What the command wrote last is shown first: a program that stops itself puts its
         * terminal back (leaves the alternate screen) just before. */
        if (c->pty)
                pty_relay_drain(c->pty);
        pty_relay_restore_terminal(c->pty);
        if (c->caller) {
                /* the caller's shell reads its terminal again: nothing typed is the command's */
                pty_relay_pause_input(c->pty, true);
                if (c->caller->suspend(c->caller->fd) < 0)
                        run_resume(c);
                return;
        }
        (void) kill(getpid(), SIGSTOP);
        run_resume(c);
}

pty_suspend_fn run_suspend_key(const RunContext *c) {
        return job_control_inside(c) ? NULL : run_suspend;
}

static void run_handle_signal(RunContext *c, int sig) {
        switch (sig) {
        case SIGWINCH:
                if (c->pty)
                        pty_relay_resize(c->pty);
                return;
        case SIGTSTP:   /* kill -TSTP, or a delegated run's caller was stopped */
                if (job_control_inside(c))
                        /* the command stops as it would (or not: an interactive shell ignores
                         * it), and its stop comes back as SIGURG */
                        run_call_async(c, "KillUnit", "ssi", c->unit_name, c->kill_whom, SIGTSTP);
                else
                        run_suspend(c);
                return;
        case SIGURG:    /* the command stopped (pid-init.c) */
                run_suspend(c);
                return;
        case SIGCONT:   /* a delegated run's caller goes on after a suspension */
                run_resume(c);
                return;
        default:
                /* First signal: pass it to every process of the command. Another one: the user
                 * insists, stop the unit (SIGTERM, then SIGKILL after TimeoutStopSec=). A third:
                 * SIGKILL now. Before the start there is no unit to pass the first to (a
                 * KillUnit would fail, and the command start and run on unsignalled): it keeps
                 * the unit from starting. */
                if (++c->n_signals == 1 && !c->started)
                        c->deferred_signal = sig;
                else if (c->n_signals == 1) {
                        run_call_async(c, "KillUnit", "ssi", c->unit_name, c->kill_whom, sig);
                        /* Then SIGCONT, as systemd's stop and a shell's `kill` of a stopped job
                         * do: a stopped process acts on the signal only once continued, and its
                         * parent may not know it stopped (a ^Z between a shell's vfork() and
                         * its child's exec() stops the child while the shell waits for it with
                         * every signal blocked): the command would run on, signalled. */
                        run_call_async(c, "KillUnit", "ssi", c->unit_name, c->kill_whom, SIGCONT);
                }
                else if (c->n_signals == 2)
                        run_call_async(c, "StopUnit", "ss", c->unit_name, "replace");
                else    /* a command that ignores SIGTERM does not get to wait out the stop timeout */
                        run_call_async(c, "KillUnit", "ssi", c->unit_name, "all", SIGKILL);
                return;
        }
}

int run_interrupted_before_start(RunContext *c) {
        static const int ending[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
        sigset_t pending;

        if (c->deferred_signal)
                return c->deferred_signal;
        /* Blocked, and read from the event loop only: one sent since its last turn waits here. */
        if (sigpending(&pending) < 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(ending); i++)
                if (sigismember(&pending, ending[i]) == 1)
                        return ending[i];
        return 0;
}

int run_on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        run_handle_signal(userdata, (int) si->ssi_signo);
        return 0;
}

static int run_on_kill_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        RunContext *c = userdata;
        run_call_async(c, "KillUnit", "ssi", c->unit_name, "all", SIGKILL);
        return 0;
}

/* The caller of a delegated run is gone (killed, or its sandbox ended): nobody is left to
 * read what the command does. The unit is stopped, and what ignores the stop's SIGTERM gets
 * SIGKILL a second later, as when scudo itself is killed (watcher.c). */
static void run_caller_gone(RunContext *c) {
        c->caller_gone = true;
        c->caller_source = sd_event_source_disable_unref(c->caller_source);
        if (!c->started)
                return;
        run_call_async(c, "ThawUnit", "s", c->unit_name);   /* frozen while the caller was stopped */
        run_call_async(c, "StopUnit", "ss", c->unit_name, "replace");
        (void) sd_event_add_time_relative(c->event, &c->kill_timer, CLOCK_MONOTONIC, 1000 * 1000, 0,
                                          run_on_kill_timer, c);
}

/* A name refused in a .git the command may commit to: the sandbox is killed at once, before
 * it can make another. */
void run_on_gitdir_refused(const char *path, bool removed, void *userdata) {
        RunContext *c = userdata;
        c->gitdir_refused = true;
        if (c->started)
                run_call_async(c, "KillUnit", "ssi", c->unit_name, "all", SIGKILL);
}

int run_on_caller(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RunContext *c = userdata;
        int sig = c->caller->receive(fd);
        if (sig < 0)
                run_caller_gone(c);
        else if (sig > 0)
                run_handle_signal(c, sig);
        return 0;
}

/* Before the unit starts: the caller may be gone already, or have been interrupted. Returns 0
 * to go on, the signal the caller was interrupted by (the run ends as if the command had
 * been), or -ECONNRESET: the caller is gone. */
int run_caller_before_start(RunContext *c) {
        for (;;) {
                struct pollfd p = { .fd = c->caller->fd, .events = POLLIN };
                if (poll(&p, 1, 0) <= 0)
                        return 0;
                int sig = c->caller->receive(c->caller->fd);
                if (sig < 0) {
                        c->caller_gone = true;
                        return -ECONNRESET;
                }
                if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
                        return sig;
        }
}
