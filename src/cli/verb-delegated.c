/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* `scudo __broker-request`: one request to a sandbox's broker, served outside that sandbox.
 *
 * The broker (src/broker/server.c) starts this ahead of each connection, with exactly three
 * fds besides /dev/null on 0..2: the socket it hands the connection over on, which becomes
 * BROKER_CONNECTION_FD, what it knows of the sandbox (BROKER_CONTEXT_FD, a sealed memfd) and
 * its report pipe (BROKER_REPORT_FD). From
 * there on this is a run like one from a terminal: the caller's three streams become this
 * process's, its directory this process's, and the request goes the same Request → Plan →
 * unit way, with Request.delegation set so that the plan goes through the delegation step
 * (plan/plan-delegate.h). What the caller is told: IN_PLACE, or EXIT with the status (125
 * refused, the reason already on its stderr). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/context.h"
#include "broker/peer.h"
#include "broker/broker-protocol.h"
#include "broker/wire.h"
#include "cli/exit-status.h"
#include "cli/verb-run.h"
#include "cli/verbs.h"
#include "util/log.h"
#include "util/sandbox-unit.h"
#include "util/strv.h"

/* How long a caller may take to send its request once connected. */
#define REQUEST_TIMEOUT_SEC 5

/* One line to the broker's report pipe, whole (shorter than PIPE_BUF), control characters
 * left out of what came from the request. */
static void report(const char *unit, const char *what, char * const *argv, const char *why) {
        char line[1024];
        size_t n = 0;

        /* "delegation for UNIT: 'CMD ARGS' WHAT[: WHY]", cut to fit */
        int k = snprintf(line, sizeof(line), "delegation for %s: ", unit ? unit : "?");
        n = k > 0 ? (size_t) k : 0;
        if (argv) {
                line[n++] = '\'';
                STRV_FOREACH(a, argv) {
                        for (const char *c = *a; *c && n < sizeof(line) - 256; c++)
                                line[n++] = *c;
                        if (a[1] && n < sizeof(line) - 256)
                                line[n++] = ' ';
                }
                line[n++] = '\'';
        } else
                n += (size_t) snprintf(line + n, sizeof(line) - n, "a request");
        k = snprintf(line + n, sizeof(line) - n, " %s%s%s", what, why ? ": " : "", why ? why : "");
        n = k > 0 && (size_t) k < sizeof(line) - n ? n + (size_t) k : sizeof(line) - 2;
        /* no line breaks or escapes from the request reach the log */
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) line[i] < 0x20 || line[i] == 0x7f)
                        line[i] = '?';
        line[n++] = '\n';
        (void) write(BROKER_REPORT_FD, line, n);
}

/* The request being served, for log_to_broker(). */
static const char *served_unit;
static char * const *served_argv;

/* scudo's own lines short of an error (the profiles' and hooks' warnings, notices) in a
 * delegated run: the broker's report, where the caller's log.target says, never the caller's
 * stderr, which is the command's output an agent reads. Errors stay there: the caller must
 * learn why its command failed or was refused. */
static void log_to_broker(LogLevel level, const char *message) {
        report(served_unit, level == LOG_LEVEL_WARNING ? "warning" : "notice", served_argv, message);
}

/* What the caller sends while its command runs (unit/run.h, RunCaller). */
static int caller_receive(int fd) {
        uint8_t buf[sizeof(BrokerHeader) + 1];
        size_t n_fds = 0;
        uint32_t sig = 0;

        ssize_t k = broker_receive(fd, buf, sizeof(buf), NULL, 0, &n_fds);
        if (k == -EAGAIN || k == -EINTR)
                return 0;
        if (k <= 0)
                return k < 0 ? (int) k : -ECONNRESET;
        if (broker_parse_bare(buf, (size_t) k, BROKER_MSG_SIGNAL, &sig, NULL) < 0)
                return -EBADMSG;        /* a caller that says anything else is treated as gone */
        switch (sig) {
        case SIGINT: case SIGTERM: case SIGHUP: case SIGQUIT: case SIGWINCH: case SIGCONT:
                return (int) sig;
        default:
                return 0;               /* no other signal is passed on */
        }
}

