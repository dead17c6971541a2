/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Unit tests for the project walk's cache (src/plan/git-dir-cache.c, git-dir-find.c): a walk
 * with the cache finds what a walk without it finds, after any change a command can make
 * (a repository made in a directory whose mtime is then set back, a .git file's content
 * changed), reads only what changed, and does not trust a cache that is not sound or not the
 * user's own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/git-dir-cache.h"
#include "plan/git-dir-find.h"
#include "tap.h"
#include "util/macro.h"
#include "util/strv.h"

static char root[] = "/tmp/test-git-dir-cache.XXXXXX";
static char proj[256], cache[256];

static void make(const char *rel, bool dir, const char *text) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        if (dir ? mkdir(p, 0755) < 0 && errno != EEXIST : false)
                abort();
        if (!dir) {
                FILE *f = fopen(p, "w");
                if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                        abort();
        }
}

static int collect(const char *dir, GitDirKind kind, void *userdata) {
        char *s = NULL;
        const char *rel = strncmp(dir, proj, strlen(proj)) == 0 ? dir + strlen(proj) : dir;
        if (asprintf(&s, "%d:%s", (int) kind, *rel ? rel : "/") < 0)
                return -ENOMEM;
        int r = strv_push(userdata, s);
        if (r < 0)
                free(s);
        return r;
}

static int cmp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* What a walk (with the cache, or not) finds, sorted, one line each; and its figures. */
static char *walk(bool cached, GitDirFindStats *st) {
        _cleanup_strv_free_ char **l = NULL;
        GitDirFindStats ignored;
        if (git_dirs_find(proj, cached ? cache : NULL, collect, &l, st ?: &ignored) < 0)
                return strdup("error");
        size_t n = strv_length(l), len = 1;
        if (n)
                qsort(l, n, sizeof(char *), cmp);
        STRV_FOREACH(s, l)
                len += strlen(*s) + 1;
        char *out = calloc(1, len);
        STRV_FOREACH(s, l) {
                strcat(out, *s);
                strcat(out, " ");
        }
        return out;
}

/* Whether a walk with the cache finds what one without it does; its figures in *st. */
static bool same_as_full(GitDirFindStats *st) {
        _cleanup_free_ char *full = walk(false, NULL), *fast = walk(true, st);
        if (!streq(full, fast))
                printf("#   full: %s\n#   cached: %s\n", full, fast);
        return streq(full, fast);
}

static char *cache_file(void) {
        char *r = NULL;
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "ls %s", cache);
        FILE *f = popen(cmd, "r");
        char name[64] = "";
        if (f && fgets(name, sizeof(name), f))
                name[strcspn(name, "\n")] = 0;
        if (f)
                pclose(f);
        if (*name && asprintf(&r, "%s/%s", cache, name) < 0)
                abort();
        return r;
}

/* Overwrites `n` bytes at `at` of the cache file. */
static void poke(long at, const void *bytes, size_t n) {
        _cleanup_free_ char *p = cache_file();
        FILE *f = p ? fopen(p, "r+") : NULL;
        if (!f || fseek(f, at, SEEK_SET) < 0 || fwrite(bytes, 1, n, f) != n || fclose(f) != 0)
                abort();
}

