/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* One run, from a plan to its end (run.h, run-internal.h). */
#include "run/run-internal.h"
#include "git/persist-check.h"

static void run_context_done(RunContext *c) {
        /* The .git placeholders go when the sandbox is gone; while it may still run (scudo lost
         * the bus), the watcher removes them once it has stopped the unit. */
        if (c->finished || !c->started)
                git_guard_release(&c->git_guard);
        else
                git_guard_drop(&c->git_guard);
        /* Mounted, a copy stays while the sandbox runs whatever becomes of its name. */
        git_config_copies_remove(&c->git_config);
        gitdir_watch_free(c->gitdir_watch);
        /* Whatever way the run ended, its slice goes (and with its cgroup, the BPF programs),
         * and the bus proxies with their sockets. */
        run_stop_slice(c);
        bus_proxy_stop(c->bus, &c->bus_proxy);
        bus_proxy_stop(c->bus, &c->system_bus_proxy);
        broker_free(c->broker);
        /* Only now, with the helpers' stops sent, may the watcher go: killed before, scudo
         * would leave them running. Without the run's end, it stops what is left. */
        if (c->accounted)
                watcher_release(TAKE_FD(c->watcher_fd));
        sd_event_source_disable_unref(c->caller_source);
        sd_event_source_disable_unref(c->kill_timer);
        sd_event_source_disable_unref(c->net_source);
        net_session_free(c->net);
        refusals_free(c->refusals);
        free(c->slice_job_result);
        free(c->slice_start_error);
        free(c->manager_cgroup);
        pty_relay_free(c->pty);
        tui_free(c->tui);
        free(c->unit_path);
        free(c->job_result);
        free(c->active_state);
        free(c->start_error);
        sd_bus_flush_close_unref(c->bus);
        sd_event_unref(c->event);
        safe_close(c->watcher_fd);
}

static int make_unit_name(RunContext *c) {
        uint8_t rnd[SCUDO_UNIT_ID_BYTES];
        char id[2 * SCUDO_UNIT_ID_BYTES + 1];
        if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
                return -EIO;
        for (size_t i = 0; i < sizeof(rnd); i++)
                (void) snprintf(id + 2 * i, sizeof(id) - 2 * i, "%02x", rnd[i]);
        /* The name by which a scudo started inside knows it is nested (util/sandbox-unit.h). */
        (void) snprintf(c->unit_name, sizeof(c->unit_name), SCUDO_UNIT_PREFIX "%s" SCUDO_UNIT_SUFFIX, id);
        (void) snprintf(c->slice_name, sizeof(c->slice_name), "app-scudo_%s.slice", id);
        return sd_bus_path_encode(SD_PATH "/unit", c->unit_name, &c->unit_path);
}

static void run_check_finished(RunContext *c) {
        if (!c->job_done || !c->active_state)
                return;
        if (streq(c->active_state, "inactive") || streq(c->active_state, "failed")) {
                c->finished = true;
        }
}

static int set_string(char **p, const char *s) {
        char *n = strdup(s);
        if (!n)
                return -ENOMEM;
        free(*p);
        *p = n;
        return 0;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        RunContext *c = userdata;
        const char *job, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) < 0)
                return 0;
        if (streq(unit, c->slice_name)) {
                c->slice_job_done = true;
                (void) set_string(&c->slice_job_result, result);
                return 0;
        }
        if (!streq(unit, c->unit_name))
                return 0;
        c->job_done = true;
        (void) set_string(&c->job_result, result);
        if (!streq(result, "done")) {
                c->failed_to_start = true;
                c->finished = true;
                return 0;
        }
        /* The unit may already have ended before we saw its state change. */
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *state = NULL;
        if (sd_bus_get_property_string(c->bus, SD_DEST, c->unit_path, "org.freedesktop.systemd1.Unit",
                                       "ActiveState", &e, &state) >= 0)
                (void) set_string(&c->active_state, state);
        run_check_finished(c);
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        RunContext *c = userdata;
        const char *iface;

        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, "org.freedesktop.systemd1.Unit"))
                return 0;
        if (sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                const char *name, *value;
                if (sd_bus_message_read(m, "s", &name) < 0)
                        return 0;
                if (streq(name, "ActiveState")) {
                        if (sd_bus_message_read(m, "v", "s", &value) < 0)
                                return 0;
                        (void) set_string(&c->active_state, value);
                } else if (sd_bus_message_skip(m, "v") < 0)
                        return 0;
                if (sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        run_check_finished(c);
        return 0;
}

static int on_start_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        RunContext *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e) {
                (void) set_string(&c->start_error, e->message ?: e->name);
                c->failed_to_start = true;
                c->finished = true;
        }
        return 0;
}

