/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* plan_normalize() and plan_check(), the canonical paths they insist on, whatever produced the
 * plan, and the leads-out rule plan_normalize() applies for the hardening step. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "plan/harden-leads-out.h"
#include "plan/plan-validate.h"
#include "util/log.h"
#include "policy-test.h"
#include "tap.h"

/* snprintf(), but a name too long for the buffer is a bug of the test. */
_printf_(3, 4) static void rt_fmt(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        if (r < 0 || (size_t) r >= size)
                abort();
}

static void test_canonicalize(void) {
        char *c = NULL;

        pt_mkdir("a/b");
        (void) symlink(pt_path("a/b"), pt_path("a/link"));
        (void) symlink("loop2", pt_path("a/loop1"));
        (void) symlink("loop1", pt_path("a/loop2"));

        struct {
                const char *in;         /* relative to the scratch root */
                const char *out;        /* relative to the scratch root, "/" for the root */
        } cases[] = {
                { "a/b", "a/b" },
                { "a/./b/", "a/b" },
                { "a//b", "a/b" },
                { "a/b/../b", "a/b" },
                { "a/link", "a/b" },
                { "a/link/new/file", "a/b/new/file" },
                { "a/missing/../b", "a/b" },
                { "a/missing/x/../../b", "a/b" },
                { "a/link/../b", "a/b" },              /* .. after a symlink: the kernel's way */
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                c = NULL;
                int r = plan_path_canonicalize(pt_path(cases[i].in), &c);
                TAP_STREQ(r >= 0 ? c : NULL, pt_path(cases[i].out), "canonical form of %s", cases[i].in);
                free(c);
        }
        c = NULL;
        TAP_CHECK(plan_path_canonicalize("/../..//", &c) >= 0 && strcmp(c, "/") == 0, "/../.. is /");
        free(c);
        c = NULL;
        TAP_CHECK(plan_path_canonicalize("relative/x", &c) == -EINVAL, "a relative path is refused");
        TAP_CHECK(plan_path_canonicalize("/a\nb", &c) == -EINVAL, "a newline in a path is refused");
        TAP_CHECK(plan_path_canonicalize(pt_path("a/loop1/x"), &c) == -ELOOP, "a symlink loop is an error");
}

static Plan *base_plan(void) {
        Plan *p = plan_new();
        p->exec_path = strdup("/bin/true");
        p->argv = strv_copy((char *[]) { (char *) "true", NULL });
        p->working_directory = strdup("/");
        return p;
}

/* What policy_resolve() does with a plan: normalize it, then check it. */
static int validate(Plan *p, char **err) {
        int r = plan_normalize(p, err);
        return r < 0 ? r : plan_check(p, err);
}

static void expect_invalid(Plan *p, const char *want, const char *name) {
        char *err = NULL;
        int r = validate(p, &err);
        TAP_CHECK(r == -EINVAL && err && strstr(err, want), "%s", name);
        if (!(r == -EINVAL && err && strstr(err, want)))
                printf("#   r=%d error: %s\n", r, err ?: "(none)");
        free(err);
        plan_free(p);
}

static void test_validate(void) {
        char *err = NULL;
        Plan *p = base_plan();

        plan_add_path(p, PATH_ACCESS_WRITE, pt_path("a/link"), "t:1");
        plan_add_path(p, PATH_ACCESS_READ, pt_path("a/b"), "t:2");
        plan_add_property(p, "MemoryMax", "1G", "t:3");
        p->network_filtered = true;
        strv_extend(&p->net_allow, "example.com:443");
        strv_extend(&p->environment, "A=b");
        TAP_CHECK(validate(p, &err) == 0, "a good plan passes");
        TAP_CHECK(p->n_paths == 1 && p->paths[0].access == PATH_ACCESS_READ &&
                  strcmp(p->paths[0].path, pt_path("a/b")) == 0,
                  "two entries for one canonical path: the later stays");
        plan_free(p);

        p = base_plan();
        plan_add_path(p, PATH_ACCESS_WRITE, "relative", "t:1");
        expect_invalid(p, "t:1: filesystem.write: 'relative' is not an absolute path",
                       "relative paths are refused");

        p = base_plan();
        plan_add_path(p, PATH_ACCESS_HIDE, "/", "t:1");
        expect_invalid(p, "would leave nothing", "hiding / is refused");

        p = base_plan();
        plan_add_property(p, "MemoryMaks", "1G", "t:4");
        expect_invalid(p, "t:4: unknown unit property 'MemoryMaks' (did you mean 'MemoryMax'?)",
                       "an unknown property, with a suggestion");

        p = base_plan();
        plan_add_property(p, "MemoryMax", "lots", "t:5");
        expect_invalid(p, "t:5:", "a property value of the wrong form");

        p = base_plan();
        plan_add_property(p, "BindPaths", "/:/x", "t:6");
        expect_invalid(p, "t:6:", "properties that would bypass the filesystem keys are refused");

        p = base_plan();
        p->network_filtered = true;
        strv_extend(&p->net_allow, "not a rule");
        expect_invalid(p, "network.allow: bad rule 'not a rule'", "a rule that does not parse");

        p = base_plan();
        p->dbus = DBUS_ALLOW;
        strv_extend(&p->delegate, "npm");
        expect_invalid(p, "sealed sandbox", "delegate with the real session bus is refused");

        p = base_plan();
        strv_extend(&p->environment, "1BAD=x");
        expect_invalid(p, "not NAME=VALUE", "bad environment entries are refused");

        p = base_plan();
        p->log_target = strdup("somewhere");
        expect_invalid(p, "log.target", "a relative log target is refused");

        p = base_plan();
        free(p->exec_path);
        p->exec_path = strdup("true");
        expect_invalid(p, "not an absolute path", "a relative executable is refused");
}

/* PLAN_PATHS_MAX paths are checked, one more is refused naming where it came from. Most of
 * them below writable directories, so that each is compared with many: the time is shown,
 * not checked (it depends on the machine), and was 1.7 s of CPU for 10,000 paths when every
 * pair was compared. */
