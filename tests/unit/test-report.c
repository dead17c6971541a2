/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Refusal reports (src/report/): what a command chose is escaped in every form; the plan entry
 * that refused an access is the one named; what is not the sandbox's doing makes no report;
 * the feed counts repeats, limits floods, and never waits on a writer that is stuck. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/file-judge.h"
#include "report/net-judge.h"
#include "report/report-feed.h"
#include "report/report-format.h"
#include "report/run-record.h"
#include "report/suggest.h"
#include "tap.h"
#include "plan/plan-harden.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/text-escape.h"

static void test_escape(void) {
        char buf[256];

        text_escape("a\x1b[2Jb\r\n\x07", buf, sizeof(buf));
        TAP_STREQ(buf, "a\\x1b[2Jb\\x0d\\x0a\\x07", "escape sequences and line breaks escaped");
        text_escape("caf\xc3\xa9 \xe2\x82\xac", buf, sizeof(buf));
        TAP_STREQ(buf, "caf\xc3\xa9 \xe2\x82\xac", "UTF-8 text stays");
        text_escape("\xc2\x9b" "31m", buf, sizeof(buf));
        TAP_STREQ(buf, "\\xc2\\x9b31m", "a C1 control (CSI) in UTF-8 escaped");
        text_escape("\x9b" "31m \xff \xc3", buf, sizeof(buf));
        TAP_STREQ(buf, "\\x9b31m \\xff \\xc3", "bytes that are not UTF-8 escaped");
        text_escape("a\\x1b", buf, sizeof(buf));
        TAP_STREQ(buf, "a\\\\x1b", "a backslash is escaped, so no escape can be faked");
        text_escape("\x1b\x1b\x1b", buf, 6);
        TAP_STREQ(buf, "\\x1b", "cut between escapes, never inside one");
}

static void test_format(void) {
        Report r = {
                .kind = REPORT_FILE,
                .op = "read",
                .target = "/home/u/.ssh/id\x1b]0;pwned\x07",
                .error = EACCES,
                .pid = 42,
                .comm = "ca\x1bt",
                .rule = "filesystem.deny \"~/.ssh\"",
                .origin = "<built-in>/default.toml:20",
                .access = "deny",
        };
        char line[1024];

        report_format_text(&r, 1, line, sizeof(line));
        TAP_STREQ(line,
                  "file: refused read of '/home/u/.ssh/id\\x1b]0;pwned\\x07' (EACCES) by pid 42 (ca?t); "
                  "by <built-in>/default.toml:20 filesystem.deny \"~/.ssh\"",
                  "a file report as text");
        report_format_text(&r, 3, line, sizeof(line));
        TAP_CHECK(strstr(line, "\"~/.ssh\" (3 times)") != NULL, "repeats counted: %s", line);
        report_format_json(&r, 1, "2026-01-01T00:00:00.000+0000", line, sizeof(line));
        TAP_STREQ(line, "{\"kind\":\"file\",\"time\":\"2026-01-01T00:00:00.000+0000\",\"op\":\"read\","
                  "\"path\":\"/home/u/.ssh/id\\\\x1b]0;pwned\\\\x07\",\"error\":\"EACCES\",\"pid\":42,"
                  "\"comm\":\"ca?t\",\"rule\":\"filesystem.deny \\\"~/.ssh\\\"\","
                  "\"origin\":\"<built-in>/default.toml:20\",\"access\":\"deny\",\"count\":1}",
                  "a file report as JSON");

        r = (Report) { .kind = REPORT_NET, .op = "connect", .target = "192.0.2.9:443", .detail = "tcp",
                       .pid = 7, .comm = "curl", .rule = "no rule allows it" };
        report_format_text(&r, 1, line, sizeof(line));
        TAP_STREQ(line,
                  "network: refused connection to 192.0.2.9:443 (tcp) by pid 7 (curl); no rule allows it",
                  "a connection as text");
}

