/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bpfd/dns-proxy.h"
#include "bpfd/manager.h"
#include "util/log.h"
#include "util/macro.h"

static void header_init(BpfdHeader *h, BpfdMessageType type, size_t size) {
        *h = (BpfdHeader) {
                .magic = BPFD_MAGIC,
                .version = BPFD_VERSION,
                .type = (uint16_t) type,
                .size = (uint32_t) size,
        };
}

Client *client_free(Client *c) {
        Manager *m;

        if (!c)
                return NULL;
        m = c->manager;
        for (Client **p = &m->clients; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        m->n_clients--;
                        break;
                }
        if (c->cgroup)
                c->cgroup->client = NULL;
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timeout);
        safe_close(c->fd);
        rule_set_done(&c->rules);
        free(c->file_prefixes);
        free(c->usage);
        free(c);
        return NULL;
}

static void reply(Client *c, int error, const char *reason, uint32_t proxy4) {
        BpfdReply r = {
                .error = error,
                .proxy4 = proxy4,
        };

        header_init(&r.header, BPFD_MSG_REPLY, sizeof(r));
        if (reason)
                (void) snprintf(r.reason, sizeof(r.reason), "%s", reason);
        (void) send(c->fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Refuses the request and ends the connection. After this `c` is gone. */
static int refuse(Client *c, int error, const char *reason) {
        Manager *m = c->manager;

        log_notice("refused request from uid %u pid %d: %s", (unsigned) c->uid, (int) c->pid, reason);
        reply(c, error, reason, 0);
        client_free(c);
        manager_check_idle(m);
        return 0;
}

int client_send_event(Client *c, const BpfdEvent *e) {
        if (send(c->fd, e, sizeof(*e), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 0;
}

int client_send_file_lost(Client *c, const BpfdFileLost *l) {
        if (send(c->fd, l, sizeof(*l), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 0;
}

int client_send_file_event(Client *c, const BpfdFileEvent *e) {
        if (send(c->fd, e, sizeof(*e), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 0;
}

static BpfdUsage *usage_new(uint32_t n_rules) {
        BpfdUsage *u = calloc(1, sizeof(BpfdUsage));

        if (!u)
                return NULL;
        header_init(&u->header, BPFD_MSG_USAGE_REPLY, sizeof(*u));
        u->n_rules = n_rules;
        return u;
}

void client_keep_usage(Client *c, FilteredCgroup *fc) {
        /* Only a client that may still ask: one that set the session up and has not asked. */
        if (c->state != CLIENT_ACTIVE || c->usage_asked || c->usage)
                return;
        c->usage = usage_new(c->open.n_rules);
        if (c->usage)
                filtered_cgroup_usage(fc, c->usage->reached);
}

/* Sends c->usage, now or once the socket has room (the client reads while it waits). */
static int send_usage(Client *c) {
        if (send(c->fd, c->usage, sizeof(*c->usage), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
                if (errno != EAGAIN && errno != ENOBUFS)
                        return negative_errno();
                c->usage_pending = true;
                return sd_event_source_set_io_events(c->io, EPOLLIN | EPOLLOUT);
        }
        c->usage_pending = false;
        free(c->usage);
        c->usage = NULL;
        return sd_event_source_set_io_events(c->io, EPOLLIN);
}

static int handle_usage(Client *c, const uint8_t *buf, size_t size) {
        const char *reason = "malformed message";
        int k;

        k = bpfd_parse_usage(buf, size, &reason);
        if (k < 0)
                return refuse(c, k, reason);
        if (c->usage_asked)
                return refuse(c, -EBADMSG, "usage asked for twice");
        c->usage_asked = true;
        if (c->cgroup) {
                free(c->usage);
                c->usage = usage_new(c->open.n_rules);
                if (!c->usage)
                        return refuse(c, -ENOMEM, "out of memory");
                filtered_cgroup_usage(c->cgroup, c->usage->reached);
        } else if (!c->usage) {
                /* gone, and nothing kept (out of memory then) */
                c->usage = usage_new(c->open.n_rules);
                if (!c->usage)
                        return refuse(c, -ENOMEM, "out of memory");
                c->usage->error = -ENODATA;
        }
        k = send_usage(c);
        if (k < 0) {
                Manager *m = c->manager;

                log_debug_errno(k, "cannot send the usage to uid %u: %m", (unsigned) c->uid);
                client_free(c);
                manager_check_idle(m);
        }
        return 0;
}

/* Where the sandbox wrote (BPFD_OPEN_RECORD): asked when the command is over, before the
 * cgroup goes. An answer that cannot be sent is dropped: the client then looks everywhere. */
static int handle_written(Client *c, const uint8_t *buf, size_t size) {
        const char *reason = "malformed message";
        _cleanup_free_ uint8_t *m = NULL;
        BpfdWritten w = {};
        int k;

        k = bpfd_parse_written(buf, size, &reason);
        if (k < 0)
                return refuse(c, k, reason);
        m = malloc(sizeof(w) + BPFD_WRITTEN_MAX * sizeof(BpfdDirId));
        if (!m)
                return refuse(c, -ENOMEM, "out of memory");
        w.error = -ENODATA;
        if (c->cgroup && c->cgroup->files && (c->open.flags & BPFD_OPEN_RECORD))
                w.error = file_reporter_written(c->manager->files, c->cgroup->sid, &w,
                                                (BpfdDirId *) (m + sizeof(w)));
        if (w.error < 0)
                w.n = w.flags = 0;
        header_init(&w.header, BPFD_MSG_WRITTEN_REPLY, sizeof(w) + w.n * sizeof(BpfdDirId));
        memcpy(m, &w, sizeof(w));
        if (send(c->fd, m, w.header.size, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                log_debug_errno(negative_errno(), "cannot send the write record to uid %u: %m",
                                (unsigned) c->uid);
        return 0;
}

static int handle_message(Client *c, const uint8_t *buf, size_t size) {
        const char *reason = "malformed message", *notice = NULL;
        FilteredCgroup *fc = NULL;
        int type, k;

        type = bpfd_message_type(buf, size, &reason);
        if (type < 0)
                return refuse(c, -EBADMSG, reason);

        switch (c->state) {
        case CLIENT_WANT_OPEN:
                if (type != BPFD_MSG_OPEN)
                        return refuse(c, -EBADMSG, "expected OPEN");
                k = bpfd_parse_open(buf, size, &c->open, &reason);
                if (k < 0)
                        return refuse(c, k, reason);
                /* Check the path now already, so that a hopeless request ends early. */
                k = bpfd_check_cgroup_path(c->open.path, c->uid, &reason);
                if (k < 0)
                        return refuse(c, k, reason);
                c->state = CLIENT_WANT_RULES;
                return 0;

        case CLIENT_WANT_RULES:
                if (type == BPFD_MSG_RULES) {
                        BpfdRules m;

                        /* The declared total bounds what we accept, before anything is stored. */
                        if (size >= sizeof(m)) {
                                memcpy(&m, buf, sizeof(m));
                                if (m.n_rules > c->open.n_rules - c->received)
                                        return refuse(c, -EBADMSG, "more rules than announced");
                        }
                        k = bpfd_parse_rules(buf, size, rule_set_add, &c->rules, &reason);
                        if (k == -ENOMEM)
                                return refuse(c, k, "out of memory");
                        if (k < 0)
                                return refuse(c, k, reason);
                        c->received += (uint32_t) k;
                        return 0;
                }
                if (type == BPFD_MSG_FILE_PREFIXES) {
                        if (!(c->open.flags & BPFD_OPEN_FILES))
                                return refuse(c, -EBADMSG,
                                              "file prefixes in a session without file reports");
                        if (c->file_prefixes)
                                return refuse(c, -EBADMSG, "file prefixes sent twice");
                        k = bpfd_parse_file_prefixes(buf, size, NULL, NULL, NULL, &reason);
                        if (k < 0)
                                return refuse(c, k, reason);
                        c->file_prefixes = malloc(size);
                        if (!c->file_prefixes)
                                return refuse(c, -ENOMEM, "out of memory");
                        memcpy(c->file_prefixes, buf, size);
                        c->file_prefixes_size = size;
                        return 0;
                }
                if (type != BPFD_MSG_COMMIT)
                        return refuse(c, -EBADMSG, "expected RULES, FILE_PREFIXES or COMMIT");
                k = bpfd_parse_commit(buf, size, &reason);
                if (k < 0)
                        return refuse(c, k, reason);
                if (c->received != c->open.n_rules)
                        return refuse(c, -EBADMSG, "fewer rules than announced");

                k = filtered_cgroup_create(c->manager, c, &fc, &reason, &notice);
                if (k < 0)
                        return refuse(c, k, reason);
                c->cgroup = fc;
                c->state = CLIENT_ACTIVE;
                rule_set_done(&c->rules);
                free(c->file_prefixes);
                c->file_prefixes = NULL;
                c->timeout = sd_event_source_disable_unref(c->timeout);
                reply(c, 0, notice, fc->proxy ? dns_proxy_address(fc->proxy) : 0);
                return 0;

        case CLIENT_ACTIVE:
        default:
                /* The session is set; nothing a client says can change it. It may ask what
                 * was used. */
                if (type == BPFD_MSG_USAGE)
                        return handle_usage(c, buf, size);
                if (type == BPFD_MSG_WRITTEN)
                        return handle_written(c, buf, size);
                return refuse(c, -EBADMSG, "the session is already set up");
        }
}

static int on_client_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        Client *c = userdata;
        Manager *m = c->manager;
        ssize_t n;

        if ((revents & EPOLLOUT) && c->usage_pending) {
                int k = send_usage(c);

                if (k < 0) {
                        client_free(c);
                        manager_check_idle(m);
                        return 0;
                }
        }
        if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                return 0;
        n = recv(fd, m->buf, BPFD_MESSAGE_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                n = 0;
        }
        if (n == 0) {
                /* Hang-up. The filtered cgroup stays restricted; if the cgroup is gone
                 * already, forget it now rather than at the next sweep. */
                client_free(c);
                return manager_sweep(m);
        }
        if ((size_t) n > BPFD_MESSAGE_MAX)
                return refuse(c, -EMSGSIZE, "message too large");
        return handle_message(c, m->buf, (size_t) n);
}

static int on_client_timeout(sd_event_source *source, uint64_t usec, void *userdata) {
        return refuse(userdata, -ETIMEDOUT, "request not completed in time");
}

int client_new(Manager *m, int fd) {
        struct ucred cred;
        socklen_t l = sizeof(cred);
        Client *c;
        int k;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0 || l != sizeof(cred)) {
                safe_close(fd);
                return -EIO;
        }
        if (m->n_clients >= BPFD_MAX_CLIENTS) {
                log_warning("too many clients, refusing uid %u", (unsigned) cred.uid);
                safe_close(fd);
                return -EUSERS;
        }

        c = calloc(1, sizeof(Client));
        if (!c) {
                safe_close(fd);
                return -ENOMEM;
        }
        c->manager = m;
        c->fd = fd;
        c->uid = cred.uid;
        c->pid = cred.pid;
        c->next = m->clients;
        m->clients = c;
        m->n_clients++;

        k = sd_event_add_io(m->event, &c->io, fd, EPOLLIN, on_client_io, c);
        if (k >= 0)
                k = sd_event_add_time_relative(m->event, &c->timeout, CLOCK_MONOTONIC,
                                               BPFD_REQUEST_TIMEOUT_USEC, 0, on_client_timeout, c);
        if (k < 0) {
                client_free(c);
                return k;
        }
        manager_check_idle(m);
        return 0;
}