static void test_many_paths(void) {
        char path[256], origin[32], *err = NULL;
        struct timespec t0, t1;

        for (int extra = 0; extra < 2; extra++) {
                Plan *p = base_plan();
                for (int i = 0; i < PLAN_PATHS_MAX + extra; i++) {
                        (void) snprintf(path, sizeof(path), "%s/d%d/f%d", pt_path("many"), i % 100, i);
                        (void) snprintf(origin, sizeof(origin), "many.toml:%d", i + 1);
                        (void) plan_add_path(p, i % 4 == 0 ? PATH_ACCESS_WRITE : PATH_ACCESS_READ, path,
                                             origin);
                }
                clock_gettime(CLOCK_MONOTONIC, &t0);
                int r = validate(p, &err);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                double s = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
                if (extra == 0)
                        TAP_CHECK(r == 0 && p->n_paths == PLAN_PATHS_MAX, "%d paths validate (in %.3f s)",
                                  PLAN_PATHS_MAX, s);
                else {
                        char want[128];
                        (void) snprintf(
                                want, sizeof(want),
                                "many.toml:%d: filesystem.write: more than %d filesystem paths in one plan",
                                PLAN_PATHS_MAX + 1, PLAN_PATHS_MAX);
                        TAP_CHECK(r == -EINVAL && err && strstr(err, want),
                                  "%d are refused, naming the file (%s)", PLAN_PATHS_MAX + 1,
                                  err ?: "accepted");
                }
                free(err);
                err = NULL;
                plan_free(p);
        }
}

/* The memo plan_normalize() canonicalizes through: the same answers as without it, whatever
 * order the paths come in, and when every answer comes from the memo. */
static void test_canonicalize_memo(void) {
        pt_mkdir("a/b/c/d");
        pt_mkdir("a/linkdir");
        pt_write("a/file", "x\n");
        (void) symlink(pt_path("a/nowhere"), pt_path("a/dangling"));
        (void) symlink("b/c", pt_path("a/rel"));                /* relative */
        (void) symlink("../a/b", pt_path("a/up"));              /* relative, through .. */
        (void) symlink("/", pt_path("a/root"));

        const char *rel[] = {
                "",
                "a",
                "a/lin",
                "a/linkdir",
                "a/b",
                "a/b/",
                "a/./b",
                "a//b",
                "a/b/../b",
                "a/b/c/d",
                "a/b/c",
                "a/b/c/d/e/f",
                "a/link",
                "a/link/",
                "a/link/c",
                "a/link/new/file",
                "a/link/../b",
                "a/link/c/../../link/c",
                "a/missing",
                "a/missing/x/y",
                "a/missing/../b",
                "a/missing/x/../../b",
                "a/missing/./z",
                "a/file",
                "a/file/",
                "a/file/x",
                "a/file/../b",
                "a/file/x/../..",
                "a/dangling",
                "a/dangling/x",
                "a/dangling/../b",
                "a/rel",
                "a/rel/d",
                "a/rel/d/..",
                "a/rel/../..",
                "a/rel/new/..",
                "a/up",
                "a/up/c/d",
                "a/up/../link/c",
                "a/root",
                "a/root/tmp",
                "a/root/..",
                "a/b/c/d/../../../../a/b",
                "a/loop1",
                "a/loop1/x",
                "a/loop2/../b",
        };
        size_t n = ELEMENTSOF(rel);
        char *in[ELEMENTSOF(rel) + 3], *want[ELEMENTSOF(rel) + 3];
        int want_r[ELEMENTSOF(rel) + 3];

        for (size_t i = 0; i < n; i++)
                in[i] = strdup(pt_path(rel[i]));
        in[n++] = strdup("/");
        in[n++] = strdup("/../..//");
        in[n++] = strdup("/no-such-dir-here/x/..");
        for (size_t i = 0; i < n; i++) {
                want[i] = NULL;
                want_r[i] = plan_path_canonicalize(in[i], &want[i]);
        }

        /* Forwards, backwards, then forwards again with every answer already known. */
        PathMemo memo = {};
        for (int lap = 0; lap < 3; lap++) {
                size_t same = 0;
                if (lap == 1) {
                        path_memo_done(&memo);
                        TAP_CHECK(memo.n == 0 && !memo.entries, "path_memo_done() empties the memo");
                }
                for (size_t k = 0; k < n; k++) {
                        size_t i = lap == 1 ? n - 1 - k : k;
                        char *c = NULL;
                        int r = plan_path_canonicalize_memo(&memo, in[i], &c);
                        bool ok = r == want_r[i] && (r < 0 || (c && streq(c, want[i])));
                        if (!ok)
                                printf("#   %s: got %d '%s', expected %d '%s'\n", in[i], r, c ?: "",
                                       want_r[i], want[i] ?: "");
                        same += ok;
                        free(c);
                }
                TAP_CHECK(same == n, "memo lap %d: all %zu paths as without the memo", lap, n);
        }
        TAP_CHECK(memo.n > 0, "the memo holds what it learnt");
        path_memo_done(&memo);

        /* Through plan_normalize(): each path as it is alone (these have distinct results). */
        Plan *p = base_plan();
        const char *some[] = { "a/link/c", "a/missing/x/y", "a/file", "a/up/c/d", "a/rel/new/../d/e",
                               "a/b/c/d/e/f", "a/dangling/x", "a/missing/./z" };
        for (size_t i = 0; i < ELEMENTSOF(some); i++)
                plan_add_path(p, PATH_ACCESS_READ, pt_path(some[i]), "t:1");
        char *err = NULL;
        bool ok = validate(p, &err) == 0 && p->n_paths == ELEMENTSOF(some);
        for (size_t i = 0; ok && i < ELEMENTSOF(some); i++) {
                char *c = NULL;
                ok = plan_path_canonicalize(pt_path(some[i]), &c) >= 0 && streq(c, p->paths[i].path);
                free(c);
        }
        TAP_CHECK(ok, "plan_normalize() canonicalizes each path as plan_path_canonicalize() does");
        free(err);
        plan_free(p);

        for (size_t i = 0; i < n; i++) {
                free(in[i]);
                free(want[i]);
        }
}

/* The canonical form the old way, with nothing of ours: libc's realpath() of the longest
 * prefix it resolves, then the rest with "." and ".." applied lexically. */
