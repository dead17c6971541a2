/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/context.h"
#include "broker/broker-protocol.h"
#include "broker/route.h"
#include "broker/server.h"
#include "broker/wire.h"
#include "unit/watcher.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/scudo-programs.h"
#include "util/sandbox-unit.h"
#include "util/strv.h"

extern char **environ;

#define REPORT_LINE_MAX 4096U

typedef struct Child {
        pid_t pid;
        int pidfd;
        sd_event_source *source;
} Child;

struct Broker {
        sd_event *event;
        ReportFeed *feed;
        char *dir;                      /* /run/user/UID/scudo/ID */
        char *socket;                   /* DIR/broker */
        char *bin;                      /* DIR/bin */
        char *scudo;                    /* scudo itself, what the links lead to */
        char *unit;
        int listen_fd;
        sd_event_source *listen_source;
        int context_fd;
        int report_read, report_write; /* the pipe each request's scudo reports on */
        sd_event_source *report_source;
        char report_buf[REPORT_LINE_MAX];
        size_t report_len;
        char **environ;                 /* what the broker was started with, for each request */
        Child children[BROKER_RUNNING_MAX];
        unsigned n_children;
        /* The next request's scudo, started ahead (start_spare()): its start is off the path of
         * the request it serves. spare_fd: the broker's end of the socket it is handed the
         * connection on. */
        Child spare;
        int spare_fd;
};

void broker_dir_remove(const char *dir) {
        char path[PATH_MAX];

        if (snprintf(path, sizeof(path), "%s/" BROKER_BIN_NAME, dir) < (int) sizeof(path))
                broker_route_remove(path);
        if (snprintf(path, sizeof(path), "%s/" BROKER_SOCKET_NAME, dir) < (int) sizeof(path))
                (void) unlink(path);
        (void) rmdir(dir);
}

static void report(Broker *b, const char *line) {
        if (b->feed)
                report_feed_message(b->feed, "delegation", line);
        else
                log_info("%s", line);
}

static void child_forget(Broker *b, Child *c) {
        sd_event_source_disable_unref(c->source);
        safe_close(c->pidfd);
        *c = b->children[--b->n_children];
        b->children[b->n_children] = (Child) { .pidfd = -EBADF };
}

static void spare_forget(Broker *b) {
        b->spare.source = sd_event_source_disable_unref(b->spare.source);
        b->spare.pidfd = safe_close(b->spare.pidfd);
        b->spare.pid = 0;
        b->spare_fd = safe_close(b->spare_fd);
}

/* A spare that is not there any more (it fails before its request comes) is not waited for. */
static void spare_end(Broker *b) {
        if (b->spare.pid > 0) {
                /* (not reaped yet, so the pid is still this child's) */
                (void) kill(b->spare.pid, SIGKILL);
                (void) waitpid(b->spare.pid, NULL, 0);
        }
        spare_forget(b);
}

static int on_child_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Broker *b = userdata;

        if (b->spare.pid > 0 && b->spare.pidfd == fd) {
                (void) waitpid(b->spare.pid, NULL, WNOHANG);
                spare_forget(b);
                return 0;
        }
        for (unsigned i = 0; i < b->n_children; i++)
                if (b->children[i].pidfd == fd) {
                        (void) waitpid(b->children[i].pid, NULL, WNOHANG);
                        child_forget(b, &b->children[i]);
                        break;
                }
        return 0;
}

/* In the child between fork() and exec(): async-signal-safe calls only (the report feed's
 * writer thread may hold any lock). */
