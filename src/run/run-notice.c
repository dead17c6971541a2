/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Refusals a user sees when the reports go elsewhere (docs/terminal.md). With log.target the
 * journal or a file and the command at the terminal, nothing of scudo's is put into the
 * command's output: the terminal's title says how many refusals there were so far (checked
 * every second), and at the end one line on stderr says how many of each kind and where to
 * read them. A delegated run (its caller's tool output is what an agent reads) and --tui (its
 * context area shows them) get neither. */
#include <unistd.h>

#include "run/run-internal.h"

#define NOTICE_PERIOD_USEC (1000 * 1000)

static bool notice_wanted(const RunContext *c) {
        return c->pty && !c->tui && !c->caller && c->refusals &&
               report_feed_target(refusals_feed(c->refusals)) != REPORT_TARGET_STDERR;
}

/* "3 refusals (2 file, 1 network)" */
static void describe(const ReportTally *t, char *buf, size_t size) {
        char kinds[128];
        unsigned total = report_tally_total(t);
        (void) report_tally_format(t, kinds, sizeof(kinds));
        (void) snprintf(buf, size, "%u refusal%s (%s)", total, total == 1 ? "" : "s", kinds);
}

/* Where the reports are: the command that shows this run's, or the file. */
static void where(const RunContext *c, char *buf, size_t size) {
        if (report_feed_target(refusals_feed(c->refusals)) == REPORT_TARGET_JOURNAL)
                (void) snprintf(buf, size, "journalctl -t scudo _PID=%ld", (long) getpid());
        else
                (void) snprintf(buf, size, "%s", strempty(c->notice_file));
}

static int on_notice_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        RunContext *c = userdata;
        const ReportTally *t = report_feed_tally(refusals_feed(c->refusals));
        unsigned total = report_tally_total(t);

        if (total != c->notice_shown) {
                char what[192], at[256], title[512];
                c->notice_shown = total;
                describe(t, what, sizeof(what));
                where(c, at, sizeof(at));
                (void) snprintf(title, sizeof(title), "scudo: %s: %s", what, at);
                pty_relay_title(c->pty, title);
        }
        return sd_event_source_set_time_relative(s, NOTICE_PERIOD_USEC);
}

void run_notice_start(RunContext *c, const char *log_target) {
        if (!notice_wanted(c))
                return;
        c->notice_file = log_target;
        /* Floating: the loop owns it, and frees it with itself. */
        if (sd_event_add_time_relative(c->event, &c->notice_timer, CLOCK_MONOTONIC, NOTICE_PERIOD_USEC, 0,
                                       on_notice_timer, c) < 0 ||
            sd_event_source_set_floating(c->notice_timer, true) < 0) {
                c->notice_timer = NULL;
                return;
        }
        (void) sd_event_source_set_enabled(c->notice_timer, SD_EVENT_ON);
}

void run_notice_finish(RunContext *c) {
        if (!c->notice_timer)
                return;
        (void) sd_event_source_set_enabled(c->notice_timer, SD_EVENT_OFF);
        c->notice_timer = NULL;
        const ReportTally *t = report_feed_tally(refusals_feed(c->refusals));
        if (report_tally_total(t) == 0 || !isatty(STDERR_FILENO))
                return;
        char what[192], at[256];
        describe(t, what, sizeof(what));
        where(c, at, sizeof(at));
        fprintf(stderr, "scudo: %s, not shown here: %s\n", what, at);
}
