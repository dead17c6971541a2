/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The DNS proxy of one sandbox (dns-proxy.h): its listeners, the queries the sandbox sends
 * them, refused, answered from the cache or forwarded (dns-upstream.c) until an answer or
 * an error reply goes back, and the sandbox's TCP connections. */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "bpfd/dns-proxy-internal.h"
#include "util/log.h"
#include "util/macro.h"

#define TCP_IDLE_USEC (10U * 1000000U)
#define MAX_QUERIES 256U
#define MAX_CONNS 32U

static void conn_free(TcpConn *c);

uint32_t dns_proxy_address(DnsProxy *p) {
        return p->addr;
}

uint16_t dns_proxy_port6(DnsProxy *p) {
        return p->port6;
}

static Query *query_free(Query *q) {
        DnsProxy *p;

        if (!q)
                return NULL;
        p = q->proxy;
        for (Query **i = &p->queries; *i; i = &(*i)->next)
                if (*i == q) {
                        *i = q->next;
                        p->n_queries--;
                        break;
                }
        if (q->conn && q->conn->pending == q)
                q->conn->pending = NULL;
        query_stop_upstream(q);
        free(q->msg);
        free(q);
        return NULL;
}

static int conn_send(TcpConn *c, const uint8_t *msg, size_t size) {
        uint8_t *out;

        out = malloc(size + 2);
        if (!out)
                return -ENOMEM;
        out[0] = (uint8_t) (size >> 8);
        out[1] = (uint8_t) size;
        memcpy(out + 2, msg, size);
        free(c->out);
        c->out = out;
        c->out_len = size + 2;
        c->out_sent = 0;
        /* Write from the io handler, which waits for EPOLLOUT if the client reads slowly. */
        return sd_event_source_set_io_events(c->io, EPOLLOUT);
}

/* Hands an answer (or our own error reply) to whoever asked, and ends the query. */
static void query_deliver(Query *q, const uint8_t *answer, size_t size) {
        if (q->inject)
                (void) fastpath_inject(q->proxy, q->inject_from, (const struct sockaddr_in *) &q->client,
                                       answer, size);
        else if (!q->tcp)
                (void) sendto(q->reply_fd, answer, size, MSG_DONTWAIT | MSG_NOSIGNAL,
                              (struct sockaddr *) &q->client, q->client_len);
        else if (q->conn) {
                TcpConn *c = q->conn;

                c->pending = NULL;
                if (conn_send(c, answer, size) < 0) {
                        query_free(q);
                        conn_free(c);
                        return;
                }
        }
        query_free(q);
}

void query_fail(Query *q) {
        uint8_t reply[DNS_HEADER_SIZE + DNS_NAME_TEXT_MAX + 8];
        int n;

        query_stop_upstream(q);
        if (++q->server < q->proxy->n_servers && query_start(q) >= 0)
                return;

        n = dns_make_error_reply(q->msg, &q->q, DNS_RCODE_SERVFAIL, reply, sizeof(reply));
        if (n < 0) {
                query_free(q);
                return;
        }
        query_deliver(q, reply, (size_t) n);
}

static int learn_address(const uint8_t addr[16], uint32_t ttl, void *userdata) {
        Query *q = userdata;

        if (q->n_addrs < DNS_CACHE_ADDRESSES) {
                memcpy(q->addrs[q->n_addrs].addr, addr, 16);
                q->addrs[q->n_addrs].ttl = ttl;
        }
        q->n_addrs++;
        q->min_ttl = q->n_addrs == 1 ? ttl : MIN(q->min_ttl, ttl);
        return filtered_cgroup_learn(q->proxy->cgroup, q->q.name, addr, ttl);
}

int query_answer(Query *q, const uint8_t *answer, size_t size) {
        int k;

        k = dns_parse_answer(answer, size, &q->q, learn_address, q);
        if (k == -EBADMSG)
                return k;
        if (k < 0) {
                /* Could not store the addresses: an answer the sandbox could not use. */
                log_warning_errno(k, "cannot store the addresses of '%s': %m", q->q.name);
                query_fail(q);
                return 0;
        }
        /* A complete, successful answer whose every address was noted may be reused. */
        if (k > 0 && (size_t) k == q->n_addrs && size >= DNS_HEADER_SIZE && !(answer[2] & 0x02) &&
            (answer[3] & 0x0f) == 0)
                (void) dns_cache_store(&q->proxy->cache, q->tcp, q->msg, q->size, answer, size, q->addrs,
                                       q->n_addrs, q->min_ttl, now_usec());
        query_deliver(q, answer, size);
        return 0;
}

/* Answers from the cache, after putting the answer's addresses into the allow map again
 * (they may have been pushed out of it). Returns the answer's size, or 0 for a miss. */
