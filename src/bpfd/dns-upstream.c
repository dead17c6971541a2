/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The DNS proxy's side toward the servers (dns-proxy.h). UDP queries go upstream through one
 * connected socket per server and proxy (replaced every UPSTREAM_SOCKET_USES queries), under
 * a random id of ours: the kernel takes answers only from the server's address and port, and
 * an answer must carry the id of a query waiting on that socket and repeat its question. TCP
 * queries get a connection each. */

#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "bpfd/dns-proxy-internal.h"
#include "util/macro.h"

/* Queries sent through one upstream UDP socket, and its age, before the next query gets a
 * fresh one (and with it a fresh random source port): reusing a socket saves five system
 * calls per query, rotating it keeps a port from living long enough to be found out. */
#define UPSTREAM_SOCKET_USES 64U
#define UPSTREAM_SOCKET_USEC (10U * 1000000U)
/* How long to poll for an answer before going back to epoll; see upstream_busy_poll(). */
#define BUSY_POLL_USEC 100U

/* A connected UDP socket to one server, shared by the queries of one proxy. Connected, so
 * the kernel only passes up datagrams from that server's address and port; an answer is
 * then matched to its query by a random id of ours (the sandbox's own id is put back before
 * the answer goes out) and by its question. */
struct Upstream {
        DnsProxy *proxy;
        unsigned server;
        int fd;
        sd_event_source *io;
        unsigned uses;                  /* queries sent through it */
        uint64_t opened_usec;
        unsigned pending;               /* queries waiting for their answer on it */
        bool retired;                   /* takes no new query; freed once pending is 0 */
};

Upstream *upstream_free(Upstream *u) {
        if (!u)
                return NULL;
        if (u->proxy->upstream[u->server] == u)
                u->proxy->upstream[u->server] = NULL;
        sd_event_source_disable_unref(u->io);
        safe_close(u->fd);
        free(u);
        return NULL;
}

/* No new query goes out on it; it stays open for the answers still expected. */
static void upstream_retire(Upstream *u) {
        if (u->proxy->upstream[u->server] == u)
                u->proxy->upstream[u->server] = NULL;
        u->retired = true;
        if (u->pending == 0)
                upstream_free(u);
}

static void upstream_release(Upstream *u) {
        assert(u->pending > 0);
        u->pending--;
        if (u->retired && u->pending == 0)
                upstream_free(u);
}

void query_stop_upstream(Query *q) {
        if (q->up) {
                upstream_release(q->up);
                q->up = NULL;
        }
        q->io = sd_event_source_disable_unref(q->io);
        q->timer = sd_event_source_disable_unref(q->timer);
        q->fd = safe_close(q->fd);
        q->buf = mfree(q->buf);
        q->buf_len = q->buf_done = 0;
        q->receiving = false;
}

static int on_upstream_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        query_fail(userdata);
        return 0;
}

static Query *upstream_find(Upstream *u, uint16_t id) {
        for (Query *q = u->proxy->queries; q; q = q->next)
                if (q->up == u && q->up_id == id)
                        return q;
        return NULL;
}

/* The socket reported an error (an ICMP port unreachable shows up as ECONNREFUSED): it
 * cannot say which query it belongs to, so every query waiting on it tries the next server. */
static void upstream_fail(Upstream *u) {
        Query *q;

        u->pending++;           /* keeps u while its queries let go of it */
        upstream_retire(u);
        for (;;) {
                for (q = u->proxy->queries; q && q->up != u; q = q->next)
                        ;
                if (!q)
                        break;
                query_fail(q);
        }
        upstream_release(u);
}

/* Reads one datagram from `u`. Returns 1 if one was read, 0 if none was waiting, <0 on a
 * socket error (after failing the queries waiting on it). */
