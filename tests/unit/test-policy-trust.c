/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* SHA-256, the trust store, and trust as the policy engine applies it: a project file applies
 * only trusted, and only as it was when trusted. Also: files that cannot be read. */
#include "policy-test.h"
#include "tap.h"

static void test_sha256(void) {
        char hex[SHA256_HEX_SIZE];
        sha256_hex("", 0, hex);
        TAP_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                  "sha256 of nothing");
        sha256_hex("abc", 3, hex);
        TAP_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 of abc");
        const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        sha256_hex(m, strlen(m), hex);
        TAP_STREQ(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
                  "sha256 of 448 bits");
        char *big = malloc(1000000);
        memset(big, 'a', 1000000);
        Sha256 s;
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_init(&s);
        for (size_t i = 0; i < 1000000; i += 333)
                sha256_update(&s, big + i, i + 333 <= 1000000 ? 333 : 1000000 - i);
        TAP_CHECK(sha256_final(&s, d) == 0, "sha256 in pieces ends");
        TAP_CHECK(sha256_hex(big, 1000000, hex) == 0, "sha256 in one call");
        TAP_STREQ(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
                  "sha256 of a million a");
        TAP_CHECK(d[0] == 0xcd && d[31] == 0xd0, "sha256 in pieces gives the same digest");
        free(big);
}

static void test_store(void) {
        char *store = NULL;
        TAP_CHECK(trust_store_path(&store) == 0 && strstr(store, "/home/.local/state/scudo/trusted"),
                  "the store follows XDG_STATE_HOME");
        const char *h1 = "1111111111111111111111111111111111111111111111111111111111111111";
        const char *h2 = "2222222222222222222222222222222222222222222222222222222222222222";
        TAP_CHECK(trust_check(store, "/p/a", h1) == 0, "a missing store trusts nothing");
        TAP_CHECK(trust_add(store, "/p/a", h1) == 0 && trust_check(store, "/p/a", h1) == 1,
                  "add, then trusted");
        TAP_CHECK(trust_check(store, "/p/a", h2) == 0, "another hash is not trusted");
        TAP_CHECK(trust_add(store, "/p/a", h2) == 0 && trust_check(store, "/p/a", h1) == 0 &&
                  trust_check(store, "/p/a", h2) == 1, "trusting again replaces the hash");
        TAP_CHECK(trust_add(store, "/p/b", h1) == 0 && trust_remove(store, "/p/a") == 1 &&
                  trust_check(store, "/p/a", h2) == 0 && trust_check(store, "/p/b", h1) == 1, "remove one");
        TAP_CHECK(trust_remove(store, "/p/a") == 0, "removing what is not there");
        TAP_CHECK(trust_add(store, "relative", h1) == -EINVAL && trust_add(store, "/p/x\n", h1) == -EINVAL &&
                  trust_add(store, "/p/x", "zz") == -EINVAL, "bad entries are refused");
        /* A damaged line is skipped, never read as trust. */
        FILE *f = fopen(store, "ae");
        fprintf(f, "garbage /p/c\n%s\n%s relative\n", h1, h1);
        fclose(f);
        TAP_CHECK(trust_check(store, "/p/c", h1) == 0 && trust_check(store, "/p/b", h1) == 1,
                  "damaged lines trust nothing, the others still hold");
        free(store);
}