static int reference_canonical(const char *path, char **ret) {
        char work[PATH_MAX], out[PATH_MAX];

        snprintf(work, sizeof(work), "%s", path);
        while (!realpath(work, out)) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return -errno;
                char *slash = strrchr(work, '/');
                slash[slash == work ? 1 : 0] = 0;
        }
        size_t len = strlen(out), wl = strlen(work);
        const char *rest = path + (wl == 1 ? 1 : wl);
        while (*rest) {
                while (*rest == '/')
                        rest++;
                const char *e = strchrnul(rest, '/');
                size_t cl = (size_t) (e - rest);
                if (cl == 2 && rest[0] == '.' && rest[1] == '.') {
                        char *s = strrchr(out, '/');
                        len = s == out ? 1 : (size_t) (s - out);
                        out[len] = 0;
                } else if (cl > 0 && !(cl == 1 && rest[0] == '.')) {
                        if (len > 1)
                                out[len++] = '/';
                        memcpy(out + len, rest, cl);
                        len += cl;
                        out[len] = 0;
                }
                rest = e;
        }
        *ret = strdup(out);
        return 0;
}

#define UNSURE INT_MIN       /* the probe cannot tell: any other negative errno */

/* path_probe_no_symlinks() (one openat2 with RESOLVE_NO_SYMLINKS), and the canonical forms
 * that use it, with and without the memo: the same as the old method in every case. */
static void test_probe(void) {
        pt_mkdir("pr/d/e");
        pt_write("pr/f", "x\n");
        (void) symlink("d", pt_path("pr/ld"));                  /* a directory, relative */
        (void) symlink(pt_path("pr/f"), pt_path("pr/lf"));       /* a file, absolute */
        (void) symlink(pt_path("pr/nowhere"), pt_path("pr/dangling"));

        static const struct {
                const char *rel;
                int probe;              /* path_probe_no_symlinks(): 1, -ENOENT, -ENOTDIR, or UNSURE */
                const char *out;        /* canonical form, relative; NULL: as written */
        } cases[] = {
                /* lexically clean, no symlink: its own canonical form, existing or not */
                { "pr/d/e", 1, NULL },
                { "pr/f", 1, NULL },
                { "pr/d/new", -ENOENT, NULL },
                { "pr/d/new/x/y", -ENOENT, NULL },
                { "pr/new", -ENOENT, NULL },
                /* a file used as a directory */
                { "pr/f/x", -ENOTDIR, NULL },
                { "pr/f/x/y", -ENOTDIR, NULL },
                /* a symlink in the existing prefix: resolved through it, not as written */
                { "pr/ld/e", UNSURE, "pr/d/e" },
                { "pr/ld/new/x", UNSURE, "pr/d/new/x" },
                { "pr/lf/x", UNSURE, "pr/f/x" },                /* ELOOP before ENOTDIR */
                /* the last component a symlink: resolved */
                { "pr/ld", UNSURE, "pr/d" },
                { "pr/lf", UNSURE, "pr/f" },
                /* a dangling symlink: missing, so the longest existing prefix and its name */
                { "pr/dangling", UNSURE, "pr/dangling" },
                { "pr/dangling/x", UNSURE, "pr/dangling/x" },
                /* not lexically clean: not probed, the old way */
                { "pr/d/../d/e", UNSURE, "pr/d/e" },
                { "pr/./d", UNSURE, "pr/d" },
                { "pr//d/e", UNSURE, "pr/d/e" },
                { "pr/d/", UNSURE, "pr/d" },
                { "pr/d/new/../e", UNSURE, "pr/d/e" },
                { "pr/d/new/./x", UNSURE, "pr/d/new/x" },
                { "pr/f/x/..", UNSURE, "pr/f" },
                { "pr/ld/new/..", UNSURE, "pr/d" },
        };
        size_t n = ELEMENTSOF(cases);
        /* Without openat2 (an old kernel, seccomp) the probe cannot tell anything: the
         * results must be the same all the same. */
        bool have_openat2 = path_probe_no_symlinks("/") == 1;
        if (!have_openat2)
                printf("# no openat2 here: the probe's answers are not checked\n");
        TAP_CHECK(path_probe_no_symlinks("relative") == -EINVAL &&
                          path_probe_no_symlinks(pt_path("pr/d/")) == -EINVAL,
                  "a relative path or a trailing slash is not probed");

        char *want[ELEMENTSOF(cases)];
        for (size_t i = 0; i < n; i++) {
                const char *path = pt_path(cases[i].rel);
                char buf[PATH_MAX], ref[PATH_MAX];

                if (have_openat2) {
                        int r = path_probe_no_symlinks(path);
                        bool unsure = r < 0 && r != -ENOENT && r != -ENOTDIR;
                        TAP_CHECK(cases[i].probe == UNSURE ? unsure : r == cases[i].probe,
                                  "probe %s: %d (%s)", cases[i].rel, r, r < 0 ? strerror(-r) : "exists");
                }

                /* path_realpath_fast() as realpath(): the same path, or the same errno */
                errno = 0;
                char *fast = path_realpath_fast(path, buf);
                int fast_error = errno;
                errno = 0;
                char *slow = realpath(path, ref);
                int slow_error = errno;
                TAP_CHECK(fast && slow ? streq(fast, slow) : !fast && !slow && fast_error == slow_error,
                          "path_realpath_fast(%s) as realpath(): %s", cases[i].rel,
                          fast ?: strerror(fast_error));

                want[i] = NULL;
                TAP_CHECK(reference_canonical(path, &want[i]) == 0 &&
                          streq(want[i], cases[i].out ? pt_path(cases[i].out) : path),
                          "the old way, %s: %s", cases[i].rel, want[i] ?: "(failed)");

                char *c = NULL;
                int r = plan_path_canonicalize(path, &c);
                TAP_STREQ(r >= 0 ? c : NULL, want[i], "canonical form of %s", cases[i].rel);
                free(c);
        }

        /* Through a memo: each alone, then all in one memo forwards and backwards (what one
         * entry taught it answers the others), then again with every answer known. */
        size_t same = 0;
        for (size_t i = 0; i < n; i++) {
                PathMemo memo = {};
                char *c = NULL;
                int r = plan_path_canonicalize_memo(&memo, pt_path(cases[i].rel), &c);
                same += r >= 0 && streq(c, want[i]);
                free(c);
                path_memo_done(&memo);
        }
        TAP_CHECK(same == n, "each through a memo of its own: %zu of %zu as the old way", same, n);
        for (int lap = 0; lap < 3; lap++) {
                PathMemo memo = {};
                same = 0;
                for (int round = 0; round < 2; round++)
                        for (size_t k = 0; k < n; k++) {
                                size_t i = lap == 1 ? n - 1 - k : k;
                                char *c = NULL;
                                int r = plan_path_canonicalize_memo(&memo, pt_path(cases[i].rel), &c);
                                bool ok = r >= 0 && streq(c, want[i]);
                                if (!ok)
                                        printf("#   %s: got %d '%s', expected '%s'\n", cases[i].rel, r,
                                               c ?: "", want[i]);
                                same += ok;
                                free(c);
                        }
                TAP_CHECK(same == 2 * n, "one memo, lap %d: %zu of %zu as the old way", lap, same, 2 * n);
                path_memo_done(&memo);
        }

        /* What the memo derives from a missing path canonical as written: clean paths below it
         * are too, others below it are resolved the old way. */
        PathMemo memo = {};
        const char *below[][2] = {
                { "pr/d/gone", "pr/d/gone" },
                { "pr/d/gone/x/y", "pr/d/gone/x/y" },
                { "pr/d/gone/x/../../e", "pr/d/e" },
                { "pr/d/gone/./z", "pr/d/gone/z" },
                { "pr/f/q", "pr/f/q" },
                { "pr/f/q/r", "pr/f/q/r" },
                { "pr/f/q/..", "pr/f" },
        };
        same = 0;
        for (size_t i = 0; i < ELEMENTSOF(below); i++) {
                char *c = NULL, *ref = NULL;
                int r = plan_path_canonicalize_memo(&memo, pt_path(below[i][0]), &c);
                bool ok = r >= 0 && streq(c, pt_path(below[i][1])) &&
                          reference_canonical(pt_path(below[i][0]), &ref) == 0 && streq(ref, c);
                if (!ok)
                        printf("#   %s: got %d '%s', expected '%s'\n", below[i][0], r, c ?: "", below[i][1]);
                same += ok;
                free(c);
                free(ref);
        }
        TAP_CHECK(same == ELEMENTSOF(below), "below a missing path canonical as written: %zu of %zu",
                  same, ELEMENTSOF(below));
        path_memo_done(&memo);

        for (size_t i = 0; i < n; i++)
                free(want[i]);
}