static int upstream_receive(Upstream *u) {
        Manager *m = u->proxy->cgroup->manager;
        uint8_t *buf = m->buf;
        Query *q;
        ssize_t n;
        uint64_t rtt, *avg;

        n = recv(u->fd, buf, DNS_MAX, MSG_DONTWAIT);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                upstream_fail(u);
                return -EIO;
        }
        if (n < DNS_HEADER_SIZE)
                return 1;
        q = upstream_find(u, (uint16_t) (buf[0] << 8 | buf[1]));
        if (!q)
                return 1;       /* late, or not ours: not an answer to anything asked */
        rtt = now_usec() - q->sent_usec;
        avg = &u->proxy->rtt_usec[u->server];
        *avg = *avg ? (*avg * 7 + rtt) / 8 : rtt;
        buf[0] = q->msg[0];     /* the sandbox's own id */
        buf[1] = q->msg[1];
        /* An answer whose question does not match is ignored: the right one may still come. */
        (void) query_answer(q, buf, (size_t) n);
        return 1;
}

static int on_upstream_udp(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) upstream_receive(userdata);
        return 0;
}

/* After a query went out to a server that has been answering within BUSY_POLL_USEC, waits
 * for the answer by polling instead of going back to epoll: being woken up costs more than
 * the wait itself (two context switches and an interrupt to another CPU, which in a VM
 * can take tens of µs). It burns at most BUSY_POLL_USEC of CPU per forwarded query, and
 * nothing at all for a server that answers slower than that (a resolver across the
 * network), whose answers keep coming through epoll. */
void upstream_busy_poll(Upstream *u) {
        uint64_t *avg = &u->proxy->rtt_usec[u->server], deadline;
        int k;

        if (*avg > BUSY_POLL_USEC)
                return;
        deadline = now_usec() + BUSY_POLL_USEC;
        u->pending++;           /* keeps u while answers end queries */
        /* sched_yield(): on a CPU shared with the resolver, let it run rather than spin. */
        while ((k = upstream_receive(u)) == 0 && now_usec() < deadline)
                (void) sched_yield();
        /* No answer in time: no more polling until answers show the server is quick. */
        if (k == 0 && *avg == 0)
                *avg = BUSY_POLL_USEC + 1;
        upstream_release(u);
}

static int on_upstream_tcp(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Query *q = userdata;
        ssize_t n;

        if (!q->receiving) {
                int err = 0;
                socklen_t l = sizeof(err);

                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err != 0) {
                        query_fail(q);
                        return 0;
                }
                n = send(fd, q->buf + q->buf_done, q->buf_len - q->buf_done, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                query_fail(q);
                        return 0;
                }
                q->buf_done += (size_t) n;
                if (q->buf_done < q->buf_len)
                        return 0;
                free(q->buf);
                q->buf = malloc(2 + DNS_MAX);
                if (!q->buf) {
                        query_fail(q);
                        return 0;
                }
                q->buf_len = 2;
                q->buf_done = 0;
                q->receiving = true;
                (void) sd_event_source_set_io_events(s, EPOLLIN);
                return 0;
        }

        n = recv(fd, q->buf + q->buf_done, q->buf_len - q->buf_done, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                query_fail(q);
                return 0;
        }
        q->buf_done += (size_t) n;
        if (q->buf_done == 2 && q->buf_len == 2) {
                q->buf_len = 2 + (((size_t) q->buf[0] << 8) | q->buf[1]);
                if (q->buf_len == 2) {
                        query_fail(q);
                        return 0;
                }
        }
        if (q->buf_done < q->buf_len)
                return 0;
        if (query_answer(q, q->buf + 2, q->buf_len - 2) == -EBADMSG)
                query_fail(q);
        return 0;
}

/* A random id that no other query waiting on `u` has. getrandom() fills a batch at a time,
 * so that a query costs no system call for it. */
static int upstream_new_id(Upstream *u, uint16_t *ret) {
        DnsProxy *p = u->proxy;

        for (unsigned tries = 0; tries < 16; tries++) {
                uint16_t id;

                if (p->n_ids == 0) {
                        if (getrandom(p->ids, sizeof(p->ids), 0) != (ssize_t) sizeof(p->ids))
                                return errno > 0 ? -errno : -EIO;
                        p->n_ids = ELEMENTSOF(p->ids);
                }
                id = p->ids[--p->n_ids];
                if (!upstream_find(u, id)) {
                        *ret = id;
                        return 0;
                }
        }
        return -EBUSY;          /* at most MAX_QUERIES are waiting: only by bad luck */
}