static void test_policy_trust(void) {
        Plan *p = NULL;
        char *err = NULL;

        pt_write("etc/config.toml", "\n");
        pt_write("proj/.scudo.toml", "[t]\nmatch = [\"tool\"]\nfilesystem.write = [\"data\"]\n");
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && !pt_find_path(p, "proj/data"), "untrusted: ignored");
        plan_free(p);
        p = NULL;

        pt_trust("proj/.scudo.toml");
        r = pt_resolve("proj/sub", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_find_path(p, "proj/data"), "trusted: applies, also from a subdirectory");
        plan_free(p);
        p = NULL;

        pt_write("proj/.scudo.toml", "[t]\nmatch = [\"tool\"]\nfilesystem.write = [\"/\"]\n");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && !pt_find_path(p, "proj/data") && !pt_find_path(p, "/"),
                  "edited after trust: ignored");
        plan_free(p);
        p = NULL;
        unlink(pt_path("proj/.scudo.toml"));

        /* Nested project files apply outermost first; the inner one wins. */
        pt_write("proj/.scudo.toml", "[t]\nmatch = [\"tool\"]\nunit.MemoryMax = \"1G\"\n");
        pt_write("proj/sub/.scudo.toml", "[t]\nunit.MemoryMax = \"2G\"\n");
        pt_trust("proj/.scudo.toml");
        pt_trust("proj/sub/.scudo.toml");
        r = pt_resolve("proj/sub", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && strcmp(pt_property(p, "MemoryMax") ?: "", "2G") == 0,
                  "the innermost project file wins");
        plan_free(p);
        p = NULL;
        unlink(pt_path("proj/.scudo.toml"));
        unlink(pt_path("proj/sub/.scudo.toml"));
}

static void test_bad_files(void) {
        Plan *p = NULL;
        char *err = NULL;

        /* Larger than the cap. */
        char *big = malloc(2 << 20);
        memset(big, '#', 2 << 20);
        big[(2 << 20) - 1] = 0;
        pt_write("etc/config.toml", "%s", big);
        free(big);
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "config.toml: too large"), "a huge file is refused by name");
        free(err);
        err = NULL;
        pt_write("etc/config.toml", "\n");

        /* A config.d that is a symlink loop. */
        (void) symlink("config.d", pt_path("etc/config.d"));
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "config.d") && strstr(err, "symbolic links"),
                  "a config.d symlink loop is an error naming it");
        free(err);
        err = NULL;
        unlink(pt_path("etc/config.d"));

        /* A directory where a file should be. */
        pt_mkdir("etc/config.d/dir.toml");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "dir.toml: Is a directory"), "a directory named like a file");
        free(err);
        err = NULL;
        rmdir(pt_path("etc/config.d/dir.toml"));

        /* A FIFO: refused without waiting for a writer (O_NONBLOCK), by name. */
        (void) mkfifo(pt_path("etc/config.d/fifo.toml"), 0600);
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "fifo.toml: not a regular file"), "a FIFO named like a file");
        free(err);
        err = NULL;
        unlink(pt_path("etc/config.d/fifo.toml"));

        /* A Lua file that does not compile. */
        pt_write("etc/config.d/bad.lua", "return {\n");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "bad.lua:"), "a Lua syntax error names the file and line");
        free(err);
        err = NULL;
        /* A Lua file returning something else than a table. */
        pt_write("etc/config.d/bad.lua", "return 42\n");
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "must return a table of profiles"),
                  "a Lua file returning a number");
        free(err);
        err = NULL;
        unlink(pt_path("etc/config.d/bad.lua"));

        /* An unreadable project file is ignored with a notice, like an untrusted one. */
        if (geteuid() != 0) {
                pt_write("proj/.scudo.toml", "[t]\n");
                chmod(pt_path("proj/.scudo.toml"), 0);
                r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
                TAP_CHECK(r >= 0, "an unreadable project file is ignored");
                plan_free(p);
                p = NULL;
                unlink(pt_path("proj/.scudo.toml"));
        }
}

/* Trust is keyed by the file's directory resolved. A project file found from a start
 * directory that is its own realpath is taken as found (discover.lua); any other start
 * directory, and every hook file, is resolved as before. */