static void test_net_judge(void) {
        _cleanup_(net_judge_freep) NetJudge *j = NULL;
        char *deny[] = { (char *) "198.51.100.0/24:443", (char *) "telemetry.example.net", NULL };
        char *deny_origin[] = { (char *) "--net-deny", (char *) "/p/.scudo.toml:3", NULL };
        Plan plan = { .network_filtered = true, .net_deny = deny, .net_deny_origin = deny_origin };
        BpfdEvent e = { .kind = BPFD_EVENT_CONNECT, .pid = 9, .port = 443, .protocol = 6,
                        .addr = { [10] = 0xff, [11] = 0xff, 198, 51, 100, 7 } };
        unsigned lost;
        Report r;

        TAP_CHECK(net_judge_new(&plan, &j) == 0, "net judge made");
        TAP_CHECK(net_judge(j, &e, &r, &lost) == 1 &&
                          streq(r.rule, "network.deny \"198.51.100.0/24:443\"") &&
                          streq_ptr(r.origin, "--net-deny") && streq(r.target, "198.51.100.7:443"),
                  "a connection refused by a deny rule names it: %s (%s)", r.rule, strempty(r.origin));
        e.port = 80;
        TAP_CHECK(net_judge(j, &e, &r, &lost) == 1 && streq(r.rule, "no rule allows it") && !r.origin,
                  "another port: no rule allows it");
        e = (BpfdEvent) { .kind = BPFD_EVENT_DNS, .qtype = 28 };
        snprintf(e.name, sizeof(e.name), "a.telemetry.example.net");
        TAP_CHECK(net_judge(j, &e, &r, &lost) == 1 && streq(r.rule, "no rule allows it"),
                  "a name below a host rule is not that rule's");
        snprintf(e.name, sizeof(e.name), "telemetry.example.net");
        TAP_CHECK(net_judge(j, &e, &r, &lost) == 1 && r.kind == REPORT_DNS &&
                          streq(r.rule, "network.deny \"telemetry.example.net\"") &&
                          streq_ptr(r.origin, "/p/.scudo.toml:3"),
                  "a refused name names its deny rule");
        e = (BpfdEvent) { .kind = BPFD_EVENT_LOST, .count = 5 };
        TAP_CHECK(net_judge(j, &e, &r, &lost) == 0 && lost == 5, "a count of lost events is no report");
}

static BpfdFileEvent file_event(uint32_t nr, uint32_t flags, int error, const char *path) {
        BpfdFileEvent e = { .nr = nr, .flags = flags, .error = -error, .dirfd = AT_FDCWD };

        memcpy(e.path, path, MIN(strlen(path) + 1, sizeof(e.path)));
        e.path[sizeof(e.path) - 1] = 0;
        snprintf(e.comm, sizeof(e.comm), "cat");
        return e;
}