void run_call_async(RunContext *c, const char *method, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        if (sd_bus_message_new_method_call(c->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, method) < 0)
                return;
        va_start(ap, types);
        int r = sd_bus_message_appendv(m, types, ap);
        va_end(ap);
        if (r >= 0)
                (void) sd_bus_call_async(c->bus, NULL, m, NULL, NULL, 0);
}

static int add_matches(RunContext *c) {
        int r = sd_bus_match_signal_async(c->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved",
                                          on_job_removed, NULL, c);
        if (r < 0)
                return r;
        return sd_bus_match_signal_async(c->bus, NULL, SD_DEST, c->unit_path,
                                         "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                         on_properties_changed, NULL, c);
}

typedef struct ServiceUnit {
        const Plan *plan;
        const UnitContext *uctx;
        const UnitStdio *stdio;
        char **error;
} ServiceUnit;

static int append_service_properties(sd_bus_message *m, void *userdata) {
        const ServiceUnit *u = userdata;
        return unit_append_properties(m, u->plan, u->uctx, u->stdio, u->error);
}

static int build_unit(RunContext *c, const Plan *plan, const UnitContext *uctx, const UnitStdio *stdio,
                      char **ret_error, sd_bus_message **ret) {
        const ServiceUnit u = { plan, uctx, stdio, ret_error };
        return transient_unit_message(c->bus, c->unit_name, append_service_properties, (void *) &u, ret);
}

/* Whenever a standard stream is a terminal, the command gets a pty of its own in its place
 * (pty-relay.h). A terminal handed over as it is could be read by the command during the run
 * and after it (`scudo cmd </dev/null &`, reading the terminal while the user types the next
 * command line, or a password), and no job control would stop it: it is not the command's
 * controlling terminal. Streams that are not terminals are passed as they are: `scudo cmd >
 * file` writes the file, `cmd | scudo cat` reads the pipe, `2>log` keeps stderr apart. Logs
 * its errors. */
static int open_stdio(RunContext *c, const RunOptions *opts, UnitStdio *stdio) {
        static const char * const names[3] = { "input", "output", "error" };
        bool on_tty[3];
        int terminal = -EBADF;

        *stdio = (UnitStdio) { .fd = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO } };
        for (int i = 0; i < 3; i++) {
                on_tty[i] = isatty(i);
                if (on_tty[i] && terminal < 0)
                        terminal = i;
        }
        if (terminal < 0)
                return 0;
        if (opts->no_pty)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "--no-pty: standard %s is a terminal, which the command could read "
                                       "from, during the run and after it, with no job control to stop it; "
                                       "redirect it, or run without --no-pty", names[terminal]);
        /* -t: standard output through the pty too, though it is not a terminal */
        if (opts->force_pty && on_tty[0])
                on_tty[1] = true;

        /* What the command prints on the pty goes where the terminal is: standard output, or
         * standard error when only that is one, or (echo of what is typed, when only standard
         * input is one) back to the terminal it was typed on. */
        int output = on_tty[1] ? STDOUT_FILENO : on_tty[2] ? STDERR_FILENO : STDIN_FILENO;
        int r = pty_relay_new(&c->pty, on_tty[0] ? STDIN_FILENO : -EBADF, output, terminal);
        if (r < 0)
                return log_error_errno(r, "Failed to set up a terminal for the command: %m");
        for (int i = 0; i < 3; i++)
                if (on_tty[i])
                        stdio->fd[i] = pty_relay_slave_fd(c->pty);
        /* With its input, the pty is the command's controlling terminal: /dev/tty, job control,
         * Ctrl-C through the line discipline. Without (`</dev/null`), /dev/tty is not there, as
         * without a terminal: what would read it would wait for input that never comes. */
        stdio->controlling_tty = on_tty[0];
        return 0;
}

/* --tui: the command's pty drawn in the main area of the terminal, the reports below it. It
 * takes the terminal (the alternate screen) only when the terminal is made raw, below. */
static int start_tui(RunContext *c, const RunOptions *opts) {
        int r;

        if (!c->pty)
                return log_error_errno(SYNTHETIC_ERRNO(ENOTTY),
                                       "--tui needs a terminal on standard input and output");
        r = tui_new(&c->tui);
        if (r < 0)
                return log_error_errno(r, "Cannot start the terminal UI: %m");
        tui_attach(c->tui, c->pty);
        report_feed_set_screen(refusals_feed(c->refusals), tui_report, c->tui);
        return 0;
}