static void test_trust_keys(void) {
        Plan *p = NULL;
        char *err = NULL, *store = NULL, *sha = NULL;

        if (trust_store_path(&store) < 0)
                abort();
        pt_write("etc/config.toml", "\n");

        /* Started through a symlink: the key is the real directory's. */
        pt_write("real2/.scudo.toml", "[t]\nmatch = [\"tool\"]\nfilesystem.write = [\"data2\"]\n");
        (void) symlink(pt_path("real2"), pt_path("link2"));
        if (trust_hash_file(pt_path("real2/.scudo.toml"), 1 << 20, &sha) < 0 ||
            trust_add(store, pt_path("link2/.scudo.toml"), sha) < 0)
                abort();
        int r = pt_resolve("link2", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && !pt_find_path(p, "real2/data2"),
                  "trusted only under the symlink's name: not trusted from the symlink");
        plan_free(p);
        p = NULL;
        pt_trust("real2/.scudo.toml");
        r = pt_resolve("link2", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_find_path(p, "real2/data2"),
                  "trusted under the real name: applies from the symlink");
        plan_free(p);
        p = NULL;
        r = pt_resolve("real2", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_find_path(p, "real2/data2"), "and from the real directory");
        plan_free(p);
        p = NULL;

        /* A hook file through a symlinked directory: trusted under its resolved directory only. */
        pt_write("proj3/.scudo.toml", "[t]\nmatch = [\"tool\"]\nhook = \"hooks/h.lua\"\n");
        pt_write("proj3/real-hooks/h.lua", "scudo.fs.write('w')\n");
        (void) symlink("real-hooks", pt_path("proj3/hooks"));
        pt_trust("proj3/.scudo.toml");
        free(sha);
        sha = NULL;
        if (trust_hash_file(pt_path("proj3/real-hooks/h.lua"), 1 << 20, &sha) < 0 ||
            trust_add(store, pt_path("proj3/hooks/h.lua"), sha) < 0)
                abort();
        r = pt_resolve("proj3", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "is not trusted") && strstr(err, "real-hooks/h.lua"),
                  "a hook trusted only under a symlinked directory's name is not trusted");
        free(err);
        err = NULL;
        plan_free(p);
        p = NULL;
        pt_trust("proj3/real-hooks/h.lua");
        r = pt_resolve("proj3", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_find_path(p, "proj3/real-hooks/w"),
                  "trusted under its resolved name: the hook runs (%s)", err ?: "");
        free(err);
        plan_free(p);
        free(sha);
        free(store);
}

/* What `scudo trust` would record, from dir with the given paths: 0 or the error. */
static int targets(const char *dir, const char *const *paths, char ***ret_paths, char **ret_summary,
                   char **err) {
        Request r;
        char **hashes = NULL;
        pt_request(&r, dir, ARGV("scudo"), NULL);
        *ret_paths = NULL;
        *ret_summary = NULL;
        *err = NULL;
        int k = policy_trust_targets(&r, paths, ret_paths, &hashes, ret_summary, err);
        strv_free(hashes);
        request_done(&r);
        return k;
}

#define NO_PATHS ((const char *const[]) { NULL })

/* One rule for what `scudo trust` trusts: without a path, the start directory's project files
 * alone; a named file only of the kinds scudo reads; the hook files of a TOML file that lie in
 * its tree, one name or a list; and a summary of what is trusted. */
