/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* A stand-in for scudo's runner in the network tests: opens a session with scudo-bpfd for a
 * cgroup, prints "ready PROXY" once the programs enforce, then reports events until its
 * standard input closes. Not a TAP test; the integration tests drive it.
 *
 *   test-net-client CGROUP [--allow RULE]... [--deny RULE]... [--dns open|filtered]
 *                   [--log-target T] [--report net,dns] [--raw HEXFILE]
 *
 * --raw sends the bytes of a file as one message and prints the reply's error: for the
 * malformed-request tests. */

#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "net/net-session.h"
#include "report/refusals.h"
#include "util/strv.h"

static int send_raw(const char *file) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = getenv("SCUDO_BPFD_SOCKET") ?: SCUDO_BPFD_SOCKET;
        static uint8_t buf[BPFD_MESSAGE_MAX * 2];
        BpfdReply reply = {};
        ssize_t n;
        FILE *f;
        int fd;

        f = fopen(file, "re");
        if (!f)
                return 2;
        n = (ssize_t) fread(buf, 1, sizeof(buf), f);
        fclose(f);

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                perror("connect");
                return 2;
        }
        if (send(fd, buf, (size_t) n, MSG_NOSIGNAL) < 0)
                printf("send failed: %m\n");
        n = recv(fd, &reply, sizeof(reply), 0);
        if (n == (ssize_t) sizeof(reply)) {
                reply.reason[sizeof(reply.reason) - 1] = 0;
                printf("reply %d %s\n", reply.error, reply.reason);
        } else
                printf("no reply (%zd)\n", n);
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "allow", required_argument, NULL, 'a' },
                { "deny", required_argument, NULL, 'd' },
                { "dns", required_argument, NULL, 'n' },
                { "log-target", required_argument, NULL, 'l' },
                { "report", required_argument, NULL, 'r' },
                { "raw", required_argument, NULL, 'R' },
                {}
        };
        _cleanup_(net_session_freep) NetSession *s = NULL;
        _cleanup_(refusals_freep) Refusals *refusals = NULL;
        _cleanup_free_ char *why = NULL;
        _cleanup_strv_free_ char **allow = NULL, **deny = NULL, **report = NULL;
        const char *log_target = NULL;
        Plan plan = { .dns = DNS_FILTERED, .network_filtered = true };
        char addr[INET_ADDRSTRLEN];
        uint32_t proxy;
        bool gone = false;
        int c, k;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'a':
                        if (strv_extend(&allow, optarg) < 0)
                                return 2;
                        break;
                case 'd':
                        if (strv_extend(&deny, optarg) < 0)
                                return 2;
                        break;
                case 'n':
                        plan.dns = strcmp(optarg, "open") == 0 ? DNS_OPEN : DNS_FILTERED;
                        break;
                case 'l':
                        log_target = optarg;
                        break;
                case 'r':
                        for (char *t = strtok(optarg, ","); t; t = strtok(NULL, ","))
                                if (strv_extend(&report, t) < 0)
                                        return 2;
                        break;
                case 'R':
                        return send_raw(optarg);
                default:
                        return 2;
                }
        if (optind + 1 != argc) {
                fprintf(stderr, "usage: %s CGROUP [--allow RULE]... [--deny RULE]...\n", argv[0]);
                return 2;
        }

        plan.net_allow = allow;
        plan.net_deny = deny;
        plan.log_target = (char *) log_target;
        plan.log_report = report;

        k = refusals_new(&plan, NULL, &refusals, &why);
        if (k < 0) {
                printf("error %d %s\n", k, why ?: "out of memory");
                fflush(stdout);
                return 1;
        }
        const NetSessionHandler h = {
                .event = refusals_on_event,
                .file_event = refusals_on_file_event,
                .userdata = refusals,
        };
        const NetSessionRules rules = { .filtered = plan.network_filtered, .allow = plan.net_allow,
                                        .deny = plan.net_deny, .dns = plan.dns };
        k = net_session_open(argv[optind], &rules, 0, &s);
        if (k < 0) {
                printf("error %d %s\n", k, net_session_error());
                fflush(stdout);
                return 1;
        }
        proxy = net_session_proxy4(s);
        printf("ready %s\n", proxy ? inet_ntop(AF_INET, &proxy, addr, sizeof(addr)) : "-");
        fflush(stdout);

        for (;;) {
                struct pollfd p[2] = {
                        { .fd = STDIN_FILENO, .events = POLLIN },
                        { .fd = gone ? -1 : net_session_get_fd(s), .events = POLLIN },
                };
                char b[256];

                if (poll(p, 2, -1) < 0)
                        continue;
                if (p[1].revents) {
                        k = net_session_dispatch(s, &h);
                        if (k == -ECONNRESET)
                                gone = true;
                        fflush(stderr);
                }
                if (p[0].revents && read(STDIN_FILENO, b, sizeof(b)) <= 0)
                        break;
        }
        /* let the last reports arrive */
        usleep(200 * 1000);
        (void) net_session_dispatch(s, &h);
        refusals_finish(refusals, s, NULL);
        return 0;
}