/* The filtered session bus, before the service that is to use it. The watcher knows of it
 * first: should scudo die now, it goes too. */
static int start_bus_proxy(RunContext *c, BusProxy *proxy, BusKind kind, const Plan *plan,
                           const RunOptions *opts, char **manager_env) {
        _cleanup_free_ char *upstream = NULL;
        char id[sizeof(c->unit_name)];
        int r;

        /* RuntimeDirectory= is below the manager's own $XDG_RUNTIME_DIR, which is the
         * caller's unless the caller set another. */
        const char *manager_rt = env_get(manager_env, "XDG_RUNTIME_DIR");
        if (!manager_rt || !path_is_absolute(manager_rt))
                manager_rt = opts->runtime_dir;
        (void) snprintf(id, sizeof(id), "%.*s", (int) (strlen(c->unit_name) - strlen(".service")),
                        c->unit_name);
        r = bus_proxy_name(proxy, kind, id, manager_rt);
        if (r < 0) {
                proxy->unit[0] = 0;
                return log_error_errno(r, "Cannot place the %s bus proxy's socket in '%s': %m",
                                       kind == BUS_SYSTEM ? "system" : "session", strempty(manager_rt));
        }
        r = watcher_add_unit(c->watcher_fd, proxy->unit);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the unit watcher: %m");
        /* The system bus where the plan denies or binds it, whatever the caller's environment
         * says: a proxy of another bus would be no filter of this one. */
        const char *address = kind == BUS_SESSION ? getenv("DBUS_SESSION_BUS_ADDRESS") : NULL;
        if (address && *address)
                upstream = strdup(address);
        else if (kind == BUS_SYSTEM)
                upstream = strdup("unix:path=" PLAN_SYSTEM_BUS_SOCKET);
        else if (asprintf(&upstream, "unix:path=%s/bus", opts->runtime_dir) < 0)
                upstream = NULL;
        if (!upstream)
                return log_oom();
        return bus_proxy_start(c->bus, proxy, plan, upstream);
}

/* Makes the directories and files the plan's entries create when missing: a profile's grants
 * (checked by plan_create_check) and scudo's configuration directory kept read-only
 * (plan-harden.h); path_create_no_symlinks refuses a symlink planted since. What is made
 * stays: it is the tool's cache or configuration, for the next run too. */
static int create_missing_paths(const Plan *plan) {
        for (size_t i = 0; i < plan->n_paths; i++) {
                const PlanPath *e = &plan->paths[i];
                int r;
                if (e->create == PATH_CREATE_DIR || e->create == PATH_CREATE_FILE)
                        r = path_create_no_symlinks(e->path, e->create == PATH_CREATE_DIR);
                else if (e->create == PATH_CREATE_JSON)
                        /* what a tool that keeps its state as JSON reads as "nothing yet" */
                        r = path_create_file_holding(e->path, "{}\n");
                else
                        continue;       /* a placeholder is the git guard's */
                if (r == -ELOOP)
                        return log_error_errno(r,
                                               "%s: %s is to be created when missing, but a symlink is in "
                                               "its way (planted after the plan was checked?); not running "
                                               "the command", e->origin, e->path);
                if (r < 0)
                        return log_error_errno(r, "%s: cannot create %s (%s): %m", e->origin, e->path,
                                               path_create_to_string(e->create));
                if (r > 0)
                        log_debug("created %s (%s, %s)", e->path, path_create_to_string(e->create),
                                  e->origin);
        }
        return 0;
}

/* The watcher waits for the bus to drop this connection before it stops anything. */
static int watch_bus_client(RunContext *c) {
        const char *unique = NULL;
        int r = sd_bus_get_unique_name(c->bus, &unique);
        if (r < 0)
                return r;
        return watcher_add_bus_client(c->watcher_fd, unique);
}

