/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* scudo-bpfd: the one privileged part of scudo.
 *
 * It loads the network filter programs once, and for each request from a user restricts a
 * cgroup that user owns: it fills the rule maps, starts a DNS proxy for the cgroup,
 * attaches the programs and reports refusals back over the request's connection. It can
 * only add restrictions: nothing in the protocol removes or widens one, and a cgroup that
 * is restricted already is refused. Normally socket-activated by scudo-bpfd.socket; exits
 * once idle. */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "bpfd/dns-proxy.h"
#include "bpfd/manager.h"
#include "config.h"
#include "util/log.h"
#include "util/macro.h"

static const char *arg_listen = NULL;
static long arg_exit_idle_sec = -1;     /* -1: 30 s when socket-activated, never otherwise */
static unsigned arg_dns_grace_sec = 30;
static const char *arg_resolv_conf = "/etc/resolv.conf";

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "scudo's privileged network filter helper.\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "     --listen=PATH          Listen on PATH when not socket-activated\n"
               "                            (default " SCUDO_BPFD_SOCKET ")\n"
               "     --exit-idle-time=SEC   Exit after SEC seconds without sandboxes or clients\n"
               "                            (0: never; default 30 when socket-activated)\n"
               "     --dns-grace=SEC        Keep addresses from DNS answers SEC seconds past\n"
               "                            their TTL (default 30)\n"
               "     --resolv-conf=PATH     Where to find the resolvers (default /etc/resolv.conf)\n"
               "  -v --verbose              Log each refusal and request\n",
               program_invocation_short_name);
}

static int parse_uint(const char *s, long max, long *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || end == s || *end || v < 0 || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_LISTEN, ARG_EXIT_IDLE, ARG_DNS_GRACE, ARG_RESOLV_CONF };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "listen", required_argument, NULL, ARG_LISTEN },
                { "exit-idle-time", required_argument, NULL, ARG_EXIT_IDLE },
                { "dns-grace", required_argument, NULL, ARG_DNS_GRACE },
                { "resolv-conf", required_argument, NULL, ARG_RESOLV_CONF },
                { "verbose", no_argument, NULL, 'v' },
                {}
        };
        long v;
        int c;

        while ((c = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("scudo-bpfd %s\n", SCUDO_VERSION);
                        return 0;
                case ARG_LISTEN:
                        arg_listen = optarg;
                        break;
                case ARG_EXIT_IDLE:
                        if (parse_uint(optarg, 86400L * 365, &arg_exit_idle_sec) < 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "bad --exit-idle-time '%s'", optarg);
                        break;
                case ARG_DNS_GRACE:
                        if (parse_uint(optarg, 86400L, &v) < 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "bad --dns-grace '%s'", optarg);
                        arg_dns_grace_sec = (unsigned) v;
                        break;
                case ARG_RESOLV_CONF:
                        arg_resolv_conf = optarg;
                        break;
                case 'v':
                        log_set_max_level(LOG_LEVEL_INFO);
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "unexpected argument '%s'", argv[optind]);
        return 1;
}

static int on_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->n_clients == 0 && m->n_cgroups == 0) {
                log_info("idle, exiting");
                return sd_event_exit(m->event, 0);
        }
        return 0;
}

void manager_check_idle(Manager *m) {
        bool idle = m->n_clients == 0 && m->n_cgroups == 0;

        if (m->exit_idle_usec == 0)
                return;
        if (!idle) {
                if (m->idle_timer)
                        (void) sd_event_source_set_enabled(m->idle_timer, SD_EVENT_OFF);
                return;
        }
        if (!m->idle_timer) {
                (void) sd_event_add_time_relative(m->event, &m->idle_timer, CLOCK_MONOTONIC,
                                                  m->exit_idle_usec, 0, on_idle, m);
                return;
        }
        (void) sd_event_source_set_time_relative(m->idle_timer, m->exit_idle_usec);
        (void) sd_event_source_set_enabled(m->idle_timer, SD_EVENT_ONESHOT);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int cfd;

        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (cfd < 0)
                return 0;
        (void) client_new(m, cfd);
        return 0;
}

