/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "net/net-session.h"
#include "util/path-util.h"
#include "util/strv.h"

#define REPLY_TIMEOUT_MS 15000

struct NetSession {
        int fd;
        uint32_t proxy4;
        bool gone;
        bool report_net, report_dns;
        enum { TARGET_STDERR, TARGET_JOURNAL, TARGET_FILE } target;
        int log_fd;
};

static _Thread_local char session_error[BPFD_REASON_MAX + 64 + PATH_MAX];
static _Thread_local bool session_error_local;

const char *net_session_error(void) {
        return session_error;
}

bool net_session_error_is_local(void) {
        return session_error_local;
}

_printf_(2, 3)
static int fail(int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(session_error, sizeof(session_error), fmt, ap);
        va_end(ap);
        return r;
}

NetSession *net_session_free(NetSession *s) {
        if (!s)
                return NULL;
        safe_close(s->fd);
        safe_close(s->log_fd);
        free(s);
        return NULL;
}

int net_session_get_fd(NetSession *s) {
        return s->fd;
}

uint32_t net_session_proxy4(NetSession *s) {
        return s->proxy4;
}

static void header_init(BpfdHeader *h, BpfdMessageType type, size_t size) {
        *h = (BpfdHeader) {
                .magic = BPFD_MAGIC,
                .version = BPFD_VERSION,
                .type = (uint16_t) type,
                .size = (uint32_t) size,
        };
}

static int compile_list(char * const *list, BpfdAction action, BpfdRule *rules, size_t *n,
                        char *names, size_t *names_size) {
        STRV_FOREACH(s, list) {
                const char *reason = NULL;
                BpfdRule *b = &rules[*n];
                NetRule r;
                int k;

                k = net_rule_parse_reason(*s, &r, &reason);
                if (k < 0)
                        return fail(k, "network rule '%s': %s", *s, reason);

                *b = (BpfdRule) {
                        .action = (uint8_t) action,
                        .port = r.port,
                };
                if (r.kind == NET_RULE_ADDRESS) {
                        b->kind = BPFD_RULE_ADDRESS;
                        b->prefixlen = (uint8_t) r.prefixlen;
                        memcpy(b->addr, r.addr, sizeof(b->addr));
                } else {
                        size_t l = strlen(r.name);

                        b->kind = r.kind == NET_RULE_HOST ? BPFD_RULE_HOST : BPFD_RULE_DOMAIN;
                        b->name_len = (uint16_t) l;
                        b->name_offset = (uint32_t) *names_size;
                        memcpy(names + *names_size, r.name, l + 1);
                        *names_size += l + 1;
                }
                (*n)++;
        }
        return 0;
}

int net_rules_compile(char * const *allow, char * const *deny, BpfdRule **ret_rules, size_t *ret_n,
                      char **ret_names, size_t *ret_names_size) {
        size_t total = strv_length(allow) + strv_length(deny), n = 0, names_size = 0;
        _cleanup_free_ BpfdRule *rules = NULL;
        _cleanup_free_ char *names = NULL;
        int k;

        if (total > BPFD_RULES_MAX)
                return fail(-E2BIG, "too many network rules (%zu, at most %u)", total, BPFD_RULES_MAX);

        rules = calloc(MAX(total, 1U), sizeof(BpfdRule));
        names = malloc(MAX(total, 1U) * (BPFD_NAME_MAX + 1));
        if (!rules || !names)
                return -ENOMEM;

        k = compile_list(deny, BPFD_ACTION_DENY, rules, &n, names, &names_size);
        if (k < 0)
                return k;
        k = compile_list(allow, BPFD_ACTION_ALLOW, rules, &n, names, &names_size);
        if (k < 0)
                return k;

        *ret_rules = TAKE_PTR(rules);
        *ret_n = n;
        *ret_names = TAKE_PTR(names);
        *ret_names_size = names_size;
        return 0;
}

static int send_message(int fd, const void *buf, size_t size) {
        ssize_t n;

        n = send(fd, buf, size, MSG_NOSIGNAL);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != size)
                return -EIO;
        return 0;
}

/* Sends the rules in messages of at most BPFD_RULES_PER_MESSAGE rules, each with the names
 * its own rules refer to. */
