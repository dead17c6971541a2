/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Unit tests for src/util: path handling, PATH lookup, environment validity, strv. */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "util/env-util.h"
#include "util/error-message.h"
#include "util/file-util.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/sandbox-unit.h"
#include "util/strv.h"

static void test_normalize(void) {
        static const struct { const char *in, *out; } cases[] = {
                { "/", "/" },
                { "//a//b/", "/a/b" },
                { "/a/./b/.", "/a/b" },
                { "/a/b/../c", "/a/c" },
                { "/../..", "/" },
                { "/home/dev/../../etc/shadow", "/etc/shadow" },
                { "/a/b/c/../../..", "/" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *n = NULL;
                int r = path_normalize(cases[i].in, &n);
                TAP_CHECK(r == 0, "normalize '%s' succeeds", cases[i].in);
                TAP_STREQ(n, cases[i].out, "normalize '%s'", cases[i].in);
        }
        char *n = NULL;
        TAP_CHECK(path_normalize("relative/x", &n) == -EINVAL && !n, "relative path refused");
}

static void test_startswith(void) {
        TAP_STREQ(path_startswith("/home/dev/x", "/home/dev"), "x", "child of prefix");
        TAP_STREQ(path_startswith("/home/dev", "/home/dev"), "", "prefix itself");
        TAP_CHECK(!path_startswith("/home/devil", "/home/dev"), "no match across a component boundary");
        TAP_STREQ(path_startswith("/etc", "/"), "etc", "everything is under /");
}

static void test_lexically_clean(void) {
        static const struct { const char *in; bool clean; } cases[] = {
                { "/", true },
                { "/a", true },
                { "/a/b.c/..d/.e", true },
                { "", false },
                { "a/b", false },
                { "//", false },
                { "/a//b", false },
                { "/a/", false },
                { "/a/.", false },
                { "/./a", false },
                { "/a/../b", false },
                { "/..", false },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                TAP_CHECK(path_is_lexically_clean(cases[i].in) == cases[i].clean,
                          "'%s' is %slexically clean", cases[i].in, cases[i].clean ? "" : "not ");
}

/* read_regular_file(): regular files only, up to the limit, whatever fstat() says of their size. */
static void test_read_regular_file(void) {
        char dir[] = "/tmp/scudo-test-XXXXXX";
        TAP_CHECK(mkdtemp(dir) != NULL, "temp dir");
        _cleanup_free_ char *file = path_join(dir, "file"), *empty = path_join(dir, "empty"),
                            *fifo = path_join(dir, "fifo"), *missing = path_join(dir, "missing/x");
        FILE *f = fopen(file, "we");
        fputs("hello\n", f);
        fputc(0, f);
        fputs("world", f);
        fclose(f);
        f = fopen(empty, "we");
        fclose(f);
        (void) mkfifo(fifo, 0600);

        static const struct { const char *name; size_t max; int r; size_t size; } cases[] = {
                { "file", 1 << 20, 0, 12 },
                { "file", 12, 0, 12 },                  /* exactly the limit */
                { "file", 11, -EFBIG, 0 },
                { "empty", 1, 0, 0 },
                { "fifo", 1 << 20, -EBADFD, 0 },        /* without blocking */
                { "", 1 << 20, -EISDIR, 0 },            /* the directory itself */
                { "missing/x", 1 << 20, -ENOENT, 0 },
                { "file/x", 1 << 20, -ENOTDIR, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *p = path_join(dir, cases[i].name), *data = NULL;
                size_t size = 0;
                int r = read_regular_file(p, cases[i].max, &data, &size);
                TAP_CHECK(r == cases[i].r &&
                                  (r < 0 ? !data : data && size == cases[i].size && data[size] == 0),
                          "read_regular_file(%s, %zu): %d, %zu bytes", cases[i].name, cases[i].max, r, size);
        }
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        TAP_CHECK(read_regular_file(file, 100, &data, &size) == 0 && size == 12 &&
                  memcmp(data, "hello\n\0world", 13) == 0, "the contents, NULs and all, NUL-terminated");

        /* fstat() says 0 bytes of what /proc makes up as it is read: read all the same, and
         * the limit holds. */
        _cleanup_free_ char *proc = NULL;
        size = 0;
        TAP_CHECK(read_regular_file("/proc/self/status", 1 << 20, &proc, &size) == 0 && size > 0 &&
                          strlen(proc) == size && strstr(proc, "Name:"),
                  "a /proc file announced empty: %zu bytes", size);
        _cleanup_free_ char *proc_small = NULL;
        TAP_CHECK(read_regular_file("/proc/self/status", 16, &proc_small, &size) == -EFBIG && !proc_small,
                  "and over the limit, -EFBIG");

        unlink(file);
        unlink(empty);
        unlink(fifo);
        rmdir(dir);
}

/* path_stat_no_symlinks(): what a path leads to, with no symlink followed on the way. */
static void test_stat_no_symlinks(void) {
        char dir[] = "/tmp/scudo-test-XXXXXX";
        TAP_CHECK(mkdtemp(dir) != NULL, "temp dir");
        _cleanup_free_ char *sub = path_join(dir, "sub"), *file = path_join(dir, "sub/file"),
                            *link = path_join(dir, "link"), *via = path_join(dir, "link/file"),
                            *missing = path_join(dir, "sub/missing"),
                            *unclean = path_join(dir, "sub/../sub");
        struct stat st, ref;
        (void) mkdir(sub, 0700);
        FILE *f = fopen(file, "we");
        fclose(f);
        TAP_CHECK(symlink(sub, link) == 0, "a symlink to the directory");
        TAP_CHECK(stat(file, &ref) == 0, "the file");

        TAP_CHECK(path_stat_no_symlinks(file, &st) == 1 && st.st_ino == ref.st_ino &&
                          st.st_dev == ref.st_dev,
                  "a file reached without symlinks: its identity");
        TAP_CHECK(path_stat_no_symlinks(missing, &st) == 0, "missing: 0");
        TAP_CHECK(path_stat_no_symlinks(link, &st) == -ELOOP, "a trailing symlink: -ELOOP");
        TAP_CHECK(path_stat_no_symlinks(via, &st) == -ELOOP, "a symlink on the way: -ELOOP");
        TAP_CHECK(path_stat_no_symlinks(unclean, &st) == -EINVAL, "a path with ..: -EINVAL");
        TAP_CHECK(path_stat_no_symlinks("/", &st) == 1 && S_ISDIR(st.st_mode), "/");

        unlink(file);
        unlink(link);
        rmdir(sub);
        rmdir(dir);
}

static void test_find_executable(void) {
        char dir[] = "/tmp/scudo-test-XXXXXX";
        TAP_CHECK(mkdtemp(dir) != NULL, "temp dir");
        _cleanup_free_ char *a = path_join(dir, "a"), *b = path_join(dir, "b"), *tool_a = NULL,
                            *tool_b = NULL;
        (void) mkdir(a, 0755);
        (void) mkdir(b, 0755);
        tool_a = path_join(a, "tool");
        tool_b = path_join(b, "tool");
        FILE *f = fopen(tool_a, "w");
        fclose(f);
        chmod(tool_a, 0755);
        f = fopen(tool_b, "w");
        fclose(f);
        chmod(tool_b, 0755);

        _cleanup_free_ char *search = NULL;
        TAP_CHECK(asprintf(&search, ".::%s:%s", a, b) > 0, "search path");
        char *found = NULL;
        TAP_CHECK(path_find_executable("tool", search, NULL, 0, &found) == 0, "tool found");
        TAP_STREQ(found, tool_a, "first PATH entry wins, relative entries skipped");
        free(found);

        struct stat st;
        stat(tool_a, &st);
        found = NULL;
        TAP_CHECK(path_find_executable("tool", search, &(FileId) { st.st_dev, st.st_ino }, 1,
                                      &found) == 0,
                  "found past self");
        TAP_STREQ(found, tool_b, "the entry that is scudo itself is skipped");
        free(found);

        /* scudo and scudo-route both skipped: nothing else is there */
        struct stat st_b;
        stat(tool_b, &st_b);
        const FileId both[] = { { st.st_dev, st.st_ino }, { st_b.st_dev, st_b.st_ino } };
        found = NULL;
        TAP_CHECK(path_find_executable("tool", search, both, 2, &found) == -ENOENT,
                  "every candidate skipped: ENOENT");
        free(found);

        chmod(tool_b, 0644);
        found = NULL;
        TAP_CHECK(path_find_executable("tool", search, &(FileId) { st.st_dev, st.st_ino }, 1,
                                      &found) == -EACCES,
                  "only a non-executable candidate left: EACCES");
        TAP_CHECK(path_find_executable("nope", search, NULL, 0, &found) == -ENOENT, "missing: ENOENT");

        unlink(tool_a);
        unlink(tool_b);
        rmdir(a);
        rmdir(b);
        rmdir(dir);
}

static void test_env(void) {
        TAP_CHECK(env_assignment_is_valid("A=b"), "plain assignment");
        TAP_CHECK(env_assignment_is_valid("A_1="), "empty value");
        TAP_CHECK(env_assignment_is_valid("X=line1\nline2\tx"), "newline and tab allowed");
        TAP_CHECK(!env_assignment_is_valid("BASH_FUNC_f%%=() { :; }"), "bash function export refused");
        TAP_CHECK(!env_assignment_is_valid("1A=b"), "leading digit refused");
        TAP_CHECK(!env_assignment_is_valid("A=\x01"), "control character refused");
        TAP_CHECK(!env_assignment_is_valid("A=\xff\xfe"), "invalid UTF-8 refused");
        TAP_CHECK(!env_assignment_is_valid("A=\xed\xa0\x80"), "UTF-16 surrogate refused");
        TAP_CHECK(env_assignment_is_valid("A=caf\xc3\xa9"), "UTF-8 accepted");
        TAP_CHECK(!env_assignment_is_valid("NOEQUALS"), "no '=' refused");

        /* env_find/env_get: the name whole, never a prefix of another; the first of two. */
        char *block[] = { (char *) "PATHX=no",     (char *) "PATH=/bin", (char *) "EMPTY=",
                          (char *) "PATH=/second", (char *) "NOEQ",      NULL };
        static const struct { const char *name; const char *value; } cases[] = {
                { "PATH", "/bin" }, { "PATHX", "no" }, { "PAT", NULL }, { "EMPTY", "" }, { "NOEQ", NULL },
                { "MISSING", NULL }, { "", NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *v = env_get(block, cases[i].name);
                TAP_CHECK(cases[i].value ? v && streq(v, cases[i].value) : !v, "env_get(%s): %s",
                          cases[i].name, v ?: "(none)");
        }
        TAP_CHECK(env_find(block, "PATH=/bin", 4) == &block[1],
                  "env_find takes the first len bytes as the name");
        TAP_CHECK(!env_get(NULL, "PATH"), "env_get of no block");
}

static void test_strv(void) {
        _cleanup_strv_free_ char **l = NULL;
        TAP_CHECK(strv_extend(&l, "a") == 0 && strv_extend(&l, "b") == 0, "extend");
        TAP_CHECK(strv_length(l) == 2 && strv_contains(l, "b") && !strv_contains(l, "c"),
                  "length, contains");
        _cleanup_strv_free_ char **c = strv_copy(l);
        TAP_CHECK(c && strv_length(c) == 2 && c[0] != l[0], "copy is deep");
        /* all taken over; a NULL among them (an allocation that failed) ends it, the rest freed
         * (ASan sees a leak otherwise) */
        char *two[] = { strdup("x"), strdup("y") };
        TAP_CHECK(two[0] && two[1] && strv_push_all(&l, two, 2) == 0 && strv_length(l) == 4 &&
                  streq(l[3], "y"), "push_all appends each");
        char *gap[] = { strdup("z"), NULL, strdup("w") };
        TAP_CHECK(strv_push_all(&l, gap, 3) == -ENOMEM && strv_length(l) == 5 && streq(l[4], "z"),
                  "push_all stops at a NULL and frees the rest");
}

/* Whether a process runs in a sandbox is read off its cgroup listing, never the environment. */
static void test_sandbox_unit(void) {
        static const struct { const char *listing; uid_t uid; const char *unit;
        } cases[] = {
                /* unified, in app.slice and in a run's own slice */
                { "0::/user.slice/user-1001.slice/user@1001.service/app.slice/"
                  "scudo-0123456789abcdef.service\n",
                  1001, "scudo-0123456789abcdef.service" },
                { "0::/user.slice/user-1001.slice/user@1001.service/app-scudo_0123456789abcdef.slice/"
                  "scudo-0123456789abcdef.service\n",
                  1001, "scudo-0123456789abcdef.service" },
                /* hybrid: systemd's own v1 hierarchy and the unified one, each enough */
                { "12:pids:/\n1:name=systemd:/user.slice/user-7.slice/user@7.service/app.slice/"
                  "scudo-ffffffffffffffff.service\n0::/\n",
                  7, "scudo-ffffffffffffffff.service" },
                /* no newline at the end, a ':' in the path */
                { "0::/a:b/user@5.service/app.slice/scudo-00000000000000aa.service", 5,
                  "scudo-00000000000000aa.service" },
                /* outside: a terminal, a login session, another manager's unit, the bus proxy,
                 * a name that only looks like one, a v1 controller that is not systemd's */
                { "0::/user.slice/user-1001.slice/user@1001.service/app.slice/app-term.scope\n", 1001,
                  NULL },
                { "0::/user.slice/user-1001.slice/session-3.scope\n", 1001, NULL },
                { "0::/user.slice/user-1002.slice/user@1002.service/app.slice/"
                  "scudo-0123456789abcdef.service\n",
                  1001, NULL },
                { "0::/user.slice/user-1001.slice/user@1001.service/app.slice/"
                  "scudo-0123456789abcdef-bus.service\n",
                  1001, NULL },
                { "0::/user.slice/user-1001.slice/user@1001.service/app.slice/"
                  "scudo-0123456789ABCDEF.service\n",
                  1001, NULL },
                { "0::/user.slice/user-1001.slice/user@1001.service/app.slice/scudo-0123.service\n", 1001,
                  NULL },
                { "0::/system.slice/scudo-0123456789abcdef.service\n", 1001, NULL },
                { "0::/scudo-0123456789abcdef.service/user@1001.service\n", 1001, NULL },
                { "4:memory:/user.slice/user-1001.slice/user@1001.service/app.slice/"
                  "scudo-0123456789abcdef.service\n",
                  1001, NULL },
                { "0::/..\n", 1001, NULL },
                { "", 1001, NULL },
                { "garbage without colons\n::\n0:\n", 1001, NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char unit[SCUDO_UNIT_NAME_MAX] = "";
                int r = sandbox_unit_from_cgroup(cases[i].listing, strlen(cases[i].listing), cases[i].uid,
                                                 unit);
                if (cases[i].unit)
                        TAP_CHECK(r == 1 && streq(unit, cases[i].unit), "cgroup listing %zu: inside %s", i,
                                  cases[i].unit);
                else
                        TAP_CHECK(r == 0, "cgroup listing %zu: outside", i);
        }
        /* This process: SCUDO_SANDBOX changes nothing. */
        char unit[SCUDO_UNIT_NAME_MAX];
        unsetenv("SCUDO_SANDBOX");
        int before = sandbox_unit_of(0, unit);
        setenv("SCUDO_SANDBOX", "scudo-0123456789abcdef.service", 1);
        TAP_CHECK(before >= 0 && sandbox_unit_of(0, unit) == before,
                  "SCUDO_SANDBOX does not make a process nested");
        unsetenv("SCUDO_SANDBOX");
        TAP_CHECK(sandbox_unit_of(-1, unit) < 0, "an unreadable listing is an error, not an answer");
}

/* A refusal's message handed back, not printed (util/error-message.h). */
static void test_error_message(void) {
        char *msg = NULL;
        TAP_CHECK(error_message(&msg, -EPERM, "%s: %d", "why", 7) == -EPERM && msg && streq(msg, "why: 7"),
                  "error_message returns r and hands back the message (%s)", strempty(msg));
        free(msg);
        TAP_CHECK(error_message(NULL, -EINVAL, "nobody asks %s", "this") == -EINVAL,
                  "error_message without a place for the message still returns r");
}

int main(void) {
        test_error_message();
        test_normalize();
        test_startswith();
        test_lexically_clean();
        test_read_regular_file();
        test_stat_no_symlinks();
        test_find_executable();
        test_env();
        test_strv();
        test_sandbox_unit();
        return tap_done();
}