_noreturn_ static void exec_request(Broker *b, int conn, char *const *argv) {
        sigset_t none;
        int fds[3] = { conn, b->context_fd, b->report_write };

        (void) sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) signal(SIGPIPE, SIG_DFL);
        /* A session of its own: no terminal signals of the broker's; the caller's terminal is
         * only ever one of its fds. */
        (void) setsid();
        /* Out of the way of 0..5 first, then in place. */
        for (int i = 0; i < 3; i++)
                if ((fds[i] = fcntl(fds[i], F_DUPFD, 10)) < 0)
                        _exit(EXIT_FAILURE);
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                _exit(EXIT_FAILURE);
        if (dup2(fds[0], BROKER_CONNECTION_FD) < 0 || dup2(fds[1], BROKER_CONTEXT_FD) < 0 ||
            dup2(fds[2], BROKER_REPORT_FD) < 0)
                _exit(EXIT_FAILURE);
        (void) close_range(BROKER_REPORT_FD + 1, ~0U, 0);
        execve("/proc/self/exe", argv, b->environ);
        _exit(EXIT_FAILURE);
}

/* Starts the scudo that serves the next request, before there is one: what a process start
 * costs (fork, exec, the dynamic linker, reading the context) is then paid while the broker
 * waits, not by the request. It gets the connection when one comes (hand_over()), on a socket
 * of its own (BROKER_CONNECTION_FD), and ends when that socket does. */
static int start_spare(Broker *b) {
        static char *const argv[] = { (char *) "scudo", (char *) "__broker-request", NULL };
        int sv[2];

        if (b->spare.pid > 0)
                return 0;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                safe_close(sv[0]);
                safe_close(sv[1]);
                return r;
        }
        if (pid == 0)
                exec_request(b, sv[1], argv);
        safe_close(sv[1]);
        b->spare = (Child) { .pid = pid, .pidfd = (int) pidfd_open(pid, 0) };
        b->spare_fd = sv[0];
        if (b->spare.pidfd < 0 ||
            sd_event_add_io(b->event, &b->spare.source, b->spare.pidfd, EPOLLIN, on_child_exit, b) < 0) {
                /* Unwatched, it would outlive the sandbox's end unseen: not started. */
                spare_end(b);
                return -ENOMEM;
        }
        return 0;
}

/* The connection, to the spare, which becomes the scudo serving it. */
static int hand_over(Broker *b, int conn) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = (char[]) { 'C' }, .iov_len = 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                             .msg_controllen = sizeof(control.buf) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &conn, sizeof(int));
        if (sendmsg(b->spare_fd, &mh, MSG_NOSIGNAL) < 0)
                return negative_errno();
        b->children[b->n_children++] = b->spare;
        b->spare = (Child) { .pidfd = -EBADF };
        b->spare_fd = safe_close(b->spare_fd);
        return 0;
}

static int start_request(Broker *b, int conn) {
        int r = start_spare(b);
        if (r >= 0)
                r = hand_over(b, conn);
        if (r < 0 && b->spare.pid > 0) {
                /* A spare gone since (it ended on its own): once more, with one started now. */
                spare_end(b);
                r = start_spare(b);
                if (r >= 0)
                        r = hand_over(b, conn);
        }
        if (r < 0)
                return r;
        /* The next one's, while this one is served: not fatal, the next request starts it. */
        r = start_spare(b);
        if (r < 0)
                log_debug("Cannot start the scudo for the next delegated request ahead: %s", strerror(-r));
        return 0;
}

static int on_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Broker *b = userdata;
        char line[256];

        _cleanup_close_ int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
                return 0;
        if (b->n_children >= BROKER_RUNNING_MAX) {
                (void) broker_send(conn, BROKER_MSG_BUSY, BROKER_RUNNING_MAX);
                (void) snprintf(line, sizeof(line), "refused a request of %s: %u delegated commands run "
                                "already", b->unit, BROKER_RUNNING_MAX);
                report(b, line);
                return 0;
        }
        int r = start_request(b, conn);
        if (r < 0) {
                (void) broker_send(conn, BROKER_MSG_EXIT, 125);
                (void) snprintf(line, sizeof(line), "could not serve a request of %s: %s", b->unit,
                                strerror(-r));
                report(b, line);
        }
        return 0;
}