static int send_rules(int fd, const BpfdRule *rules, size_t n, const char *names) {
        _cleanup_free_ uint8_t *buf = NULL;

        buf = malloc(BPFD_MESSAGE_MAX);
        if (!buf)
                return -ENOMEM;

        for (size_t i = 0; i < n; ) {
                BpfdRules *m = (BpfdRules *) buf;
                BpfdRule *out = (BpfdRule *) (buf + sizeof(BpfdRules));
                size_t count = 0, names_size = 0, limit = BPFD_MESSAGE_MAX - sizeof(BpfdRules);
                char *names_out;
                int k;

                /* Pick as many rules as fit, counting each name's bytes. */
                while (i + count < n && count < BPFD_RULES_PER_MESSAGE) {
                        const BpfdRule *r = &rules[i + count];
                        size_t need = (count + 1) * sizeof(BpfdRule) + names_size +
                                (r->kind == BPFD_RULE_ADDRESS ? 0 : r->name_len + 1U);

                        if (need > limit)
                                break;
                        if (r->kind != BPFD_RULE_ADDRESS)
                                names_size += r->name_len + 1U;
                        count++;
                }

                names_out = (char *) (out + count);
                names_size = 0;
                for (size_t j = 0; j < count; j++) {
                        out[j] = rules[i + j];
                        if (out[j].kind != BPFD_RULE_ADDRESS) {
                                memcpy(names_out + names_size, names + rules[i + j].name_offset,
                                       out[j].name_len + 1U);
                                out[j].name_offset = (uint32_t) names_size;
                                names_size += out[j].name_len + 1U;
                        }
                }

                header_init(&m->header, BPFD_MSG_RULES,
                            sizeof(BpfdRules) + count * sizeof(BpfdRule) + names_size);
                m->n_rules = (uint32_t) count;
                m->names_size = (uint32_t) names_size;
                k = send_message(fd, buf, m->header.size);
                if (k < 0)
                        return k;
                i += count;
        }
        return 0;
}

static int wait_reply(int fd, BpfdReply *ret) {
        BpfdReply reply;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n;
        int k;

        for (;;) {
                k = poll(&p, 1, REPLY_TIMEOUT_MS);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return fail(-ETIMEDOUT, "scudo-bpfd did not answer in time");
                break;
        }

        n = recv(fd, &reply, sizeof(reply), MSG_TRUNC | MSG_DONTWAIT);
        /* A helper that refuses early closes with our later messages unread, which the
         * kernel reports as ECONNRESET once, ahead of the reply still queued for us. */
        if (n < 0 && errno == ECONNRESET)
                n = recv(fd, &reply, sizeof(reply), MSG_TRUNC | MSG_DONTWAIT);
        if (n < 0)
                return negative_errno();
        if (n == 0)
                return fail(-ECONNRESET, "scudo-bpfd closed the connection without an answer");
        if ((size_t) n != sizeof(reply) || reply.header.magic != BPFD_MAGIC ||
            reply.header.version != BPFD_VERSION || reply.header.type != BPFD_MSG_REPLY ||
            reply.header.size != sizeof(reply))
                return fail(-EBADMSG, "malformed answer from scudo-bpfd");
        reply.reason[sizeof(reply.reason) - 1] = 0;
        *ret = reply;
        return 0;
}

static int setup_reporting(NetSession *s, const Plan *plan) {
        const char *target = plan->log_target;

        s->report_net = !plan->log_report || strv_contains(plan->log_report, "net");
        s->report_dns = !plan->log_report || strv_contains(plan->log_report, "dns");

        if (!target || streq(target, "stderr"))
                s->target = TARGET_STDERR;
        else if (streq(target, "journald"))
                s->target = TARGET_JOURNAL;
        else {
                struct stat st;
                s->target = TARGET_FILE;
                /* scudo appends here outside any sandbox, and a command may write the directory
                 * it is in: a symlink planted in its place (to ~/.bashrc, say) must not make
                 * scudo append the names a command asked for there, nor a hard link, nor a
                 * FIFO make it wait. */
                s->log_fd = path_open_no_symlinks(target, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK,
                                                  0600);
                if (s->log_fd == -ELOOP)
                        return fail(-ELOOP, "log.target '%s': a symlink is in the way; not writing through it",
                                    target);
                if (s->log_fd == -ENXIO)        /* a FIFO nobody reads */
                        return fail(-ENXIO, "log.target '%s' is not a regular file; not writing to it", target);
                if (s->log_fd < 0)
                        return fail(s->log_fd, "log.target '%s' cannot be opened: %s", target, strerror(-s->log_fd));
                if (fstat(s->log_fd, &st) < 0)
                        return fail(negative_errno(), "log.target '%s' cannot be opened: %m", target);
                if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
                        return fail(-EPERM, "log.target '%s' is not a regular file of yours with a single name; "
                                    "not writing to it", target);
        }
        return 0;
}

