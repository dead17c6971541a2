/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Grants that create what they grant: the profile syntax and its errors, what
 * plan_create_check() refuses (outside the home and runtime directories, through a symlink),
 * that resolving and explaining make nothing, and path_create_no_symlinks() and
 * path_create_file_holding(), which the runner makes them with. */
#include <sys/stat.h>

#include "plan/plan-create.h"
#include "policy-test.h"
#include "tap.h"
#include "util/path-create.h"

static bool exists(const char *rel) {
        struct stat st;
        return lstat(pt_path(rel), &st) == 0;
}

static int resolve_with(const char *config, Plan **ret, char **err) {
        pt_write("etc/config.toml", "%s", config);
        *ret = NULL;
        return pt_resolve("proj", ARGV("tool"), NULL, ret, err);
}

static void test_profile_syntax(void) {
        Plan *p = NULL;
        char *err = NULL;

        int k = resolve_with("[t]\nmatch = [\"tool\"]\nfilesystem.write = [\"~/plain\", "
                             "{ path = \"~/.cache/tool\", create = \"dir\" }]\n"
                             "filesystem.read = [{ path = \"~/.toolrc\", create = \"file\" }, "
                             "{ path = \"~/.tool.json\", create = \"json\" }]\n", &p, &err);
        TAP_CHECK(k >= 0, "write and read entries may be { path, create } tables (%s)", err ?: "");
        const PlanPath *e = k >= 0 ? pt_find_path(p, "home/.cache/tool") : NULL;
        TAP_CHECK(e && e->access == PATH_ACCESS_WRITE && e->create == PATH_CREATE_DIR,
                  "a directory to create");
        e = k >= 0 ? pt_find_path(p, "home/.toolrc") : NULL;
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->create == PATH_CREATE_FILE, "a file to create");
        e = k >= 0 ? pt_find_path(p, "home/.tool.json") : NULL;
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->create == PATH_CREATE_JSON,
                  "a file holding {} to create");
        e = k >= 0 ? pt_find_path(p, "home/plain") : NULL;
        TAP_CHECK(e && e->create == PATH_CREATE_NONE, "a plain entry creates nothing");
        TAP_CHECK(!exists("home/.cache") && !exists("home/.toolrc"), "resolving the plan made nothing");
        plan_free(p);
        free(err);

        /* Explain shows it, and makes nothing either. */
        Request r;
        char *text = NULL;
        pt_request(&r, "proj", ARGV("tool"), NULL);
        err = NULL;
        k = policy_explain(&r, false, &text, &err);
        TAP_CHECK(k >= 0 && text && strstr(text, "(directory created when missing: would be created)") &&
                          strstr(text, "(file created when missing: would be created)") &&
                          strstr(text, "(file holding {} created when missing: would be created)") &&
                          strstr(text, "plan: valid"),
                  "explain shows what a run would create");
        TAP_CHECK(!exists("home/.cache") && !exists("home/.toolrc") && !exists("home/.tool.json"),
                  "explaining made nothing");
        free(text);
        free(err);
        request_done(&r);

        /* Two definitions of one grant: the create is kept. */
        k = resolve_with("[base]\nfilesystem.write = [{ path = \"~/c\", create = \"dir\" }]\n[t]\nextend = "
                         "\"base\"\nmatch = [\"tool\"]\nfilesystem.write = [\"~/c\"]\n",
                         &p, &err);
        e = k >= 0 ? pt_find_path(p, "home/c") : NULL;
        TAP_CHECK(e && e->create == PATH_CREATE_DIR, "the same grant again keeps its create (%s)",
                  err ?: "");
        plan_free(p);
        free(err);

        /* A later entry of another kind replaces it, create and all. */
        k = resolve_with("[base]\nfilesystem.write = [{ path = \"~/c\", create = \"dir\" }]\n[t]\nextend = "
                         "\"base\"\nmatch = [\"tool\"]\nfilesystem.hide = [\"~/c\"]\n",
                         &p, &err);
        e = k >= 0 ? pt_find_path(p, "home/c") : NULL;
        TAP_CHECK(e && e->access == PATH_ACCESS_HIDE && e->create == PATH_CREATE_NONE,
                  "a later hide replaces the creating grant (%s)", err ?: "");
        plan_free(p);
        free(err);
}