/* plan_normalize() takes what leads out of a writable directory out of the plan, into
 * `dropped` with the reason and `warn`, before one entry per path is kept. Paths are relative
 * to lo/: proj is a directory, proj/git a link to outside, proj/toreal a link to real. */
static void test_leads_out_plans(void) {
        typedef struct { PathAccess access; const char *path; } E;
        static const struct {
                const char *name;
                E in[4];
                const char *kept[4];    /* canonical, relative to lo/ */
                const char *dropped[4]; /* as given, relative to lo/; each leads out of proj */
        } cases[] = {
                { "a read through a link planted in a writable directory",
                  { { PATH_ACCESS_WRITE, "proj" }, { PATH_ACCESS_READ, "proj/git" } },
                  { "proj" },
                  { "proj/git" } },
                { "a write through it",
                  { { PATH_ACCESS_WRITE, "proj" }, { PATH_ACCESS_WRITE, "proj/git/sub" } },
                  { "proj" },
                  { "proj/git/sub" } },
                { "the writable directory later in the plan",
                  { { PATH_ACCESS_READ, "proj/git" }, { PATH_ACCESS_WRITE, "proj" } },
                  { "proj" },
                  { "proj/git" } },
                { "a hide or deny through it stays (it takes away)",
                  { { PATH_ACCESS_WRITE, "proj" },
                    { PATH_ACCESS_HIDE, "proj/git" },
                    { PATH_ACCESS_DENY, "proj/toreal" } },
                  { "proj", "outside", "real" },
                  { NULL } },
                { "a directory only read: nothing could have been planted",
                  { { PATH_ACCESS_READ, "proj" }, { PATH_ACCESS_READ, "proj/git" } },
                  { "proj", "outside" },
                  { NULL } },
                { "the path itself, written out: not through the directory",
                  { { PATH_ACCESS_WRITE, "proj" }, { PATH_ACCESS_READ, "outside" } },
                  { "proj", "outside" },
                  { NULL } },
                /* dropped before one entry per path is kept: the read of real stays */
                { "an earlier entry for where the link leads stays",
                  { { PATH_ACCESS_READ, "real" },
                    { PATH_ACCESS_WRITE, "proj" },
                    { PATH_ACCESS_WRITE, "proj/toreal" } },
                  { "real", "proj" },
                  { "proj/toreal" } },
        };
        char want_root[PATH_MAX];

        pt_mkdir("lo/proj");
        pt_mkdir("lo/outside");
        pt_mkdir("lo/real");
        (void) symlink(pt_path("lo/outside"), pt_path("lo/proj/git"));
        (void) symlink(pt_path("lo/real"), pt_path("lo/proj/toreal"));
        rt_fmt(want_root, sizeof(want_root), "%s", pt_path("lo"));

        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                Plan *p = base_plan();
                char *err = NULL, full[PATH_MAX], origin[16];
                for (size_t i = 0; i < 4 && cases[c].in[i].path; i++) {
                        const E *e = &cases[c].in[i];
                        rt_fmt(full, sizeof(full), "%s/%s", want_root, e->path);
                        rt_fmt(origin, sizeof(origin), "t:%zu", i + 1);
                        (void) plan_add_path(p, e->access, full, origin);
                }
                bool ok = validate(p, &err) == 0;
                size_t n = 0;
                for (; n < 4 && cases[c].kept[n]; n++) {
                        rt_fmt(full, sizeof(full), "%s/%s", want_root, cases[c].kept[n]);
                        ok = ok && n < p->n_paths && streq(p->paths[n].path, full);
                }
                ok = ok && n == p->n_paths;
                rt_fmt(full, sizeof(full), "leads out of '%s/proj', which the command may write "
                                "(through a symlink it could have planted there)", want_root);
                size_t d = 0;
                for (; d < 4 && cases[c].dropped[d]; d++) {
                        char given[PATH_MAX];
                        rt_fmt(given, sizeof(given), "%s/%s", want_root, cases[c].dropped[d]);
                        ok = ok && d < p->n_dropped && p->dropped[d].warn &&
                                streq(p->dropped[d].reason, full) && streq(p->dropped[d].entry.given, given);
                }
                ok = ok && d == p->n_dropped;
                TAP_CHECK(ok, "leads out: %s (%s; %zu kept, %zu dropped)", cases[c].name, err ?: "valid",
                          p->n_paths, p->n_dropped);
                free(err);
                plan_free(p);
        }
}