/* The watcher, the bus and the event loop, and the signals scudo takes over. */
static int run_open_bus(RunContext *c, const Plan *plan, const RunOptions *opts) {
        int r;

        /* With a bare environment (env -i), still find the user's bus where it always is: scudo,
         * and the watcher that stops the units should scudo die. */
        if (!getenv("XDG_RUNTIME_DIR") && !getenv("DBUS_SESSION_BUS_ADDRESS") && opts->runtime_dir)
                (void) setenv("XDG_RUNTIME_DIR", opts->runtime_dir, 0);

        /* Before the bus is open: the watcher must not inherit the connection. */
        r = watcher_start(plan, &c->watcher_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to start the unit watcher: %m");

        r = sd_bus_open_user(&c->bus);
        if (r < 0) {
                struct passwd *pw = getpwuid(getuid());
                log_error_errno(r, "Cannot reach the user's service manager: %m");
                log_error("scudo runs commands as units of 'systemd --user': it needs a running user "
                          "manager and its bus at $XDG_RUNTIME_DIR/bus (log in through a systemd "
                          "session, or 'loginctl enable-linger %s')", pw ? pw->pw_name : "$USER");
                return r;
        }
        r = sd_event_new(&c->event);
        if (r >= 0)
                r = sd_bus_attach_event(c->bus, c->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the event loop: %m");
        r = watch_bus_client(c);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the unit watcher: %m");

        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGTSTP, SIGURG };
        sigset_t mask;
        (void) sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                (void) sigaddset(&mask, sigs[i]);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
                r = sd_event_add_signal(c->event, NULL, sigs[i], run_on_signal, c);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch signals: %m");
        }
        return 0;
}

/* Phase 1: the run's name, the watcher, the bus, the streams, the reports; nothing started. */
static int run_prepare(RunContext *c, const Plan *plan, const RunOptions *opts, UnitStdio *stdio) {
        int r = make_unit_name(c);
        if (r < 0)
                return log_error_errno(r, "Failed to name the unit: %m");

        /* A write to a reader that went away (the watcher, a closed terminal) must be an
         * error return, not the end of scudo with the unit still running. The unit's own
         * processes are started by systemd and do not inherit this. */
        (void) signal(SIGPIPE, SIG_IGN);

        r = run_open_bus(c, plan, opts);
        if (r < 0)
                return r;
        r = open_stdio(c, opts, stdio);
        if (r < 0)
                return r;
        r = add_matches(c);
        if (r < 0)
                return log_error_errno(r, "Failed to subscribe to the unit's signals: %m");
        r = run_check_resource_controllers(c, plan);
        if (r < 0)
                return r;
        r = watcher_add_unit(c->watcher_fd, c->unit_name);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the unit watcher: %m");

        /* Before anything starts: a report file that cannot be opened stops the run. */
        _cleanup_free_ char *why = NULL;
        r = refusals_new(plan, opts->report_json, &c->refusals, &why);
        if (r < 0 && !why)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "%s; the command was not run", why);
        return opts->tui ? start_tui(c, opts) : 0;
}

/* The git side of a run: the guard, the watch of a .git to commit to, the config copies. */
static int run_start_git(RunContext *c, const Plan *plan, const RunOptions *opts) {
        /* An empty .git where the command starts and none is: see git-guard.h. */
        int r = git_guard_acquire(plan, &c->git_guard);
        if (r == -ELOOP)
                return log_error_errno(r, "%s, or a directory above it, changed into a symlink after it was "
                                       "checked; not running the command", plan->working_directory);
        if (r < 0)
                return log_error_errno(r, "Cannot keep a git repository from being planted in %s: %m",
                                       plan->working_directory);
        for (size_t i = 0; i < c->git_guard.n; i++) {
                r = watcher_add_placeholder(c->watcher_fd, c->git_guard.path[i]);
                if (r < 0)
                        return log_error_errno(r, "Failed to arm the unit watcher: %m");
        }

        /* A .git the command may commit to: watched from before the command starts. */
        if (plan->git_watch || plan->git_pins) {
                r = gitdir_watch_new(plan->git_watch, plan->git_pins, c->event, run_on_gitdir_refused, c,
                                     &c->gitdir_watch);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch the .git the command may commit to: %m; "
                                               "not running the command");
        }

        /* git's configuration files that hold credentials, as copies less them. */
        r = git_config_copies_make(plan, opts->runtime_dir, c->unit_name, &c->git_config);
        if (r < 0)
                return r;
        if (c->git_config.dir) {
                r = watcher_add_scratch_dir(c->watcher_fd, c->git_config.dir);
                if (r < 0)
                        return log_error_errno(r, "Failed to arm the unit watcher: %m");
        }
        return 0;
}

/* Phase 2: what runs beside the unit (broker, slice and scudo-bpfd, bus proxies, git) and the
 * paths the plan creates; *ret_manager_env: what the manager adds to the unit's environment. */