static const struct {
        const char *name, *config, *error;
} refusals[] = {
        /* '@': the scratch root */
        { "a file and a directory for one path: an error naming both",
          "[base]\nfilesystem.read = [{ path = \"~/both\", create = \"file\" }]\n[t]\nextend = "
          "\"base\"\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"~/both\", create = \"dir\" }]\n",
          "etc/config.toml:6: filesystem.write: @/home/both is to be created as a directory, but "
          "@/etc/config.toml:2 creates it as a file" },
        { "outside the home and runtime directories",
          "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"/srv/x\", create = \"dir\" }]\n",
          "'/srv/x' is to be created when missing, but /srv/x lies outside the home directory (@/home) "
          "and the runtime directory (/run/user/4242)" },
        { "the home directory itself",
          "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"~\", create = \"dir\" }]\n",
          "lies outside the home directory" },
        { "through a symlink below the home directory",
          "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"~/link/x\", create = \"dir\" }]\n",
          "'@/home/link/x' is to be created when missing, but it leads through a symlink (to "
          "@/home/.config/x)" },
        { "through a symlink from outside into the home directory",
          "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"@/outlink/y\", create = \"file\" }]\n",
          "leads through a symlink (to @/home/y)" },
        { "up and out with ..",
          "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"~/../etc/z\", create = \"dir\" }]\n",
          "lies outside the home directory" },
        { "only write and read may create",
          "[t]\nmatch = [\"tool\"]\nfilesystem.hide = [{ path = \"~/h\", create = \"dir\" }]\n",
          "filesystem.hide: only filesystem.write and filesystem.read entries may be written as" },
        { "a kind that is neither dir nor file",
          "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"~/k\", create = \"folder\" }]\n",
          "filesystem.write: create: 'folder' is not one of dir, file" },
        { "a table without create", "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ path = \"~/k\" }]\n",
          "without create: write the path alone" },
        { "a misspelt key of the table",
          "[t]\nmatch = [\"tool\"]\nfilesystem.write = [{ pth = \"~/k\", create = \"dir\" }]\n",
          "unknown key 'filesystem.write.pth' (did you mean 'path'?)" },
};

/* src with each '@' replaced by the scratch root. */
static void subst(char *dst, size_t size, const char *src) {
        size_t n = 0, lr = strlen(pt_root);
        for (; *src && n + lr + 1 < size; src++)
                if (*src == '@') {
                        memcpy(dst + n, pt_root, lr);
                        n += lr;
                } else
                        dst[n++] = *src;
        dst[n] = 0;
}

static void test_refusals(void) {
        for (size_t i = 0; i < ELEMENTSOF(refusals); i++) {
                char config[1024], want[1024];
                Plan *p = NULL;
                char *err = NULL;
                subst(config, sizeof(config), refusals[i].config);
                subst(want, sizeof(want), refusals[i].error);
                int k = resolve_with(config, &p, &err);
                bool ok = k < 0 && err && strstr(err, want);
                TAP_CHECK(ok, "refused: %s", refusals[i].name);
                if (!ok)
                        printf("#   error was: %s\n#   expected: %s\n", err ?: "(none)", want);
                plan_free(p);
                free(err);
        }
        TAP_CHECK(!exists("home/.config/x") && !exists("home/y") && !exists("home/both"),
                  "nothing refused was made");
}

/* plan_create_check on a plan made by hand: the runtime directory is a root too. */
static void test_check_roots(void) {
        Plan *p = plan_new();
        char *err = NULL;
        pt_mkdir("run");
        char path[1200];
        (void) snprintf(path, sizeof(path), "%s/app/sock", pt_path("run"));
        TAP_CHECK(p && plan_add_path(p, PATH_ACCESS_WRITE, path, "test") >= 0, "a plan by hand");
        p->paths[0].create = PATH_CREATE_DIR;
        TAP_CHECK(plan_create_check(p, pt_path("home"), pt_path("run"), &err) == 0,
                  "below the runtime directory (%s)", err ?: "");
        free(err);
        err = NULL;
        TAP_CHECK(plan_create_check(p, pt_path("home"), NULL, &err) == -EINVAL && err &&
                  strstr(err, "the runtime directory (unknown)"), "not without a runtime directory");
        free(err);
        err = NULL;
        TAP_CHECK(plan_create_check(p, "/", "/", &err) == -EINVAL, "'/' is never a root");
        free(err);
        err = NULL;
        p->paths[0].access = PATH_ACCESS_DENY;
        TAP_CHECK(plan_create_check(p, pt_path("home"), pt_path("run"), &err) == -EINVAL && err &&
                  strstr(err, "only a path granted"), "a deny entry creates nothing");
        free(err);
        plan_free(p);
}

