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

int main(void) {
        pt_setup();
        test_canonicalize();
        test_validate();
        pt_cleanup();
        return tap_done();
}
