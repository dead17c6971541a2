/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include "report/report-feed.h"
#include "report/report-format.h"
#include "util/log.h"
#include "util/text-escape.h"

#define QUEUE_SIZE 256U
#define SEEN_SLOTS 4096U        /* a power of two */
#define LINE_MAX_BYTES 4096U
/* A file refusal's line waits this long for the other calls on the same file (a stat, then an
 * access, then an open), to name them all in one line. */
#define FILE_HOLD_MS 100U
#define OPS_MAX 96U

/* A report kept beyond the call that pushed it: its strings are its own. */
typedef struct Kept {
        Report r;
        char *strings[8];
} Kept;

typedef struct Entry {
        Kept k;
        unsigned count;
        char time[40];
        char *notice;           /* a line of scudo's own instead of a report */
        char *message;          /* a line of scudo's own for the log target, of kind `kind` */
        const char *kind;
        char *json_line;        /* a record of the run's for the JSON file only */
        uint64_t due_ms;        /* not written before (CLOCK_MONOTONIC), to gather calls */
        uint64_t file_hash;     /* a refused file's line, which later calls add to */
        bool json_only;         /* a report for the JSON file only */
        bool text_only;         /* a report for log.target only: its JSON went already */
} Entry;

typedef struct Seen {
        uint64_t hash;
        unsigned count;
        Kept k;
} Seen;

/* A refused file that has its line: where it waits in the queue, to add calls to it. */
typedef struct FileSeen {
        uint64_t hash;          /* of the report without its operation; 0 = empty */
        uint64_t seq;           /* the entry's number in the queue's order */
} FileSeen;

/* The candidates the kernel or the helper dropped, by the share that was exceeded. */
typedef enum LostShare {
        LOST_SANDBOX,
        LOST_RING,
        LOST_HELPER,
        _LOST_SHARE_MAX,
} LostShare;

struct ReportFeed {
        ReportFeedConfig config;
        bool stderr_tty;
        ReportScreenFn screen;
        void *screen_userdata;

        Seen *seen;             /* SEEN_SLOTS, hash 0 = empty */
        unsigned n_seen;
        FileSeen *files;        /* SEEN_SLOTS: one line per refused file */
        unsigned n_files;
        uint64_t window;        /* the second the rate limit counts in */
        unsigned window_count;
        bool finished;

        pthread_t thread;
        bool thread_started;
        pthread_mutex_t lock;
        pthread_cond_t wake, drained;
        Entry queue[QUEUE_SIZE];
        unsigned head, len;     /* under lock */
        bool stop, busy;        /* under lock */
        bool flush;             /* under lock: write held entries without waiting */
        uint64_t dequeued;      /* under lock: entries taken off the queue so far */
        uint64_t enqueued;      /* under lock */
        ReportFeedStats stats;  /* under lock */
        unsigned lost[_REPORT_KIND_MAX];
        ReportTally tally;      /* every refusal pushed, repeats included */
        unsigned lost_file[_LOST_SHARE_MAX];
};

static uint64_t now_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000U + (uint64_t) ts.tv_nsec / 1000000U;
}

static void kept_done(Kept *k) {
        for (size_t i = 0; i < ELEMENTSOF(k->strings); i++) {
                free(k->strings[i]);
                k->strings[i] = NULL;
        }
        k->r = (Report) {};
}

static int kept_copy(Kept *k, const Report *r) {
        const char *const src[] = { r->op, r->target, r->resolved, r->detail, r->comm, r->rule, r->origin,
                                    r->access };
        const char **dst[] = { &k->r.op, &k->r.target, &k->r.resolved, &k->r.detail, &k->r.comm, &k->r.rule,
                               &k->r.origin, &k->r.access };

        static_assert(ELEMENTSOF(src) == ELEMENTSOF(k->strings), "one slot per string");
        *k = (Kept) { .r = *r };
        for (size_t i = 0; i < ELEMENTSOF(src); i++) {
                *dst[i] = NULL;
                if (!src[i])
                        continue;
                k->strings[i] = strdup(src[i]);
                if (!k->strings[i]) {
                        kept_done(k);
                        return -ENOMEM;
                }
                *dst[i] = k->strings[i];
        }
        return 0;
}

