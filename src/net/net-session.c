/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "net/net-session.h"
#include "net/usage.h"
#include "util/path-util.h"
#include "util/strv.h"

#define REPLY_TIMEOUT_MS 15000

struct NetSession {
        int fd;
        uint32_t proxy4;
        bool gone;
        bool usage_asked;
        bool ready;                     /* the helper's acknowledgement was read */
        int send_error;                 /* of the messages that opened it, told after the reply */
        uint32_t n_rules, n_deny;       /* as sent: the deny rules first */
        char notice[BPFD_REASON_MAX];
};

static _Thread_local char session_error[BPFD_REASON_MAX + 64 + PATH_MAX];

const char *net_session_error(void) {
        return session_error;
}

const char *net_session_notice(NetSession *s) {
        return s->notice[0] ? s->notice : NULL;
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

int net_session_start(const char *cgroup_path, const NetSessionRules *net, unsigned flags,
                      NetSession **ret) {
        _cleanup_(net_session_freep) NetSession *s = NULL;
        _cleanup_free_ BpfdRule *rules = NULL;
        _cleanup_free_ char *names = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *socket_path;
        size_t n_rules = 0, names_size = 0;
        BpfdOpen open_msg;
        BpfdHeader commit;
        int k;

        session_error[0] = 0;
        if (!cgroup_path || strlen(cgroup_path) >= BPFD_CGROUP_PATH_MAX)
                return fail(-EINVAL, "bad cgroup path");

        if (!net->filtered && !(flags & NET_SESSION_FILES))
                return fail(-EINVAL, "a session that asks for nothing");
        k = net_rules_compile(net->filtered ? net->allow : NULL,
                              net->filtered ? net->deny : NULL,
                              &rules, &n_rules, &names, &names_size);
        if (k < 0)
                return k;

        s = calloc(1, sizeof(NetSession));
        if (!s)
                return -ENOMEM;
        s->fd = -EBADF;

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
                .dns = !net->filtered ? 0 : net->dns == DNS_OPEN ? BPFD_DNS_OPEN : BPFD_DNS_FILTERED,
                .flags = (flags & NET_SESSION_FILES ? BPFD_OPEN_FILES : 0) |
                         ((flags & (NET_SESSION_FILES | NET_SESSION_RECORD)) ==
                          (NET_SESSION_FILES | NET_SESSION_RECORD) ? BPFD_OPEN_RECORD : 0) |
                         (net->filtered ? 0 : BPFD_OPEN_NO_NETWORK),
                .n_rules = (uint32_t) n_rules,
                .path_len = (uint32_t) strlen(cgroup_path),
        };
        header_init(&open_msg.header, BPFD_MSG_OPEN, sizeof(open_msg));
        memcpy(open_msg.path, cgroup_path, open_msg.path_len);

        k = send_message(s->fd, &open_msg, sizeof(open_msg));
        if (k >= 0)
                k = send_rules(s->fd, rules, n_rules, names);
        if (k >= 0 && (flags & NET_SESSION_FILES) && net->file_prefixes)
                k = send_message(s->fd, net->file_prefixes, net->file_prefixes_size);
        if (k >= 0) {
                header_init(&commit, BPFD_MSG_COMMIT, sizeof(commit));
                k = send_message(s->fd, &commit, sizeof(commit));
        }
        /* A send can fail because the helper has already refused and closed; its reply
         * (still queued) says why, so it is told by net_session_wait(). */
        s->send_error = k;
        s->n_rules = (uint32_t) n_rules;
        s->n_deny = net->filtered ? (uint32_t) strv_length(net->deny) : 0;
        *ret = TAKE_PTR(s);
        return 0;
}