int net_session_open(const char *cgroup_path, const Plan *plan, NetSession **ret) {
        _cleanup_(net_session_freep) NetSession *s = NULL;
        _cleanup_free_ BpfdRule *rules = NULL;
        _cleanup_free_ char *names = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *socket_path;
        size_t n_rules = 0, names_size = 0;
        BpfdOpen open_msg;
        BpfdHeader commit;
        BpfdReply reply;
        int k;

        session_error[0] = 0;
        session_error_local = false;
        if (!cgroup_path || strlen(cgroup_path) >= BPFD_CGROUP_PATH_MAX)
                return fail(-EINVAL, "bad cgroup path");

        k = net_rules_compile(plan->net_allow, plan->net_deny, &rules, &n_rules, &names, &names_size);
        if (k < 0)
                return k;

        s = calloc(1, sizeof(NetSession));
        if (!s)
                return -ENOMEM;
        s->fd = s->log_fd = -EBADF;

        k = setup_reporting(s, plan);
        if (k < 0) {
                session_error_local = true;     /* before the helper was asked anything */
                return k;
        }

        socket_path = secure_getenv("SCUDO_BPFD_SOCKET") ?: SCUDO_BPFD_SOCKET;
        if (strlen(socket_path) >= sizeof(sa.sun_path))
                return fail(-EINVAL, "socket path too long");
        strcpy(sa.sun_path, socket_path);

        s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (s->fd < 0)
                return fail(negative_errno(), "socket: %m");
        if (connect(s->fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                k = negative_errno();
                return fail(k, "cannot reach scudo-bpfd at %s", socket_path);
        }

        open_msg = (BpfdOpen) {
                .dns = plan->dns == DNS_OPEN ? BPFD_DNS_OPEN : BPFD_DNS_FILTERED,
                .n_rules = (uint32_t) n_rules,
                .path_len = (uint32_t) strlen(cgroup_path),
        };
        header_init(&open_msg.header, BPFD_MSG_OPEN, sizeof(open_msg));
        memcpy(open_msg.path, cgroup_path, open_msg.path_len);

        k = send_message(s->fd, &open_msg, sizeof(open_msg));
        if (k >= 0)
                k = send_rules(s->fd, rules, n_rules, names);
        if (k >= 0) {
                header_init(&commit, BPFD_MSG_COMMIT, sizeof(commit));
                k = send_message(s->fd, &commit, sizeof(commit));
        }
        /* A send can fail because the helper has already refused and closed; its reply
         * (still queued) says why, so read it before reporting the send error. */
        if (wait_reply(s->fd, &reply) >= 0) {
                if (reply.error < 0)
                        return fail(reply.error, "scudo-bpfd refused: %s",
                                    reply.reason[0] ? reply.reason : "no reason given");
                if (k < 0)
                        return fail(k, "lost the connection to scudo-bpfd");
        } else if (k < 0)
                return fail(k, "lost the connection to scudo-bpfd");
        else
                return -ECONNRESET;

        s->proxy4 = reply.proxy4;
        k = fcntl(s->fd, F_GETFL);
        if (k < 0 || fcntl(s->fd, F_SETFL, k | O_NONBLOCK) < 0)
                return fail(negative_errno(), "fcntl: %m");

        *ret = TAKE_PTR(s);
        return 0;
}

static const char *protocol_name(uint8_t p) {
        switch (p) {
        case IPPROTO_TCP:
                return "tcp";
        case IPPROTO_UDP:
                return "udp";
        case IPPROTO_ICMP:
                return "icmp";
        case IPPROTO_ICMPV6:
                return "icmpv6";
        case IPPROTO_RAW:
                return "raw";
        case IPPROTO_SCTP:
                return "sctp";
        default:
                return NULL;
        }
}

static const char *qtype_name(uint16_t t) {
        switch (t) {
        case 1:
                return "A";
        case 28:
                return "AAAA";
        case 5:
                return "CNAME";
        case 15:
                return "MX";
        case 16:
                return "TXT";
        case 33:
                return "SRV";
        case 65:
                return "HTTPS";
        case 12:
                return "PTR";
        default:
                return NULL;
        }
}

static void format_address(const uint8_t addr[16], uint16_t port, char *buf, size_t size) {
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        char a[INET6_ADDRSTRLEN];

        if (memcmp(addr, mapped, sizeof(mapped)) == 0) {
                (void) inet_ntop(AF_INET, addr + 12, a, sizeof(a));
                (void) snprintf(buf, size, "%s:%u", a, port);
        } else {
                (void) inet_ntop(AF_INET6, addr, a, sizeof(a));
                (void) snprintf(buf, size, "[%s]:%u", a, port);
        }
}

/* A process name or a DNS name is whatever the command made it: in a report, only letters,
 * digits and "._-+@:/ " stay as they are, the rest becomes '?'. A report goes to a terminal,
 * the journal or a file, and must not bring escape sequences to the first, nor quotes, `;`,
 * `$(...)` to a file that some program might one day read as more than text. */
static void keep_plain(char *s) {
        for (char *c = s; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      strchr("._-+@:/ ", *c)))
                        *c = '?';
}

