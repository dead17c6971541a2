/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The delegation step (src/plan/plan-delegate.c): the whole resolution of a request that came
 * through a broker, from configuration files to the decision, each limit on its own. The caller
 * (an agent) may write its project; the tool profiles are delegable. */
#include "plan/plan-delegate.h"
#include "policy-test.h"
#include "tap.h"

static const char *CONFIG =
        "[tool]\n"
        "match = [\"tool\"]\n"
        "delegable = true\n"
        "filesystem.write = [\"~/.tool-cache\"]\n"
        "[tool-install]\n"
        "match = [\"tool install\"]\n"
        "delegable = false\n"
        "[tool-ask]\n"
        "match = [\"tool ask\"]\n"
        "confirm = true\n"
        "[maker]\n"
        "match = [\"maker\"]\n"
        "delegable = true\n"
        "args.dir = { options = [\"-C\"] }\n"
        "filesystem.write = [\"${arg_dir}\"]\n"
        "[reader]\n"
        "match = [\"reader\"]\n"
        "delegable = true\n"
        "args.dir = { index = 1 }\n"
        "filesystem.read = [\"${arg_dir}\"]\n"
        "[other]\n"
        "match = [\"other\", \"re:oth[0-9]+\", \"other sub\"]\n"
        "delegable = true\n";

static PlanPath caller_paths[3];
static DelegationContext ctx;
static char *delegated[] = { (char *) "tool", (char *) "maker", (char *) "reader", NULL };

static int resolve(const char *dir, const char *const *argv, Plan **ret, char **err) {
        Request r;
        pt_request(&r, dir, argv, NULL);
        r.delegation = &ctx;
        *err = NULL;
        *ret = NULL;
        int k = policy_resolve(&r, ret, NULL, err);
        request_done(&r);
        return k;
}

/* Refused, with a message holding `want`. */
static void expect_refused(const char *dir, const char *const *argv, const char *want, const char *name) {
        Plan *p = NULL;
        char *err = NULL;
        int r = resolve(dir, argv, &p, &err);
        TAP_CHECK(r == -EPERM && err && strstr(err, want), "%s", name);
        if (!(r == -EPERM && err && strstr(err, want)))
                printf("#   r=%d err=%s\n", r, err ? err : "(null)");
        free(err);
        plan_free(p);
}

static Plan *expect_ok(const char *dir, const char *const *argv, bool in_place, const char *name) {
        Plan *p = NULL;
        char *err = NULL;
        int r = resolve(dir, argv, &p, &err);
        TAP_CHECK(r == 0 && p && p->delegation_in_place == in_place, "%s", name);
        if (r != 0)
                printf("#   r=%d err=%s\n", r, err ? err : "(null)");
        free(err);
        return p;
}

static void test_decision(void) {
        Plan *p;

        p = expect_ok("proj", ARGV("tool", "run"), false, "a delegated profile matches: delegated");
        TAP_STREQ(p ? p->log_target : NULL, "stderr", "what it refuses is reported on the caller's stderr");
        plan_free(p);
        plan_free(expect_ok("proj", ARGV("ls", "-l"), true, "no delegated profile matches: in place"));
        plan_free(expect_ok("proj", ARGV("other"), true,
                            "a delegable profile the caller does not delegate: in place"));
        plan_free(expect_ok("proj", ARGV("/usr/bin/tool", "x"), false, "by its path: still delegated"));
        /* The agent writes the arguments: a pattern with a space can be dodged, but only to get
         * less of what the more specific profile says, never to keep the command inside. */
        plan_free(expect_ok("proj", ARGV("tool", "--flag", "-x", "install2"), false,
                            "arguments that dodge 'tool install' stay delegated under 'tool'"));
}

static void test_limits(void) {
        expect_refused("proj", ARGV("tool", "install"), "profile 'tool-install', which is not delegable",
                       "delegable = false on a matching profile stops it, though 'tool' is delegated");
        expect_refused("proj", ARGV("tool", "-v", "install"), "not delegable",
                       "options between the words do not dodge it");
        expect_refused("proj", ARGV("tool", "ask"), "confirm = true, and a delegated command cannot ask",
                       "confirm = true: refused, not asked");
        expect_refused("proj", ARGV("tool", "ask"),
                       "etc/config.toml:", "the refusal names where confirm was said");
        expect_refused("proj/.git", ARGV("tool"), "the working directory",
                       "a working directory the caller may only read: refused");
        expect_refused("elsewhere", ARGV("tool"), "the working directory",
                       "a working directory outside what the caller can write: refused");
        expect_refused("proj", ARGV("maker", "-C", pt_path("elsewhere")), "worked out from the request",
                       "maker -C DIR: a write worked out from the arguments outside the caller's: refused");
        /* The home directory itself is never a derived write (build.lua drops it, as for any
         * run): whether refused or left out, the tool does not get it. */
        Plan *h = NULL;
        char *herr = NULL;
        int hr = resolve("proj", ARGV("maker", "-C", pt_path("home")), &h, &herr);
        const PlanPath *he = hr == 0 ? pt_find_path(h, "home") : NULL;
        TAP_CHECK(hr == -EPERM || (hr == 0 && (!he || he->access != PATH_ACCESS_WRITE)),
                  "maker -C ~: no write access to the home directory");
        plan_free(h);
        free(herr);
        expect_refused("proj", ARGV("maker", "-C", "../elsewhere"), "lies outside what",
                       "a relative -C that leads out: refused");
        Plan *p = expect_ok("proj", ARGV("maker", "-C", "sub"), false,
                            "maker -C sub, inside the project: delegated");
        TAP_CHECK(p && pt_find_path(p, "proj/sub") && pt_find_path(p, "proj/sub")->derived,
                  "and the derived write is there");
        plan_free(p);
        plan_free(expect_ok("proj", ARGV("reader", ".git"), false,
                            "a derived read of what the caller only reads, inside its project: delegated"));
        expect_refused("proj", ARGV("reader", pt_path("elsewhere")), "read access",
                       "a derived read outside the caller's project: refused");

        /* An untrusted project file: ignored from a terminal, an error here. */
        pt_write("proj/.scudo.toml", "[tool]\nfilesystem.write = [\"/tmp\"]\n");
        expect_refused("proj", ARGV("tool"), "is not trusted, and a delegated command cannot ask",
                       "an untrusted project file: refused");
        expect_refused("proj", ARGV("tool"), "proj/.scudo.toml", "naming the file");
        plan_free(expect_ok("proj", ARGV("ls"), true,
                            "an untrusted file does not matter to a command run in place"));
        (void) unlink(pt_path("proj/.scudo.toml"));
}

