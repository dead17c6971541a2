/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A run's slice and scudo-bpfd's session for it (run-internal.h). */

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "git/persist-check.h"

#include "run/run-internal.h"

/* How long the helper may take to say where the command wrote: past it, the walk of
 * everything is no slower than waiting. */
#define WRITTEN_TIMEOUT_MS 2000U

int run_dispatch_reports(RunContext *c) {
        const NetSessionHandler h = {
                .event = refusals_on_event,
                .file_event = refusals_on_file_event,
                .file_lost = refusals_on_file_lost,
                .userdata = c->refusals,
        };
        return net_session_dispatch(c->net, &h);
}

static int run_on_net_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RunContext *c = userdata;
        if (run_dispatch_reports(c) < 0)
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return 0;
}

/* A session the helper could not give: with network rules the run fails (closed), logged;
 * for file reports alone it goes on, and says why: file reports are no confinement. */
static int run_helper_session_failed(RunContext *c, const Plan *plan, int r) {
        const char *why = net_session_error();
        char line[512];

        c->net = net_session_free(c->net);
        if (!plan->network_filtered) {
                (void) snprintf(line, sizeof(line), "file refusals are not reported: %s%s%s",
                                r == -ECONNREFUSED || r == -ENOENT ? "scudo-bpfd is not reachable" :
                                "scudo-bpfd refused", *why ? " (" : "", *why ? why : "");
                if (*why)
                        (void) strncat(line, ")", sizeof(line) - strlen(line) - 1);
                report_feed_notice(refusals_feed(c->refusals), line);
                return 0;
        }
        if (r == -ECONNREFUSED || r == -ENOENT)
                return log_error_errno(r, "The profile has network rules, but scudo-bpfd is not "
                                       "reachable (%s). Enable it with 'systemctl enable --now "
                                       "scudo-bpfd.socket' (see docs/network.md); the command "
                                       "was not run.", *why ? why : "no socket");
        return log_error_errno(r, "scudo-bpfd could not restrict the network: %s%s%m",
                               why, *why ? ": " : "");
}

/* The helper's session for the slice's cgroup, asked for: the helper sets it up while scudo
 * gets the unit ready, and run_helper_session_ready() waits for it. */
static int run_helper_session_begin(RunContext *c, const Plan *plan, const char *cgroup) {
        /* with file reports, the helper records where the command writes (persist-check.h) */
        unsigned flags = refusals_want_files(c->refusals) ? NET_SESSION_FILES | NET_SESSION_RECORD : 0;
        int r;

        NetSessionRules rules = {
                .filtered = plan->network_filtered,
                .allow = plan->net_allow,
                .deny = plan->net_deny,
                .dns = plan->dns,
        };
        if (flags & NET_SESSION_FILES) {
                r = refusals_file_prefixes(c->refusals, &rules.file_prefixes, &rules.file_prefixes_size);
                if (r < 0)
                        return log_oom();
        }
        r = net_session_start(cgroup, &rules, flags, &c->net);
        if (r < 0)
                return run_helper_session_failed(c, plan, r);
        return 0;
}

int run_helper_session_ready(RunContext *c, const Plan *plan) {
        char line[512];
        int r;

        if (!c->net || c->net_source)
                return 0;
        r = net_session_wait(c->net);
        if (r < 0)
                return run_helper_session_failed(c, plan, r);
        if (refusals_want_files(c->refusals) && net_session_notice(c->net)) {
                (void) snprintf(line, sizeof(line), "file refusals are not reported: %s",
                                net_session_notice(c->net));
                report_feed_notice(refusals_feed(c->refusals), line);
        }
        r = sd_event_add_io(c->event, &c->net_source, net_session_get_fd(c->net), EPOLLIN,
                            run_on_net_event, c);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the network helper: %m");
        return 0;
}

static int append_slice_properties(sd_bus_message *m, void *userdata) {
        return sd_bus_message_append(m, "(sv)(sv)",
                                     "Description", "s", "scudo: the slice of one run",
                                     "CollectMode", "s", "inactive-or-failed");
}

static int on_slice_start_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        RunContext *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        char *why;

        if (!e)
                return 0;       /* its job's end comes as JobRemoved */
        why = strdup(e->message ?: e->name ?: "unknown error");
        free(c->slice_start_error);
        c->slice_start_error = why;
        c->slice_job_done = true;
        return 0;
}

static int on_manager_cgroup(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        RunContext *c = userdata;
        const char *cgroup;

        if (sd_bus_message_is_method_error(m, NULL) ||
            sd_bus_message_read(m, "v", "s", &cgroup) < 0 || !path_is_absolute(cgroup))
                return 0;       /* the slice's own property is read instead */
        free(c->manager_cgroup);
        c->manager_cgroup = strdup(cgroup);
        return 0;
}

/* The slice's cgroup as the manager names it, without asking once more: <the manager's>/
 * app.slice/<slice> (app-scudo_<id>.slice nests in app.slice, no part needs escaping), when that's a
 * directory of the cgroup file system. NULL otherwise: then its ControlGroup is read. Should the
 * guess be wrong after all, scudo-bpfd refuses it (a cgroup of someone else's, or none). */