static size_t answer_from_cache(DnsProxy *p, bool tcp, const uint8_t *msg, size_t size, const DnsQuestion *q,
                                uint8_t *reply, size_t reply_size) {
        const DnsCacheEntry *e;

        e = dns_cache_lookup(&p->cache, tcp, msg, size, now_usec());
        if (!e || e->answer_len > reply_size)
                return 0;
        for (size_t i = 0; i < e->n_addrs; i++)
                if (filtered_cgroup_learn(p->cgroup, q->name, e->addrs[i].addr, e->addrs[i].ttl) < 0)
                        return 0;
        memcpy(reply, e->answer, e->answer_len);
        reply[0] = msg[0];              /* the asker's id */
        reply[1] = msg[1];
        return e->answer_len;
}

int handle_query(DnsProxy *p, bool tcp, const uint8_t *msg, size_t size, uint32_t pid, const char *comm,
                        Query **ret_query, uint8_t *reply, size_t reply_size, size_t *ret_reply_len) {
        uint8_t fwd[DNS_FORWARD_QUERY_MAX];
        DnsQuestion question;
        Query *q;
        size_t n;
        int k;

        k = dns_parse_query(msg, size, &question);
        if (k < 0)
                return k;

        if (filtered_cgroup_check_name(p->cgroup, question.name, question.name_ok) < 0) {
                filtered_cgroup_report_dns(p->cgroup, question.name, question.qtype, pid, comm);
                /* NXDOMAIN, the one answer every stub resolver takes as final: musl ignores
                 * REFUSED and waits out its timeout (5 s), Go and c-ares try the next server,
                 * glibc's NODATA handling differs (docs/network.md, "Refused names"). */
                k = dns_make_error_reply(msg, &question, DNS_RCODE_NXDOMAIN, reply, reply_size);
                if (k < 0)
                        return k;
                *ret_reply_len = (size_t) k;
                return 1;
        }

        /* From here on only the query rebuilt from its question goes anywhere (and keys the
         * cache): whatever else the sandbox put in the message stays here. */
        k = dns_make_forward_query(msg, &question, fwd, sizeof(fwd));
        if (k < 0)
                return k;
        msg = fwd;
        size = (size_t) k;

        n = answer_from_cache(p, tcp, msg, size, &question, reply, reply_size);
        if (n > 0) {
                *ret_reply_len = n;
                return 1;
        }

        if (p->n_queries >= MAX_QUERIES)
                return -EBUSY;

        q = calloc(1, sizeof(Query));
        if (!q)
                return -ENOMEM;
        q->proxy = p;
        q->fd = -EBADF;
        q->q = question;
        q->size = size;
        q->msg = malloc(size);
        if (!q->msg) {
                free(q);
                return -ENOMEM;
        }
        memcpy(q->msg, msg, size);
        q->next = p->queries;
        p->queries = q;
        p->n_queries++;
        *ret_query = q;
        return 0;
}

void forward_udp(Query *q, const void *client, socklen_t client_len, int reply_fd) {
        client_len = MIN(client_len, (socklen_t) sizeof(q->client));
        memcpy(&q->client, client, client_len);
        q->client_len = client_len;
        q->reply_fd = reply_fd;
        if (query_start(q) < 0) {
                query_fail(q);
                return;
        }
        if (q->up)
                upstream_busy_poll(q->up);
}

static int on_udp(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DnsProxy *p = userdata;
        Manager *m = p->cgroup->manager;
        uint8_t *reply = m->reply;
        struct sockaddr_storage from;
        socklen_t from_len = sizeof(from);
        size_t reply_len = 0;
        Query *q = NULL;
        ssize_t n;
        int k;

        n = recvfrom(fd, m->buf, DNS_MAX, MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
        if (n < 0)
                return 0;

        k = handle_query(p, false, m->buf, (size_t) n, 0, NULL, &q, reply, sizeof(m->reply), &reply_len);
        if (k < 0)
                return 0;
        if (k > 0) {
                (void) sendto(fd, reply, reply_len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *) &from,
                              from_len);
                return 0;
        }
        forward_udp(q, &from, from_len, fd);
        return 0;
}

static void conn_free(TcpConn *c) {
        DnsProxy *p = c->proxy;

        for (TcpConn **i = &p->conns; *i; i = &(*i)->next)
                if (*i == c) {
                        *i = c->next;
                        p->n_conns--;
                        break;
                }
        if (c->pending) {
                c->pending->conn = NULL;
                query_free(c->pending);
        }
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        safe_close(c->fd);
        free(c->out);
        free(c);
}