static void test_plans(void) {
        Plan *p = plan_new();
        TAP_CHECK(plan_adds_up_to_nothing(p), "an empty plan adds up to nothing");
        plan_add_path(p, PATH_ACCESS_WRITE, "/home/dev", "x");
        plan_add_property(p, "ProtectSystem", "no", "x");
        TAP_CHECK(plan_adds_up_to_nothing(p), "a write grant and ProtectSystem=no: still nothing");
        plan_add_property(p, "ProtectHome", "read-only", "x");
        TAP_CHECK(!plan_adds_up_to_nothing(p), "ProtectHome=read-only is a sandbox");
        plan_free(p);
        p = plan_new();
        plan_add_path(p, PATH_ACCESS_DENY, "/home/dev/.ssh", "x");
        TAP_CHECK(!plan_adds_up_to_nothing(p), "a denied path is a sandbox");
        plan_free(p);

        TAP_CHECK(delegation_caller_can_write(&ctx, pt_path("proj/a/b")), "below the project: writable");
        TAP_CHECK(!delegation_caller_can_write(&ctx, pt_path("proj/.git/hooks")), "below its .git: not");
        TAP_CHECK(delegation_inside_caller_writes(&ctx, pt_path("proj/.git/hooks")),
                  "but inside its writable area");
        TAP_CHECK(!delegation_caller_can_write(&ctx, pt_path("home")), "the home directory: not");
        TAP_CHECK(!delegation_caller_can_write(&ctx, pt_path("proj-other")),
                  "a sibling with the same prefix: not");
}

static void test_routing(void) {
        Request r;
        Plan *p = NULL;
        char *err = NULL;
        char path[2048];

        /* What an agent's sandbox routes to scudo: the names its delegated profiles match. */
        pt_write("bin/oth12", "#!/bin/sh\n");
        pt_write("bin/oth", "#!/bin/sh\n");
        pt_write("etc/config.d/agent.toml",
                 "[agent]\nmatch = [\"agent\"]\ndelegate = [\"tool\", \"other\"]\n");
        pt_request(&r, "proj", ARGV("agent"), NULL);
        snprintf(path, sizeof(path), "PATH=%s:/nonexistent", pt_path("bin"));
        strv_free(r.environ);
        r.environ = NULL;
        strv_extend(&r.environ, path);
        int k = policy_resolve(&r, &p, NULL, &err);
        TAP_CHECK(k == 0 && p && strv_contains(p->delegate_commands, "tool") &&
                          strv_contains(p->delegate_commands, "other") &&
                          strv_contains(p->delegate_commands, "oth12") &&
                          !strv_contains(p->delegate_commands, "oth") &&
                          strv_length(p->delegate_commands) == 3,
                  "routed: the names, the first word of a command line, what a regex matches on PATH");
        if (k != 0)
                printf("# %s\n", err);
        plan_free(p);
        free(err);
        request_done(&r);
        (void) unlink(pt_path("etc/config.d/agent.toml"));
}

int main(void) {
        pt_setup();
        pt_write("etc/config.toml", "%s", CONFIG);
        pt_mkdir("proj/.git");
        pt_mkdir("proj/sub");
        pt_mkdir("elsewhere");
        pt_mkdir("proj-other");
        caller_paths[0] =
                (PlanPath){ .access = PATH_ACCESS_WRITE, .path = pt_path("proj"), .origin = (char *) "" };
        caller_paths[1] = (PlanPath){ .access = PATH_ACCESS_READ,
                                      .path = pt_path("proj/.git"),
                                      .origin = (char *) "" };
        caller_paths[2] =
                (PlanPath){ .access = PATH_ACCESS_HIDE, .path = pt_path("home"), .origin = (char *) "" };
        for (size_t i = 0; i < 3; i++)
                caller_paths[i].path = strdup(caller_paths[i].path);
        ctx = (DelegationContext) {
                .caller_unit = "scudo-0123456789abcdef.service",
                .delegated = delegated,
                .caller_paths = caller_paths,
                .n_caller_paths = 3,
        };

        test_decision();
        test_limits();
        test_plans();
        test_routing();

        for (size_t i = 0; i < 3; i++)
                free(caller_paths[i].path);
        pt_cleanup();
        return tap_done();
}
