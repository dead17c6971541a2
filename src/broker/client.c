/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/client.h"
#include "broker/broker-protocol.h"
#include "broker/route.h"
#include "broker/wire.h"
#include "util/log.h"
#include "util/macro.h"
#include "plan/broker-paths.h"

static void socket_path(uid_t uid, char buf[static 108]) {
        (void) snprintf(buf, 108, "/run/user/%u/" BROKER_DIR_NAME "/" BROKER_SOCKET_NAME, (unsigned) uid);
}

bool broker_client_present(uid_t uid) {
        char path[108];
        struct stat st;

        socket_path(uid, path);
        /* Missing, or out of reach (an inaccessible /run/user/UID/scudo): no broker here. */
        return lstat(path, &st) >= 0 && S_ISSOCK(st.st_mode);
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGCONT };

static bool terminating(int sig) {
        return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

int broker_client_run(uid_t uid, char * const *argv, int *ret_status) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF, sfd = -EBADF;
        sigset_t mask, old;
        int interrupted = 0, r;

        if (!broker_client_present(uid))
                return BROKER_NONE;
        socket_path(uid, sa.sun_path);

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Cannot make a socket for the broker: %m");
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                r = negative_errno();
                /* The socket is this sandbox's own: refused, it is a sandbox of the agent's own
                 * inside this one that refuses sockets (Codex's, without network access). */
                return log_error_errno(r, "Cannot reach this sandbox's broker at %s: %m%s; '%s' was not run "
                                       "(where it runs is the broker's to decide)", sa.sun_path,
                                       r == -EPERM || r == -EACCES ?
                                       " (the agent's own sandbox refuses sockets: docs/agents.md)" : "",
                                       argv[0]);
        }

        /* From here on, signals are the command's: passed on, not acted on. */
        (void) sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                (void) sigaddset(&mask, forwarded[i]);
        (void) sigprocmask(SIG_BLOCK, &mask, &old);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                r = log_error_errno(negative_errno(), "Cannot watch signals: %m");
                goto finish;
        }

        r = broker_send_run(fd, argv, (const int[]) { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO });
        if (r == -E2BIG) {
                r = log_error_errno(r, "The command line of '%s' is longer than a delegated one may be "
                                    "(%u arguments, %u bytes); it was not run", argv[0], BROKER_ARGC_MAX,
                                    BROKER_ARGV_SIZE_MAX);
                goto finish;
        }
        if (r < 0) {
                r = log_error_errno(r, "Cannot send '%s' to this sandbox's broker: %m; it was not run",
                                    argv[0]);
                goto finish;
        }

        for (;;) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = log_error_errno(negative_errno(), "poll: %m");
                        goto finish;
                }
                if (p[1].revents) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                                int sig = (int) si.ssi_signo;
                                if (terminating(sig) && !interrupted)
                                        interrupted = sig;
                                (void) broker_send(fd, BROKER_MSG_SIGNAL, (uint32_t) sig);
                        }
                }
                if (!p[0].revents)
                        continue;

                uint8_t buf[sizeof(BrokerHeader) + 1];
                int fds[1];
                size_t n_fds = 0;
                uint32_t value = 0;
                ssize_t k = broker_receive(fd, buf, sizeof(buf), fds, 0, &n_fds);
                if (k <= 0) {
                        r = log_error_errno(k < 0 ? (int) k : SYNTHETIC_ERRNO(ECONNRESET),
                                            "This sandbox's broker went away before '%s' ended", argv[0]);
                        goto finish;
                }
                int type = broker_message_type(buf, (size_t) k, NULL);
                if (type < 0 || broker_parse_bare(buf, (size_t) k, type, &value, NULL) < 0) {
                        r = log_error_errno(
                                SYNTHETIC_ERRNO(EBADMSG),
                                "This sandbox's broker sent a malformed message; '%s' ended with it",
                                argv[0]);
                        goto finish;
                }
                switch (type) {
                case BROKER_MSG_IN_PLACE:
                        /* Interrupted while it was being decided: it does not start now. */
                        if (interrupted) {
                                *ret_status = 128 + interrupted;
                                r = BROKER_RAN;
                        } else
                                r = BROKER_RUN_IN_PLACE;
                        goto finish;
                case BROKER_MSG_EXIT:
                        *ret_status = (int) (value & 0xff);
                        r = BROKER_RAN;
                        goto finish;
                case BROKER_MSG_BUSY:
                        r = log_error_errno(
                                SYNTHETIC_ERRNO(EBUSY),
                                "This sandbox's broker runs %u delegated commands already; '%s' was not run",
                                value, argv[0]);
                        goto finish;
                case BROKER_MSG_SUSPEND:
                        /* The user typed the suspend character: this is the job the shell knows.
                         * Continued, it says so (SIGCONT, passed on above). */
                        (void) kill(getpid(), SIGSTOP);
                        break;
                default:
                        break;
                }
        }

finish:
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}

int broker_client_route(uid_t uid, const char *unit, char **argv, int *ret_status) {
        _cleanup_free_ char *taken = NULL;
        bool routed = false;
        char bin[64];

        (void) snprintf(bin, sizeof(bin), "/run/user/%u/" BROKER_DIR_NAME "/" BROKER_BIN_NAME,
                        (unsigned) uid);
        if (broker_route_name(bin, argv, &routed) < 0)
                return log_oom();
        int r = broker_client_run(uid, argv, ret_status);
        if (r != BROKER_RUN_IN_PLACE)
                return r;
        if (routed || broker_route_executable(bin, argv[0], &taken) >= 0)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "'%s' is delegated by %s, whose broker does not delegate this "
                                       "run of it (see the broker's report), and it cannot run inside "
                                       "this sandbox: its executable%s%s is scudo's here; it was not run",
                                       argv[0], unit, taken ? " " : "", taken ?: "");
        return BROKER_RUN_IN_PLACE;
}