int net_session_wait(NetSession *s) {
        BpfdReply reply;
        int k;

        session_error[0] = 0;
        if (s->ready)
                return 0;
        if (wait_reply(s->fd, &reply) >= 0) {
                if (reply.error < 0)
                        return fail(reply.error, "scudo-bpfd refused: %s",
                                    reply.reason[0] ? reply.reason : "no reason given");
                if (s->send_error < 0)
                        return fail(s->send_error, "lost the connection to scudo-bpfd");
        } else if (s->send_error < 0)
                return fail(s->send_error, "lost the connection to scudo-bpfd");
        else
                return -ECONNRESET;

        s->proxy4 = reply.proxy4;
        (void) snprintf(s->notice, sizeof(s->notice), "%s", reply.reason);
        k = fcntl(s->fd, F_GETFL);
        if (k < 0 || fcntl(s->fd, F_SETFL, k | O_NONBLOCK) < 0)
                return fail(negative_errno(), "fcntl: %m");
        s->ready = true;
        return 0;
}

int net_session_open(const char *cgroup_path, const NetSessionRules *net, unsigned flags, NetSession **ret) {
        _cleanup_(net_session_freep) NetSession *s = NULL;
        int k;

        k = net_session_start(cgroup_path, net, flags, &s);
        if (k < 0)
                return k;
        k = net_session_wait(s);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(s);
        return 0;
}

typedef union Message {
        BpfdHeader header;
        BpfdReply reply;
        BpfdEvent event;
        BpfdFileEvent file;
        BpfdFileLost file_lost;
        BpfdUsage usage;
        uint8_t written[sizeof(BpfdWritten) + BPFD_WRITTEN_MAX * sizeof(BpfdDirId)];
} Message;

/* Hands the pending events to `h`. With `usage` (a session that asked), a USAGE_REPLY is
 * copied there, checked, and ends the reading: 1. With `written`, a WRITTEN_REPLY is left in
 * `m`, checked: *written its count, and 1. */
static int dispatch(NetSession *s, const NetSessionHandler *h, Message *m, BpfdUsage *usage,
                    int *written,
                    int *ret_error) {
        if (s->gone)
                return -ECONNRESET;

        for (;;) {
                ssize_t n;

                n = recv(s->fd, m, sizeof(*m), MSG_DONTWAIT | MSG_TRUNC);
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
                if ((size_t) n < sizeof(m->header) || (size_t) n > sizeof(*m) ||
                    m->header.magic != BPFD_MAGIC || m->header.version != BPFD_VERSION ||
                    m->header.size != (size_t) n)
                        continue;       /* not ours to interpret; the helper is newer or confused */
                if (m->header.type == BPFD_MSG_EVENT && n == sizeof(m->event)) {
                        if (h && h->event)
                                h->event(&m->event, h->userdata);
                } else if (m->header.type == BPFD_MSG_FILE_EVENT && n == sizeof(m->file)) {
                        if (h && h->file_event)
                                h->file_event(&m->file, h->userdata);
                } else if (m->header.type == BPFD_MSG_FILE_LOST && n == sizeof(m->file_lost)) {
                        if (h && h->file_lost)
                                h->file_lost(&m->file_lost, h->userdata);
                } else if (m->header.type == BPFD_MSG_WRITTEN_REPLY && written) {
                        const char *reason = NULL;

                        *written = bpfd_written_check(m, (size_t) n, &reason);
                        if (*written == -EBADMSG)
                                (void) fail(-EBADMSG, "scudo-bpfd: %s", reason);
                        return 1;
                } else if (m->header.type == BPFD_MSG_REPLY && n == sizeof(m->reply) && (usage || written)) {
                        /* a helper that does not know USAGE refuses it, and closes */
                        m->reply.reason[sizeof(m->reply.reason) - 1] = 0;
                        *ret_error = fail(m->reply.error < 0 ? m->reply.error : -EBADMSG,
                                          "scudo-bpfd refused: %s", m->reply.reason);
                        return 1;
                } else if (m->header.type == BPFD_MSG_USAGE_REPLY && usage) {
                        const char *reason = NULL;

                        *ret_error = bpfd_usage_check(m, (size_t) n, s->n_rules, s->n_deny, &reason);
                        if (*ret_error == -EBADMSG)
                                (void) fail(-EBADMSG, "scudo-bpfd: %s", reason);
                        else if (*ret_error < 0)
                                (void) fail(*ret_error, "scudo-bpfd no longer knows the sandbox");
                        memcpy(usage, &m->usage, sizeof(*usage));
                        return 1;
                }
        }
}