/* The socket new queries to `server` go out on, opened (or replaced) as needed. */
static int upstream_get(DnsProxy *p, unsigned server, Upstream **ret) {
        Manager *m = p->cgroup->manager;
        const struct sockaddr_in6 *sa = &p->servers[server].addr;
        _cleanup_close_ int fd = -EBADF;
        Upstream *u = p->upstream[server];
        int k;

        if (u && (u->uses >= UPSTREAM_SOCKET_USES || now_usec() - u->opened_usec >= UPSTREAM_SOCKET_USEC))
                upstream_retire(u);
        else if (u) {
                *ret = u;
                return 0;
        }

        fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) < 0)
                return negative_errno();
        u = calloc(1, sizeof(Upstream));
        if (!u)
                return -ENOMEM;
        u->proxy = p;
        u->server = server;
        u->opened_usec = now_usec();
        u->fd = TAKE_FD(fd);
        k = sd_event_add_io(m->event, &u->io, u->fd, EPOLLIN, on_upstream_udp, u);
        if (k < 0) {
                upstream_free(u);
                return k;
        }
        p->upstream[server] = u;
        *ret = u;
        return 0;
}

/* Sends a UDP query under an id of ours; the sandbox's id stays in q->msg. */
static int query_send_udp(Query *q) {
        Upstream *u;
        uint16_t id;
        ssize_t n;
        int k;

        k = upstream_get(q->proxy, q->server, &u);
        if (k < 0)
                return k;
        k = upstream_new_id(u, &id);
        if (k < 0)
                return k;
        u->uses++;
        q->msg[0] = (uint8_t) (id >> 8);
        q->msg[1] = (uint8_t) id;
        n = send(u->fd, q->msg, q->size, MSG_DONTWAIT | MSG_NOSIGNAL);
        q->msg[0] = (uint8_t) (q->q.id >> 8);
        q->msg[1] = (uint8_t) q->q.id;
        if (n < 0) {
                /* An error from an earlier datagram (ECONNREFUSED) is reported here too:
                 * give the next query a fresh socket. */
                k = negative_errno();
                upstream_retire(u);
                return k;
        }
        q->up = u;
        q->up_id = id;
        q->sent_usec = now_usec();
        u->pending++;
        return 0;
}

int query_start(Query *q) {
        DnsProxy *p = q->proxy;
        Manager *m = p->cgroup->manager;
        const struct sockaddr_in6 *server = &p->servers[q->server].addr;
        int k;

        if (!q->tcp) {
                k = query_send_udp(q);
                if (k < 0)
                        return k;
                return sd_event_add_time_relative(m->event, &q->timer, CLOCK_MONOTONIC,
                                                  UPSTREAM_TIMEOUT_USEC, 0, on_upstream_timeout, q);
        }

        q->fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (q->fd < 0)
                return negative_errno();
        if (connect(q->fd, (const struct sockaddr *) server, sizeof(*server)) < 0 && errno != EINPROGRESS) {
                k = negative_errno();
                q->fd = safe_close(q->fd);
                return k;
        }
        q->buf = malloc(q->size + 2);
        if (!q->buf)
                return -ENOMEM;
        q->buf[0] = (uint8_t) (q->size >> 8);
        q->buf[1] = (uint8_t) q->size;
        memcpy(q->buf + 2, q->msg, q->size);
        q->buf_len = q->size + 2;
        q->buf_done = 0;
        k = sd_event_add_io(m->event, &q->io, q->fd, EPOLLOUT, on_upstream_tcp, q);
        if (k < 0)
                return k;
        return sd_event_add_time_relative(m->event, &q->timer, CLOCK_MONOTONIC, UPSTREAM_TIMEOUT_USEC, 0,
                                          on_upstream_timeout, q);
}
