/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* One run, start to end: request → policy (plan) → unit → wait. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "broker/client.h"
#include "broker/broker-protocol.h"
#include "broker/route.h"
#include "plan/broker-paths.h"
#include "config.h"
#include "plan/plan.h"
#include "plan/unit-properties.h"
#include "util/path-util.h"
#include "util/scudo-programs.h"
#include "policy/policy.h"
#include "cli/exit-status.h"
#include "cli/policy-error.h"
#include "run-confirm.h"
#include "run-options.h"
#include "unit/properties.h"
#include "run/run.h"
#include "util/log.h"
#include "util/strv.h"
#include "verb-run.h"
#include "verbs.h"

/* An unprivileged user namespace is what PrivateUsers=yes needs; without it the sandbox would
 * fail to start, and the message from systemd would not say why. */
static bool userns_available(void) {
        char buf[32];
        FILE *f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "re");
        if (f) {
                bool ok = fgets(buf, sizeof(buf), f) && buf[0] != '0';
                fclose(f);
                if (!ok)
                        return false;
        }
        f = fopen("/proc/sys/user/max_user_namespaces", "re");
        if (f) {
                bool ok = fgets(buf, sizeof(buf), f) && strtol(buf, NULL, 10) > 0;
                fclose(f);
                return ok;
        }
        return true;
}

/* What only a run from a terminal can be asked for: with a broker, the command is the broker's
 * to run or not. */
static const char *local_option(const RunCommandLine *args) {
        if (args->dry_run)
                return "--dry-run";
        if (args->run.force_pty || args->run.no_pty)
                return "--pty / --no-pty";
        if (args->run.tui)
                return "--tui";
        if (args->run.report_json)
                return "--report-json";
        return NULL;
}

/* Executes the file request_resolve_command() checked, as scudo-confine does in a unit: a
 * binary through the descriptor held since, a script ("#!": its interpreter needs a name) by its
 * name once it is found to be still that file. Returns a negative errno, reported. */
static int exec_checked_in_place(const Request *req) {
        char fdpath[32], head[2];
        struct stat st;

        (void) snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", req->exec_fd);
        _cleanup_close_ int rd = open(fdpath, O_RDONLY | O_CLOEXEC);
        struct utsname u;
        unsigned major = 0, minor = 0;
        /* before Linux 6.14, a process executed from a descriptor is named after its number */
        bool keeps_name = uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
                (major > 6 || (major == 6 && minor >= 14));
        if (!keeps_name || (rd >= 0 && pread(rd, head, 2, 0) == 2 && head[0] == '#' && head[1] == '!')) {
                if (stat(req->exec_path, &st) < 0 || st.st_dev != req->exec_dev ||
                    st.st_ino != req->exec_ino)
                        return log_error_errno(SYNTHETIC_ERRNO(ESTALE), "%s was replaced since it was "
                                               "checked; it was not run", req->exec_path);
                execv(req->exec_path, req->argv);
        } else
                (void) syscall(SYS_execveat, req->exec_fd, "", req->argv, environ, AT_EMPTY_PATH);
        return log_error_errno(negative_errno(), "Cannot execute '%s': %m", req->exec_path);
}

/* Runs the command in place, with the sandbox's access: found on PATH (never scudo or
 * scudo-route) and executed as checked. */
static int run_in_place(RunCommandLine *args) {
        int r = request_resolve_command(&args->request);
        if (r < 0)
                return exit_status_of_lookup(r);
        if (args->dry_run) {
                printf("nested in %s: would run %s in place\n", args->request.enclosing_unit,
                       args->request.exec_path);
                return 0;
        }
        /* (A path that is scudo or scudo-route here, a routing link or an executable bound
         * over, would start this again: request_resolve_command() skips them.) */
        r = exec_checked_in_place(&args->request);
        return r == -ENOENT ? EXIT_SCUDO_NOTFOUND : r == -ESTALE ? EXIT_SCUDO_SETUP : EXIT_SCUDO_NOEXEC;
}

/* Inside a sandbox there is no service manager to ask (its bus is hidden), and the command
 * is confined already. In a sandbox that delegates, its broker decides where the command runs
 * (broker/client.h); otherwise, and when the broker says so, it runs in place, with the
 * sandbox's access. */