static int run_start_helpers(RunContext *c, const Plan *plan, const RunOptions *opts,
                             char ***ret_manager_env) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        /* A sandbox that delegates gets its broker now, before its unit: the socket and links
         * are bound into it. */
        if (plan->delegate && plan->delegate[0]) {
                r = broker_start(plan, c->unit_name, c->event, refusals_feed(c->refusals), c->watcher_fd,
                                 &c->broker);
                if (r < 0)
                        return r;
        }
        if (opts->caller) {
                c->caller = opts->caller;
                r = sd_event_add_io(c->event, &c->caller_source, c->caller->fd, EPOLLIN, run_on_caller, c);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch the caller: %m");
        }
        /* The slice is asked for first: the service manager starts it while scudo reads its
         * environment and starts the bus proxies. */
        bool slice = plan->network_filtered || refusals_want_files(c->refusals);
        if (slice) {
                r = run_begin_slice(c);
                if (r < 0)
                        return r;
        }

        r = sd_bus_get_property_strv(c->bus, SD_DEST, SD_PATH, SD_MANAGER, "Environment", &e,
                                     ret_manager_env);
        if (r < 0)
                return log_error_errno(r, "Failed to read the service manager's environment: %s",
                                       e.message ?: "unknown error");
        if (plan->dbus == DBUS_FILTERED) {
                r = start_bus_proxy(c, &c->bus_proxy, BUS_SESSION, plan, opts, *ret_manager_env);
                if (r < 0)
                        return r;
        }
        if (plan->dbus_system == DBUS_FILTERED) {
                r = start_bus_proxy(c, &c->system_bus_proxy, BUS_SYSTEM, plan, opts, *ret_manager_env);
                if (r < 0)
                        return r;
        }

        /* scudo-bpfd sets up the slice's session while scudo makes the paths, git's side and
         * the unit; the unit is started once it has answered (run_start_unit()). */
        if (slice) {
                r = run_start_restricted_slice(c, plan);
                if (r < 0)
                        return r;
        }

        /* The grants' paths to make when missing (plan-create.h), just before the unit starts. */
        r = create_missing_paths(plan);
        if (r < 0)
                return r;
        return run_start_git(c, plan, opts);
}

/* Phase 3: the terminal handed over, then StartTransientUnit. Returns 1 when the run was
 * interrupted before (a signal to scudo, or a delegated run's caller's): nothing started,
 * *ret_status says so. */