int main(void) {
        if (!mkdtemp(root))
                abort();
        snprintf(proj, sizeof(proj), "%s/proj", root);
        /* a cache directory not made yet, in a directory that is */
        snprintf(cache, sizeof(cache), "%s/run/git-dirs", root);
        const char *dirs[] = { "proj", "proj/a", "proj/a/b", "proj/a/b/c", "proj/a/r", "proj/a/r/.git",
                               "proj/a/w", "proj/bare", "proj/bare/objects", "proj/bare/refs",
                               "proj/bare/refs/sub", "proj/x", "proj/x/y", "gitdirs", "run" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                make(dirs[i], true, NULL);
        make("proj/a/w/.git", false, "gitdir: ../../../gitdirs/w\n");
        make("proj/bare/HEAD", false, "ref: refs/heads/main\n");

        GitDirFindStats st;
        TAP_CHECK(same_as_full(&st) && !st.cache_read && st.cache_written && st.n_read == st.n_dirs &&
                  st.n_dirs == 9, "first walk: every directory read (%zu), the cache written", st.n_dirs);
        _cleanup_free_ char *file = cache_file();
        struct stat fs, ds;
        TAP_CHECK(file && stat(file, &fs) == 0 && (fs.st_mode & 0777) == 0600 && stat(cache, &ds) == 0 &&
                  (ds.st_mode & 0777) == 0700, "the cache: a file of the user's alone, in a 0700 directory");

        /* Just made: within the racy window, read again. */
        TAP_CHECK(same_as_full(&st) && st.cache_read && st.n_read == st.n_dirs,
                  "directories changed within %d s of the walk: read again", GIT_DIR_CACHE_RACY_SECONDS);
        sleep(GIT_DIR_CACHE_RACY_SECONDS + 1);
        TAP_CHECK(same_as_full(&st) && st.cache_read && st.cache_written,
                  "... and kept once they are older than that");
        TAP_CHECK(same_as_full(&st) && st.cache_read && st.n_read == 0 && !st.cache_written &&
                  st.n_dirs == 9,
                  "nothing changed: nothing read (%zu of %zu), nothing written", st.n_read, st.n_dirs);

        /* A repository made deep down, its directory's mtime then set back: its ctime moved on. */
        char c[512];
        snprintf(c, sizeof(c), "%s/proj/a/b/c", root);
        struct stat before;
        if (stat(c, &before) < 0)
                abort();
        make("proj/a/b/c/new", true, NULL);
        make("proj/a/b/c/new/.git", true, NULL);
        struct timespec times[2] = { before.st_atim, before.st_mtim };
        TAP_CHECK(utimensat(AT_FDCWD, c, times, 0) == 0, "mtime set back");
        _cleanup_free_ char *found = walk(true, &st);
        TAP_CHECK(strstr(found, "0:/a/b/c/new ") && st.n_read == 2,
                  "a repository made in a directory whose mtime was set back: found, 2 read (%zu)",
                  st.n_read);
        TAP_CHECK(same_as_full(&st), "... as a full walk finds it");

        /* The kind of what is there, from the cache: a .git file's content is the caller's to read,
         * each run (a change of it does not touch the directory). */
        make("proj/a/w/.git", false, "gitdir: /elsewhere\n");
        free(found);
        found = walk(true, &st);
        TAP_CHECK(strstr(found, "1:/a/w ") && strstr(found, "2:/bare ") && strstr(found, "0:/a/r "),
                  "known from the cache, each git directory is still reported: %s", found);

        /* A cache that is not sound is not used: a full walk, and a new one written. */
        const uint32_t v2 = GIT_DIR_CACHE_VERSION + 1;
        sleep(GIT_DIR_CACHE_RACY_SECONDS + 1);
        free(walk(true, &st));
        poke(8, &v2, sizeof(v2));
        TAP_CHECK(same_as_full(&st) && !st.cache_read && st.n_read == st.n_dirs && st.cache_written,
                  "another version: not used, written anew");
        TAP_CHECK(same_as_full(&st) && st.cache_read && st.n_read == 0, "... and used the next time");
        poke(200, "\xff\xfe", 2);
        TAP_CHECK(same_as_full(&st) && !st.cache_read && st.n_read == st.n_dirs, "corrupt: not used");
        free(file);
        file = cache_file();
        TAP_CHECK(file && truncate(file, 100) == 0 && same_as_full(&st) && !st.cache_read,
                  "cut short: not used");
        TAP_CHECK(same_as_full(&st) && st.cache_read && chmod(file, 0622) == 0 && same_as_full(&st) &&
                  !st.cache_read, "writable by others: not used");
        (void) chmod(file, 0600);
        TAP_CHECK(same_as_full(&st) && st.cache_read && chmod(cache, 0777) == 0 && same_as_full(&st) &&
                  !st.cache_read && !st.cache_written,
                  "in a directory open to others: neither used nor written");
        (void) chmod(cache, 0700);
        if (geteuid() == 0) {
                TAP_CHECK(same_as_full(&st) && st.cache_read && chown(file, 65534, 65534) == 0 &&
                          same_as_full(&st) && !st.cache_read, "another user's: not used");
        } else
                TAP_SKIP("another user's cache: only root can make one");

        /* Another project's cache under this one's name: not used. */
        char other[512], cmd[1600];
        snprintf(other, sizeof(other), "%s/proj/x", root);
        free(file);
        file = cache_file();    /* this project's, the one there */
        GitDirFindStats so;
        _cleanup_strv_free_ char **ignored = NULL;
        TAP_CHECK(git_dirs_find(other, cache, collect, &ignored, &so) >= 0 && so.cache_written,
                  "another project: a cache of its own");
        snprintf(cmd, sizeof(cmd), "cd %s && for f in *; do [ \"$f\" = \"${0##*/}\" ] || "
                 "cp -f \"$f\" \"$0\"; done", cache);
        char sh[2000];
        snprintf(sh, sizeof(sh), "sh -c '%s' %s", cmd, file);
        TAP_CHECK(system(sh) == 0 && same_as_full(&st) && !st.cache_read,
                  "another project's cache: not used");

        /* A repository removed: not found any more. */
        snprintf(cmd, sizeof(cmd), "rm -rf %s/proj/a/r", root);
        free(found);
        TAP_CHECK(system(cmd) == 0 && same_as_full(&st) && (found = walk(true, NULL)) &&
                  !strstr(found, "/a/r "), "a repository removed: not found");

        /* A symlink in the cache's place: not followed. */
        free(file);
        file = cache_file();
        snprintf(cmd, sizeof(cmd), "cd %s && for f in *; do mv $f ../s-$f; ln -s ../s-$f $f; done", cache);
        TAP_CHECK(system(cmd) == 0 && same_as_full(&st) && !st.cache_read, "a symlink: not followed");

        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        if (system(cmd) != 0)
                abort();
        return tap_done();
}