static void test_file_judge(void) {
        char dir[] = "/tmp/test-report-XXXXXX", p[PATH_MAX], home[PATH_MAX];
        _cleanup_(plan_freep) Plan *plan = plan_new();
        _cleanup_(file_judge_freep) FileJudge *j = NULL;
        BpfdFileEvent e;
        Report r;

        TAP_CHECK(mkdtemp(dir) != NULL, "a directory to judge in");
        snprintf(home, sizeof(home), "%s/home", dir);
        snprintf(p, sizeof(p), "mkdir -p %s/home/.ssh %s/home/proj/.git %s/home/proj/ro %s/tmp && touch "
                 "%s/home/.ssh/id %s/home/.bashrc %s/home/proj/ro/f", dir, dir, dir, dir, dir, dir, dir);
        TAP_CHECK(system(p) == 0, "files made");

        snprintf(p, sizeof(p), "%s/home", dir);
        plan_add_path(plan, PATH_ACCESS_HIDE, p, "<built-in>/default.toml:13");
        snprintf(p, sizeof(p), "%s/home/.ssh", dir);
        plan_add_path(plan, PATH_ACCESS_DENY, p, "<built-in>/default.toml:20");
        snprintf(p, sizeof(p), "%s/home/proj", dir);
        plan_add_path(plan, PATH_ACCESS_WRITE, p, "<built-in>/default.toml:17");
        snprintf(p, sizeof(p), "%s/home/proj/ro", dir);
        plan_add_path(plan, PATH_ACCESS_READ, p, "--fs-read");
        snprintf(p, sizeof(p), "%s/home/proj", dir);
        plan->working_directory = strdup(p);
        TAP_CHECK(file_judge_new(plan, home, &j) == 0, "file judge made");

        snprintf(p, sizeof(p), "%s/home/.ssh/id", dir);
        e = file_event(257, O_RDONLY, EACCES, p);
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq(r.rule, "filesystem.deny \"~/.ssh\"") &&
                          streq_ptr(r.origin, "<built-in>/default.toml:20") && streq(r.op, "read") &&
                          r.error == EACCES,
                  "a denied file: %s (%s)", r.rule, strempty(r.origin));
        snprintf(p, sizeof(p), "%s/home/.bashrc", dir);
        e = file_event(257, O_RDONLY, ENOENT, p);
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq(r.rule, "filesystem.hide \"~\"") &&
                          streq_ptr(r.access, "hide"),
                  "a hidden file that exists outside: %s", r.rule);
        snprintf(p, sizeof(p), "%s/home/.nothing-here", dir);
        e = file_event(4, 0, ENOENT, p);
        TAP_CHECK(file_judge(j, &e, &r) == 0, "a path that does not exist outside either: no report");
        e = file_event(257, O_WRONLY | O_CREAT, EROFS, "ro/f");
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq(r.rule, "filesystem.read \"~/proj/ro\"") &&
                          streq_ptr(r.origin, "--fs-read") && streq(r.op, "write") && r.resolved &&
                          strstr(r.resolved, "/home/proj/ro/f"),
                  "a write to a read-only entry, relative to the start directory: %s", r.rule);
        e = file_event(257, O_WRONLY | O_CREAT, EROFS, "ro/new");
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq(r.rule, "filesystem.read \"~/proj/ro\""),
                  "creating a file in a read-only entry (its directory is writable outside)");
        e = file_event(83, 0, EROFS, ".git/hooks");
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq_ptr(r.origin, "<scudo>") && streq(r.op, "create"),
                  "a hook directory in a read-only .git: %s", r.rule);
        e = file_event(257, O_RDWR | O_CREAT | O_EXCL, EROFS, ".git/index.lock");
        TAP_CHECK(file_judge(j, &e, &r) == 0, "git's optional index.lock: no report");
        e = file_event(257, O_RDONLY, ENOENT, p);
        snprintf(e.comm, sizeof(e.comm), "(sd-exec)");
        snprintf(p, sizeof(p), "%s/home/.bashrc", dir);
        memcpy(e.path, p, MIN(strlen(p) + 1, sizeof(e.path)));
        e.path[sizeof(e.path) - 1] = 0;
        TAP_CHECK(file_judge(j, &e, &r) == 0, "systemd's set-up of the sandbox: no report");
        snprintf(p, sizeof(p), "%s/home/proj/missing", dir);
        e = file_event(21, W_OK, ENOENT, p);
        TAP_CHECK(file_judge(j, &e, &r) == 0, "access(W_OK) of a file that is not there outside: no report");
        e = file_event(257, O_WRONLY, ENOENT, p);
        TAP_CHECK(file_judge(j, &e, &r) == 0,
                  "a write without O_CREAT to a file not there outside: no report");
        snprintf(p, sizeof(p), "%s/home/proj/ro/f", dir);
        e = file_event(4, 0, ENOENT, p);
        TAP_CHECK(file_judge(j, &e, &r) == 0,
                  "missing in a directory bound as it is (it was there by the time "
                  "it was looked at): no report");
        e = file_event(1, 0, ENOENT, p);
        TAP_CHECK(file_judge(j, &e, &r) == 0, "not a call about a path: no report");
        e = file_event(257, O_RDONLY, EIO, p);
        TAP_CHECK(file_judge(j, &e, &r) == 0, "an error no sandbox makes: no report");

        /* relative to the process's own working directory, as /proc shows it */
        TAP_CHECK(chdir(dir) == 0, "into the directory");
        e = file_event(257, O_RDONLY, ENOENT, "home/.bashrc");
        e.pid = (uint32_t) getpid();
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq(r.rule, "filesystem.hide \"~\"") &&
                          streq(r.target, "home/.bashrc"),
                  "a relative path from /proc/PID/cwd, reported as named");
        if (geteuid() != 0) {
                snprintf(p, sizeof(p), "%s/home/.bashrc", dir);
                (void) chmod(p, 0);
                e = file_event(257, O_RDONLY, EACCES, p);
                TAP_CHECK(file_judge(j, &e, &r) == 0,
                          "what the user may not read outside either: no report");
        }

        /* The same plan hardened (plan-harden.h): the deny of ~/.ssh under the hidden home is
         * dropped as changing nothing, yet it is still the rule that names the refusal; the
         * .git is scudo's read-only entry now. */
        TAP_CHECK(plan_harden(plan, &(HardenContext) {}) == 0 && plan->n_dropped > 0, "the plan hardened");
        file_judge_free(j);
        TAP_CHECK(file_judge_new(plan, home, &j) == 0, "file judge of the hardened plan");
        snprintf(p, sizeof(p), "%s/home/.ssh/id", dir);
        e = file_event(257, O_RDONLY, ENOENT, p);
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq(r.rule, "filesystem.deny \"~/.ssh\"") &&
                  streq_ptr(r.origin, "<built-in>/default.toml:20"),
                  "a file under a deny the hardening step dropped: %s (%s)", r.rule, strempty(r.origin));
        snprintf(p, sizeof(p), "%s/home/proj/.git/hooks", dir);
        e = file_event(83, 0, EROFS, p);
        TAP_CHECK(file_judge(j, &e, &r) == 1 && streq_ptr(r.origin, "<scudo>") && streq(r.op, "create"),
                  "a hook directory in scudo's read-only .git: %s", r.rule);
        snprintf(p, sizeof(p), "%s/home/proj/.git/index.lock", dir);
        e = file_event(257, O_RDWR | O_CREAT | O_EXCL, EROFS, p);
        TAP_CHECK(file_judge(j, &e, &r) == 0, "git's optional index.lock in it: no report");

        snprintf(p, sizeof(p), "rm -rf %s", dir);
        (void) system(p);
}