static int run_start_unit(RunContext *c, const Plan *plan, const RunOptions *opts, char **manager_env,
                          const UnitStdio *stdio, int *ret_status) {
        int r;

        UnitContext uctx = {
                .git_config = &c->git_config,
                .manager_environment = manager_env,
                .runtime_dir = opts->runtime_dir,
                .unit_name = c->unit_name,
                .confine_path = opts->confine_path,
                .slice = c->in_slice ? c->slice_name : NULL,
                .bus_proxy_socket = c->bus_proxy.unit[0] ? c->bus_proxy.socket : NULL,
                .system_bus_proxy_socket = c->system_bus_proxy.unit[0] ? c->system_bus_proxy.socket : NULL,
                .broker_socket = c->broker ? broker_socket(c->broker) : NULL,
                .broker_bin = c->broker ? broker_bin(c->broker) : NULL,
        };
        /* The caller's terminal raw (when its input is relayed) before the command starts: in
         * the background, scudo stops here (SIGTTOU), as any program setting its terminal
         * would, and the command does not run until it is in the foreground. */
        if (c->pty) {
                /* The watcher (and scudo's crash handler) first: should scudo die from here on,
                 * the terminal is given back all the same. */
                r = watcher_guard_terminal(c->watcher_fd, opts->tui);
                if (r < 0)
                        return log_error_errno(r, "Failed to arm the unit watcher: %m");
                r = pty_relay_raw_terminal(c->pty);
                if (r < 0)
                        return log_error_errno(r, "Failed to set the terminal to raw mode: %m");
        }

        if (c->caller) {
                r = run_caller_before_start(c);
                if (r < 0)
                        return log_debug_errno(r, "the caller went away before the command started");
                if (r > 0) {
                        *ret_status = 128 + r;  /* as if the command had been interrupted */
                        return 1;
                }
        }

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *unit_error = NULL;
        r = build_unit(c, plan, &uctx, stdio, &unit_error, &m);
        if (r < 0 && unit_error)
                return log_error_errno(r, "%s; not running the command", unit_error);
        if (r < 0)
                return log_error_errno(r, "Failed to build the unit for '%s': %m", plan->exec_path);
        /* Not before scudo-bpfd's restrictions (and watch) are in place: fail closed. */
        r = run_helper_session_ready(c, plan);
        if (r < 0)
                return r;
        /* Interrupted while it got ready (Ctrl-C, a SIGTERM on a slow start): the command does
         * not start, and does not run on to its end with nobody told. */
        r = run_interrupted_before_start(c);
        if (r > 0) {
                *ret_status = 128 + r;
                return 1;
        }

        /* file times are the coarse clock's, which may lag the fine one by a tick */
        (void) clock_gettime(CLOCK_REALTIME_COARSE, &c->unit_start);
        /* should scudo be killed from here on, the watcher makes the end-of-run check */
        r = watcher_add_start_time(c->watcher_fd, &c->unit_start);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the unit watcher: %m");
        c->started = true;       /* from the call on, as far as scudo can tell */
        r = sd_bus_call_async(c->bus, NULL, m, on_start_reply, c, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to start the unit for '%s': %m", plan->exec_path);

        if (c->pty) {
                r = pty_relay_start(c->pty, c->event, run_suspend_key(c), c);
                if (r < 0)
                        return log_error_errno(r, "Failed to relay the terminal: %m");
        }
        run_notice_start(c, plan->log_target);
        return 0;
}

/* Phase 4: the terminal relayed, signals passed on, until the unit has ended. */
static int run_wait(RunContext *c) {
        /* Not sd_event_loop(): leaving it through sd_event_exit() would close the bus, and
         * the result is read from the bus afterwards. */
        while (!c->finished) {
                int r = sd_event_run(c->event, UINT64_MAX);
                if (r < 0)
                        return log_error_errno(r, "Lost the connection to the service manager: %m");
                if (sd_bus_is_open(c->bus) <= 0)
                        return log_error_errno(SYNTHETIC_ERRNO(ECONNRESET),
                                               "Lost the connection to the service manager");
        }
        return 0;
}

/* Phase 5: the terminal given back, the last reports, the exit status. */
static int run_finish(RunContext *c, const Plan *plan, int *ret_status) {
        int r;

        if (c->pty) {
                pty_relay_drain(c->pty);
                pty_relay_restore_terminal(c->pty);
        }
        tui_finish(c->tui);     /* the reports it showed, to stderr where they stay */
        /* The sandbox is over, and with it every caller of the broker's: their commands are
         * being stopped. */
        broker_stop(c->broker, 5 * 1000 * 1000);

        /* The last reports of refusals, then the slice can go. */
        if (c->net)
                (void) run_dispatch_reports(c);
        refusals_finish(c->refusals, c->net, &c->unit_start);
        run_notice_finish(c);

        /* What a full inotify queue may have hidden, and what came after the kill. */
        if (gitdir_watch_sweep(c->gitdir_watch) > 0)
                c->gitdir_refused = true;
        (void) run_check_persistence(c, plan);        /* what stays behind: persist-check.h */

        if (c->gitdir_refused)
                r = log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                    "The command was stopped: it planted something git would read in a "
                                    ".git, or replaced a .git symlink (see docs/policies.md, \"A .git to "
                                    "commit to\")");
        else if (c->start_error)
                r = log_error_errno(SYNTHETIC_ERRNO(EIO), "systemd refused to start the sandbox: %s",
                                    c->start_error);
        else
                r = run_collect_exit_status(c, plan, ret_status);

        /* The run is over and accounted for: the watcher can go once the slice and the proxies
         * are stopped, on the way out (run_context_done()). */
        c->accounted = true;
        return r;
}

int run_plan(const Plan *plan, const RunOptions *opts, int *ret_status) {
        _cleanup_(run_context_done) RunContext c = {
                .watcher_fd = -EBADF,
                .kill_whom = plan_private_pids(plan) ? "main" : "all",
        };
        _cleanup_strv_free_ char **manager_env = NULL;
        UnitStdio stdio;
        int r;

        r = run_prepare(&c, plan, opts, &stdio);
        if (r < 0)
                return r;
        r = run_start_helpers(&c, plan, opts, &manager_env);
        if (r < 0)
                return r;
        r = run_start_unit(&c, plan, opts, manager_env, &stdio, ret_status);
        if (r != 0)
                return MIN(r, 0);       /* > 0: not started, *ret_status set */
        r = run_wait(&c);
        if (r < 0)
                return r;
        return run_finish(&c, plan, ret_status);
}