/* What makes two reports the same refusal: not who asked, so that a hundred compilers refused
 * one path make one report; for a DNS name, not the type of record asked (A, AAAA: one name). */
static const char *same_detail(const Report *r) {
        return r->kind == REPORT_DNS ? NULL : r->detail;
}

/* FNV-1a over that; with `op` false, over all of it but the operation. */
static uint64_t report_hash_op(const Report *r, bool op) {
        const char *const parts[] = { op ? r->op : NULL, r->target, r->resolved, r->rule, r->origin,
                                      same_detail(r) };
        uint64_t h = 0xcbf29ce484222325ULL;

        h = (h ^ (uint64_t) r->kind) * 0x100000001b3ULL;
        h = (h ^ (uint64_t) (unsigned) r->error) * 0x100000001b3ULL;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                for (const char *c = parts[i] ?: ""; *c; c++)
                        h = (h ^ (uint8_t) *c) * 0x100000001b3ULL;
                h = (h ^ 0xff) * 0x100000001b3ULL;
        }
        return h ?: 1;
}

static uint64_t report_hash(const Report *r) {
        return report_hash_op(r, true);
}

static bool same(const Report *a, const Report *b) {
        return a->kind == b->kind && a->error == b->error && streq_ptr(a->op, b->op) &&
                streq_ptr(a->target, b->target) && streq_ptr(a->resolved, b->resolved) &&
                streq_ptr(a->rule, b->rule) && streq_ptr(a->origin, b->origin) &&
                streq_ptr(same_detail(a), same_detail(b));
}

static void write_all(int fd, const struct iovec *iov, int n, unsigned *failed) {
        ssize_t total = 0, k;

        for (int i = 0; i < n; i++)
                total += (ssize_t) iov[i].iov_len;
        k = writev(fd, iov, n);
        if (k != total)
                (*failed)++;
}

/* A line of scudo's own, where the reports go. In the writer thread. */
static void write_message(ReportFeed *f, const Entry *e, const char *nl, unsigned *failed) {
        switch (f->config.target) {
        case REPORT_TARGET_STDERR: {
                struct iovec v[] = { { (void *) "scudo: ", 7 }, { e->message, strlen(e->message) },
                                     { (void *) nl, strlen(nl) } };
                write_all(STDERR_FILENO, v, 3, failed);
                break;
        }
        case REPORT_TARGET_JOURNAL:
                if (sd_journal_send("MESSAGE=scudo: %s", e->message,
                                    "PRIORITY=5",
                                    "SYSLOG_IDENTIFIER=scudo",
                                    "SCUDO_KIND=%s", e->kind,
                                    NULL) < 0)
                        (*failed)++;
                break;
        case REPORT_TARGET_FILE: {
                struct iovec v[] = { { (void *) e->time, strlen(e->time) }, { (void *) " scudo: ", 8 },
                                     { e->message, strlen(e->message) }, { (void *) "\n", 1 } };
                write_all(f->config.file_fd, v, 4, failed);
                break;
        }
        }
}