static const BpfdFilePrefix *find_prefix(const BpfdFilePrefixes *m, const char *path) {
        const BpfdFilePrefix *p = (const BpfdFilePrefix *) (m + 1);

        for (uint32_t i = 0; i < m->n; i++)
                if (streq(p[i].path, path))
                        return &p[i];
        return NULL;
}

/* What the kernel is told to keep: where the plan changes the view, by error. */
static void test_file_prefixes(void) {
        _cleanup_(plan_freep) Plan *plan = plan_new();
        _cleanup_free_ BpfdFilePrefixes *m = NULL;
        const BpfdFilePrefix *p;
        size_t size = 0;

        plan_add_property(plan, "ProtectSystem", "strict", "d:1");
        plan_add_property(plan, "ProtectHome", "read-only", "d:2");
        plan_add_property(plan, "PrivateTmp", "true", "d:3");
        plan_add_property(plan, "InaccessiblePaths", "-/srv/secret /opt/x:ro", "d:4");
        plan_add_path(plan, PATH_ACCESS_HIDE, "/home/u/.ssh", "d:5");
        plan_add_path(plan, PATH_ACCESS_WRITE, "/home/u/proj", "d:6");
        plan_add_path(plan, PATH_ACCESS_READ, "/home/u/proj/.git", "scudo");
        plan->working_directory = strdup("/home/u/proj/src");
        TAP_CHECK(file_judge_prefixes(plan, &m, &size) == 0 && m->header.type == BPFD_MSG_FILE_PREFIXES &&
                  size == sizeof(*m) + m->n * sizeof(BpfdFilePrefix), "prefixes of a plan");
        p = find_prefix(m, "/");
        TAP_CHECK(p && p->self == BPFD_FILE_WRITE_ERRORS && p->below == BPFD_FILE_ALL_ERRORS,
                  "the read-only root: write errors; below it, everything");
        p = find_prefix(m, "/proc");
        TAP_CHECK(p && p->self == 0, "what ProtectSystem=strict leaves writable: no candidates");
        TAP_CHECK((p = find_prefix(m, "/tmp")) && p->self == BPFD_FILE_ALL_ERRORS, "a private /tmp: all");
        TAP_CHECK((p = find_prefix(m, "/home")) && p->self == BPFD_FILE_WRITE_ERRORS, "a read-only /home");
        TAP_CHECK((p = find_prefix(m, "/home/u/.ssh")) && p->self == BPFD_FILE_ALL_ERRORS,
                  "a hidden entry: all");
        TAP_CHECK((p = find_prefix(m, "/srv/secret")) && p->self == BPFD_FILE_ALL_ERRORS &&
                  find_prefix(m, "/opt/x"), "InaccessiblePaths= words");
        p = find_prefix(m, "/home/u/proj");
        TAP_CHECK(p && p->self == 0 && p->flags == BPFD_FILE_PREFIX_GIT &&
                          p->below == BPFD_FILE_WRITE_ERRORS,
                  "a writable entry: only a .git below it");
        TAP_CHECK(m->cwd_mask == BPFD_FILE_WRITE_ERRORS,
                  "relative paths from the project: write errors only (%u)", m->cwd_mask);
}