static void test_trust_targets(void) {
        char **paths = NULL, *summary = NULL, *err = NULL;

        pt_write("tt/.scudo.toml", "[t]\nfilesystem.read = [\"~/.ssh\"]\n");
        pt_write("tt/foo/.scudo.toml", "[t]\nmatch = [\"tool\"]\nfilesystem.write = [\"data\"]\n"
                 "network.allow = [\"example.com:443\"]\nenv = { FOO = \"a\\u001b[2Jb\\nfake\" }\n");
        int r = targets("tt/foo", NO_PATHS, &paths, &summary, &err);
        TAP_CHECK(r >= 0 && strv_length(paths) == 1 && streq(paths[0], pt_path("tt/foo/.scudo.toml")),
                  "no path: the start directory's file, not the one above it (%s)", err ?: "");
        TAP_CHECK(summary && strstr(summary, "[t]") && strstr(summary, "filesystem.write: data") &&
                  strstr(summary, "network.allow: example.com:443"), "the summary shows what it grants");
        TAP_CHECK(summary && strstr(summary, "a?[2Jb?fake") && !strchr(summary, '\033'),
                  "control characters in values are shown as '?'");
        strv_free(paths), free(summary), free(err);

        pt_mkdir("tt/foo/deeper");
        r = targets("tt/foo/deeper", NO_PATHS, &paths, &summary, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "no .scudo.toml or .scudo.lua in") &&
                  strstr(err, pt_path("tt/.scudo.toml")) && strstr(err, "needs its path named"),
                  "nothing in the start directory: the files above are named, not trusted");
        strv_free(paths), free(summary), free(err);

        r = targets("tt/foo", ARGV("../.scudo.toml"), &paths, &summary, &err);
        TAP_CHECK(r >= 0 && strv_length(paths) == 1 && streq(paths[0], pt_path("tt/.scudo.toml")),
                  "a file above, named by its path");
        strv_free(paths), free(summary), free(err);

        /* Named files: regular files named .scudo.toml or *.lua only. */
        pt_write("tt/notes.txt", "[t]\n");
        pt_write("tt/config.toml", "[t]\n");
        (void) mkfifo(pt_path("tt/fifo.lua"), 0600);
        const char *refused[][2] = {
                { "notes.txt", "can be trusted" }, { "config.toml", "can be trusted" },
                { "/etc/passwd", "can be trusted" }, { "fifo.lua", "not a regular file" },
        };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                r = targets("tt", ARGV(refused[i][0]), &paths, &summary, &err);
                TAP_CHECK(r < 0 && !paths && err && strstr(err, refused[i][1]), "%s is refused (%s)",
                          refused[i][0], err ?: "");
                strv_free(paths), free(summary), free(err);
        }

        /* Hooks: a list, each in the tree, trusted with it; outside (by name or by a symlink) not. */
        pt_write("tt/h/.scudo.toml", "[t]\nmatch = [\"tool\"]\nhook = [\"hooks/a.lua\", \"hooks/b.lua\"]\n"
                 "[u]\nhook = \"../outside/evil.lua\"\n[v]\nhook = \"hooks/link.lua\"\n");
        pt_write("tt/h/hooks/a.lua", "scudo.fs.write('a')\n");
        pt_write("tt/h/hooks/b.lua", "scudo.fs.write('b')\n");
        pt_write("tt/outside/evil.lua", "scudo.fs.write('/')\n");
        (void) symlink(pt_path("tt/outside/evil.lua"), pt_path("tt/h/hooks/link.lua"));
        r = targets("tt/h", NO_PATHS, &paths, &summary, &err);
        TAP_CHECK(r >= 0 && strv_length(paths) == 3 && strv_contains(paths, pt_path("tt/h/hooks/a.lua")) &&
                          strv_contains(paths, pt_path("tt/h/hooks/b.lua")),
                  "a list of hooks is trusted with the file (%s)", err ?: "");
        TAP_CHECK(r >= 0 && !strv_contains(paths, pt_path("tt/outside/evil.lua")) &&
                  !strv_contains(paths, pt_path("tt/h/hooks/link.lua")),
                  "a hook outside the file's tree is not, by name or through a symlink");
        char want[1200];
        snprintf(want, sizeof(want), "scudo trust %s", pt_path("tt/outside/evil.lua"));
        TAP_CHECK(summary && strstr(summary, "NOT trusted with it") && strstr(summary, want),
                  "the summary names it with the command that would trust it");
        strv_free(paths), free(summary), free(err);
        r = targets("tt/h", ARGV("../outside/evil.lua"), &paths, &summary, &err);
        TAP_CHECK(r >= 0 && strv_length(paths) == 1 && streq(paths[0], pt_path("tt/outside/evil.lua")),
                  "named by its path, it is trusted");
        strv_free(paths), free(summary), free(err);

        /* A hook must name a .lua file. */
        pt_write("etc/config.d/hooks.toml", "[t]\nmatch = [\"tool\"]\nhook = \"hooks/pre\"\n");
        Plan *p = NULL;
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "'hooks/pre' does not name a .lua file"),
                  "a hook not named *.lua (%s)", err ?: "");
        plan_free(p);
        free(err);
        unlink(pt_path("etc/config.d/hooks.toml"));
}

int main(void) {
        pt_setup();
        pt_mkdir("proj/sub");
        test_sha256();
        test_store();
        test_policy_trust();
        test_bad_files();
        test_trust_keys();
        test_trust_targets();
        pt_cleanup();
        return tap_done();
}
