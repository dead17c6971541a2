/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* plan_validate() and the canonical paths it insists on, whatever produced the plan. */
#include "plan/plan-validate.h"
#include "policy-test.h"
#include "tap.h"

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

static void expect_invalid(Plan *p, const char *want, const char *name) {
        char *err = NULL;
        int r = plan_validate(p, &err);
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
        TAP_CHECK(plan_validate(p, &err) == 0, "a good plan passes");
        TAP_CHECK(p->n_paths == 1 && p->paths[0].access == PATH_ACCESS_READ &&
                  strcmp(p->paths[0].path, pt_path("a/b")) == 0,
                  "two entries for one canonical path: the later stays");
        plan_free(p);

        p = base_plan();
        plan_add_path(p, PATH_ACCESS_WRITE, "relative", "t:1");
        expect_invalid(p, "t:1: filesystem.write: 'relative' is not an absolute path", "relative paths are refused");

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

/* The memo plan_validate() canonicalizes through: the same answers as without it, whatever
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
                "", "a", "a/lin", "a/linkdir", "a/b", "a/b/", "a/./b", "a//b", "a/b/../b", "a/b/c/d", "a/b/c", "a/b/c/d/e/f",
                "a/link", "a/link/", "a/link/c", "a/link/new/file", "a/link/../b", "a/link/c/../../link/c",
                "a/missing", "a/missing/x/y", "a/missing/../b", "a/missing/x/../../b", "a/missing/./z",
                "a/file", "a/file/", "a/file/x", "a/file/../b", "a/file/x/../..",
                "a/dangling", "a/dangling/x", "a/dangling/../b",
                "a/rel", "a/rel/d", "a/rel/d/..", "a/rel/../..", "a/rel/new/..",
                "a/up", "a/up/c/d", "a/up/../link/c",
                "a/root", "a/root/tmp", "a/root/..", "a/b/c/d/../../../../a/b",
                "a/loop1", "a/loop1/x", "a/loop2/../b",
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

        /* Through plan_validate(): each path as it is alone (these have distinct results). */
        Plan *p = base_plan();
        const char *some[] = { "a/link/c", "a/missing/x/y", "a/file", "a/up/c/d", "a/rel/new/../d/e",
                               "a/b/c/d/e/f", "a/dangling/x", "a/missing/./z" };
        for (size_t i = 0; i < ELEMENTSOF(some); i++)
                plan_add_path(p, PATH_ACCESS_READ, pt_path(some[i]), "t:1");
        char *err = NULL;
        bool ok = plan_validate(p, &err) == 0 && p->n_paths == ELEMENTSOF(some);
        for (size_t i = 0; ok && i < ELEMENTSOF(some); i++) {
                char *c = NULL;
                ok = plan_path_canonicalize(pt_path(some[i]), &c) >= 0 && streq(c, p->paths[i].path);
                free(c);
        }
        TAP_CHECK(ok, "plan_validate() canonicalizes each path as plan_path_canonicalize() does");
        free(err);
        plan_free(p);

        for (size_t i = 0; i < n; i++) {
                free(in[i]);
                free(want[i]);
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
                          "leads out: %s (%s) from %s: %d", cases[i].raw, cases[i].canonical, cases[i].dir_raw,
                          cases[i].want);

        /* plan_validate drops such an entry, keeps the rest. */
        pt_mkdir("lo/proj");
        pt_mkdir("lo/outside");
        (void) symlink(pt_path("lo/outside"), pt_path("lo/proj/git"));
        Plan *p = base_plan();
        char *err = NULL;
        (void) plan_add_path(p, PATH_ACCESS_WRITE, pt_path("lo/proj"), "w");
        (void) plan_add_path(p, PATH_ACCESS_READ, pt_path("lo/proj/git"), "r");
        (void) plan_add_path(p, PATH_ACCESS_READ, pt_path("lo/proj/real"), "r2");
        TAP_CHECK(plan_validate(p, &err) == 0, "a plan with a planted link validates (%s)", err ?: "");
        bool outside = false, real = false;
        for (size_t i = 0; i < p->n_paths; i++) {
                outside = outside || streq(p->paths[i].path, pt_path("lo/outside"));
                real = real || streq(p->paths[i].path, pt_path("lo/proj/real"));
        }
        TAP_CHECK(!outside && real && p->n_paths == 2, "the entry through the link is dropped, the others kept");
        free(err);
        plan_free(p);
}

int main(void) {
        pt_setup();
        test_leads_out();
        test_canonicalize();
        test_validate();
        test_canonicalize_memo();
        pt_cleanup();
        return tap_done();
}