static Report numbered(char *buf, size_t size, unsigned i) {
        snprintf(buf, size, "/p/%u", i);
        return (Report) { .kind = REPORT_FILE, .op = "read", .target = buf, .error = ENOENT, .rule = "r" };
}

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

static uint64_t monotonic_ns(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* A screen (--tui's) that keeps what it is shown, one line after another, in a 64 KiB text. */
static void collect_notice(const char *line, void *userdata) {
        char *text = userdata;
        size_t l = strlen(text);
        (void) snprintf(text + l, 65536 - l, "%s\n", line);
}

static void test_feed(void) {
        char name[] = "/tmp/test-report-json-XXXXXX", path[32], text[65536];
        ReportFeedConfig c = { .target = REPORT_TARGET_FILE, .kinds = { true, true, false } };
        ReportFeed *f = NULL;
        ReportFeedStats st;
        int pipefd[2], fd;
        double t0;
        ssize_t n;
        Report r;

        fd = mkstemp(name);
        c.file_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        c.json_fd = fd;
        TAP_CHECK(fd >= 0 && report_feed_new(&c, &f) == 0, "a feed to a JSON file");
        for (unsigned i = 0; i < 5; i++) {
                r = numbered(path, sizeof(path), 1);
                report_feed_push(f, &r);
        }
        r = (Report) { .kind = REPORT_DNS, .op = "resolve", .target = "x.test" };
        report_feed_push(f, &r);
        /* The limit counts per second of CLOCK_MONOTONIC: start the flood early in one, and see
         * whether it stayed there (a busy machine may stretch it over the next). */
        while (monotonic_ns() % 1000000000ULL > 200000000ULL)
                (void) usleep(10 * 1000);
        uint64_t second = monotonic_ns() / 1000000000ULL;
        for (unsigned i = 0; i < REPORT_FEED_PER_SECOND + 10; i++) {
                r = numbered(path, sizeof(path), 100 + i);
                report_feed_push(f, &r);
        }
        bool one_second = monotonic_ns() / 1000000000ULL == second;
        report_feed_finish(f, 2000);
        st = report_feed_stats(f);
        TAP_CHECK(st.repeated == 4, "identical reports counted, not repeated: %u", st.repeated);
        if (one_second)
                TAP_CHECK(st.flood >= 10, "past %u a second, reports dropped and counted: %u",
                          REPORT_FEED_PER_SECOND, st.flood);
        else
                TAP_SKIP("past %u a second, reports dropped: the flood took more than a second here",
                         REPORT_FEED_PER_SECOND);
        n = pread(fd, text, sizeof(text) - 1, 0);
        text[MAX(n, 0)] = 0;
        TAP_CHECK(strstr(text, "\"path\":\"/p/1\",\"error\":\"ENOENT\",\"rule\":\"r\",\"count\":1}") &&
                  strstr(text, "\"path\":\"/p/1\",\"error\":\"ENOENT\",\"rule\":\"r\",\"count\":5}"),
                  "the first as it came, then the count at the end");
        TAP_CHECK(!strstr(text, "x.test"), "a kind log.report leaves out is not written");
        f = report_feed_free(f);

        /* A writer that cannot write (a terminal that takes nothing): the feed goes on. */
        TAP_CHECK(pipe2(pipefd, O_CLOEXEC) == 0, "a pipe nobody reads");
        (void) fcntl(pipefd[1], F_SETPIPE_SZ, 4096);
        c = (ReportFeedConfig) { .target = REPORT_TARGET_FILE, .file_fd = pipefd[1], .json_fd = -EBADF,
                                 .kinds = { true, true, true } };
        TAP_CHECK(report_feed_new(&c, &f) == 0, "a feed to it");
        t0 = now_ms();
        for (unsigned i = 0; i < 1000; i++) {
                r = numbered(path, sizeof(path), i);
                report_feed_push(f, &r);
        }
        report_feed_finish(f, 200);
        TAP_CHECK(now_ms() - t0 < 1500, "pushing and finishing did not wait on the writer: %.0f ms",
                  now_ms() - t0);
        f = report_feed_free(f);
        safe_close(pipefd[0]);

        /* What the kernel or the helper dropped: file events are failed calls nobody judged,
         * not refusals; a network report dropped is one. */
        c = (ReportFeedConfig) { .target = REPORT_TARGET_STDERR, .file_fd = -EBADF, .json_fd = -EBADF,
                                 .kinds = { true, true, true } };
        TAP_CHECK(report_feed_new(&c, &f) == 0, "a feed to the screen");
        text[0] = 0;
        report_feed_set_screen(f, collect_notice, text);
        report_feed_lost_file(f, 4, 0, 3);
        report_feed_lost(f, REPORT_NET, 3);
        report_feed_finish(f, 2000);
        TAP_CHECK(strstr(text, "file: 7 candidate refusals were not examined") &&
                          strstr(text, "this sandbox's share in the kernel: 4") &&
                          strstr(text, "share of the helper: 3") && !strstr(text, "buffer") &&
                          !strstr(text, "file: 7 more refusals"),
                  "dropped file candidates are counted by the share exceeded: %s", text);
        TAP_CHECK(strstr(text, "network: 3 more refusals not reported"),
                  "dropped network reports are counted as such");
        f = report_feed_free(f);
        unlink(name);
}

/* A program that stats, then accesses, then opens one hidden file makes one line naming the
 * three; --report-json keeps each operation. */
static void test_feed_one_line(void) {
        char name[] = "/tmp/test-report-line-XXXXXX", jname[] = "/tmp/test-report-jline-XXXXXX", text[8192];
        const char *ops[] = { "stat", "access", "stat", "read" };
        ReportFeedConfig c = { .kinds = { true, true, true }, .target = REPORT_TARGET_FILE };
        ReportFeed *f = NULL;
        const char *p;
        unsigned lines = 0;
        ssize_t n;
        int fd, jfd;

        fd = mkstemp(name);
        jfd = mkstemp(jname);
        c.file_fd = dup(fd);
        c.json_fd = dup(jfd);
        TAP_CHECK(fd >= 0 && jfd >= 0 && report_feed_new(&c, &f) == 0, "a feed to a file");
        for (size_t i = 0; i < ELEMENTSOF(ops); i++) {
                Report r = {.kind = REPORT_FILE,
                            .op = ops[i],
                            .target = "/h/.npmrc",
                            .error = ENOENT,
                            .pid = 12,
                            .comm = "node",
                            .rule = "filesystem.hide \"~/.npmrc\"",
                            .origin = "d:13"};
                report_feed_push(f, &r);
        }
        report_feed_finish(f, 2000);
        f = report_feed_free(f);
        n = pread(fd, text, sizeof(text) - 1, 0);
        text[MAX(n, 0)] = 0;
        for (p = text; (p = strstr(p, "file: refused")); p++)
                lines++;
        TAP_CHECK(lines == 1 &&
                          strstr(text, "file: refused stat, access, read of '/h/.npmrc' (ENOENT) by pid 12 "
                                       "(node); by d:13"),
                  "one line for the file, naming its calls: %s", text);
        n = pread(jfd, text, sizeof(text) - 1, 0);
        text[MAX(n, 0)] = 0;
        TAP_CHECK(strstr(text, "\"op\":\"stat\"") && strstr(text, "\"op\":\"access\"") &&
                          strstr(text, "\"op\":\"read\"") &&
                          strstr(text, "\"op\":\"stat\",\"path\":\"/h/.npmrc\","
                                       "\"error\":\"ENOENT\",\"pid\":12,\"comm\":\"node\","
                                       "\"rule\":\"filesystem.hide \\\"~/.npmrc\\\"\","
                                       "\"origin\":\"d:13\",\"count\":2}"),
                  "--report-json has every operation, counted: %s", text);
        safe_close(fd);
        safe_close(jfd);
        unlink(name);
        unlink(jname);
}

static void test_suggest(void) {
        const char *text =
                "{\"kind\":\"run\",\"command\":[\"sh\"],\"start_dir\":\"/h/"
                "p\",\"profiles\":[\"sandbox\",\"npm\"],"
                "\"config_files\":[],\"write\":[{\"path\":\"/h/p\",\"origin\":\"d:17\"},{\"path\":\"/h/"
                "c\",\"origin\":\"--fs-write\"}],"
                "\"read\":[],\"network_filtered\":true,\"allow\":[],\"deny\":[{\"rule\":\"1.2.3.4\","
                "\"origin\":\"--net-deny\"}]}\n"
                "{\"kind\":\"file\",\"op\":\"read\",\"path\":\"/h/"
                ".npmrc\",\"error\":\"ENOENT\",\"rule\":\"filesystem.hide \\\"~\\\"\",\"origin\":\"d:13\"}\n"
                "{\"kind\":\"file\",\"op\":\"write\",\"path\":\"/h/p/.git/hooks/"
                "x\",\"error\":\"EROFS\",\"rule\":\"r\",\"origin\":\"<scudo>\"}\n"
                "{\"kind\":\"network\",\"op\":\"connect\",\"target\":\"192.0.2.7:443\",\"rule\":\"no rule "
                "allows it\"}\n"
                "{\"kind\":\"network\",\"op\":\"connect\",\"target\":\"1.2.3.4:80\",\"rule\":\"network.deny "
                "\\\"1.2.3.4\\\"\",\"origin\":\"--net-deny\"}\n"
                "{\"kind\":\"dns\",\"op\":\"resolve\",\"name\":\"x.example\",\"rule\":\"no rule allows "
                "it\"}\n"
                "{\"kind\":\"usage\",\"written\":[\"/h/p\"]}\n";
        char *out = NULL;
        size_t size = 0;
        unsigned line = 0;
        FILE *f = open_memstream(&out, &size);
        int r;

        r = suggest_write(text, "/h", f, &line);
        fclose(f);
        TAP_CHECK(r == 0, "a run's report read: %d", r);
        TAP_CHECK(out && strstr(out, "[npm]\n") && strstr(out, "/h/p/.scudo.toml"),
                  "the most specific profile, the "
                  "project file");
        TAP_CHECK(out && strstr(out, "filesystem.read = [\n    \"~/.npmrc\","),
                  "a hidden file read: a read grant");
        TAP_CHECK(out && strstr(out, "\"~/p/.git\","), "a read-only .git: the .git granted");
        TAP_CHECK(out && strstr(out, "\"192.0.2.7:443\",") && strstr(out, "\"x.example\","),
                  "a host and a name allowed");
        TAP_CHECK(out && !strstr(out, "\"1.2.3.4:80\",") && strstr(out, "which an allow rule does not lift"),
                  "a deny rule's refusal: only a note");
        TAP_CHECK(out && strstr(out, "filesystem.write \"~/c\" at --fs-write: nothing written there") &&
                  !strstr(out, "filesystem.write \"~/p\" at"), "the unused write grant, not the used one");
        free(out);

        /* the allow rules never reached, from the usage's "reached"; not known without it */
        {
                const char *run =
                        "{\"kind\":\"run\",\"start_dir\":\"/h/p\",\"network_filtered\":true,\"allow\":["
                        "{\"rule\":\"192.0.2.7:443\",\"origin\":\"--net-allow\"},{\"rule\":\"a.example\","
                        "\"origin\":\"d:3\"},"
                        "{\"rule\":\"192.0.2.8\",\"origin\":\"d:4\"}]}\n";
                char *t = NULL;

                TAP_CHECK(asprintf(&t, "%s{\"kind\":\"usage\",\"written\":[],\"reached\":[\"a.example\"]}\n",
                                   run) > 0, "memory");
                out = NULL;
                f = open_memstream(&out, &size);
                r = suggest_write(t, "/h", f, &line);
                fclose(f);
                TAP_CHECK(r == 0 && out &&
                                  strstr(out, "#   network.allow \"192.0.2.7:443\" at --net-allow\n") &&
                                  strstr(out, "#   network.allow \"192.0.2.8\" at d:4\n") &&
                                  !strstr(out, "\"a.example\" at"),
                          "the allow rules not reached listed, the reached one not: %s", strempty(out));
                free(out);
                free(t);

                TAP_CHECK(asprintf(&t, "%s{\"kind\":\"usage\",\"written\":[]}\n", run) > 0, "memory");
                out = NULL;
                f = open_memstream(&out, &size);
                r = suggest_write(t, "/h", f, &line);
                fclose(f);
                TAP_CHECK(r == 0 && out && strstr(out, "were reached was not recorded") &&
                                  !strstr(out, "network.allow \"192.0.2.8\""),
                          "without \"reached\": not known, none listed");
                free(out);
                free(t);
        }

        out = NULL;
        f = open_memstream(&out, &size);
        r = suggest_write("{\"kind\":\"file\"}\n", NULL, f, &line);
        fclose(f);
        TAP_CHECK(r == -EBADMSG && line == 1, "a file that does not start with a run's record refused");
        free(out);
}

/* The usage record names the allow rules reached, in the plan's words; none when not known. */
static void test_usage_record(void) {
        char *allow[] = { (char *) "192.0.2.7:443", (char *) "a.example", NULL };
        const bool reached[] = { false, true };
        Plan p = { .net_allow = allow };
        struct timespec since = {};
        char *line = NULL;

        TAP_CHECK(usage_record_json(&p, &since, reached, &line) == 0 && line &&
                  strstr(line, ",\"reached\":[\"a.example\"]}"), "the rule reached: %s", strempty(line));
        free(line);
        line = NULL;
        TAP_CHECK(usage_record_json(&p, &since, NULL, &line) == 0 && line && !strstr(line, "reached"),
                  "not known: no \"reached\": %s", strempty(line));
        free(line);
}

int main(void) {
        /* as scudo does (run.c): a reader that went away is an error return, not the end */
        (void) signal(SIGPIPE, SIG_IGN);
        test_suggest();
        test_usage_record();
        test_escape();
        test_format();
        test_net_judge();
        test_file_judge();
        test_feed();
        test_feed_one_line();
        test_file_prefixes();
        return tap_done();
}