/* Takes the next complete query from the input buffer, if there is one. */
static void conn_process(TcpConn *c) {
        Manager *m = c->proxy->cgroup->manager;
        uint8_t *reply = m->reply;
        size_t len, reply_len = 0;
        Query *q = NULL;
        int k;

        if (c->pending || c->out || c->in_len < 2)
                return;
        len = ((size_t) c->in[0] << 8) | c->in[1];
        if (c->in_len < 2 + len)
                return;

        k = handle_query(c->proxy, true, c->in + 2, len, 0, NULL, &q, reply, sizeof(m->reply), &reply_len);
        memmove(c->in, c->in + 2 + len, c->in_len - 2 - len);
        c->in_len -= 2 + len;
        if (k < 0) {
                conn_free(c);
                return;
        }
        if (k > 0) {
                if (conn_send(c, reply, reply_len) < 0)
                        conn_free(c);
                return;
        }
        q->tcp = true;
        q->conn = c;
        c->pending = q;
        (void) sd_event_source_set_io_events(c->io, 0);
        if (query_start(q) < 0)
                query_fail(q);
}

static void conn_resume(TcpConn *c) {
        (void) sd_event_source_set_io_events(c->io, EPOLLIN);
        (void) sd_event_source_set_time_relative(c->timer, TCP_IDLE_USEC);
        conn_process(c);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        TcpConn *c = userdata;
        ssize_t n;

        if (c->out) {
                n = send(fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                conn_free(c);
                        return 0;
                }
                c->out_sent += (size_t) n;
                if (c->out_sent == c->out_len) {
                        c->out = mfree(c->out);
                        conn_resume(c);
                }
                return 0;
        }

        n = recv(fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                conn_free(c);
                return 0;
        }
        c->in_len += (size_t) n;
        (void) sd_event_source_set_time_relative(c->timer, TCP_IDLE_USEC);
        conn_process(c);
        return 0;
}

static int on_conn_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        TcpConn *c = userdata;

        if (c->pending)         /* the upstream timeout will end this */
                return sd_event_source_set_time_relative(s, TCP_IDLE_USEC);
        conn_free(c);
        return 0;
}

static int on_tcp_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DnsProxy *p = userdata;
        Manager *m = p->cgroup->manager;
        TcpConn *c;
        int cfd, k;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
                return 0;
        if (p->n_conns >= MAX_CONNS) {
                safe_close(cfd);
                return 0;
        }
        c = calloc(1, sizeof(TcpConn));
        if (!c) {
                safe_close(cfd);
                return 0;
        }
        c->proxy = p;
        c->fd = cfd;
        c->next = p->conns;
        p->conns = c;
        p->n_conns++;
        k = sd_event_add_io(m->event, &c->io, cfd, EPOLLIN, on_conn_io, c);
        if (k >= 0)
                k = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC, TCP_IDLE_USEC, 0,
                                               on_conn_idle, c);
        if (k < 0)
                conn_free(c);
        return 0;
}

int dns_proxy_new(FilteredCgroup *fc, DnsProxy **ret) {
        Manager *m = fc->manager;
        DnsProxy *p;
        int k;

        p = calloc(1, sizeof(DnsProxy));
        if (!p)
                return -ENOMEM;
        p->cgroup = fc;
        p->udp_fd = p->tcp_fd = p->udp6_fd = p->tcp6_fd = -EBADF;
        p->n_servers = (unsigned) resolv_conf_load(m->resolv_conf, p->servers);

        k = proxy_bind4(p);
        if (k < 0) {
                free(p);
                return k;
        }
        if (proxy_bind6(p) < 0)
                log_info("no IPv6 side for the DNS proxy of %s", fc->path);

        k = sd_event_add_io(m->event, &p->udp_io, p->udp_fd, EPOLLIN, on_udp, p);
        if (k >= 0)
                k = sd_event_add_io(m->event, &p->tcp_io, p->tcp_fd, EPOLLIN, on_tcp_accept, p);
        if (k >= 0 && p->udp6_fd >= 0)
                k = sd_event_add_io(m->event, &p->udp6_io, p->udp6_fd, EPOLLIN, on_udp, p);
        if (k >= 0 && p->tcp6_fd >= 0)
                k = sd_event_add_io(m->event, &p->tcp6_io, p->tcp6_fd, EPOLLIN, on_tcp_accept, p);
        if (k < 0) {
                dns_proxy_free(p);
                return k;
        }
        *ret = p;
        return 0;
}

DnsProxy *dns_proxy_free(DnsProxy *p) {
        if (!p)
                return NULL;
        while (p->conns)
                conn_free(p->conns);
        while (p->queries)
                query_free(p->queries);
        for (unsigned i = 0; i < ELEMENTSOF(p->upstream); i++)
                upstream_free(p->upstream[i]);
        dns_cache_clear(&p->cache);
        sd_event_source_disable_unref(p->udp_io);
        sd_event_source_disable_unref(p->tcp_io);
        sd_event_source_disable_unref(p->udp6_io);
        sd_event_source_disable_unref(p->tcp6_io);
        proxy_unbind(p);
        free(p);
        return NULL;
}
