/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* User code (`.lua` profile files and hooks) against the environment it runs in
 * (lua/scudo/userenv.lua) and its budgets: loops, memory bombs, pcall trying to swallow the
 * budget error, the missing libraries, metatable and error-object tricks, time spent inside a
 * C function; and the primitives a hook changes the plan with. Each case is a file in config.d; `tool` is
 * the command. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "policy-test.h"
#include "tap.h"

static double clock_seconds(clockid_t clock) {
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double now(void) {
        return clock_seconds(CLOCK_MONOTONIC);
}

/* The CPU time this process has had: what a budget costs whatever else the machine runs. */
static double cpu_now(void) {
        return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

/* User code also has a deadline of a second of wall-clock time. On a machine so busy that
 * this process gets a fifth of a CPU, it comes before the limit a check is about, and the
 * error it gives says nothing of that limit: the check is skipped then. */
static bool deadline_came_first(const char *err, const char *want) {
        return err && !strstr(err, want) && strstr(err, "stopped: ran longer than");
}

/* Writes a config.d file whose profile `t` matches `tool` and runs `body` as its hook. */
static void hook(const char *body) {
        pt_write("etc/config.d/h.lua",
                 "return { t = { match = { \"tool\" }, hook = function(ctx, plan)\n%s\nend } }\n", body);
}

/* Expects resolution to fail with `want` in the message, in less than `max` seconds of CPU
 * time (on a busy machine the wall clock says more of the machine than of the budget). When
 * the deadline comes first, it tries again, a moment of the machine's being less busy
 * being all the check needs, and skips the check after three such tries. */
static void expect_error(const char *name, const char *body, const char *want, double max) {
        Plan *p = NULL;
        char *err = NULL;
        int r;
        double dt;
        hook(body);
        for (int tries = 1;; tries++) {
                double t0 = cpu_now();
                r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
                dt = cpu_now() - t0;
                if (!(r < 0 && deadline_came_first(err, want) && dt < max))
                        break;
                if (tries == 3) {
                        TAP_SKIP("%s: the hook's deadline came first %d times on this busy machine "
                                 "(%.2fs of CPU)", name, tries, dt);
                        plan_free(p);
                        free(err);
                        return;
                }
                plan_free(p);
                free(err);
                p = NULL;
                err = NULL;
        }
        bool ok = r < 0 && err && strstr(err, want) && dt < max;
        TAP_CHECK(ok, "%s (%.2fs of CPU)", name, dt);
        if (!ok)
                printf("#   r=%d error: %s\n", r, err ?: "(none)");
        plan_free(p);
        free(err);
}

static void expect_ok(const char *name, const char *body) {
        Plan *p = NULL;
        char *err = NULL;
        hook(body);
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0, "%s", name);
        if (r < 0)
                printf("#   error: %s\n", err ?: "(none)");
        plan_free(p);
        free(err);
}

static void test_budgets(void) {
        expect_error("an endless loop is stopped", "while true do end", "instruction budget", 5);
        expect_error("pcall cannot swallow the budget error",
                     "while true do pcall(function() while true do end end) end", "instruction budget", 5);
        expect_error("xpcall with a handler that loops cannot either",
                     "while true do xpcall(function() while true do end end, function() while true do end "
                     "end) end",
                     "instruction budget", 5);
        expect_error("error() in a to-be-closed variable does not either",
                     "local x <close> = setmetatable({}, { __close = function() while true do end end })\n"
                     "while true do end", "instruction budget", 5);
        expect_error("a memory bomb is stopped",
                     "local t = {} while true do t[#t + 1] = string.rep('x', 65536) .. #t end",
                     "memory limit", 5);
        expect_error("a memory bomb inside pcall is stopped too",
                     "local keep = {} while true do pcall(function() keep[#keep + 1] = string.rep('y', 1 << "
                     "20) .. #keep end) end",
                     "stopped", 5);
        expect_error("an impossible string.rep is refused", "local s = string.rep('x', 1 << 40)",
                     "too large", 5);
        expect_error("a huge string.rep hits the memory limit", "local s = string.rep('x', 1 << 30)",
                     "memory limit", 5);
        expect_error("deep recursion is stopped", "local function f(n) return 1 + f(n + 1) end f(1)", "hook",
                     5);
        expect_error("an error object whose __tostring loops is reported, not converted",
                     "error(setmetatable({}, { __tostring = function() while true do end end }))",
                     "error object is a table value", 5);
        expect_error("a plain error names the hook", "error('boom')", "boom", 5);
}

static void test_environment(void) {
        static const char * const absent[] = {
                "io", "os", "load", "loadstring", "dofile", "loadfile", "debug", "coroutine", "package",
                "collectgarbage", "rawset", "print", "string.dump", "require('os')", "require('scudo.sys')",
                "require('scudo.engine')",
        };
        for (size_t i = 0; i < ELEMENTSOF(absent); i++) {
                char body[256], name[128];
                /* require() raises for unknown modules; the others are nil. */
                if (strncmp(absent[i], "require", 7) == 0)
                        snprintf(body, sizeof(body), "local ok = pcall(function() return %s end)\n"
                                 "if ok then scudo.fs.write('/escaped') end", absent[i]);
                else
                        snprintf(body, sizeof(body), "if %s ~= nil then scudo.fs.write('/escaped') end",
                                 absent[i]);
                snprintf(name, sizeof(name), "%s is not available to user code", absent[i]);
                Plan *p = NULL;
                char *err = NULL;
                hook(body);
                int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
                TAP_CHECK(r >= 0 && !pt_find_path(p, "/escaped"), "%s", name);
                if (r < 0)
                        printf("#   error: %s\n", err);
                plan_free(p);
                free(err);
        }
        expect_ok("getmetatable('') is hidden", "assert(getmetatable('') == false)");
        expect_ok("methods on strings still work", "assert(('abc'):upper() == 'ABC')");
        expect_error("library tables are read-only", "string.rep = nil", "read-only", 5);
        expect_error("the globals view is read-only", "local g = getmetatable(_ENV)\nassert(g == false)\n"
                     "scudo.fs = nil", "read-only", 5);
        expect_error("__gc cannot be set", "setmetatable({}, { __gc = function() while true do end end })",
                     "__gc is not available", 5);
        expect_ok("require of the public API works", "assert(require('scudo.fs') == scudo.fs)");
}

static void test_primitives(void) {
        Plan *p = NULL;
        char *err = NULL;

        hook("scudo.fs.write('out')\nscudo.fs.deny('${PWD}/secret')\n"
             "scudo.net.allow('example.com:443')\nscudo.unit.set('MemoryMax', '1G')\n"
             "scudo.unit.set('PrivateTmp', false)\nscudo.warn('hello from the hook')\n"
             "local root = scudo.path.lookup({ 'marker' })\n"
             "if root then scudo.fs.read(root .. '/from-lookup') end\n"
             "assert(ctx.command == 'tool' and ctx.argv[1] == 'tool')\n"
             "assert(type(plan.paths) == 'table')\n"
             "plan.paths = {}  -- a copy: no effect\n");
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0, "a hook changes the plan through the primitives (%s)", err ?: "");
        if (r >= 0) {
                const PlanPath *e = pt_find_path(p, "etc/config.d/out");
                TAP_CHECK(e && e->access == PATH_ACCESS_WRITE && strstr(e->origin, "h.lua:2"),
                          "scudo.fs.write: relative to the hook's file, origin file:line");
                e = pt_find_path(p, "proj/secret");
                TAP_CHECK(e && e->access == PATH_ACCESS_DENY, "scudo.fs.deny with a variable");
                TAP_CHECK(p->network_filtered && strv_contains(p->net_allow, "example.com:443"),
                          "scudo.net.allow");
                TAP_STREQ(pt_property(p, "MemoryMax"), "1G", "scudo.unit.set");
                TAP_STREQ(pt_property(p, "PrivateTmp"), "no", "scudo.unit.set with a boolean");
                e = pt_find_path(p, "proj/from-lookup");
                TAP_CHECK(e && e->access == PATH_ACCESS_READ, "scudo.path.lookup");
                TAP_CHECK(pt_find_path(p, "home") != NULL, "the hook's copy of the plan changes nothing");
        }
        plan_free(p);
        free(err);

        expect_error("scudo.unit.set checks the property", "scudo.unit.set('MemoryMaks', '1G')",
                     "did you mean 'MemoryMax'?", 5);
        expect_error("scudo.net.allow checks the rule", "scudo.net.allow('not a rule')", "bad network rule",
                     5);
        expect_error("scudo.fs.write refuses a NUL byte", "scudo.fs.write('a\\0b')", "NUL", 5);
        expect_error("a hook cannot queue changes without end",
                     "for i = 1, 20000 do scudo.fs.write('/x' .. i) end", "more than 10000 changes", 5);

        /* At load time the primitives cannot change a plan. */
        pt_write("etc/config.d/h.lua", "scudo.fs.write('/x')\nreturn {}\n");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "only a hook can change the plan"),
                  "no plan changes at load time");
        free(err);
        p = NULL;

        /* A profile file that loops at load time. */
        pt_write("etc/config.d/h.lua", "while true do end\n");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        if (r < 0 && deadline_came_first(err, "instruction budget"))
                TAP_SKIP("a looping profile file is stopped: its deadline came first on this busy machine");
        else
                TAP_CHECK(r < 0 && err && strstr(err, "instruction budget"),
                          "a looping profile file is stopped");
        free(err);
        p = NULL;

        /* A profile file returning something with metamethods is read raw. */
        pt_write("etc/config.d/h.lua", "return setmetatable({ t = { match = { 'tool' }, unit = { MemoryMax "
                                       "= '5G' } } },\n  { __index = function() while true do end end, "
                                       "__pairs = function() while true do end end })\n");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_property(p, "MemoryMax") && strcmp(pt_property(p, "MemoryMax"), "5G") == 0,
                  "a returned table is copied raw, its metamethods never run");
        plan_free(p);
        free(err);
        p = NULL;
        unlink(pt_path("etc/config.d/h.lua"));
}