static char *slice_cgroup_from_manager(const RunContext *c) {
        static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
        _cleanup_free_ char *cgroup = NULL;
        struct stat st;
        struct statfs sf;
        size_t l;

        if (!c->manager_cgroup)
                return NULL;
        l = strlen(c->manager_cgroup);
        if (asprintf(&cgroup, "%s%sapp.slice/%s", c->manager_cgroup,
                     l > 0 && c->manager_cgroup[l - 1] == '/' ? "" : "/", c->slice_name) < 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                _cleanup_free_ char *dir = NULL;

                if (statfs(roots[i], &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
                        continue;
                if (asprintf(&dir, "%s%s", roots[i], cgroup) < 0)
                        return NULL;
                return stat(dir, &st) >= 0 && S_ISDIR(st.st_mode) ? TAKE_PTR(cgroup) : NULL;
        }
        return NULL;
}

/* Asks for the run's slice; run_start_restricted_slice() waits for it. Between the two, scudo
 * does what needs no slice, while the service manager starts it. */
int run_begin_slice(RunContext *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = watcher_add_unit(c->watcher_fd, c->slice_name);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the unit watcher: %m");

        r = transient_unit_message(c->bus, c->slice_name, append_slice_properties, NULL, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to build the slice: %m");
        r = sd_bus_call_async(c->bus, NULL, m, on_slice_start_reply, c, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to start the run's slice: %m");
        c->slice_asked = true;
        /* answered before the slice's job is done: its cgroup then needs no call of its own */
        (void) sd_bus_call_method_async(c->bus, NULL, SD_DEST, SD_PATH, "org.freedesktop.DBus.Properties",
                                        "Get", on_manager_cgroup, c, "ss", SD_MANAGER, "ControlGroup");
        return 0;
}

/* Waits for the run's slice and asks scudo-bpfd to restrict (or watch) its cgroup. The service
 * is started in it only once the helper has answered (run_helper_session_ready()), so the
 * command's first instruction already runs under the network rules and its first refusal is
 * reported. */
int run_start_restricted_slice(RunContext *c, const Plan *plan) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *slice_path = NULL, *cgroup = NULL;
        int r;

        while (!c->slice_job_done) {
                r = sd_event_run(c->event, UINT64_MAX);
                if (r < 0)
                        return log_error_errno(r, "Lost the connection to the service manager: %m");
        }
        if (c->slice_start_error)
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "systemd refused to start the run's slice: %s",
                                       c->slice_start_error);
        if (!streq_ptr(c->slice_job_result, "done"))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "The run's slice did not start (%s)",
                                       strempty(c->slice_job_result));

        cgroup = slice_cgroup_from_manager(c);
        if (cgroup)
                goto found;
        r = sd_bus_path_encode(SD_PATH "/unit", c->slice_name, &slice_path);
        if (r >= 0)
                r = sd_bus_get_property_string(c->bus, SD_DEST, slice_path, "org.freedesktop.systemd1.Slice",
                                               "ControlGroup", &e, &cgroup);
        if (r < 0 || !cgroup || !*cgroup)
                return log_error_errno(r < 0 ? r : -ENODATA,
                                       "Cannot find the cgroup of the run's slice: %m");
found:
        c->in_slice = true;
        return run_helper_session_begin(c, plan, cgroup);
}

void run_stop_slice(RunContext *c) {
        /* asked for and not refused: whether its job is done or not, stopping it ends both */
        if (!c->slice_asked || c->slice_start_error || !c->bus)
                return;
        c->slice_asked = false;
        /* Waited for: a call whose sender has left the bus may be refused by the service
         * manager (it asks the bus who sent it), and the slice would stay. */
        (void) sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", NULL, NULL,
                                  "ss", c->slice_name, "replace");
}

static int check_persistence(RunContext *c, const Plan *plan) {
        _cleanup_free_ BpfdDirId *dirs = NULL;
        _cleanup_free_ ino_t *inos = NULL;
        size_t n = 0;
        int r;

        if (!c->net)
                return persist_check(plan, &c->unit_start);
        r = net_session_written(c->net, NULL, WRITTEN_TIMEOUT_MS, &dirs, &n);
        if (r >= 0)
                inos = calloc(MAX(n, (size_t) 1), sizeof(ino_t));
        if (!inos) {
                log_debug("No record of where the command wrote (%s): looking everywhere it may write",
                          r < 0 ? net_session_error() : "out of memory");
                return persist_check(plan, &c->unit_start);
        }
        for (size_t i = 0; i < n; i++)
                inos[i] = (ino_t) dirs[i].ino;
        return persist_check_written(plan, &c->unit_start, inos, n);
}

static double ms_since(clockid_t clock, const struct timespec *t0) {
        struct timespec t;
        if (clock_gettime(clock, &t) < 0)
                return 0;
        return (double) (t.tv_sec - t0->tv_sec) * 1e3 + (double) (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Timed as a whole (the helper's answer and the walk), for `-v`: what the check costs a run is
 * read off the run itself (tools/bench-persist), not guessed from two builds' difference. */
int run_check_persistence(RunContext *c, const Plan *plan) {
        struct timespec wall = {}, cpu = {};
        (void) clock_gettime(CLOCK_MONOTONIC, &wall);
        (void) clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
        int r = check_persistence(c, plan);
        log_debug("What stays behind: checked in %.2f ms (%.2f ms of CPU)", ms_since(CLOCK_MONOTONIC, &wall),
                  ms_since(CLOCK_THREAD_CPUTIME_ID, &cpu));
        return r;
}