static int caller_suspend(int fd) {
        return broker_send(fd, BROKER_MSG_SUSPEND, 0);
}

/* Refused before the run: the reason on the caller's stderr (when it sent one), the broker's
 * report, EXIT 125 to the caller. Returns -EPERM. */
static int refuse(int conn, int caller_stderr, const char *unit, char * const *argv, const char *why) {
        if (caller_stderr >= 0)
                dprintf(caller_stderr, "scudo: the delegation broker of %s refused the request: %s\n",
                        unit ? unit : "this sandbox", why);
        report(unit, "refused", argv, why);
        (void) broker_send(conn, BROKER_MSG_EXIT, EXIT_SCUDO_SETUP);
        return -EPERM;
}

static void close_fds(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                safe_close(fds[i]);
}

/* The context fd must be what the broker writes: a memfd sealed against every change. */
static bool context_is_sealed(int fd) {
        int seals = fcntl(fd, F_GET_SEALS);
        return seals >= 0 && (seals & (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)) ==
                                     (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
}

/* Started ahead, this waits for its connection: one fd on BROKER_CONNECTION_FD, which then
 * takes that fd's place. 1 with it in place, 0 when the broker ended first (nothing to serve,
 * nothing to say), or -errno. */
static int receive_connection(void) {
        uint8_t byte;
        int fd = -EBADF;
        size_t n = 0;

        ssize_t k;
        do
                k = broker_receive(BROKER_CONNECTION_FD, &byte, sizeof(byte), &fd, 1, &n);
        while (k == -EINTR);
        if (k == 0)
                return 0;
        if (k < 0 || n != 1 || k != 1) {
                if (n == 1)
                        safe_close(fd);
                return k < 0 ? (int) k : -EBADMSG;
        }
        if (dup2(fd, BROKER_CONNECTION_FD) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        safe_close(fd);
        return 1;
}

int verb_broker_request(int argc, char **argv) {
        _cleanup_(broker_context_done) BrokerContext ctx = {};
        _cleanup_(broker_peer_done) BrokerPeer peer = { .pidfd = -EBADF };
        _cleanup_(run_command_line_done) RunCommandLine args = {};
        _cleanup_free_ char *cwd = NULL;
        _cleanup_close_ int cwd_fd = -EBADF;
        char **req_argv = NULL;
        const int conn = BROKER_CONNECTION_FD;
        const char *why = NULL;
        char self_unit[SCUDO_UNIT_NAME_MAX];
        int fds[BROKER_RUN_FDS];
        size_t n_fds = 0;
        int r;

        if (argc != 1)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "__broker-request takes no arguments: it is "
                                       "started by a delegation broker");
        /* Only outside every sandbox, started by a broker: inside one, or without the broker's
         * fds, there is nothing to serve. */
        if (sandbox_unit_of(0, self_unit) != 0 || !context_is_sealed(BROKER_CONTEXT_FD))
                return log_error_errno(
                        SYNTHETIC_ERRNO(EPERM),
                        "__broker-request is the delegation broker's, and is not run by hand");
        r = broker_context_read(BROKER_CONTEXT_FD, &ctx);
        (void) close(BROKER_CONTEXT_FD);
        int got = receive_connection();
        if (got == 0)
                return 0;
        if (got < 0)
                return log_error_errno(got, "Cannot receive the connection from the broker: %m");
        if (r < 0) {
                (void) broker_send(conn, BROKER_MSG_EXIT, EXIT_SCUDO_SETUP);
                return log_error_errno(r, "Cannot read what the broker knows of its sandbox: %m");
        }

        /* The request: one message, whole, within the time given. */
        struct timeval tv = { .tv_sec = REQUEST_TIMEOUT_SEC };
        (void) setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        _cleanup_free_ uint8_t *buf = malloc(BROKER_RUN_SIZE_MAX + 1);
        if (!buf)
                return log_oom();
        ssize_t k = broker_receive(conn, buf, BROKER_RUN_SIZE_MAX + 1, fds, BROKER_RUN_FDS, &n_fds);
        if (k <= 0)
                return refuse(conn, -EBADF, ctx.unit, NULL,
                              k == 0        ? "the caller sent no request" :
                              k == -EBADMSG ? "a request with fds of another kind, or too many" :
                              k == -EAGAIN  ? "the caller sent no request in time" :
                                              "the request could not be read");
        int caller_stderr = n_fds == BROKER_RUN_FDS ? fds[2] : -EBADF;
        if ((size_t) k > BROKER_RUN_SIZE_MAX) {
                r = refuse(conn, caller_stderr, ctx.unit, NULL,
                           "the request is longer than a command line may be");
                close_fds(fds, n_fds);
                return r;
        }
        r = broker_parse_run(buf, (size_t) k, n_fds, &req_argv, &why);
        if (r < 0) {
                r = refuse(conn, caller_stderr, ctx.unit, NULL, r == -ENOMEM ? "out of memory" : why);
                close_fds(fds, n_fds);
                return r;
        }
        args.request.argv = req_argv;
        (void) setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval) {}, sizeof(struct timeval));

        /* Who asks, from where: the kernel's word, never the request's. */
        r = broker_peer_check(conn, ctx.unit, &peer, &why);
        if (r < 0) {
                r = refuse(conn, caller_stderr, ctx.unit, req_argv, r == -EPERM ? why : strerror(-r));
                close_fds(fds, n_fds);
                return r;
        }
        r = broker_peer_cwd(&peer, &cwd_fd, &cwd);
        if (r < 0) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m,
                             "the working directory %s is not the very same directory outside the sandbox "
                             "(a private /tmp, a hidden or replaced directory, a symlink on the way)",
                             cwd ? cwd : "(unknown)") < 0)
                        m = NULL;
                r = refuse(conn, caller_stderr, ctx.unit, req_argv, m ? m : "bad working directory");
                close_fds(fds, n_fds);
                return r;
        }
        if (fchdir(cwd_fd) < 0) {
                r = refuse(conn, caller_stderr, ctx.unit, req_argv, "cannot enter the working directory");
                close_fds(fds, n_fds);
                return r;
        }
        /* PWD as the kernel says, not as the broker's environment did. */
        (void) setenv("PWD", cwd, 1);

        /* The caller's streams are this run's from here on: scudo's own messages (refusals
         * among them) reach the caller's stderr. */
        for (int i = 0; i < (int) BROKER_RUN_FDS; i++) {
                if (dup2(fds[i], i) < 0) {
                        r = refuse(conn, caller_stderr, ctx.unit, req_argv,
                                   "cannot take over the caller's streams");
                        close_fds(fds, n_fds);
                        return r;
                }
                safe_close(fds[i]);
        }

        served_unit = ctx.unit;
        served_argv = req_argv;
        log_set_sink(log_to_broker);

        RunCaller caller = { .fd = conn, .receive = caller_receive, .suspend = caller_suspend };
        args.run.caller = &caller;
        args.request.delegation = &ctx.delegation;
        int status = exit_status_of_verb(verb_run(&args));
        log_set_sink(NULL);

        if (args.in_place) {
                report(ctx.unit, "runs in place", req_argv, NULL);
                (void) broker_send(conn, BROKER_MSG_IN_PLACE, 0);
                return 0;
        }
        if (args.refusal)
                report(ctx.unit, "refused", req_argv, args.refusal);
        else {
                char what[64];
                (void) snprintf(what, sizeof(what), "delegated, exit status %d", status);
                report(ctx.unit, what, req_argv, NULL);
        }
        (void) broker_send(conn, BROKER_MSG_EXIT, (uint32_t) (status & 0xff));
        return status;
}