static void test_project_lua(void) {
        Plan *p = NULL;
        char *err = NULL;

        /* Not trusted: never run (it would loop). */
        pt_write("proj/.scudo.lua", "while true do end\n");
        double t0 = now();
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && now() - t0 < 1, "an untrusted .scudo.lua is never run");
        plan_free(p);
        free(err);
        p = NULL;

        /* Trusted: runs, hook included. */
        pt_write("proj/.scudo.lua",
                 "return { t = { match = { 'tool' }, hook = function() scudo.fs.write('w') end } }\n");
        pt_trust("proj/.scudo.lua");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_find_path(p, "proj/w"), "a trusted .scudo.lua and its hook apply");
        plan_free(p);
        free(err);
        p = NULL;

        /* Edited after trust: untrusted again. */
        pt_write("proj/.scudo.lua",
                 "return { t = { match = { 'tool' }, hook = function() scudo.fs.write('/') end } }\n");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && !pt_find_path(p, "proj/w") && !pt_find_path(p, "/"),
                  "an edited file is untrusted again");
        plan_free(p);
        free(err);
        p = NULL;
        unlink(pt_path("proj/.scudo.lua"));

        /* A trusted TOML file naming a hook file: the hook file needs trust of its own. */
        pt_write("proj/.scudo.toml", "[t]\nmatch = [\"tool\"]\nhook = \"hooks/h.lua\"\n");
        pt_write("proj/hooks/h.lua", "scudo.fs.write('from-hook-file')\n");
        pt_trust("proj/.scudo.toml");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "is not trusted"),
                  "a hook file that is not trusted stops the run");
        free(err);
        p = NULL;
        pt_trust("proj/hooks/h.lua");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_find_path(p, "proj/hooks/from-hook-file"), "a trusted hook file runs");
        plan_free(p);
        free(err);
        unlink(pt_path("proj/.scudo.toml"));
}