/* In the writer thread, without the lock. */
static void write_entry(ReportFeed *f, const Entry *e, unsigned *failed) {
        char text[LINE_MAX_BYTES], json[LINE_MAX_BYTES];
        const char *nl = f->stderr_tty ? "\r\n" : "\n";
        const Report *r = &e->k.r;

        if (e->json_line) {
                struct iovec v[] = { { e->json_line, strlen(e->json_line) }, { (void *) "\n", 1 } };
                if (f->config.json_fd >= 0)
                        write_all(f->config.json_fd, v, 2, failed);
                return;
        }
        if (e->notice) {
                /* a line of scudo's own: where log.target says, like every other */
                Entry m = *e;

                m.message = e->notice;
                m.kind = "notice";
                write_message(f, &m, nl, failed);
                return;
        }
        if (e->message) {
                write_message(f, e, nl, failed);
                return;
        }

        if (e->json_only)
                goto json;
        (void) report_format_text(r, e->count, text, sizeof(text));
        switch (f->config.target) {
        case REPORT_TARGET_STDERR:
                if (!f->screen) {
                        struct iovec v[] = { { (void *) "scudo: ", 7 }, { text, strlen(text) },
                                             { (void *) nl, strlen(nl) } };
                        write_all(STDERR_FILENO, v, 3, failed);
                }
                break;
        case REPORT_TARGET_JOURNAL: {
                char path[1100], rule[600], origin[600];
                char err[16];

                (void) text_escape(r->target, path, sizeof(path));
                (void) text_escape(r->rule, rule, sizeof(rule));
                (void) text_escape(r->origin, origin, sizeof(origin));
                (void) snprintf(err, sizeof(err), "%s", report_errno_name(r->error) ?: "");
                if (sd_journal_send("MESSAGE=scudo: %s", text,
                                    "PRIORITY=5",
                                    "SYSLOG_IDENTIFIER=scudo",
                                    "SCUDO_KIND=%s", report_kind_to_string(r->kind),
                                    "SCUDO_REFUSED=%s", r->kind == REPORT_FILE ? "file" :
                                                        r->kind == REPORT_DNS ? "dns" : "net",
                                    "SCUDO_OP=%s", strempty(r->op),
                                    r->kind == REPORT_FILE ? "SCUDO_PATH=%s" : "SCUDO_TARGET=%s", path,
                                    "SCUDO_ERRNO=%s", err,
                                    "SCUDO_RULE=%s", rule,
                                    "SCUDO_ORIGIN=%s", origin,
                                    "SCUDO_PID=%u", r->pid,
                                    "SCUDO_COUNT=%u", MAX(e->count, 1U),
                                    NULL) < 0)
                        (*failed)++;
                break;
        }
        case REPORT_TARGET_FILE: {
                struct iovec v[] = { { (void *) e->time, strlen(e->time) }, { (void *) " scudo: ", 8 },
                                     { text, strlen(text) }, { (void *) "\n", 1 } };
                write_all(f->config.file_fd, v, 4, failed);
                break;
        }
        }

json:
        if (!e->text_only && f->config.json_fd >= 0 &&
            report_format_json(r, e->count, e->time, json, sizeof(json)) > 0) {
                struct iovec v[] = { { json, strlen(json) }, { (void *) "\n", 1 } };
                write_all(f->config.json_fd, v, 2, failed);
        }
}

static void *writer(void *userdata) {
        ReportFeed *f = userdata;

        (void) pthread_mutex_lock(&f->lock);
        for (;;) {
                Entry e;
                unsigned failed = 0;

                while (f->len == 0 && !f->stop) {
                        f->busy = false;
                        (void) pthread_cond_broadcast(&f->drained);
                        (void) pthread_cond_wait(&f->wake, &f->lock);
                }
                if (f->len == 0)
                        break;
                if (!f->flush && !f->stop && f->queue[f->head].due_ms > now_ms()) {
                        struct timespec until;
                        uint64_t wait = f->queue[f->head].due_ms - now_ms();

                        (void) clock_gettime(CLOCK_MONOTONIC, &until);
                        until.tv_sec += (time_t) (wait / 1000U);
                        until.tv_nsec += (long) (wait % 1000U) * 1000000L;
                        if (until.tv_nsec >= 1000000000L) {
                                until.tv_sec++;
                                until.tv_nsec -= 1000000000L;
                        }
                        (void) pthread_cond_timedwait(&f->wake, &f->lock, &until);
                        continue;
                }
                e = f->queue[f->head];
                f->queue[f->head] = (Entry) {};
                f->head = (f->head + 1) % QUEUE_SIZE;
                f->len--;
                f->dequeued++;
                f->busy = true;
                (void) pthread_mutex_unlock(&f->lock);

                write_entry(f, &e, &failed);
                kept_done(&e.k);
                free(e.notice);
                free(e.message);
                free(e.json_line);

                (void) pthread_mutex_lock(&f->lock);
                f->stats.write_failed += failed;
                f->stats.written += !failed;
        }
        f->busy = false;
        (void) pthread_cond_broadcast(&f->drained);
        (void) pthread_mutex_unlock(&f->lock);
        return NULL;
}