/* Entries that lead out of a writable directory (plan_path_leads_out) are dropped. */
static void test_leads_out(void) {
        static const struct {
                const char *raw, *canonical, *dir_raw, *dir_canonical;
                int want;
        } cases[] = {
                /* inside, whatever the spelling */
                { "/p/.git/hooks", "/p/.git/hooks", "/p", "/p", 0 },
                { "/home/u/p/x", "/data/p/x", "/home/u/p", "/data/p", 0 },
                /* through the directory, resolved outside: a planted link */
                { "/p/.git", "/home/u", "/p", "/p", 1 },
                { "/p/link/inner", "/elsewhere/inner", "/p", "/p", 1 },
                { "/p//./link/x", "/elsewhere/x", "/p/", "/p", 1 },
                { "/p/link/../x", "/x", "/p", "/p", 1 },
                /* written through the directory's canonical name */
                { "/data/p/link", "/etc", "/home/u/p", "/data/p", 1 },
                /* not through it: ".." before anything inside, or elsewhere altogether */
                { "/p/../q/x", "/q/x", "/p", "/p", 0 },
                { "/q/x", "/elsewhere", "/p", "/p", 0 },
                /* the directory itself is not "through" it */
                { "/p", "/elsewhere", "/p", "/p", 0 },
                /* every path goes through "/" but resolves inside it too */
                { "/p/link", "/etc", "/", "/", 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                TAP_CHECK(plan_path_leads_out(cases[i].raw, cases[i].canonical, cases[i].dir_raw,
                                              cases[i].dir_canonical) == cases[i].want,
                          "leads out: %s (%s) from %s: %d", cases[i].raw, cases[i].canonical,
                          cases[i].dir_raw, cases[i].want);

        test_leads_out_plans();
}

/* Two spellings of one path: the later entry wins, and a derived one that wins over a deny
 * says where the deny was (the hardening step puts it back). */
static void test_repeated_over_deny(void) {
        pt_mkdir("od/secret");
        (void) symlink(pt_path("od/secret"), pt_path("od/link"));
        Plan *p = base_plan();
        char *err = NULL;
        (void) plan_add_path(p, PATH_ACCESS_DENY, pt_path("od/secret"), "deny.toml:1");
        (void) plan_add_path(p, PATH_ACCESS_WRITE, pt_path("od/link"), "${arg_dir}");
        p->paths[p->n_paths - 1].derived = true;
        TAP_CHECK(validate(p, &err) == 0, "a deny and a derived write of one path validate (%s)", err ?: "");
        const PlanPath *e = p->n_paths > 0 ? &p->paths[p->n_paths - 1] : NULL;
        TAP_CHECK(p->n_paths == 1 && e->access == PATH_ACCESS_WRITE && e->over_deny &&
                  streq(e->over_deny, "deny.toml:1"), "... the write stays, saying where the deny was");
        free(err);
        plan_free(p);

        /* written out, it is not marked */
        p = base_plan();
        err = NULL;
        (void) plan_add_path(p, PATH_ACCESS_DENY, pt_path("od/secret"), "deny.toml:1");
        (void) plan_add_path(p, PATH_ACCESS_WRITE, pt_path("od/link"), "--fs-write");
        TAP_CHECK(validate(p, &err) == 0 && p->n_paths == 1 && !p->paths[0].over_deny,
                  "a written-out write over a deny is not marked (%s)", err ?: "");
        free(err);
        plan_free(p);
}

/* ---- A random tree and random paths in it, against a slow reference of the test's own ----
 *
 * A fixed-seed generator (xorshift64*) builds the same tree on every run: directories, files
 * and symlinks of every sort (relative, absolute, to directories, to files, dangling, chains,
 * loops, to "..", to "/"), all named from a few letters so that random paths often meet them.
 * Each random path is canonicalized without the memo, through memos shared by batches of
 * consecutive paths (forwards, then backwards with fresh memos: what the memo derives must not
 * depend on the order it learnt it in), and through one memo for all of them; every answer,
 * path or error, must be the reference's. */

static uint64_t rt_seed;

static uint64_t rt_next(void) {
        rt_seed ^= rt_seed >> 12;
        rt_seed ^= rt_seed << 25;
        rt_seed ^= rt_seed >> 27;
        return rt_seed * UINT64_C(2685821657736338717);
}

static size_t rt_below(size_t n) {
        return (size_t) ((rt_next() >> 11) % n);
}

static bool rt_chance(unsigned percent) {
        return rt_below(100) < percent;
}

enum { RT_DIR, RT_FILE, RT_LINK };

typedef struct {
        char rel[128];          /* below the tree's root; "" for the root itself */
        int kind;
        unsigned depth;
        char target[PATH_MAX];  /* RT_LINK */
} RtEntry;

typedef struct {
        char root[PATH_MAX];
        RtEntry e[64];
        size_t n;
} RtTree;

/* some of them prefixes of others, as the memo compares strings */
static const char *const rt_names[] = { "a", "ab", "b", "c", "cd", "d", "e" };

static const char *rt_abs(const RtTree *t, const char *rel, char buf[static PATH_MAX]) {
        rt_fmt(buf, PATH_MAX, "%s%s%s", t->root, *rel ? "/" : "", rel);
        return buf;
}

static const char *rt_dir_of(const char *rel, char buf[static 128]) {
        rt_fmt(buf, 128, "%s", rel);
        char *s = strrchr(buf, '/');
        if (s)
                *s = 0;
        else
                buf[0] = 0;
        return buf;
}

/* The relative spelling of `to` from directory `from` (both below the root, "" the root). */
static const char *rt_relative(const char *from, const char *to, char buf[static PATH_MAX]) {
        const char *f = from, *o = to;

        /* past the components both have in common */
        for (;;) {
                size_t fl = strcspn(f, "/"), ol = strcspn(o, "/");
                if (!*f || !*o || fl != ol || memcmp(f, o, fl) != 0)
                        break;
                f += fl + (f[fl] == '/');
                o += ol + (o[ol] == '/');
        }
        buf[0] = 0;
        for (; *f; f += strcspn(f, "/"), f += *f == '/')
                strcat(buf, *buf ? "/.." : "..");
        if (*o) {
                if (*buf)
                        strcat(buf, "/");
                strcat(buf, o);
        }
        if (!*buf)
                strcat(buf, ".");
        return buf;
}

/* Adds an entry of `kind` under a random directory of depth min_depth to max_depth (at most
 * 3: entries are at most 4 deep), with a name not taken there; a symlink's target is set by
 * the caller (rt_link). */
static RtEntry *rt_add(RtTree *t, int kind, unsigned min_depth, unsigned max_depth) {
        for (unsigned tries = 0; tries < 10000; tries++) {
                const RtEntry *p = &t->e[rt_below(t->n)];
                if (p->kind != RT_DIR || p->depth > max_depth || p->depth < min_depth)
                        continue;
                char rel[128];
                rt_fmt(rel, sizeof(rel), "%s%s%s", p->rel, *p->rel ? "/" : "",
                       rt_names[rt_below(ELEMENTSOF(rt_names))]);
                bool taken = false;
                for (size_t i = 0; i < t->n && !taken; i++)
                        taken = streq(t->e[i].rel, rel);
                if (taken)
                        continue;
                RtEntry *e = &t->e[t->n++];
                *e = (RtEntry) { .kind = kind, .depth = p->depth + 1 };
                memcpy(e->rel, rel, sizeof(rel));
                char abs[PATH_MAX];
                if (kind == RT_DIR && mkdir(rt_abs(t, rel, abs), 0755) < 0)
                        abort();
                if (kind == RT_FILE) {
                        int fd = open(rt_abs(t, rel, abs), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                        if (fd < 0)
                                abort();
                        close(fd);
                }
                return e;
        }
        abort();
}

static RtEntry *rt_pick(RtTree *t, int kind) {
        for (;;) {
                RtEntry *e = &t->e[rt_below(t->n)];
                if (e->kind == kind)
                        return e;
        }
}

static void rt_link(RtTree *t, RtEntry *l, const char *target) {
        char abs[PATH_MAX];
        rt_fmt(l->target, sizeof(l->target), "%s", target);
        if (symlink(target, rt_abs(t, l->rel, abs)) < 0)
                abort();
}

/* A symlink to `to` (an entry's rel, possibly with more after it), relative or absolute. */
static void rt_link_to(RtTree *t, RtEntry *l, const char *to, bool relative) {
        char buf[PATH_MAX], dir[128];
        if (relative)
                rt_relative(rt_dir_of(l->rel, dir), to, buf);
        else
                rt_abs(t, to, buf);
        rt_link(t, l, buf);
}

static void rt_build(RtTree *t) {
        t->n = 1;
        t->e[0] = (RtEntry) { .kind = RT_DIR };
        for (int i = 0; i < 12; i++)
                (void) rt_add(t, RT_DIR, 0, i < 3 ? 0 : 3);
        for (int i = 0; i < 7; i++)
                (void) rt_add(t, RT_FILE, 0, 3);

        char buf[PATH_MAX];
        RtEntry *l;
        RtEntry *to_dir = rt_add(t, RT_LINK, 0, 3);
        rt_link_to(t, to_dir, rt_pick(t, RT_DIR)->rel, true);
        rt_link_to(t, rt_add(t, RT_LINK, 0, 3), rt_pick(t, RT_DIR)->rel, false);
        rt_link_to(t, rt_add(t, RT_LINK, 0, 3), rt_pick(t, RT_FILE)->rel, true);
        rt_link_to(t, rt_add(t, RT_LINK, 0, 3), rt_pick(t, RT_FILE)->rel, false);
        rt_link(t, rt_add(t, RT_LINK, 0, 3), "zz");                                /* dangling */
        rt_link(t, rt_add(t, RT_LINK, 0, 3), rt_abs(t, "zz/y", buf));              /* dangling */
        RtEntry *dangling = &t->e[t->n - 1];
        /* a chain: c1 -> c2 -> c3 -> a directory, and one ending dangling */
        RtEntry *c3 = rt_add(t, RT_LINK, 0, 3);
        rt_link_to(t, c3, rt_pick(t, RT_DIR)->rel, true);
        RtEntry *c2 = rt_add(t, RT_LINK, 0, 3);
        rt_link_to(t, c2, c3->rel, false);
        rt_link_to(t, rt_add(t, RT_LINK, 0, 3), c2->rel, true);
        rt_link_to(t, rt_add(t, RT_LINK, 0, 3), dangling->rel, true);
        /* loops: a -> b -> a, and one to itself */
        RtEntry *la = rt_add(t, RT_LINK, 0, 3), *lb = rt_add(t, RT_LINK, 0, 3);
        rt_link_to(t, la, lb->rel, true);
        rt_link_to(t, lb, la->rel, false);
        l = rt_add(t, RT_LINK, 0, 3);
        rt_link_to(t, l, l->rel, true);
        /* "..", "/", "." */
        rt_link(t, rt_add(t, RT_LINK, 1, 3), "..");
        rt_link(t, rt_add(t, RT_LINK, 0, 3), "/");
        rt_link(t, rt_add(t, RT_LINK, 0, 3), ".");
        /* through another symlink, and spelt untidily */
        rt_fmt(buf, sizeof(buf), "%s/%s", to_dir->rel, rt_names[rt_below(ELEMENTSOF(rt_names))]);
        rt_link_to(t, rt_add(t, RT_LINK, 0, 3), buf, true);
        rt_fmt(buf, sizeof(buf), "%s//./%s/", t->root, rt_pick(t, RT_DIR)->rel);
        rt_link(t, rt_add(t, RT_LINK, 0, 3), buf);
        /* and a few to anything, sometimes with more after it */
        while (t->n < 41) {
                l = rt_add(t, RT_LINK, 0, 3);
                const RtEntry *to = &t->e[1 + rt_below(t->n - 2)];
                rt_fmt(buf, sizeof(buf), "%s%s", to->rel,
                       rt_chance(30) ? (rt_chance(50) ? "/.." : "/zz") : "");
                rt_link_to(t, l, buf, rt_chance(50));
        }
}

static const RtEntry *rt_find_link(const RtTree *t, const char *target) {
        for (size_t i = 0; i < t->n; i++)
                if (t->e[i].kind == RT_LINK && streq(t->e[i].target, target))
                        return &t->e[i];
        return NULL;
}

static void rt_append(char *buf, const char *s) {
        size_t l = strlen(buf);
        rt_fmt(buf + l, PATH_MAX - l, "%s", s);
}

/* A random absolute path starting at the root of the tree. */
static void rt_path(const RtTree *t, const RtEntry *up, const RtEntry *slash, char buf[static PATH_MAX]) {
        rt_fmt(buf, PATH_MAX, "%s", t->root);
        if (up && rt_chance(2)) {
                /* one symlink to ".." many times over: P/N/up, then N/up again and again, each
                 * time back in P. Not more than 20 symlinks, with what follows: a path walk
                 * the kernel restarts out of RCU mode (as when another process changes a mount
                 * namespace meanwhile) counts again the symlinks it had followed, and may give
                 * ELOOP for more than 20, which realpath(3) resolves. */
                char dir[128];
                const char *name = strrchr(rt_dir_of(up->rel, dir), '/');
                name = name ? name + 1 : dir;
                rt_append(buf, "/");
                rt_append(buf, up->rel);
                for (size_t i = 6 + rt_below(8); i > 0; i--) {
                        rt_append(buf, "/");
                        rt_append(buf, name);
                        rt_append(buf, "/");
                        rt_append(buf, strrchr(up->rel, '/') + 1);
                }
        } else if (slash && rt_chance(5))
                rt_fmt(buf, PATH_MAX, "%s/%s", t->root, slash->rel);   /* where ".." stays at "/" */
        else if (rt_chance(45))
                rt_fmt(buf, PATH_MAX, "%s/%s", t->root, t->e[1 + rt_below(t->n - 1)].rel);
        for (size_t k = rt_below(8); k > 0; k--) {
                size_t x = rt_below(100);
                const char *c;
                if (x < 52)
                        c = rt_names[rt_below(ELEMENTSOF(rt_names))];
                else if (x < 58)
                        c = rt_chance(50) ? "zz" : "new";
                else if (x < 71)
                        c = "..";
                else if (x < 79)
                        c = ".";
                else if (x < 85)
                        c = "";
                else if (x < 89)
                        c = t->root + 1;                /* back into the tree from "/" */
                else if (x < 92)
                        c = strrchr(t->root, '/') + 1;  /* back into it from its parent */
                else
                        c = t->e[1 + rt_below(t->n - 1)].rel;
                rt_append(buf, "/");
                rt_append(buf, c);
        }
        if (rt_chance(12))
                rt_append(buf, "/");
}

/* The canonical form, slowly and with nothing of ours: realpath(3) of the path, then of
 * shorter and shorter prefixes (a component stripped from the end each time) while it says
 * ENOENT or ENOTDIR; any other error is the answer. Then the stripped components on top of
 * what realpath() said, one by one: "" and "." dropped, ".." taking off the last one. */
static int rt_reference(const char *path, char **ret) {
        char work[PATH_MAX], real[PATH_MAX];
        struct { const char *s; size_t l; } comp[PATH_MAX / 2];
        size_t wl = strlen(path), n = 0;

        if (wl >= sizeof(work))
                return -ENAMETOOLONG;
        memcpy(work, path, wl + 1);
        while (!realpath(work, real)) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return -errno;
                char *slash = strrchr(work, '/');
                wl = slash == work ? 1 : (size_t) (slash - work);
                work[wl] = 0;
        }
        for (int pass = 0; pass < 2; pass++)
                for (const char *p = pass == 0 ? real : path + wl; *p; ) {
                        while (*p == '/')
                                p++;
                        const char *e = strchrnul(p, '/');
                        size_t l = (size_t) (e - p);
                        if (l == 2 && p[0] == '.' && p[1] == '.') {
                                if (n > 0)
                                        n--;
                        } else if (l > 0 && !(l == 1 && p[0] == '.')) {
                                comp[n].s = p;
                                comp[n++].l = l;
                        }
                        p = e;
                }
        char out[PATH_MAX] = "/";
        size_t ol = n == 0 ? 1 : 0;
        for (size_t i = 0; i < n; i++) {
                if (ol + 1 + comp[i].l >= sizeof(out))
                        return -ENAMETOOLONG;
                out[ol++] = '/';
                memcpy(out + ol, comp[i].s, comp[i].l);
                ol += comp[i].l;
        }
        out[ol] = 0;
        *ret = strdup(out);
        return *ret ? 0 : -ENOMEM;
}

typedef struct {
        const char *name;
        size_t same, shown;
} RtKind;

static void rt_compare(RtKind *k, const RtTree *t, const char *path, int want_r, const char *want, int r,
                       const char *got) {
        if (r == want_r && (r < 0 || streq(got, want))) {
                k->same++;
                return;
        }
        if (k->shown++ >= 5)
                return;
        printf("#   %s: %s\n#     expected %s%s%s, got %s%s%s\n", k->name, path + strlen(t->root),
               want_r < 0 ? strerror(-want_r) : "'", want_r < 0 ? "" : want, want_r < 0 ? "" : "'",
               r < 0 ? strerror(-r) : "'", r < 0 ? "" : got, r < 0 ? "" : "'");
}

#define RT_PATHS 3000
#define RT_BATCH 50     /* as in the names of the kinds below */

/* plan_normalize() against the rule it applies, written the slow way: entry i (read or
 * write) is dropped when it leads out of any write entry j != i (plan_path_leads_out), and of
 * the entries left, one per canonical path stays, the last. Random plans of the random paths,
 * many of them writable directories, with repeated paths; the entries left, in order, with
 * their access and origin, must be the rule's. */
static void rt_validate_plans(char **in, const int *want_r) {
        size_t same = 0, plans = 0, dropped = 0, repeated = 0;

        for (size_t round = 0; round < 100; round++) {
                size_t n = 2 + rt_below(60), pick[64];
                PathAccess access[64];
                char origin[64][16], raw[64][PATH_MAX], *canon[64] = {};
                bool drop[64] = {};
                Plan *p = base_plan();

                for (size_t k = 0; k < n; k++) {
                        do
                                pick[k] = k > 0 && rt_chance(10) ? pick[rt_below(k)] : rt_below(RT_PATHS);
                        while (want_r[pick[k]] < 0);
                        /* now and then through "/": then every path is below what it walks */
                        rt_fmt(raw[k], sizeof(raw[k]), "%s%s", rt_chance(3) ? "/.." : "", in[pick[k]]);
                        access[k] = rt_chance(40) ? PATH_ACCESS_WRITE :
                                    rt_chance(70) ? PATH_ACCESS_READ :
                                    rt_chance(50) ? PATH_ACCESS_HIDE :
                                                    PATH_ACCESS_DENY;
                        if (plan_path_canonicalize(raw[k], &canon[k]) < 0 || streq(canon[k], "/"))
                                access[k] = access[k] == PATH_ACCESS_WRITE ? PATH_ACCESS_WRITE :
                                                                             PATH_ACCESS_READ;
                        rt_fmt(origin[k], sizeof(origin[k]), "t:%zu", k);
                        (void) plan_add_path(p, access[k], raw[k], origin[k]);
                }
                size_t first[64] = {};  /* the first write entry each leads out of */
                for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < n && !drop[i]; j++) {
                                drop[i] = j != i && access[j] == PATH_ACCESS_WRITE &&
                                        (access[i] == PATH_ACCESS_READ || access[i] == PATH_ACCESS_WRITE) &&
                                        plan_path_leads_out(raw[i], canon[i], raw[j], canon[j]) == 1;
                                first[i] = j;
                        }
                size_t kept = 0;
                bool ok = validate(p, NULL) == 0;
                for (size_t i = 0; i < n && ok; i++) {
                        bool later = drop[i];
                        for (size_t j = i + 1; j < n && !later; j++)
                                later = !drop[j] && streq(canon[i], canon[j]);
                        dropped += drop[i];
                        repeated += later && !drop[i];
                        if (later)
                                continue;
                        ok = kept < p->n_paths && streq(p->paths[kept].path, canon[i]) &&
                             p->paths[kept].access == access[i] && streq(p->paths[kept].origin, origin[i]);
                        kept++;
                }
                ok = ok && kept == p->n_paths;
                /* what leads out is in `dropped`, in order, as given, to be warned of, naming the
                 * first writable directory it leads out of in the plan's order */
                size_t d = 0;
                for (size_t i = 0; i < n && ok; i++)
                        if (drop[i]) {
                                char dir[PATH_MAX + 32];
                                rt_fmt(dir, sizeof(dir), "leads out of '%s',", canon[first[i]]);
                                ok = d < p->n_dropped && p->dropped[d].warn &&
                                        startswith(p->dropped[d].reason, dir) &&
                                        streq(p->dropped[d].entry.given, raw[i]) &&
                                        streq(p->dropped[d].entry.path, canon[i]) &&
                                        streq(p->dropped[d].entry.origin, origin[i]);
                                d++;
                        }
                ok = ok && d == p->n_dropped;
                same += ok;
                plans++;
                if (!ok && plans - same <= 3)
                        printf("#   plan %zu of %zu entries: %zu left, not the rule's\n", round, n,
                               p->n_paths);
                for (size_t k = 0; k < n; k++)
                        free(canon[k]);
                plan_free(p);
        }
        TAP_CHECK(same == plans && dropped > 100 && repeated > 50,
                  "random plans: %zu of %zu validate as the pairwise rule says (%zu entries dropped as "
                  "leading out, %zu as repeated)", same, plans, dropped, repeated);
}

static void test_canonicalize_random(void) {
        static RtTree t;
        static char *in[RT_PATHS], *want[RT_PATHS];
        static int want_r[RT_PATHS];

        /* two levels below the scratch root: paths that climb out of the tree with ".." meet
         * this test's directories before anyone else's */
        pt_mkdir("random");
        rt_fmt(t.root, sizeof(t.root), "%s", pt_path("random/tree-XXXXXX"));
        if (!mkdtemp(t.root))
                abort();
        rt_seed = UINT64_C(0x5c0d0c0ffee15bad);
        rt_build(&t);
        const RtEntry *up = rt_find_link(&t, ".."), *slash = rt_find_link(&t, "/");

        size_t errors = 0, through_links = 0, agree = 0;
        for (size_t i = 0; i < RT_PATHS; i++) {
                char buf[PATH_MAX], *norm = NULL, *old = NULL;
                rt_path(&t, up, slash, buf);
                in[i] = strdup(buf);
                want[i] = NULL;
                want_r[i] = rt_reference(in[i], &want[i]);
                int old_r = reference_canonical(in[i], &old);
                agree += old_r == want_r[i] && (old_r < 0 || streq(old, want[i]));
                errors += want_r[i] < 0;
                through_links +=
                        want_r[i] >= 0 && path_normalize(in[i], &norm) >= 0 && !streq(norm, want[i]);
                free(norm);
                free(old);
        }
        TAP_CHECK(agree == RT_PATHS && errors > 0 && through_links > 0,
                  "random tree of %zu entries: the two references agree on %zu of %d paths "
                  "(%zu errors, %zu resolved through symlinks)",
                  t.n - 1, agree, RT_PATHS, errors, through_links);

        RtKind kinds[] = {
                { "without memo" },
                { "memo per batch of 50, forwards" },
                { "memo per batch of 50, backwards" },
                { "one memo for all, forwards then backwards" },
        };
        for (size_t ki = 0; ki < ELEMENTSOF(kinds); ki++) {
                PathMemo memo = {};
                size_t laps = ki == 3 ? 2 : 1;
                for (size_t j = 0; j < laps * RT_PATHS; j++) {
                        bool back = ki == 2 || (ki == 3 && j >= RT_PATHS);
                        size_t i = back ? RT_PATHS - 1 - j % RT_PATHS : j;
                        char *c = NULL;
                        int r;
                        if (ki == 0)
                                r = plan_path_canonicalize(in[i], &c);
                        else {
                                if ((ki == 1 || ki == 2) && j % RT_BATCH == 0)
                                        path_memo_done(&memo);
                                r = plan_path_canonicalize_memo(&memo, in[i], &c);
                        }
                        rt_compare(&kinds[ki], &t, in[i], want_r[i], want[i], r, c);
                        free(c);
                }
                path_memo_done(&memo);
                TAP_CHECK(kinds[ki].same == laps * RT_PATHS, "random paths, %s: %zu of %zu as the reference",
                          kinds[ki].name, kinds[ki].same, laps * RT_PATHS);
        }

        rt_validate_plans(in, want_r);

        for (size_t i = 0; i < RT_PATHS; i++) {
                free(in[i]);
                free(want[i]);
        }
}

int main(void) {
        pt_setup();
        test_leads_out();
        test_repeated_over_deny();
        test_canonicalize();
        test_validate();
        test_many_paths();
        test_canonicalize_memo();
        test_probe();
        test_canonicalize_random();
        pt_cleanup();
        return tap_done();
}