/* The Lua of a hook that reports, in the unit's Description, the entries of the plan it was
 * given under /x/, /y/ and /z/ (access=path,written,expanded) and the log target. */
#define HOOK_REPORT \
        "function(ctx, plan)\n" \
        "  local t = {}\n" \
        "  for _, p in ipairs(plan.paths) do\n" \
        "    if p.path:match('^/[xyz]/') or p.path:match('^/cfg') or p.path:match('^%${') or " \
        "p.path:match('wbin') then\n" \
        "      t[#t + 1] = p.access .. '=' .. p.path .. ',' .. tostring(p.written) .. ',' .. " \
        "tostring(p.expanded)\n" \
        "    end\n" \
        "  end\n" \
        "  table.sort(t)\n" \
        "  t[#t + 1] = 'log=' .. tostring(plan.log_target)\n" \
        "  scudo.unit.set('Description', table.concat(t, ';'))\n" \
        "end"

/* What hooks see of the plan, for a profile with hooks = { first, HOOK_REPORT } and the TOML
 * keys `toml`, with SECRET=hunter2 and XDG_CONFIG_HOME=/cfg-secret set. Returns the report (the
 * plan's Description, freed by the caller) or NULL; *ret_ok: whether resolution succeeded. */
static char *hooks_see_env(const char *toml, const char *first, const char *const *env, Plan **ret_plan) {
        char *err = NULL;
        pt_write("etc/config.d/w.toml", "[t]\nmatch = [\"tool\"]\n%s", toml);
        pt_write("etc/config.d/w.lua", "return { t = { hook = { function(ctx, plan) %s end, %s } } }\n",
                 first, HOOK_REPORT);
        int r = pt_resolve("proj", ARGV("tool"), env, ret_plan, &err);
        if (r < 0)
                printf("#   error: %s\n", err ?: "(none)");
        free(err);
        const char *d = r >= 0 ? pt_property(*ret_plan, "Description") : NULL;
        return d ? strdup(d) : NULL;
}