int report_feed_new(const ReportFeedConfig *config, ReportFeed **ret) {
        ReportFeed *f;

        f = calloc(1, sizeof(ReportFeed));
        if (!f)
                return -ENOMEM;
        f->config = *config;
        f->stderr_tty = isatty(STDERR_FILENO);
        f->seen = calloc(SEEN_SLOTS, sizeof(Seen));
        if (!f->seen) {
                free(f);
                return -ENOMEM;
        }
        f->files = calloc(SEEN_SLOTS, sizeof(FileSeen));
        if (!f->files) {
                free(f->seen);
                free(f);
                return -ENOMEM;
        }
        (void) pthread_mutex_init(&f->lock, NULL);
        {
                pthread_condattr_t a;

                (void) pthread_condattr_init(&a);
                (void) pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
                (void) pthread_cond_init(&f->wake, &a);
                (void) pthread_condattr_destroy(&a);
        }
        (void) pthread_cond_init(&f->drained, NULL);
        *ret = f;
        return 0;
}

static void stop_thread(ReportFeed *f) {
        if (!f->thread_started)
                return;
        (void) pthread_mutex_lock(&f->lock);
        f->stop = true;
        (void) pthread_cond_signal(&f->wake);
        (void) pthread_mutex_unlock(&f->lock);
}

ReportFeed *report_feed_free(ReportFeed *f) {
        if (!f)
                return NULL;
        if (f->thread_started) {
                bool idle;

                stop_thread(f);
                (void) pthread_mutex_lock(&f->lock);
                idle = f->len == 0 && !f->busy;
                (void) pthread_mutex_unlock(&f->lock);
                /* A writer stuck in write() (a terminal that takes nothing) is left behind:
                 * the feed is about to go with the process, and must not hold it up. */
                if (idle) {
                        (void) pthread_join(f->thread, NULL);
                        f->thread_started = false;
                } else {
                        (void) pthread_detach(f->thread);
                        return NULL;    /* its memory stays for the thread */
                }
        }
        for (unsigned i = 0; i < QUEUE_SIZE; i++) {
                kept_done(&f->queue[i].k);
                free(f->queue[i].notice);
                free(f->queue[i].message);
                free(f->queue[i].json_line);
        }
        for (unsigned i = 0; i < SEEN_SLOTS; i++)
                kept_done(&f->seen[i].k);
        free(f->seen);
        free(f->files);
        safe_close(f->config.file_fd);
        safe_close(f->config.json_fd);
        (void) pthread_mutex_destroy(&f->lock);
        (void) pthread_cond_destroy(&f->wake);
        (void) pthread_cond_destroy(&f->drained);
        free(f);
        return NULL;
}

void report_feed_set_screen(ReportFeed *f, ReportScreenFn fn, void *userdata) {
        f->screen = fn;
        f->screen_userdata = userdata;
}

bool report_feed_wants(const ReportFeed *f, ReportKind kind) {
        return f && kind >= 0 && kind < _REPORT_KIND_MAX && f->config.kinds[kind];
}

static void now_text(char *buf, size_t size) {
        struct timespec ts;
        struct tm tm;
        char zone[8];
        size_t l;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        l = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", localtime_r(&ts.tv_sec, &tm));
        (void) strftime(zone, sizeof(zone), "%z", &tm);
        (void) snprintf(buf + l, size - l, ".%03ld%s", ts.tv_nsec / 1000000, zone);
}

/* Queues an entry for the writer, which takes over `e`'s strings; with the queue full they
 * are freed and the report counted as dropped. */
