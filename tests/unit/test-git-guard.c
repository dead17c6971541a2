/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The empty .git where the command starts (src/git/git-guard.c, where the hardening step asks
 * for one): made only where none is and the plan leaves it writable, shared by runs in the same
 * directory, removed by the last, and only while empty. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "plan/plan-harden.h"
#include "plan/plan.h"
#include "git/git-guard.h"
#include "util/macro.h"
#include "util/path-util.h"

static char root[64];

static bool is_dir(const char *dir, const char *name) {
        _cleanup_free_ char *p = path_join(dir, name);
        struct stat st;
        return p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *dir, const char *name) {
        _cleanup_free_ char *p = path_join(dir, name);
        struct stat st;
        return p && lstat(p, &st) == 0;
}

/* A plan that starts in wd, with `write` writable and `read` read-only (either may be NULL),
 * and `named` (NULL: none) written too; hardened, which decides where the placeholders go. */
static Plan *plan_for_named(const char *wd, const char *write, const char *read, const char *named) {
        Plan *p = plan_new();
        if (!p)
                abort();
        p->working_directory = strdup(wd);
        if (!p->working_directory || (write && plan_add_path(p, PATH_ACCESS_WRITE, write, "test") < 0) ||
            (read && plan_add_path(p, PATH_ACCESS_READ, read, "test") < 0) ||
            (named && plan_add_path(p, PATH_ACCESS_WRITE, named, "test") < 0) ||
            plan_harden(p, &(HardenContext) {}) < 0)
                abort();
        return p;
}

static Plan *plan_for(const char *wd, const char *write, const char *read) {
        return plan_for_named(wd, write, read, NULL);
}

static char *dir_in_root(const char *name) {
        char *d = path_join(root, name);
        if (!d || mkdir(d, 0755) < 0)
                abort();
        return d;
}

static void test_made_and_removed(void) {
        _cleanup_free_ char *d = dir_in_root("plain");
        _cleanup_(plan_freep) Plan *p = plan_for(d, d, NULL);
        GitGuard g;
        TAP_CHECK(git_guard_acquire(p, &g) == 0 && g.n == 1,
                  "a writable start directory without .git gets one");
        TAP_CHECK(is_dir(d, ".git"), "... an empty directory, there while the run goes on");
        git_guard_release(&g);
        TAP_CHECK(!exists(d, ".git"), "... and gone when the run ends");
}

static void test_repository_left_alone(void) {
        _cleanup_free_ char *d = dir_in_root("repo");
        _cleanup_free_ char *git = path_join(d, ".git");
        _cleanup_free_ char *head = path_join(git, "HEAD");
        TAP_CHECK(git && head && mkdir(git, 0755) == 0 && close(creat(head, 0644)) == 0,
                  "a repository to start in");
        _cleanup_(plan_freep) Plan *p = plan_for(d, d, NULL);
        GitGuard g;
        TAP_CHECK(git_guard_acquire(p, &g) == 0 && g.n == 0, "an existing repository gets no placeholder");
        git_guard_release(&g);
        TAP_CHECK(exists(git, "HEAD"), "... and stays as it was");
}

static void test_shared_by_two_runs(void) {
        _cleanup_free_ char *d = dir_in_root("shared");
        _cleanup_(plan_freep) Plan *p = plan_for(d, d, NULL);
        GitGuard first, second;
        TAP_CHECK(git_guard_acquire(p, &first) == 0 && first.n == 1, "the first run makes it");
        TAP_CHECK(git_guard_acquire(p, &second) == 0 && second.n == 1, "the second run shares it");
        git_guard_release(&first);
        TAP_CHECK(is_dir(d, ".git"), "the first run to end leaves it to the other");
        _cleanup_free_ char *git = path_join(d, ".git");
        git_guard_remove(git);
        TAP_CHECK(is_dir(d, ".git"), "the watcher of a killed run leaves it to a run that holds it");
        git_guard_release(&second);
        TAP_CHECK(!exists(d, ".git"), "the last run removes it");
}

static void test_not_removed_when_not_empty(void) {
        _cleanup_free_ char *d = dir_in_root("filled");
        _cleanup_(plan_freep) Plan *p = plan_for(d, d, NULL);
        GitGuard g;
        TAP_CHECK(git_guard_acquire(p, &g) == 0 && g.n == 1, "a placeholder for the run");
        _cleanup_free_ char *git = path_join(d, ".git");
        TAP_CHECK(git && mkdir(git, 0755) < 0 && errno == EEXIST, "it is there");
        _cleanup_free_ char *inside = path_join(git, "HEAD");
        TAP_CHECK(inside && close(creat(inside, 0644)) == 0,
                  "someone outside makes a repository in it meanwhile");
        git_guard_release(&g);
        TAP_CHECK(exists(git, "HEAD"), "... which the end of the run leaves alone");
}

static void test_where_it_applies(void) {
        _cleanup_free_ char *top = dir_in_root("top");
        _cleanup_free_ char *sub = path_join(top, "sub");
        TAP_CHECK(sub && mkdir(sub, 0755) == 0, "a start directory below a writable one");
        _cleanup_(plan_freep) Plan *above = plan_for(sub, top, NULL);
        GitGuard g;
        TAP_CHECK(git_guard_acquire(above, &g) == 0 && g.n == 2 && is_dir(top, ".git") &&
                          is_dir(sub, ".git"),
                  "the start directory and the writable directory above it get one each");
        git_guard_release(&g);

        _cleanup_(plan_freep) Plan *ro = plan_for(sub, NULL, sub);
        TAP_CHECK(git_guard_acquire(ro, &g) == 0 && g.n == 0 && !exists(sub, ".git"),
                  "a read-only one gets none");
        git_guard_release(&g);

        _cleanup_free_ char *other = dir_in_root("other");
        _cleanup_(plan_freep) Plan *elsewhere = plan_for(sub, other, NULL);
        TAP_CHECK(git_guard_acquire(elsewhere, &g) == 0 && g.n == 0 && !exists(other, ".git"),
                  "a writable directory that does not hold the start directory gets none");
        git_guard_release(&g);

        _cleanup_free_ char *git = path_join(sub, ".git");
        _cleanup_(plan_freep) Plan *named = plan_for_named(sub, sub, NULL, git);
        TAP_CHECK(plan_names_path(named, git), "a plan that names the .git");
        TAP_CHECK(git_guard_acquire(named, &g) == 0 && g.n == 0 && !exists(sub, ".git"), "... gets none");
        git_guard_release(&g);
}

static void test_symlink_refused(void) {
        _cleanup_free_ char *real = dir_in_root("real");
        _cleanup_free_ char *link = path_join(root, "link");
        TAP_CHECK(link && symlink(real, link) == 0, "a start directory that turned into a symlink");
        _cleanup_(plan_freep) Plan *p = plan_for(link, link, NULL);
        GitGuard g;
        TAP_CHECK(git_guard_acquire(p, &g) == -ELOOP && g.n == 0, "is refused (ELOOP)");
        TAP_CHECK(!exists(real, ".git"), "... and nothing is made where it leads");
}

int main(void) {
        snprintf(root, sizeof(root), "/tmp/scudo-git-guard-XXXXXX");
        if (!mkdtemp(root))
                return 1;
        test_made_and_removed();
        test_repository_left_alone();
        test_shared_by_two_runs();
        test_not_removed_when_not_empty();
        test_where_it_applies();
        test_symlink_refused();
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        (void) !system(cmd);
        return tap_done();
}