/* Lines from the scudos serving requests, each written whole (shorter than PIPE_BUF). */
static int on_report(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Broker *b = userdata;

        for (;;) {
                ssize_t k =
                        read(fd, b->report_buf + b->report_len, sizeof(b->report_buf) - 1 - b->report_len);
                if (k <= 0)
                        break;
                b->report_len += (size_t) k;
                char *start = b->report_buf, *nl;
                while ((nl = memchr(start, '\n', b->report_len - (size_t) (start - b->report_buf)))) {
                        *nl = 0;
                        /* Escaped by the writer; a control character still left is shown as '?'. */
                        for (char *c = start; c < nl; c++)
                                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                                        *c = '?';
                        if (nl > start)
                                report(b, start);
                        start = nl + 1;
                }
                size_t left = b->report_len - (size_t) (start - b->report_buf);
                if (left == sizeof(b->report_buf) - 1)
                        left = 0;       /* one line too long: dropped */
                memmove(b->report_buf, start, left);
                b->report_len = left;
        }
        return 0;
}

/* /run/user/UID/scudo: made when missing, and otherwise a directory of ours, no symlink. */
static int make_root(const char *root) {
        struct stat st;

        if (mkdir(root, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        if (lstat(root, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode) || st.st_uid != getuid())
                return -EPERM;
        if ((st.st_mode & 07777) != 0700 && chmod(root, 0700) < 0)
                return negative_errno();
        return 0;
}

static int listen_on(Broker *b) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (strlen(b->socket) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, b->socket);
        b->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (b->listen_fd < 0)
                return negative_errno();
        if (bind(b->listen_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        if (chmod(b->socket, 0600) < 0 || listen(b->listen_fd, 16) < 0)
                return negative_errno();
        return sd_event_add_io(b->event, &b->listen_source, b->listen_fd, EPOLLIN, on_connection, b);
}

/* Which command each executable scudo takes the place of inside stands for: the name of the
 * path on PATH that leads there (plan-harden.h). */
static int route_map(const Plan *plan, char ***ret) {
        for (size_t i = 0; i < plan->n_paths; i++) {
                const PlanPath *e = &plan->paths[i];
                if (e->source != PATH_SOURCE_BROKER_ROUTE)
                        continue;
                const char *from = e->given ?: e->path, *slash = strrchr(from, '/');
                int r = strv_extend(ret, e->path);
                if (r >= 0)
                        r = strv_extend(ret, slash ? slash + 1 : from);
                if (r < 0)
                        return r;
        }
        return 0;
}

int broker_start(const Plan *plan, const char *unit, sd_event *event, ReportFeed *feed, int watcher_fd,
                 Broker **ret) {
        _cleanup_free_ char *root = NULL;
        char line[512];
        int r, p[2];

        Broker *b = calloc(1, sizeof(Broker));
        if (!b)
                return log_oom();
        *b = (Broker) {
                .event = sd_event_ref(event),
                .feed = feed,
                .listen_fd = -EBADF,
                .context_fd = -EBADF,
                .report_read = -EBADF,
                .report_write = -EBADF,
                .spare = { .pidfd = -EBADF },
                .spare_fd = -EBADF,
        };
        for (unsigned i = 0; i < BROKER_RUNNING_MAX; i++)
                b->children[i].pidfd = -EBADF;
        *ret = b;

        size_t ul = strlen(unit);
        if (!sandbox_unit_name_is_valid(unit, ul))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Not a sandbox's unit: %s", unit);
        b->unit = strdup(unit);
        b->scudo = realpath("/proc/self/exe", NULL);
        b->environ = strv_copy(environ);
        if (!b->unit || !b->scudo || !b->environ || plan_broker_root(getuid(), &root) < 0)
                return log_oom();
        /* The sandbox's own id names the directory. */
        if (asprintf(&b->dir, "%s/%.*s", root,
                     (int) (ul - strlen(SCUDO_UNIT_PREFIX) - strlen(SCUDO_UNIT_SUFFIX)),
                     unit + strlen(SCUDO_UNIT_PREFIX)) < 0 ||
            asprintf(&b->socket, "%s/" BROKER_SOCKET_NAME, b->dir) < 0 ||
            asprintf(&b->bin, "%s/" BROKER_BIN_NAME, b->dir) < 0)
                return log_oom();

        r = make_root(root);
        if (r < 0)
                return log_error_errno(r, "Cannot use %s for the delegation broker: %m", root);
        r = watcher_add_broker(watcher_fd, b->dir);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the unit watcher: %m");
        if (mkdir(b->dir, 0700) < 0)
                return log_error_errno(negative_errno(), "Cannot make the broker's directory %s: %m",
                                       b->dir);

        _cleanup_strv_free_ char **map = NULL;
        _cleanup_free_ char *route = scudo_route_path();
        r = route ? route_map(plan, &map) : -ENOMEM;
        if (r >= 0)
                r = broker_route_links(b->bin, plan->delegate_commands, route, map);
        if (r < 0)
                return log_error_errno(
                        r, "Cannot make the links that route delegated commands to scudo-route in %s: %m",
                        b->bin);
        if ((size_t) r < strv_length(plan->delegate_commands))
                log_warning("%zu of the commands the delegated profiles match are not routed to scudo "
                            "inside the sandbox (more than %u, or not a file name)",
                            strv_length(plan->delegate_commands) - (size_t) r, BROKER_ROUTES_MAX);

        r = broker_context_write(unit, plan, &b->context_fd);
        if (r < 0)
                return log_error_errno(r, "Cannot write what the broker knows of the sandbox: %m");
        if (pipe2(p, O_CLOEXEC) < 0)
                return log_error_errno(negative_errno(), "Cannot make the broker's report pipe: %m");
        b->report_read = p[0];
        b->report_write = p[1];
        (void) fcntl(b->report_read, F_SETFL, O_NONBLOCK);
        r = sd_event_add_io(event, &b->report_source, b->report_read, EPOLLIN, on_report, b);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the broker's report pipe: %m");

        r = listen_on(b);
        if (r < 0)
                return log_error_errno(r, "Cannot listen on the broker's socket %s: %m", b->socket);
        r = start_spare(b);
        if (r < 0)
                log_debug("Cannot start the scudo for the first delegated request ahead: %s", strerror(-r));

        char names[256] = "";
        STRV_FOREACH(n, plan->delegate) {
                size_t l = strlen(names);
                (void) snprintf(names + l, sizeof(names) - l, "%s%s", l ? ", " : "", *n);
        }
        (void) snprintf(line, sizeof(line), "broker of %s: delegates %s (%d commands routed)", unit, names,
                        (int) strv_length(plan->delegate_commands));
        log_debug("%s", line);
        return 0;
}

const char *broker_socket(const Broker *b) {
        return b->socket;
}

const char *broker_bin(const Broker *b) {
        return b->bin;
}

static uint64_t now_usec(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

void broker_stop(Broker *b, uint64_t timeout_usec) {
        if (!b)
                return;
        b->listen_source = sd_event_source_disable_unref(b->listen_source);
        b->listen_fd = safe_close(b->listen_fd);
        if (b->dir)
                broker_dir_remove(b->dir);
        /* It serves nothing yet: nothing of its own to stop. */
        spare_end(b);

        uint64_t deadline = now_usec() + timeout_usec;
        while (b->n_children > 0 && now_usec() < deadline)
                if (sd_event_run(b->event, deadline - now_usec()) < 0)
                        break;
        for (unsigned i = 0; i < b->n_children; i++) {
                (void) pidfd_send_signal(b->children[i].pidfd, SIGKILL, NULL, 0);
                (void) waitpid(b->children[i].pid, NULL, 0);
        }
        while (b->n_children > 0)
                child_forget(b, &b->children[0]);
        /* What they reported last. */
        if (b->report_source)
                (void) on_report(b->report_source, b->report_read, EPOLLIN, b);
}

Broker *broker_free(Broker *b) {
        if (!b)
                return NULL;
        broker_stop(b, 0);
        sd_event_source_disable_unref(b->report_source);
        safe_close(b->report_read);
        safe_close(b->report_write);
        safe_close(b->context_fd);
        sd_event_unref(b->event);
        free(b->dir);
        free(b->socket);
        free(b->bin);
        free(b->scudo);
        free(b->unit);
        strv_free(b->environ);
        free(b);
        return NULL;
}