static void enqueue(ReportFeed *f, Entry *e) {
        if (!f->thread_started) {
                if (pthread_create(&f->thread, NULL, writer, f) != 0) {
                        f->stats.queue_full++;
                        kept_done(&e->k);
                        free(e->notice);
                        free(e->message);
                        free(e->json_line);
                        return;
                }
                f->thread_started = true;
        }
        (void) pthread_mutex_lock(&f->lock);
        if (f->len == QUEUE_SIZE) {
                f->stats.queue_full++;
                (void) pthread_mutex_unlock(&f->lock);
                kept_done(&e->k);
                free(e->notice);
                free(e->message);
                free(e->json_line);
                return;
        }
        f->queue[(f->head + f->len) % QUEUE_SIZE] = *e;
        f->len++;
        f->enqueued++;
        (void) pthread_cond_signal(&f->wake);
        (void) pthread_mutex_unlock(&f->lock);
}

/* Queues a report: for log.target (unless `json_only`) and the JSON file (unless `text_only`). */
static void emit_entry(ReportFeed *f, const Report *r, Entry e) {
        if (f->screen && !e.json_only) {
                char text[LINE_MAX_BYTES];

                (void) report_format_text(r, e.count, text, sizeof(text));
                f->screen(text, f->screen_userdata);
        }
        /* Only the screen, when there is nowhere else to write to. */
        if (f->screen && f->config.target == REPORT_TARGET_STDERR && (f->config.json_fd < 0 || e.text_only))
                return;
        if (e.json_only && f->config.json_fd < 0)
                return;
        now_text(e.time, sizeof(e.time));
        if (kept_copy(&e.k, r) < 0) {
                f->stats.queue_full++;
                return;
        }
        enqueue(f, &e);
}

static void emit(ReportFeed *f, const Report *r, unsigned count) {
        emit_entry(f, r, (Entry) { .count = count });
}

/* Counts the report when it was seen before; otherwise remembers it. Returns true to write it. */
static bool first_time(ReportFeed *f, const Report *r) {
        uint64_t h = report_hash(r);

        for (unsigned i = 0, slot = (unsigned) h & (SEEN_SLOTS - 1); i < SEEN_SLOTS;
             i++, slot = (slot + 1) & (SEEN_SLOTS - 1)) {
                Seen *s = &f->seen[slot];

                if (s->hash == 0) {
                        /* Three quarters full: keep the rest of the table for probing, and
                         * write reports without counting them. */
                        if (f->n_seen >= SEEN_SLOTS / 4 * 3 || kept_copy(&s->k, r) < 0)
                                return true;
                        s->hash = h;
                        s->count = 1;
                        f->n_seen++;
                        return true;
                }
                if (s->hash == h && same(&s->k.r, r)) {
                        s->count++;
                        f->stats.repeated++;
                        return false;
                }
        }
        return true;
}

/* Whether the rate limit lets one more line through this second. */
static bool within_rate(ReportFeed *f) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        if ((uint64_t) ts.tv_sec != f->window) {
                f->window = (uint64_t) ts.tv_sec;
                f->window_count = 0;
        }
        if (f->window_count >= REPORT_FEED_PER_SECOND) {
                f->stats.flood++;
                return false;
        }
        f->window_count++;
        return true;
}

/* Adds `op` to the operations a waiting line names ("stat, access, read"). Under the lock. */
static void add_op(Entry *e, const char *op) {
        const char *ops = e->k.r.op;
        size_t n = strlen(op);
        char *joined;

        if (!ops || !op || !*op)
                return;
        for (const char *p = ops; *p; ) {
                size_t l = strcspn(p, ",");

                if (l == n && strncmp(p, op, n) == 0)
                        return;
                p += l;
                p += strspn(p, ", ");
        }
        if (strlen(ops) + 2 + n >= OPS_MAX || asprintf(&joined, "%s, %s", ops, op) < 0)
                return;
        free(e->k.strings[0]);
        e->k.strings[0] = joined;
        e->k.r.op = joined;
}

/* One line per refused file: the first call on it queues its line, held FILE_HOLD_MS for the
 * calls that follow to add their operations; after that they make none. The JSON file still
 * gets each operation (first_time() counts the repeats). */
