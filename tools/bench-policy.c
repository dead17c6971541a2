/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* bench-policy: what resolving a command's profiles costs.
 *
 *   bench-policy [SCUDO] [ITERATIONS]
 *
 * Builds a scratch tree whose start directory has five trusted .scudo.toml files above it
 * (one per level), then measures the CPU time (user + system) of
 *   1. policy_resolve() in this process, Lua state creation included, per call;
 *   2. when SCUDO (the built binary) is given: `scudo --version` and `scudo --dry-run npm
 *      install` as processes, per run; the difference is what resolving adds to a run.
 * The target (issue 3) is at most 1 ms of CPU over `scudo --version`. With BENCH_POLICY_KEEP=1
 * the scratch tree is left in place (and named), to profile scudo in it. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "plan/plan.h"
#include "plan/request.h"
#include "policy/policy.h"
#include "policy/trust.h"
#include "util/path-util.h"
#include "util/strv.h"

static char root[256];

static double cpu_self(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        if (!f) {
                perror(path);
                exit(1);
        }
        fputs(text, f);
        fclose(f);
}

static void setup(char *start, size_t size) {
        char dir[1024], file[1100], *store = NULL, *sha = NULL;

        snprintf(root, sizeof(root), "/tmp/scudo-bench-XXXXXX");
        if (!mkdtemp(root))
                exit(1);
        snprintf(dir, sizeof(dir), "%s/home", root);
        mkdir_p(dir, 0755);
        setenv("HOME", dir, 1);
        snprintf(dir, sizeof(dir), "%s/home/.local/state", root);
        setenv("XDG_STATE_HOME", dir, 1);
        unsetenv("XDG_CONFIG_HOME");
        snprintf(dir, sizeof(dir), "%s/etc", root);
        mkdir_p(dir, 0755);
        policy_set_sysconfdir(dir);
        if (trust_store_path(&store) < 0)
                exit(1);

        /* Five nested projects, each adding to npm and to a profile of its own. */
        snprintf(dir, sizeof(dir), "%s/home/src", root);
        for (int i = 1; i <= 5; i++) {
                char text[1024];
                size_t l = strlen(dir);
                snprintf(dir + l, sizeof(dir) - l, "/p%d", i);
                mkdir_p(dir, 0755);
                if (i == 3) {
                        snprintf(file, sizeof(file), "%s/.git", dir);
                        mkdir_p(file, 0755);
                }
                snprintf(text, sizeof(text),
                         "[npm]\nfilesystem.write = [\"cache%d\"]\nunit.MemoryMax = \"%dG\"\n"
                         "network.allow = [\"mirror%d.example.com:443\"]\n\n"
                         "[level%d]\nextend = \"supply-chain\"\nmatch = [\"tool%d\", \"npm run%d\"]\n"
                         "filesystem.read = [\"${project}/docs\", \"~/.config/tool%d\"]\n"
                         "deny_env = [\"LEVEL%d_*\"]\n",
                         i, i, i, i, i, i, i, i);
                snprintf(file, sizeof(file), "%s/.scudo.toml", dir);
                write_file(file, text);
                if (trust_hash_file(file, 1 << 20, &sha) < 0 || trust_add(store, file, sha) < 0)
                        exit(1);
                free(sha);
        }
        free(store);
        snprintf(start, size, "%s", dir);
}

