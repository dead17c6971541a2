/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* bench-git-walk: what the walk of a project for its git directories costs a run, with and
 * without its cache (plan/git-dir-cache.h), and what judging the environment and filtering a
 * configuration file cost (issue 28: at most 0.3 ms per run for those two).
 *
 *   bench-git-walk [N_DIRS...]          (default: 2000 20000)
 *
 * For each size, builds a scratch project of N_DIRS directories (ten subdirectories each,
 * breadth first, a file in each, a repository every 500), waits out the cache's racy window,
 * then measures, as the median of 15 runs each (wall and CPU time):
 *   - no walk: the project of one directory;
 *   - the walk without a cache (every run before the cache);
 *   - the first run with a cache (a full walk and the cache written);
 *   - a cached run, nothing changed;
 *   - a cached run after a repository was made deep down (its directory's mtime set back).
 * Runs on a warm page cache (a checkout a developer works in). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plan/config-filter.h"
#include "plan/git-config-filter.h"
#include "plan/git-dir-cache.h"
#include "plan/git-dir-find.h"
#include "util/macro.h"
#include "util/secret-value.h"

#define RUNS 15

static char root[64];

static double now(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void must(int ok, const char *what) {
        if (!ok) {
                perror(what);
                exit(1);
        }
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        must(f && fputs(text, f) >= 0 && fclose(f) == 0, path);
}

/* A project of n directories below `dir`, breadth first, ten below each. */
static void build(const char *dir, size_t n) {
        char **paths = calloc(n, sizeof(char *)), p[4096];
        must(!!paths, "calloc");
        must(mkdir(dir, 0755) == 0, dir);
        paths[0] = strdup(dir);
        for (size_t i = 1, parent = 0; i < n; i++) {
                if (i > 1 && (i - 1) % 10 == 0)
                        parent++;
                snprintf(p, sizeof(p), "%s/d%zu", paths[parent], i % 10);
                must(mkdir(p, 0755) == 0, p);
                paths[i] = strdup(p);
                if (i % 500 == 0) {
                        /* a repository: its .git, not walked into, counts as one of them */
                        snprintf(p, sizeof(p), "%s/.git", paths[i]);
                        must(mkdir(p, 0755) == 0, p);
                }
                snprintf(p, sizeof(p), "%s/file.c", paths[i]);
                write_file(p, "int x;\n");
        }
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        free(paths);
}

static int count(const char *dir, GitDirKind kind, void *userdata) {
        (void) dir;
        (void) kind;
        (*(size_t *) userdata)++;
        return 0;
}

static int cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

typedef struct Figure {
        double wall, cpu;
        GitDirFindStats st;
} Figure;

/* One walk of `proj` (with the cache in `cache`, or none). */
static Figure walk_once(const char *proj, const char *cache) {
        size_t found = 0;
        Figure f;
        double w = now(CLOCK_MONOTONIC), c = now(CLOCK_PROCESS_CPUTIME_ID);
        must(git_dirs_find(proj, cache, count, &found, &f.st) >= 0, "git_dirs_find");
        f.wall = now(CLOCK_MONOTONIC) - w;
        f.cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c;
        return f;
}

/* The median of RUNS walks; `prepare` before each (or NULL). */
static Figure walk_median(const char *proj, const char *cache, void (*prepare)(const char *),
                          const char *arg) {
        double wall[RUNS], cpu[RUNS];
        Figure f = {};
        for (int i = 0; i < RUNS; i++) {
                if (prepare)
                        prepare(arg);
                f = walk_once(proj, cache);
                wall[i] = f.wall;
                cpu[i] = f.cpu;
        }
        qsort(wall, RUNS, sizeof(double), cmp);
        qsort(cpu, RUNS, sizeof(double), cmp);
        f.wall = wall[RUNS / 2];
        f.cpu = cpu[RUNS / 2];
        return f;
}

static void remove_cache(const char *cache) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
        must(system(cmd) == 0, cmd);
}

/* A repository made deep down, its directory's mtime set back (what a command can do). */
static void make_repo(const char *deep) {
        static unsigned k;
        char p[4096];
        struct stat st;
        must(stat(deep, &st) == 0, deep);
        snprintf(p, sizeof(p), "%s/new%u", deep, k++);
        must(mkdir(p, 0755) == 0, p);
        snprintf(p + strlen(p), sizeof(p) - strlen(p), "/.git");
        must(mkdir(p, 0755) == 0, p);
        struct timespec t[2] = { st.st_atim, st.st_mtim };
        must(utimensat(AT_FDCWD, deep, t, 0) == 0, deep);
}

static void print(const char *what, Figure f, size_t n) {
        printf("  %-44s %8.2f ms wall %8.2f ms CPU %5.2f us CPU/dir (%zu dirs, %zu read)\n", what, f.wall,
               f.cpu, f.cpu * 1e3 / (double) n, f.st.n_dirs, f.st.n_read);
}

static void bench_size(size_t n) {
        char proj[128], cache[128], one[128], deep[256];
        snprintf(proj, sizeof(proj), "%s/p%zu", root, n);
        snprintf(cache, sizeof(cache), "%s/cache", root);
        snprintf(one, sizeof(one), "%s/one%zu", root, n);
        build(proj, n);
        must(mkdir(one, 0755) == 0, one);
        /* the deepest directories are the last ones made: d.../d9 */
        snprintf(deep, sizeof(deep), "%s/d1/d1/d1", proj);
        /* the cache does not trust what changed within its racy window */
        sleep(GIT_DIR_CACHE_RACY_SECONDS + 1);
        printf("%zu directories:\n", n);
        print("no walk (a project of one directory)", walk_median(one, NULL, NULL, NULL), 1);
        print("walk, no cache (every run before)", walk_median(proj, NULL, NULL, NULL), n);
        print("first run with a cache (walk + write)", walk_median(proj, cache, remove_cache, cache), n);
        print("cached run, nothing changed", walk_median(proj, cache, NULL, NULL), n);
        print("cached run, a repository made deep down", walk_median(proj, cache, make_repo, deep), n);
}

/* What judging a run's environment and filtering a configuration file cost. */
static void bench_credentials(void) {
        extern char **environ;
        const char *config = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                "[remote \"origin\"]\n"
                "\turl = https://u:ghp_0123456789abcdef0123456789abcdef0123@github.com/x\n"
                "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n"
                "\tmerge = refs/heads/main\n[user]\n\tname = Dev\n\temail = dev@example.com\n";
        const char *tool = "registry = https://registry.example/\n[auth]\nuser = dev\nkey = cfgKey2024abc\n"
                "[build]\njobs = 4\ntoken = \"cfgTok2024abcdef\"\nmirror = https://dev:pw@mirror.example/\n";
        size_t n_env = 0, hits = 0;
        double c = now(CLOCK_PROCESS_CPUTIME_ID);
        for (int i = 0; i < 1000; i++)
                for (char **e = environ; *e; e++) {
                        const char *v = strchr(*e, '=');
                        hits += v && secret_value_kind(v + 1, strlen(v + 1)) != NULL;
                        n_env += i == 0;
                }
        double env = (now(CLOCK_PROCESS_CPUTIME_ID) - c) / 1000;
        c = now(CLOCK_PROCESS_CPUTIME_ID);
        for (int i = 0; i < 1000; i++) {
                GitConfigFiltered g = {};
                ConfigFiltered t = {};
                must(git_config_filter(config, strlen(config), &g) >= 0, "git_config_filter");
                must(config_filter(tool, strlen(tool), CONFIG_FORMAT_LINES, &t) >= 0, "config_filter");
                git_config_filtered_done(&g);
                config_filtered_done(&t);
        }
        double filter = (now(CLOCK_PROCESS_CPUTIME_ID) - c) / 1000;
        printf("environment judged (%zu variables, %zu credentials): %.4f ms CPU; a git config and a tool "
               "config filtered: %.4f ms; together %.4f ms (budget 0.3 ms)\n", n_env, hits / 1000, env,
               filter, env + filter);
}

int main(int argc, char **argv) {
        snprintf(root, sizeof(root), "/tmp/scudo-bench-walk-XXXXXX");
        must(!!mkdtemp(root), "mkdtemp");
        bench_credentials();
        if (argc < 2) {
                bench_size(2000);
                bench_size(20000);
        }
        for (int i = 1; i < argc; i++)
                bench_size((size_t) strtoul(argv[i], NULL, 10));
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        (void) !system(cmd);
        return 0;
}