static void format_who(const BpfdEvent *e, char *buf, size_t size) {
        char comm[sizeof(e->comm) + 1];

        memcpy(comm, e->comm, sizeof(e->comm));
        comm[sizeof(e->comm)] = 0;
        keep_plain(comm);
        if (e->pid > 0 && comm[0])
                (void) snprintf(buf, size, " by pid %u (%s)", e->pid, comm);
        else if (e->pid > 0)
                (void) snprintf(buf, size, " by pid %u", e->pid);
        else
                buf[0] = 0;
}

int net_event_format(const BpfdEvent *e, char *buf, size_t size) {
        char addr[INET6_ADDRSTRLEN + 16], who[64], name[sizeof(e->name)], num[16];
        const char *proto = protocol_name(e->protocol), *qt;

        if (!proto) {
                (void) snprintf(num, sizeof(num), "proto %u", e->protocol);
                proto = num;
        }
        format_who(e, who, sizeof(who));

        switch (e->kind) {
        case BPFD_EVENT_CONNECT:
        case BPFD_EVENT_SENDMSG:
                format_address(e->addr, e->port, addr, sizeof(addr));
                return snprintf(buf, size, "network: refused %s to %s (%s)%s",
                                e->kind == BPFD_EVENT_CONNECT ? "connection" : "datagram",
                                addr, proto, who);
        case BPFD_EVENT_INBOUND:
                format_address(e->addr, e->port, addr, sizeof(addr));
                return snprintf(buf, size, "network: refused incoming %s from %s (%s)",
                                e->protocol == IPPROTO_TCP ? "connection" : "datagram", addr, proto);
        case BPFD_EVENT_SOCKET:
                return snprintf(buf, size, "network: refused socket (family %u, type %u, %s)%s",
                                e->family, e->sock_type, proto, who);
        case BPFD_EVENT_DNS:
                memcpy(name, e->name, sizeof(name));
                name[sizeof(name) - 1] = 0;
                keep_plain(name);
                qt = qtype_name(e->qtype);
                if (qt)
                        return snprintf(buf, size, "dns: refused name '%s' (%s)%s", name, qt, who);
                return snprintf(buf, size, "dns: refused name '%s' (type %u)%s", name, e->qtype, who);
        case BPFD_EVENT_LOST:
                return snprintf(buf, size, "network: %u more refusals not reported", e->count);
        default:
                return snprintf(buf, size, "network: unknown event %u", e->kind);
        }
}

static void emit(NetSession *s, const BpfdEvent *e) {
        char line[512];
        bool dns = e->kind == BPFD_EVENT_DNS;

        if ((dns && !s->report_dns) || (!dns && !s->report_net))
                return;

        (void) net_event_format(e, line, sizeof(line));

        switch (s->target) {
        case TARGET_STDERR:
                (void) fprintf(stderr, "scudo: %s\n", line);
                break;
        case TARGET_JOURNAL:
                (void) sd_journal_send("MESSAGE=scudo: %s", line,
                                       "PRIORITY=5",
                                       "SYSLOG_IDENTIFIER=scudo",
                                       "SCUDO_REFUSED=%s", dns ? "dns" : "net",
                                       "SCUDO_PID=%u", e->pid,
                                       NULL);
                break;
        case TARGET_FILE: {
                char stamp[64];
                time_t now = time(NULL);
                struct tm tm;

                (void) strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", localtime_r(&now, &tm));
                (void) dprintf(s->log_fd, "%s scudo: %s\n", stamp, line);
                break;
        }
        }
}

int net_session_dispatch(NetSession *s) {
        if (s->gone)
                return -ECONNRESET;

        for (;;) {
                BpfdEvent e;
                ssize_t n;

                n = recv(s->fd, &e, sizeof(e), MSG_DONTWAIT | MSG_TRUNC);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0;
                        n = 0;
                }
                if (n == 0) {
                        s->gone = true;
                        fprintf(stderr, "scudo: warning: scudo-bpfd went away; the network "
                                "restrictions stay in force, but refusals are no longer reported\n");
                        return -ECONNRESET;
                }
                if ((size_t) n != sizeof(e) || e.header.magic != BPFD_MAGIC ||
                    e.header.version != BPFD_VERSION || e.header.type != BPFD_MSG_EVENT ||
                    e.header.size != sizeof(e))
                        continue;       /* not ours to interpret; the helper is newer or confused */
                emit(s, &e);
        }
}