static int on_bpf_event(const struct net_event *e, void *userdata) {
        Manager *m = userdata;
        FilteredCgroup *fc = filtered_cgroup_find(m, e->sid);
        BpfdEvent out = {
                .header = {
                        .magic = BPFD_MAGIC,
                        .version = BPFD_VERSION,
                        .type = BPFD_MSG_EVENT,
                        .size = sizeof(BpfdEvent),
                },
                .kind = e->kind,
                .pid = e->pid,
                .port = e->port,
                .protocol = e->protocol,
                .family = e->family,
                .sock_type = e->sock_type,
        };

        if (!fc)
                return 0;
        memcpy(out.addr, e->addr, sizeof(out.addr));
        memcpy(out.comm, e->comm, sizeof(out.comm));
        out.comm[sizeof(out.comm) - 1] = 0;
        filtered_cgroup_report(fc, &out);
        return 0;
}

static int on_bpf_dns(const struct net_dns_event *e, void *userdata) {
        Manager *m = userdata;
        FilteredCgroup *fc = filtered_cgroup_find(m, e->sid);

        if (fc && fc->proxy && fc->dns_direct)
                dns_proxy_handle_dropped(fc->proxy, e);
        return 0;
}

static int on_file_event(const struct file_event *e, void *userdata) {
        Manager *m = userdata;
        FilteredCgroup *fc = filtered_cgroup_find(m, e->sid);

        if (fc && fc->files)
                filtered_cgroup_report_file(fc, e);
        return 0;
}

static int on_file_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        (void) file_reporter_consume(m->files);
        return 0;
}

/* File reports are no restriction: a helper that cannot give them still filters networks,
 * and tells each client that asks for them why it cannot. */
static void setup_file_reporter(Manager *m) {
        int k;

        k = file_reporter_new(on_file_event, m, &m->files);
        if (k == -EOPNOTSUPP) {
                m->files_why = "file refusals are reported on x86-64 only";
                return;
        }
        if (k >= 0)
                k = sd_event_add_io(m->event, &m->files_io, file_reporter_fd(m->files), EPOLLIN,
                                    on_file_events, m);
        if (k < 0) {
                log_warning_errno(k, "cannot load the file refusal reporter (CAP_BPF and CAP_PERFMON "
                                  "needed, and a kernel with BTF): %m; file refusals are not reported");
                m->files = file_reporter_free(m->files);
                m->files_io = sd_event_source_disable_unref(m->files_io);
                m->files_why = "the helper cannot load its file refusal reporter (see its journal)";
        }
}

static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        (void) filter_events_consume(m->filter);
        return 0;
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        uint8_t buf[4096];

        /* Which directory went does not matter: check them all. */
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
        return manager_sweep(m);
}

static int on_sweep(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) manager_sweep(m);
        return sd_event_source_set_time_relative(s, BPFD_SWEEP_USEC);
}

