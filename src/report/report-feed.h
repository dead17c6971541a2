/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* One feed for the refusal reports of a run, whatever their kind, to every place they go:
 * the plan's log.target (stderr, one line each; the journal, with SCUDO_* fields; or a file)
 * and --report-json (one JSON object per line), or the --tui context area instead of stderr.
 *
 * Identical reports are counted, not repeated: the first is written at once, and at the end
 * of the run a line says how often each came. A refused file makes one line, whatever the
 * calls on it: the line waits a moment (FILE_HOLD_MS) for the calls that follow the first
 * to add their operations, and later ones are counted in --report-json only. More than
 * REPORT_FEED_PER_SECOND a second are dropped and counted. Nothing here ever blocks the
 * caller: the writing is done by a thread of its own, from a queue; with the queue full (a
 * slow terminal, a journal that does not take messages, a file on a full disk) reports are
 * dropped and counted, and the command goes on. */

#include <stdbool.h>

#include "report/report.h"
#include "report/report-tally.h"
#include "util/macro.h"

#define REPORT_FEED_PER_SECOND 50U

typedef enum ReportTarget {
        REPORT_TARGET_STDERR,
        REPORT_TARGET_JOURNAL,
        REPORT_TARGET_FILE,
} ReportTarget;

typedef struct ReportFeedConfig {
        ReportTarget target;
        int file_fd;                    /* REPORT_TARGET_FILE: taken over */
        int json_fd;                    /* --report-json, or -EBADF: taken over */
        bool kinds[_REPORT_KIND_MAX];   /* which kinds are reported (log.report) */
} ReportFeedConfig;

typedef struct ReportFeed ReportFeed;

/* The --tui context area: called in the caller's thread with each line (no newline). */
typedef void (*ReportScreenFn)(const char *line, void *userdata);

int report_feed_new(const ReportFeedConfig *config, ReportFeed **ret);
ReportFeed *report_feed_free(ReportFeed *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(ReportFeed *, report_feed_free);

/* Lines that would go to stderr go to `fn` instead. */
void report_feed_set_screen(ReportFeed *f, ReportScreenFn fn, void *userdata);

bool report_feed_wants(const ReportFeed *f, ReportKind kind);
void report_feed_push(ReportFeed *f, const Report *r);
/* `n` refusals of this kind that were dropped before they reached scudo (the kernel's or the
 * helper's limits). */
void report_feed_lost(ReportFeed *f, ReportKind kind, unsigned n);
/* File candidates the kernel or the helper dropped, by the share that was exceeded: this
 * sandbox's in the kernel, the ring buffer all share, this sandbox's of the helper. */
void report_feed_lost_file(ReportFeed *f, unsigned sandbox, unsigned ring, unsigned helper);
/* A line of scudo's own about the reports ("file refusals are not reported: …"), once, where
 * log.target says (or the screen), like every line scudo writes on its own account. */
void report_feed_notice(ReportFeed *f, const char *line);

/* A line of scudo's own that belongs where the reports go: log.target (stderr, the journal with
 * SCUDO_KIND=`kind`, or the file), or the --tui context area instead of stderr. The delegation
 * broker reports each request so (src/broker/server.c). */
void report_feed_message(ReportFeed *f, const char *kind, const char *line);

/* A line of the run's own for the --report-json file only (run-record.h), taken over. */
void report_feed_json_line(ReportFeed *f, char *line);

/* The end of the run: the counts of repeated and dropped reports, then whatever is queued is
 * written, waiting at most `timeout_ms` for it. The feed takes nothing more after this. */
void report_feed_finish(ReportFeed *f, unsigned timeout_ms);

/* For the tests and --report-json readers: how many were written, dropped, repeated. */
typedef struct ReportFeedStats {
        unsigned written, repeated, flood, queue_full, write_failed, lost;
} ReportFeedStats;
ReportFeedStats report_feed_stats(const ReportFeed *f);

/* How many refusals were pushed, of each kind (report-tally.h), and where they go. */
const ReportTally *report_feed_tally(const ReportFeed *f);
ReportTarget report_feed_target(const ReportFeed *f);