/* One run of SCUDO with ARGV in CWD: its CPU time (user + system), from wait4(). */
static double run_scudo(char *const argv[], const char *cwd) {
        pid_t pid = fork();
        if (pid < 0) {
                perror("fork");
                exit(1);
        }
        if (pid == 0) {
                if (chdir(cwd) < 0)
                        _exit(1);
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, 1) < 0)
                        _exit(1);
                execv(argv[0], argv);
                _exit(127);
        }
        int st;
        struct rusage ru;
        if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "%s %s failed\n", argv[0], argv[1]);
                exit(1);
        }
        return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6 +
               (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double median(double *v, int n) {
        qsort(v, (size_t) n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
        /* Absolute: the runs start in the scratch tree. */
        char *scudo = argc > 1 && argv[1][0] ? realpath(argv[1], NULL) : NULL;
        int n = argc > 2 ? atoi(argv[2]) : 300;
        char start[1024];
        Request req = {};

        if (n <= 0)
                n = 300;
        setup(start, sizeof(start));
        policy_set_watchdog(false);
        req.argv = strv_copy((char *[]) { (char *) "npm", (char *) "install", NULL });
        req.command_name = strdup("npm");
        req.exec_path = strdup("/usr/bin/npm");
        req.start_dir = strdup(start);
        req.home = strdup(getenv("HOME"));
        req.runtime_dir = strdup("/run/user/1000");
        req.uid = getuid();
        extern char **environ;
        req.environ = strv_copy(environ);

        /* Warm up (page cache, allocator), and check that it resolves at all. */
        for (int i = 0; i < 10; i++) {
                Plan *p = NULL;
                char *err = NULL;
                if (policy_resolve(&req, &p, NULL, &err) < 0) {
                        fprintf(stderr, "resolve failed: %s\n", err ?: "?");
                        return 1;
                }
                plan_free(p);
        }
        /* Ten batches; the best batch is the figure (the machine may be shared). */
        int batch = n / 10 > 0 ? n / 10 : 1;
        double best = 1e9, total = 0;
        for (int b = 0; b < 10; b++) {
                double c0 = cpu_self();
                for (int i = 0; i < batch; i++) {
                        Plan *p = NULL;
                        char *err = NULL;
                        (void) policy_resolve(&req, &p, NULL, &err);
                        plan_free(p);
                        free(err);
                }
                double t = (cpu_self() - c0) / batch * 1e3;
                best = t < best ? t : best;
                total += t;
        }
        printf("policy_resolve (built-in policies + 5 nested project files, Lua state included): "
               "%.3f ms CPU per call (best of 10 batches of %d; mean %.3f)\n", best, batch, total / 10);

        if (scudo) {
                char *ver[] = { (char *) scudo, (char *) "--version", NULL };
                char *dry[] = { (char *) scudo, (char *) "--dry-run", (char *) "npm", (char *) "install",
                                NULL };
                double *v = calloc((size_t) n, sizeof(double)), *d = calloc((size_t) n, sizeof(double));
                if (!v || !d)
                        return 1;
                for (int i = 0; i < 5; i++)
                        (void) run_scudo(dry, start);
                /* Interleaved, so that whatever else the machine does falls on both alike; the
                 * medians, since a run that lost its CPU or caches counts for one run only. */
                for (int i = 0; i < n; i++) {
                        v[i] = run_scudo(ver, start) * 1e3;
                        d[i] = run_scudo(dry, start) * 1e3;
                }
                /* Also as before: the means of ten batches, the best batch of each. */
                double bv = 1e9, bd = 1e9;
                bool batched = batch * 10 <= n;
                for (int b = 0; batched && b < 10; b++) {
                        double sv = 0, sd = 0;
                        for (int i = b * batch; i < (b + 1) * batch; i++) {
                                sv += v[i];
                                sd += d[i];
                        }
                        bv = MIN(bv, sv / batch);
                        bd = MIN(bd, sd / batch);
                }
                double mv = median(v, n), md = median(d, n);
                printf("scudo --version: %.3f ms CPU per run; scudo --dry-run npm install: %.3f ms; "
                       "difference: %.3f ms (target: <= 1 ms; medians of %d interleaved runs each)\n",
                       mv, md, md - mv, n);
                if (batched)
                        printf("best of 10 batches of %d: --version %.3f ms, --dry-run %.3f ms, difference "
                               "%.3f ms\n",
                               batch, bv, bd, bd - bv);
                else
                        printf("(fewer than 10 runs: no batches)\n");
                free(v);
                free(d);
        }
        request_done(&req);
        free(scudo);
        /* BENCH_POLICY_KEEP=1: the tree stays, for a profiler to run scudo in it */
        if (getenv("BENCH_POLICY_KEEP")) {
                printf("kept: start directory %s, HOME=%s/home XDG_STATE_HOME=%s/home/.local/state\n", start,
                       root, root);
                return 0;
        }
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        (void) !system(cmd);
        return 0;
}