static int run_nested(RunCommandLine *args) {
        int r;

        const char *opt = request_widening_option(&args->request);
        if (opt)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "%s is refused inside a scudo sandbox (%s): the sandbox around this "
                                       "command decides what it may do",
                                       opt, args->request.enclosing_unit);
        if (broker_client_present(args->request.uid)) {
                int status = 0;
                opt = local_option(args);
                if (opt)
                        return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                               "%s is not available inside a sandbox that delegates (%s): "
                                               "where a command runs is its broker's to decide",
                                               opt, args->request.enclosing_unit);
                r = broker_client_route(args->request.uid, args->request.enclosing_unit, args->request.argv,
                                        &status);
                if (r < 0)
                        return r;
                if (r == BROKER_RAN)
                        return status;
        }
        return run_in_place(args);
}

int verb_in_place(int argc, char **argv) {
        _cleanup_(run_command_line_done) RunCommandLine args = {};
        if (argc < 2)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "__in-place takes a command: it is started "
                                       "by scudo-route inside a sandbox");
        /* argv is the command's, as through a link */
        args.request.via_link = true;
        args.request.argv = strv_copy(argv + 1);
        if (!args.request.argv)
                return log_oom();
        int r = request_from_process(&args.request);
        if (r < 0)
                return r;
        /* Outside, a command runs confined or not at all. Inside, this gives nothing the sandbox
         * has not: the command runs with its access, and the routed executables stay skipped. */
        if (!args.request.nested)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM), "__in-place is scudo-route's, inside a "
                                       "sandbox; outside one a command runs confined");
        return run_in_place(&args);
}

/* A one-run path that does not exist is skipped by systemd (a bind with nothing to bind, a
 * deny with nothing to deny): say so, since the user asked for it by name. The policy engine
 * expands "~" and "${...}" (a quoted '~' is the home directory, not a file named "~"): look
 * at what "~" stands for, and leave variables alone rather than call them missing while they
 * are granted. */
static void warn_missing_paths(const Request *req) {
        char **lists[] = { req->fs_write, req->fs_read, req->fs_hide, req->fs_deny };
        const char *names[] = { "--fs-write", "--fs-read", "--fs-hide", "--fs-deny" };
        const char *home = getenv("HOME");
        for (size_t i = 0; i < ELEMENTSOF(lists); i++)
                STRV_FOREACH(p, lists[i]) {
                        _cleanup_free_ char *expanded = NULL;
                        const char *path = *p;
                        if (path[0] == '~' && (path[1] == 0 || path[1] == '/')) {
                                if (!home || asprintf(&expanded, "%s%s", home, path + 1) < 0)
                                        continue;
                                path = expanded;
                        } else if (path[0] != '/')
                                continue;
                        if (access(path, F_OK) < 0 && errno == ENOENT)
                                log_warning("%s '%s' does not exist, ignoring", names[i], *p);
                }
}

int verb_run(RunCommandLine *args) {
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = request_from_process(&args->request);
        if (r < 0)
                return r;
        if (args->request.nested)
                return run_nested(args);
        r = request_resolve_command(&args->request);
        if (r < 0)
                return exit_status_of_lookup(r);
        warn_missing_paths(&args->request);

        _cleanup_strv_free_ char **warnings = NULL;
        r = policy_resolve(&args->request, &plan, &warnings, &error);
        STRV_FOREACH(w, warnings)
                log_warning("%s", *w);
        if (r >= 0 && !args->request.delegation)
                r = run_confirm(plan, &args->request, &error);
        if (r < 0) {
                if (args->request.delegation)
                        args->refusal = error ? strdup(error) : strdup(strerror(-r));
                return log_policy_error(r, error, "Failed to resolve the profiles for '%s': %m",
                                        args->request.command_name);
        }
        if (plan->delegation_in_place) {
                args->in_place = true;
                return 0;
        }

        if (args->dry_run) {
                /* explain's printer: one home for what a run gets and would make */
                _cleanup_free_ char *text = NULL;
                r = policy_print_plan(plan, &text, &error);
                if (r < 0)
                        return log_policy_error(r, error, "Cannot print the plan for '%s': %m",
                                                args->request.command_name);
                fputs(text, stdout);
                return 0;
        }

        if (!userns_available())
                return log_error_errno(
                        SYNTHETIC_ERRNO(EPERM),
                        "unprivileged user namespaces are disabled on this system; scudo's sandbox needs "
                        "them (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0)");

        _cleanup_free_ char *confine = scudo_program_path(SCUDO_CONFINE_NAME);
        if (!confine)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "scudo-confine, which runs before every sandboxed command, is not "
                                       "installed next to scudo nor in " SCUDO_LIBEXECDIR
                                       "; the command was not run");
        args->run.runtime_dir = args->request.runtime_dir;
        args->run.confine_path = confine;
        int status = 0;
        r = run_plan(plan, &args->run, &status);
        return r < 0 ? exit_status_of_run(r) : status;
}