static char *hooks_see(const char *toml, const char *first, Plan **ret_plan) {
        return hooks_see_env(toml, first,
                             ARGV("SECRET=hunter2", "PUBLIC=shown", "XDG_CONFIG_HOME=/cfg-secret"),
                             ret_plan);
}

/* Hooks never see the value of a variable the command does not get: an entry that reads one
 * is in their plan as written, whether or not it applies, and nothing else they see (which
 * entry replaced which) depends on its value. */
static void test_hooks_see_no_withheld_value(void) {
        static const char *toml = "deny_env = [\"SECRET\", \"XDG_CONFIG_HOME\"]\n"
                "filesystem.read = [\"/x/${env:SECRET}\", \"/y/${env:PUBLIC}\", \"${XDG_CONFIG_HOME}/z\"]\n"
                "log.target = \"/z/${env:SECRET}.log\"\n";
        Plan *p = NULL;

        char *seen = hooks_see(toml, "", &p);
        TAP_CHECK(seen && !strstr(seen, "hunter2") && !strstr(seen, "cfg-secret"),
                  "no withheld value reaches a hook: %s", seen ?: "(none)");
        TAP_CHECK(seen && strstr(seen, "read=/x/${env:SECRET},/x/${env:SECRET},nil") &&
                  strstr(seen, "read=${XDG_CONFIG_HOME}/z,") && strstr(seen, "log=/z/${env:SECRET}.log"),
                  "such entries are shown as written");
        TAP_CHECK(seen && strstr(seen, "read=/y/shown,/y/${env:PUBLIC},/y/shown"),
                  "others as ever, expanded");
        TAP_CHECK(p && pt_find_path(p, "/x/hunter2") && pt_find_path(p, "/cfg-secret/z") && p->log_target &&
                          streq(p->log_target, "/z/hunter2.log"),
                  "the plan itself still has them expanded");
        plan_free(p);
        p = NULL;

        /* A hook's own entry reading SECRET: the next hook sees it as written. */
        char *own = hooks_see("deny_env = [\"SECRET\"]\n", "scudo.fs.write('/x/${env:SECRET}/own')", &p);
        TAP_CHECK(own && !strstr(own, "hunter2") && strstr(own, "write=/x/${env:SECRET}/own"),
                  "a hook's entry reading a withheld variable reaches the next hook as written: %s",
                  own ?: "");
        TAP_CHECK(p && pt_find_path(p, "/x/hunter2/own"), "and applies");
        plan_free(p);
        p = NULL;

        /* Guessing: a first hook adds the guess, of another access; what the second sees must
         * not tell a right guess from a wrong one. */
        char *right = hooks_see(toml, "scudo.fs.write('/x/hunter2')", &p);
        plan_free(p);
        p = NULL;
        char *wrong = hooks_see(toml, "scudo.fs.write('/x/hunter3')", &p);
        plan_free(p);
        p = NULL;
        /* the guesses themselves aside */
        for (char *g = right; g && (g = strstr(g, "hunter2")); )
                g[6] = 'N';
        for (char *g = wrong; g && (g = strstr(g, "hunter3")); )
                g[6] = 'N';
        TAP_CHECK(right && wrong && streq(right, wrong),
                  "a guess of the value changes nothing a hook sees (%s | %s)", right ?: "", wrong ?: "");

        /* explain says so */
        Request r;
        char *text = NULL, *err = NULL;
        pt_request(&r, "proj", ARGV("tool"), ARGV("SECRET=hunter2"));
        int k = policy_explain(&r, false, &text, &err);
        TAP_CHECK(k >= 0 && text && strstr(text, "hooks see these as written") &&
                  strstr(text, "filesystem.read /x/${env:SECRET}") && strstr(text, "(SECRET)"),
                  "explain names the entries hooks see as written");
        request_done(&r);
        free(text);
        free(err);
        /* A withheld PATH decides which derived writes are refused (a directory on it runs
         * later): hooks see them as if none were. */
        char path_env[1200];
        snprintf(path_env, sizeof(path_env), "PATH=%s:/usr/bin", pt_path("proj/wbin"));
        char *on_path = hooks_see_env("deny_env = [\"PATH\"]\nfilesystem.write = [\"${PWD}/wbin\"]\n", "",
                                      ARGV(path_env), &p);
        TAP_CHECK(p && !pt_find_path(p, "proj/wbin"), "a derived write on $PATH is refused");
        plan_free(p);
        p = NULL;
        char *off_path = hooks_see_env("deny_env = [\"PATH\"]\nfilesystem.write = [\"${PWD}/wbin\"]\n", "",
                                       ARGV("PATH=/usr/bin"), &p);
        TAP_CHECK(p && pt_find_path(p, "proj/wbin"), "and granted when it is not");
        plan_free(p);
        p = NULL;
        TAP_CHECK(on_path && off_path && streq(on_path, off_path) && strstr(on_path, "wbin"),
                  "with PATH withheld, hooks cannot tell the two apart (%s | %s)", on_path ?: "",
                  off_path ?: "");
        free(on_path), free(off_path);

        free(seen), free(own), free(right), free(wrong);
        unlink(pt_path("etc/config.d/w.toml"));
        unlink(pt_path("etc/config.d/w.lua"));
}