static int listen_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -EINVAL;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        (void) unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        /* Anyone may ask; what they may ask for is checked per request. */
        if (chmod(path, 0666) < 0 || listen(fd, 64) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

static void manager_done(Manager *m) {
        while (m->clients)
                client_free(m->clients);
        /* Filtered cgroups are dropped without detaching anything: the attachments (and the
         * maps they hold) stay with their cgroups, so a helper that stops fails closed. */
        while (m->cgroups) {
                FilteredCgroup *fc = m->cgroups;

                m->cgroups = fc->next;
                m->n_cgroups--;
                dns_proxy_free(fc->proxy);
                free(fc->names);
                free(fc->path);
                free(fc);
        }
        sd_event_source_disable_unref(m->listen_io);
        sd_event_source_disable_unref(m->events_io);
        sd_event_source_disable_unref(m->files_io);
        sd_event_source_disable_unref(m->inotify_io);
        sd_event_source_disable_unref(m->sweep_timer);
        sd_event_source_disable_unref(m->idle_timer);
        safe_close(m->inotify_fd);
        safe_close(m->listen_fd);
        file_reporter_free(m->files);
        filter_free(m->filter);
        sd_event_unref(m->event);
}

static int run(int argc, char *argv[]) {
        _cleanup_free_ Manager *m = NULL;
        bool activated = false;
        sigset_t ss;
        int k, n;

        log_set_program("scudo-bpfd");
        k = parse_argv(argc, argv);
        if (k <= 0)
                return k;

        m = calloc(1, sizeof(Manager));
        if (!m)
                return log_error_errno(SYNTHETIC_ERRNO(ENOMEM), "out of memory");
        m->listen_fd = m->inotify_fd = -EBADF;
        m->dns_grace_sec = arg_dns_grace_sec;
        m->resolv_conf = arg_resolv_conf;

        n = sd_listen_fds(true);
        if (n < 0)
                return log_error_errno(n, "cannot get the sockets from systemd: %m");
        if (n > 1)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "expected one socket, got %d", n);
        if (n == 1) {
                if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1, NULL, 0) <= 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "the socket from systemd is not a "
                                               "listening SOCK_SEQPACKET unix socket");
                m->listen_fd = SD_LISTEN_FDS_START;
                activated = true;
        } else {
                m->listen_fd = listen_socket(arg_listen ?: SCUDO_BPFD_SOCKET);
                if (m->listen_fd < 0) {
                        k = m->listen_fd;
                        manager_done(m);
                        return log_error_errno(k, "cannot listen on %s: %m",
                                               arg_listen ?: SCUDO_BPFD_SOCKET);
                }
        }
        if (arg_exit_idle_sec >= 0)
                m->exit_idle_usec = (uint64_t) arg_exit_idle_sec * 1000000U;
        else
                m->exit_idle_usec = activated ? 30U * 1000000U : 0;

        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGPIPE);
        (void) sigprocmask(SIG_BLOCK, &ss, NULL);

        k = sd_event_default(&m->event);
        if (k >= 0)
                k = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL);
        if (k >= 0)
                k = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL);
        if (k < 0) {
                manager_done(m);
                return log_error_errno(k, "cannot set up the event loop: %m");
        }

        k = filter_new(on_bpf_event, on_bpf_dns, m, &m->filter);
        if (k < 0) {
                manager_done(m);
                return log_error_errno(k, "cannot load the BPF programs "
                                       "(CAP_BPF and CAP_NET_ADMIN needed): %m");
        }
        if (!filter_reports_comm(m->filter))
                log_info("no CAP_PERFMON: command names are read from /proc instead");
        setup_file_reporter(m);

        m->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (m->inotify_fd < 0) {
                k = negative_errno();
                manager_done(m);
                return log_error_errno(k, "inotify: %m");
        }

        k = sd_event_add_io(m->event, &m->listen_io, m->listen_fd, EPOLLIN, on_accept, m);
        if (k >= 0)
                k = sd_event_add_io(m->event, &m->events_io, filter_events_fd(m->filter), EPOLLIN,
                                    on_events, m);
        if (k >= 0)
                k = sd_event_add_io(m->event, &m->inotify_io, m->inotify_fd, EPOLLIN, on_inotify, m);
        if (k >= 0)
                k = sd_event_add_time_relative(m->event, &m->sweep_timer, CLOCK_MONOTONIC, BPFD_SWEEP_USEC,
                                               0, on_sweep, m);
        if (k >= 0)
                k = sd_event_source_set_enabled(m->sweep_timer, SD_EVENT_ON);
        if (k < 0) {
                manager_done(m);
                return log_error_errno(k, "cannot set up the event loop: %m");
        }
        manager_check_idle(m);

        (void) sd_notify(false, "READY=1");
        k = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        manager_done(m);
        if (k < 0)
                return log_error_errno(k, "event loop failed: %m");
        return 0;
}

int main(int argc, char *argv[]) {
        int r = run(argc, argv);

        return r < 0 ? 1 : 0;
}