static void push_file(ReportFeed *f, const Report *r) {
        uint64_t h = report_hash_op(r, false);

        emit_entry(f, r, (Entry) { .count = 1, .json_only = true });
        for (unsigned i = 0, slot = (unsigned) h & (SEEN_SLOTS - 1); i < SEEN_SLOTS;
             i++, slot = (slot + 1) & (SEEN_SLOTS - 1)) {
                FileSeen *s = &f->files[slot];

                if (s->hash == 0) {
                        uint64_t seq;

                        if (!within_rate(f))
                                return;
                        (void) pthread_mutex_lock(&f->lock);
                        seq = f->enqueued;
                        (void) pthread_mutex_unlock(&f->lock);
                        /* three quarters full: lines without gathering */
                        if (f->n_files < SEEN_SLOTS / 4 * 3) {
                                s->hash = h;
                                s->seq = seq;
                                f->n_files++;
                        }
                        emit_entry(f, r, (Entry) { .count = 1, .text_only = true, .file_hash = h,
                                                   .due_ms = now_ms() + FILE_HOLD_MS });
                        return;
                }
                if (s->hash == h) {
                        (void) pthread_mutex_lock(&f->lock);
                        if (s->seq >= f->dequeued && s->seq < f->enqueued) {
                                unsigned at = (f->head + (unsigned) (s->seq - f->dequeued)) % QUEUE_SIZE;
                                Entry *e = &f->queue[at];

                                if (e->file_hash == h)
                                        add_op(e, r->op);
                        }
                        (void) pthread_mutex_unlock(&f->lock);
                        return;
                }
        }
}

void report_feed_push(ReportFeed *f, const Report *r) {
        if (!f || f->finished || !report_feed_wants(f, r->kind))
                return;
        report_tally_add(&f->tally, r->kind);
        if (!first_time(f, r))
                return;
        if (r->kind == REPORT_FILE) {
                push_file(f, r);
                return;
        }
        if (within_rate(f))
                emit(f, r, 1);
}

void report_feed_lost(ReportFeed *f, ReportKind kind, unsigned n) {
        if (kind == REPORT_FILE) {
                report_feed_lost_file(f, 0, 0, n);
                return;
        }
        if (f && kind >= 0 && kind < _REPORT_KIND_MAX && f->config.kinds[kind]) {
                f->lost[kind] += n;
                f->stats.lost += n;
        }
}

void report_feed_lost_file(ReportFeed *f, unsigned sandbox, unsigned ring, unsigned helper) {
        if (!report_feed_wants(f, REPORT_FILE))
                return;
        f->lost_file[LOST_SANDBOX] += sandbox;
        f->lost_file[LOST_RING] += ring;
        f->lost_file[LOST_HELPER] += helper;
        f->lost[REPORT_FILE] += sandbox + ring + helper;
        f->stats.lost += sandbox + ring + helper;
}

void report_feed_notice(ReportFeed *f, const char *line) {
        Entry e = {};

        if (!f || f->finished)
                return;
        /* A delegated run's reports go to its caller's stderr, its own lines to its broker's
         * report (cli/verb-delegated.c), through the log's sink. */
        if (f->config.target == REPORT_TARGET_STDERR && log_has_sink()) {
                log_notice("%s", line);
                return;
        }
        if (f->screen) {
                f->screen(line, f->screen_userdata);
                return;
        }
        now_text(e.time, sizeof(e.time));
        e.notice = strdup(line);
        if (e.notice)
                enqueue(f, &e);
}

void report_feed_message(ReportFeed *f, const char *kind, const char *line) {
        Entry e = { .kind = kind };

        if (!f || f->finished)
                return;
        if (f->config.target == REPORT_TARGET_STDERR && log_has_sink()) {
                log_notice("%s", line);         /* as report_feed_notice() */
                return;
        }
        if (f->screen) {
                f->screen(line, f->screen_userdata);
                if (f->config.target == REPORT_TARGET_STDERR)
                        return;
        }
        now_text(e.time, sizeof(e.time));
        e.message = strdup(line);
        if (e.message)
                enqueue(f, &e);
}