/* Resolves for "tool" in a child with the watchdog armed. Returns the child's exit status
 * (125: the watchdog ended it; 0: resolution failed with "stopped"; 3: it failed otherwise; 1:
 * it succeeded), -1 when it did not exit, and the time it took in *ret_dt. */
static int resolve_watched(double *ret_dt) {
        double t0 = now();
        int status = 0;
        pid_t pid = fork();
        if (pid == 0) {
                Plan *p = NULL;
                char *err = NULL;
                policy_set_watchdog(true);
                int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
                _exit(r >= 0 ? 1 : err && strstr(err, "stopped") ? 0 : 3);
        }
        (void) waitpid(pid, &status, 0);
        *ret_dt = now() - t0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Time spent inside one C function (a pattern match that backtracks for hours) is out of
 * the count hook's sight: the watchdog ends the process, 125, without running anything. */
static void test_watchdog(void) {
        double dt;
        int rc;

        hook("local s = string.rep('a', 40000)\nstring.find(s, '.-.-.-.-.-.-b')");
        rc = resolve_watched(&dt);
        TAP_CHECK(rc == 125 && dt < 6,
                  "the watchdog ends a hook stuck in a C function (exit %d after %.1fs)", rc, dt);

        /* The timer is only ever moved earlier: after a first hook, it is still set for that
         * hook's deadline, fires early while the second is stuck, and must be set again for
         * the second one's. (The first takes a few milliseconds, far from its own deadline,
         * except on a machine busy enough: it then ends in an error at its deadline, in Lua
         * code, before the second runs, and there is nothing to check.) */
        pt_write("etc/config.d/h.lua",
                 "return { t = { match = { 'tool' }, hook = {\n"
                 "  function() for i = 1, 10 do local s = string.rep('ab', 1 << 19) end end,\n"
                 "  function() string.find(string.rep('a', 40000), '.-.-.-.-.-.-b') end } } }\n");
        rc = resolve_watched(&dt);
        if (rc == 0)
                TAP_SKIP("the watchdog, set for a first hook, still ends a second one stuck in C: the first "
                         "reached its deadline on this busy machine (%.1fs)", dt);
        else
                TAP_CHECK(rc == 125 && dt < 6,
                          "the watchdog, set for a first hook, still ends a second one stuck in C (exit %d "
                          "after %.1fs)",
                          rc, dt);

        /* A deadline reached in Lua code is an ordinary error. */
        hook("local t0 = os and 0 or 0\nwhile true do local s = ('x'):rep(100) end");
        rc = resolve_watched(&dt);
        TAP_CHECK(rc == 0, "with the watchdog armed, a loop still ends in an error (exit %d)", rc);
}

int main(void) {
        pt_setup();
        pt_mkdir("proj");
        pt_write("proj/marker", "");
        pt_write("etc/config.toml", "\n");

        test_budgets();
        test_environment();
        test_primitives();
        test_project_lua();
        test_hooks_see_no_withheld_value();
        test_watchdog();
        pt_cleanup();
        return tap_done();
}
