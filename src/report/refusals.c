/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/file-judge.h"
#include "report/net-judge.h"
#include "report/refusals.h"
#include "report/run-record.h"
#include "util/path-util.h"
#include "util/strv.h"

#define FINISH_TIMEOUT_MS 1000U
#define USAGE_TIMEOUT_MS 2000U

struct Refusals {
        const Plan *plan;
        bool json;
        ReportFeed *feed;
        FileJudge *files;
        NetJudge *net;
        BpfdFilePrefixes *prefixes;     /* for the helper, built on first use */
        size_t prefixes_size;
        BpfdFileLost lost_by;           /* the last breakdown the helper sent, not yet counted */
};

/* scudo writes these files outside any sandbox, in directories a command may write: a symlink
 * planted in a file's place (to ~/.bashrc, say) must not make scudo append what a command chose
 * there, nor a hard link, nor a FIFO make it wait. */
static int open_report_file(const char *what, const char *path, bool truncate, int *ret_fd,
                            char **ret_error) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = path_open_no_symlinks(path, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
                                   0600);
        if (fd == -ELOOP)
                return asprintf(ret_error, "%s '%s': a symlink is in the way; not writing through it", what,
                                path) < 0 ? -ENOMEM : -ELOOP;
        if (fd == -ENXIO)
                return asprintf(ret_error, "%s '%s' is not a regular file; not writing to it", what, path) <
                                       0 ?
                               -ENOMEM :
                               -ENXIO;
        if (fd == -EINVAL)
                return asprintf(ret_error, "%s '%s' is not a clean absolute path", what, path) < 0 ?
                               -ENOMEM :
                               -EINVAL;
        if (fd < 0)
                return asprintf(ret_error, "%s '%s' cannot be opened: %s", what, path, strerror(-fd)) < 0 ?
                        -ENOMEM : fd;
        if (fstat(fd, &st) < 0)
                return asprintf(ret_error, "%s '%s' cannot be opened: %m", what, path) < 0 ? -ENOMEM :
                                                                                             -errno;
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
                return asprintf(ret_error, "%s '%s' is not a regular file of yours with a single name; not "
                                "writing to it", what, path) < 0 ? -ENOMEM : -EPERM;
        /* One run per --report-json file: what `scudo suggest` reads is this run's. */
        if (truncate && ftruncate(fd, 0) < 0)
                return asprintf(ret_error, "%s '%s' cannot be emptied: %m", what, path) < 0 ? -ENOMEM :
                                                                                              -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int refusals_new(const Plan *plan, const char *json_path, Refusals **ret, char **ret_error) {
        _cleanup_(refusals_freep) Refusals *r = NULL;
        ReportFeedConfig c = { .file_fd = -EBADF, .json_fd = -EBADF };
        const char *target = plan->log_target;
        int k;

        *ret_error = NULL;
        r = calloc(1, sizeof(Refusals));
        if (!r)
                return -ENOMEM;

        c.kinds[REPORT_FILE] = !plan->log_report || strv_contains(plan->log_report, "file");
        c.kinds[REPORT_NET] = !plan->log_report || strv_contains(plan->log_report, "net");
        c.kinds[REPORT_DNS] = !plan->log_report || strv_contains(plan->log_report, "dns");
        if (!target || streq(target, "stderr"))
                c.target = REPORT_TARGET_STDERR;
        else if (streq(target, "journald"))
                c.target = REPORT_TARGET_JOURNAL;
        else {
                c.target = REPORT_TARGET_FILE;
                k = open_report_file("log.target", target, false, &c.file_fd, ret_error);
                if (k < 0)
                        return k;
        }
        if (json_path) {
                k = open_report_file("--report-json", json_path, true, &c.json_fd, ret_error);
                if (k < 0) {
                        safe_close(c.file_fd);
                        return k;
                }
        }
        k = report_feed_new(&c, &r->feed);
        if (k < 0) {
                safe_close(c.file_fd);
                safe_close(c.json_fd);
                return k;
        }
        k = file_judge_new(plan, getenv("HOME"), &r->files);
        if (k >= 0)
                k = net_judge_new(plan, &r->net);
        if (k < 0)
                return k;
        r->plan = plan;
        r->json = json_path;
        if (r->json) {
                char *line;

                k = run_record_json(plan, &line);
                if (k < 0)
                        return k;
                report_feed_json_line(r->feed, line);
        }
        *ret = TAKE_PTR(r);
        return 0;
}