void report_feed_json_line(ReportFeed *f, char *line) {
        Entry e = { .json_line = line };

        if (!f || f->finished || f->config.json_fd < 0) {
                free(line);
                return;
        }
        enqueue(f, &e);
}

/* The kernel leaves out the failed calls that cannot be refusals (bpf/scudo-files.bpf.c): what
 * was dropped are candidates, each of which may have been one. */
static void file_lost_line(ReportFeed *f, char *line, size_t size) {
        static const char *const share[_LOST_SHARE_MAX] = {
                [LOST_SANDBOX] = "this sandbox's share in the kernel",
                [LOST_RING] = "the kernel's buffer that all sandboxes share",
                [LOST_HELPER] = "this sandbox's share of the helper",
        };
        size_t l;

        l = (size_t) snprintf(line, size, "file: %u candidate refusals were not examined (more at once "
                              "than ", f->lost[REPORT_FILE]);
        for (LostShare i = 0, n = 0; i < _LOST_SHARE_MAX && l < size; i++) {
                if (f->lost_file[i] == 0)
                        continue;
                l += (size_t) snprintf(line + l, size - l, "%s%s: %u", n++ ? "; " : "", share[i],
                                       f->lost_file[i]);
        }
        if (l < size)
                (void) snprintf(line + l, size - l, "); refusals among them are not reported");
}

void report_feed_finish(ReportFeed *f, unsigned timeout_ms) {
        char line[512];
        struct timespec deadline;
        unsigned dropped;

        if (!f || f->finished)
                return;
        /* a file's repeats are in its one line already; the JSON file counts them */
        for (unsigned i = 0; i < SEEN_SLOTS; i++)
                if (f->seen[i].hash && f->seen[i].count > 1) {
                        const Report *r = &f->seen[i].k.r;

                        emit_entry(f, r, (Entry) { .count = f->seen[i].count,
                                                   .json_only = r->kind == REPORT_FILE });
                }
        for (ReportKind k = 0; k < _REPORT_KIND_MAX; k++) {
                if (f->lost[k] == 0)
                        continue;
                if (k == REPORT_FILE)
                        file_lost_line(f, line, sizeof(line));
                else
                        (void) snprintf(line, sizeof(line), "%s: %u more refusals not reported (too many "
                                        "at once for the helper's share)", report_kind_to_string(k),
                                        f->lost[k]);
                report_feed_message(f, "lost", line);
        }
        (void) pthread_mutex_lock(&f->lock);
        dropped = f->stats.flood + f->stats.queue_full;
        (void) pthread_mutex_unlock(&f->lock);
        if (dropped > 0) {
                (void) snprintf(line, sizeof(line), "%u refusal reports dropped (more than %u a second, "
                                "or written slower than they came)", dropped, REPORT_FEED_PER_SECOND);
                report_feed_message(f, "lost", line);
        }
        f->finished = true;
        (void) pthread_mutex_lock(&f->lock);
        f->flush = true;
        (void) pthread_cond_signal(&f->wake);
        (void) pthread_mutex_unlock(&f->lock);
        if (!f->thread_started)
                return;

        (void) clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }
        (void) pthread_mutex_lock(&f->lock);
        while ((f->len > 0 || f->busy) &&
               pthread_cond_timedwait(&f->drained, &f->lock, &deadline) != ETIMEDOUT)
                ;
        (void) pthread_mutex_unlock(&f->lock);
}

ReportFeedStats report_feed_stats(const ReportFeed *f) {
        ReportFeedStats s;

        (void) pthread_mutex_lock((pthread_mutex_t *) &f->lock);
        s = f->stats;
        (void) pthread_mutex_unlock((pthread_mutex_t *) &f->lock);
        return s;
}

const ReportTally *report_feed_tally(const ReportFeed *f) {
        return &f->tally;
}

ReportTarget report_feed_target(const ReportFeed *f) {
        return f->config.target;
}