static mode_t mode_of(const char *rel) {
        struct stat st;
        return lstat(pt_path(rel), &st) == 0 ? st.st_mode : 0;
}

static void test_create(void) {
        mode_t old = umask(0);  /* what mkdir() is given shows, unless the mode is set exactly */

        TAP_CHECK(path_create_no_symlinks(pt_path("mk/a/b/c"), true) == 1,
                  "made a directory and its parents");
        TAP_CHECK(mode_of("mk/a") == (S_IFDIR | 0700) && mode_of("mk/a/b/c") == (S_IFDIR | 0700),
                  "directories are 0700 (%o)", (unsigned) mode_of("mk/a"));
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/a/b/c"), true) == 0, "there already: 0");
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/a/f"), false) == 1 &&
                          mode_of("mk/a/f") == (S_IFREG | 0600),
                  "made a file, 0600");
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/a/f"), false) == 0, "a file there already: 0");
        char buf[8] = "";
        FILE *f = NULL;
        TAP_CHECK(path_create_file_holding(pt_path("mk/j/state.json"), "{}\n") == 1 &&
                          mode_of("mk/j/state.json") == (S_IFREG | 0600) &&
                          (f = fopen(pt_path("mk/j/state.json"), "re")) && fread(buf, 1, 7, f) == 3 &&
                          streq(buf, "{}\n"),
                  "made a file holding its content, 0600 (%s)", buf);
        if (f)
                fclose(f);
        pt_write("mk/j/kept.json", "{\"a\": 1}");
        TAP_CHECK(path_create_file_holding(pt_path("mk/j/kept.json"), "{}\n") == 0 &&
                          (f = fopen(pt_path("mk/j/kept.json"), "re")) && fread(buf, 1, 7, f) == 7 &&
                          !memcmp(buf, "{\"a\": 1}", 7),
                  "a file there already is left as it is");
        if (f)
                fclose(f);
        (void) umask(022);
        pt_mkdir("mk/open");
        (void) chmod(pt_path("mk/open"), 0755);
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/open"), true) == 0 &&
                          mode_of("mk/open") == (S_IFDIR | 0755),
                  "what exists is left as it is");
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/a/f"), true) == 0,
                  "a file where a directory was asked: left");

        pt_mkdir("elsewhere");
        (void) symlink(pt_path("elsewhere"), pt_path("mk/link"));
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/link/x/y"), true) == -ELOOP,
                  "a symlink on the way: ELOOP");
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/link/f"), false) == -ELOOP &&
                          path_create_file_holding(pt_path("mk/link/g.json"), "{}\n") == -ELOOP,
                  "for a file too");
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/link"), true) == -ELOOP,
                  "a symlink at the end: ELOOP");
        (void) symlink(pt_path("elsewhere/target"), pt_path("mk/dangling"));
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/dangling"), false) == -ELOOP &&
                          path_create_no_symlinks(pt_path("mk/dangling"), true) == -ELOOP &&
                          !exists("elsewhere/target"),
                  "a dangling symlink at the end: ELOOP, nothing made where it points");
        TAP_CHECK(!exists("elsewhere/x") && !exists("elsewhere/f"), "nothing made through a symlink");
        TAP_CHECK(path_create_no_symlinks(pt_path("mk/a/f/x"), true) == -ENOTDIR,
                  "a file on the way: ENOTDIR");
        TAP_CHECK(path_create_no_symlinks("relative/x", true) == -EINVAL &&
                  path_create_no_symlinks("/a/../b", true) == -EINVAL &&
                  path_create_no_symlinks("/", true) == -EINVAL, "only a clean absolute path");
        (void) umask(old);
}

int main(void) {
        pt_setup();
        pt_mkdir("proj");
        pt_mkdir("home/.config");
        (void) symlink(pt_path("home/.config"), pt_path("home/link"));
        (void) symlink(pt_path("home"), pt_path("outlink"));

        test_profile_syntax();
        test_refusals();
        test_check_roots();
        test_create();
        pt_cleanup();
        return tap_done();
}