int net_session_dispatch(NetSession *s, const NetSessionHandler *h) {
        Message m;
        int k;

        if (!s->ready)
                return 0;       /* the acknowledgement comes first, to net_session_wait() */
        k = dispatch(s, h, &m, NULL, NULL, NULL);
        return k < 0 ? k : 0;
}

/* Sends a request of `type` and hands events to `h` until its answer (dispatch()'s 1): a
 * USAGE_REPLY into `usage`, a WRITTEN_REPLY left in `m` with its count in *written. Events
 * sent before the answer are still for `h`. Returns 0 or the error, said (fail()). */
static int ask(NetSession *s, const NetSessionHandler *h, BpfdMessageType type, unsigned timeout_ms,
               Message *m, BpfdUsage *usage, int *written) {
        struct pollfd p = { .fd = s->fd, .events = POLLIN };
        BpfdHeader q;
        int k, error = 0;

        header_init(&q, type, sizeof(q));
        k = send_message(s->fd, &q, sizeof(q));
        if (k < 0)
                return fail(k, "cannot ask scudo-bpfd");
        for (;;) {
                k = dispatch(s, h, m, usage, written, &error);
                if (k < 0)
                        return fail(k, "scudo-bpfd went away");
                if (k > 0)
                        return error;
                k = poll(&p, 1, (int) timeout_ms);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return fail(negative_errno(), "poll: %m");
                if (k == 0)
                        return fail(-ETIMEDOUT, "scudo-bpfd did not answer in time");
        }
}

int net_session_usage(NetSession *s, const NetSessionHandler *h, unsigned timeout_ms, bool **ret_reached,
                      size_t *ret_n) {
        _cleanup_free_ Message *m = malloc(sizeof(Message));
        _cleanup_free_ BpfdUsage *u = malloc(sizeof(BpfdUsage));
        _cleanup_free_ bool *reached = NULL;
        int k;

        session_error[0] = 0;
        if (!m || !u)
                return -ENOMEM;
        if (!s->ready)
                return fail(-EINVAL, "the session is not open yet");
        if (s->usage_asked)
                return fail(-EALREADY, "usage was asked for already");
        if (s->gone)
                return fail(-ECONNRESET, "scudo-bpfd went away");
        s->usage_asked = true;
        k = ask(s, h, BPFD_MSG_USAGE, timeout_ms, m, u, NULL);
        if (k < 0)
                return k;

        reached = calloc(MAX(s->n_rules - s->n_deny, 1U), sizeof(bool));
        if (!reached)
                return -ENOMEM;
        for (uint32_t i = s->n_deny; i < s->n_rules; i++)
                reached[i - s->n_deny] = bpfd_usage_bit(u, i);
        *ret_reached = TAKE_PTR(reached);
        *ret_n = s->n_rules - s->n_deny;
        return 0;
}

int net_session_written(NetSession *s, const NetSessionHandler *h, unsigned timeout_ms, BpfdDirId **ret_dirs,
                        size_t *ret_n) {
        _cleanup_free_ Message *m = malloc(sizeof(Message));
        BpfdWritten w;
        int k, n = -EBADMSG;

        session_error[0] = 0;
        if (!m)
                return -ENOMEM;
        if (s->gone)
                return fail(-ECONNRESET, "scudo-bpfd went away");
        k = ask(s, h, BPFD_MSG_WRITTEN, timeout_ms, m, NULL, &n);
        if (k < 0)
                return k;
        if (n < 0)
                return n;
        memcpy(&w, m->written, sizeof(w));
        if (w.flags & BPFD_WRITTEN_INCOMPLETE)
                return fail(-E2BIG, "the record of where the command wrote is incomplete");
        BpfdDirId *dirs = calloc(MAX(n, 1), sizeof(BpfdDirId));
        if (!dirs)
                return -ENOMEM;
        memcpy(dirs, m->written + sizeof(w), (size_t) n * sizeof(BpfdDirId));
        *ret_dirs = dirs;
        *ret_n = (size_t) n;
        return 0;
}
