/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Helpers for the policy engine's tests: a scratch tree (home, /etc stand-in, projects), files
 * written into it, and Requests as the command line would make them. Each test binary calls
 * pt_setup() once; the environment (HOME, XDG_*) points into the scratch tree, so the trust
 * store and the user configuration are the test's own. */

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan.h"
#include "plan/request.h"
#include "policy/policy.h"
#include "policy/sha256.h"
#include "policy/trust.h"
#include "util/path-util.h"
#include "util/strv.h"

static char pt_root[256];

static inline char *pt_path(const char *rel) {
        static char buf[8][1024];
        static int n;
        char *b = buf[n++ % 8];
        snprintf(b, sizeof(buf[0]), "%s/%s", pt_root, rel);
        return b;
}

static inline void pt_write(const char *rel, const char *fmt, ...) {
        char *p = pt_path(rel);
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s", p);
        *strrchr(dir, '/') = 0;
        (void) mkdir_p(dir, 0755);
        FILE *f = fopen(p, "we");
        if (!f) {
                perror(p);
                abort();
        }
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fclose(f);
}

static inline void pt_mkdir(const char *rel) {
        (void) mkdir_p(pt_path(rel), 0755);
}

static inline void pt_setup(void) {
        snprintf(pt_root, sizeof(pt_root), "/tmp/scudo-test-XXXXXX");
        if (!mkdtemp(pt_root))
                abort();
        char *real = realpath(pt_root, NULL);
        snprintf(pt_root, sizeof(pt_root), "%s", real);
        free(real);
        pt_mkdir("home/.config");
        pt_mkdir("etc");
        setenv("HOME", pt_path("home"), 1);
        setenv("XDG_STATE_HOME", pt_path("home/.local/state"), 1);
        unsetenv("XDG_CONFIG_HOME");
        policy_set_sysconfdir(pt_path("etc"));
        policy_set_watchdog(false);
}

static inline void pt_cleanup(void) {
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pt_root);
        (void) !system(cmd);
}

/* Records trust in the file as it is now. */
static inline void pt_trust(const char *rel) {
        char *store = NULL, *sha = NULL;
        if (trust_store_path(&store) < 0 || trust_hash_file(pt_path(rel), 1 << 20, &sha) < 0 ||
            trust_add(store, pt_path(rel), sha) < 0)
                abort();
        free(store);
        free(sha);
}

/* A request for argv (NULL-terminated words) started in pt_path(dir), with extra environment
 * entries. The caller frees it with request_done(). */
static inline void pt_request(Request *r, const char *dir, const char *const *argv, const char *const *env) {
        *r = (Request) {};
        r->argv = strv_copy((char **) argv);
        const char *b = strrchr(argv[0], '/');
        r->command_name = strdup(b ? b + 1 : argv[0]);
        r->exec_path = strdup("/bin/true");
        r->start_dir = strdup(pt_path(dir));
        r->home = strdup(pt_path("home"));
        r->runtime_dir = strdup("/run/user/4242");
        r->uid = 4242;
        strv_extend(&r->environ, "PATH=/usr/bin:/bin");
        char hb[1100];
        snprintf(hb, sizeof(hb), "HOME=%s", pt_path("home"));
        strv_extend(&r->environ, hb);
        for (const char *const *e = env; e && *e; e++)
                strv_extend(&r->environ, *e);
}

/* The plan's entry for path (relative to the scratch root, or absolute), or NULL. An entry the
 * hardening step left out because its mount would change nothing (most paths of these tests do
 * not exist) is what the policy resolved all the same: it is found too. */
static inline const PlanPath *pt_find_path(const Plan *p, const char *path) {
        const char *want = path[0] == '/' ? path : pt_path(path);
        for (size_t i = 0; i < p->n_paths; i++)
                if (strcmp(p->paths[i].path, want) == 0)
                        return &p->paths[i];
        for (size_t i = 0; i < p->n_dropped; i++)
                if (strcmp(p->dropped[i].entry.path, want) == 0)
                        return &p->dropped[i].entry;
        return NULL;
}

static inline const char *pt_property(const Plan *p, const char *name) {
        for (size_t i = 0; i < p->n_properties; i++)
                if (strcmp(p->properties[i].name, name) == 0)
                        return p->properties[i].value;
        return NULL;
}

/* Resolves; returns 0 or the error (message in *err, freed by the caller). */
static inline int pt_resolve(const char *dir, const char *const *argv, const char *const *env, Plan **ret,
                             char **err) {
        Request r;
        pt_request(&r, dir, argv, env);
        *err = NULL;
        int k = policy_resolve(&r, ret, NULL, err);
        request_done(&r);
        return k;
}

#define ARGV(...) ((const char *const[]) { __VA_ARGS__, NULL })