Refusals *refusals_free(Refusals *r) {
        if (!r)
                return NULL;
        report_feed_free(r->feed);
        file_judge_free(r->files);
        net_judge_free(r->net);
        free(r->prefixes);
        free(r);
        return NULL;
}

bool refusals_want_files(const Refusals *r) {
        return report_feed_wants(r->feed, REPORT_FILE);
}

int refusals_file_prefixes(Refusals *r, const void **ret, size_t *ret_size) {
        int k;

        if (!r->prefixes) {
                k = file_judge_prefixes(r->plan, &r->prefixes, &r->prefixes_size);
                if (k < 0)
                        return k;
        }
        *ret = r->prefixes;
        *ret_size = r->prefixes_size;
        return 0;
}

ReportFeed *refusals_feed(Refusals *r) {
        return r->feed;
}

void refusals_on_event(const BpfdEvent *e, void *userdata) {
        Refusals *r = userdata;
        unsigned lost = 0;
        Report rep;

        if (net_judge(r->net, e, &rep, &lost) > 0)
                report_feed_push(r->feed, &rep);
        else if (lost > 0)
                report_feed_lost(r->feed, REPORT_NET, lost);
}

void refusals_on_file_lost(const BpfdFileLost *l, void *userdata) {
        Refusals *r = userdata;

        r->lost_by = *l;
}

void refusals_on_file_event(const BpfdFileEvent *e, void *userdata) {
        Refusals *r = userdata;
        Report rep;

        if (e->dropped > 0) {
                /* a helper that sends no breakdown: its share, as far as anyone can tell */
                if (r->lost_by.sandbox + r->lost_by.ring + r->lost_by.helper == 0)
                        r->lost_by.helper = e->dropped;
                report_feed_lost_file(r->feed, r->lost_by.sandbox, r->lost_by.ring, r->lost_by.helper);
        }
        r->lost_by = (BpfdFileLost) {};
        if (file_judge(r->files, e, &rep) > 0)
                report_feed_push(r->feed, &rep);
}

/* Which network.allow rules were reached, or NULL when that is not known: no network rules,
 * no helper, or no answer from it (said once). */
static bool *allow_reached(Refusals *r, NetSession *net) {
        const NetSessionHandler h = {
                .event = refusals_on_event,
                .file_event = refusals_on_file_event,
                .file_lost = refusals_on_file_lost,
                .userdata = r,
        };
        bool *reached = NULL;
        size_t n = 0;
        char line[BPFD_REASON_MAX + 128];
        int k;

        if (!net || !r->plan->network_filtered || strv_length(r->plan->net_allow) == 0)
                return NULL;
        k = net_session_usage(net, &h, USAGE_TIMEOUT_MS, &reached, &n);
        if (k >= 0 && n == strv_length(r->plan->net_allow))
                return reached;
        free(reached);
        (void) snprintf(line, sizeof(line), "which network.allow rules were reached is not known: %s",
                        k < 0 ? net_session_error() : "the helper answered for other rules");
        report_feed_notice(r->feed, line);
        return NULL;
}

void refusals_finish(Refusals *r, NetSession *net, const struct timespec *started) {
        char *line;

        if (!r)
                return;
        if (r->json && started) {
                _cleanup_free_ bool *reached = allow_reached(r, net);

                if (usage_record_json(r->plan, started, reached, &line) >= 0)
                        report_feed_json_line(r->feed, line);
        }
        report_feed_finish(r->feed, FINISH_TIMEOUT_MS);
}
