/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step (src/plan/plan-harden.c) as pure logic: a plan in, the entries it adds and
 * drops with their reasons out, in a scratch directory whose contents each case sets up. Only
 * the entries below the scratch directory are compared exactly: the ones for the machine's own
 * sockets (/run/docker.sock, ...) depend on what it runs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "plan/broker-paths.h"
#include "plan/git-dir-find.h"
#include "plan/plan-harden.h"
#include "plan/plan-validate.h"
#include "plan/plan.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

static char root[64];

static char *in_root(const char *rel) {
        char *p = *rel ? path_join(root, rel) : strdup(root);
        if (!p)
                abort();
        return p;
}

static void make(const char *rel) {
        _cleanup_free_ char *p = in_root(rel);
        size_t l = strlen(p);
        if (p[l - 1] == '/') {
                p[l - 1] = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        abort();
        } else {
                int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                if (fd < 0)
                        abort();
                close(fd);
        }
}

typedef struct Case {
        const char *name;
        const char *entries[8];         /* "A:rel": access w r h d, the path below the root */
        const char *wd;                 /* start directory below the root, or NULL */
        DbusMode dbus;
        const char *config_file;        /* a project file the plan was made from, or NULL */
        bool bpfd;                      /* a helper socket of its own at bpfd.sock */
        /* What comes out, below the root, all of it: "+A:rel:why" added by scudo (its reason
         * holds `why`), "=A:rel" a profile's entry kept, "-A:rel:why" dropped (its reason holds
         * `why`). */
        const char *want[12];
} Case;

static const Case cases[] = {
        {"denies under a hidden directory change nothing",
         {"h:home", "d:home/.ssh", "d:home/missing", "d:file"},
         .want = {"=h:home", "-d:home/.ssh:lies under", "-d:home/missing:does not exist", "=d:file"}},
        {"what is granted back under a hidden directory keeps the denies below it",
         {"h:home", "r:home/.ssh", "d:home/.ssh/id", "h:home/.ssh/keys"},
         .want = {"=h:home", "=r:home/.ssh", "=d:home/.ssh/id", "=h:home/.ssh/keys"}},
        {"under a denied directory: nothing to deny; a hide of a missing path is dropped",
         {"d:home", "d:home/.ssh", "h:nothing/here"},
         .want = {"=d:home", "-d:home/.ssh:cannot reach", "-h:nothing/here:nothing to hide"}},
        {"an empty directory in an empty one changes nothing, but the runtime directory's",
         {"h:", "h:run", "h:home"},
         .want = {"=h:run", "-h:home:lies under", "-d:run/systemd:lies under", "-d:run/bus:lies under"}},
        {"read and write entries stay, even of a missing path",
         {"h:home", "w:home/missing", "r:gone"},
         .want = {"=h:home", "=w:home/missing", "=r:gone"}},
        {"a repository's .git in a writable directory is read-only",
         {"w:proj"},
         .wd = "proj",
         .want = {"=w:proj", "+r:proj/.git:stays read-only"}},
        {"where the command starts and no .git is: a placeholder",
         {"w:empty"},
         .wd = "empty",
         .want = {"=w:empty", "+r:empty/.git:empty .git for the run"}},
        {"every directory from the start up to the writable one: git outside looks at each",
         {"w:chain"},
         .wd = "chain/a/b",
         .want = {"=w:chain", "+r:chain/a/b/.git:empty .git", "+r:chain/a/.git:empty .git",
                  "+r:chain/.git:empty .git", "+w:chain/a:cannot be renamed",
                  "+w:chain/a/b:cannot be renamed"}},
        {"repositories below a writable directory are read-only, three levels down",
         {"w:src"},
         .want = {"=w:src", "+r:src/foo/.git:below a writable", "+r:src/wt/.git:below a writable",
                  "+r:src/deep/a/b/.git:below a writable", "+w:src/foo:cannot be renamed",
                  "+w:src/wt:cannot be renamed", "+w:src/deep:cannot be renamed",
                  "+w:src/deep/a:cannot be renamed", "+w:src/deep/a/b:cannot be renamed"}},
        {"a writable directory the command does not start in gets no placeholder",
         {"w:empty"},
         .wd = "proj",
         .want = {"=w:empty"}},
        {"a .git the plan names is the plan's",
         {"w:proj", "w:proj/.git"},
         .wd = "proj",
         .want = {"=w:proj", "=w:proj/.git"}},
        {"a .git to commit to: what git reads code or places from is read-only in it",
         {"w:repo", "w:repo/.git"},
         .wd = "repo",
         .want = {"=w:repo", "=w:repo/.git", "+r:repo/.git/config:git reads code",
                  "+r:repo/.git/hooks:git reads code"}},
        {"a writable .git file (a linked worktree's) stays read-only",
         {"w:wt", "w:wt/.git"},
         .wd = "wt",
         .want = {"=w:wt", "-w:wt/.git:scudo decides", "+r:wt/.git:gitdir:"}},
        {"the manager's socket and the bus out of reach",
         {"r:run"},
         .want = {"=r:run", "+d:run/systemd:private socket", "+d:run/bus:session bus"}},
        {"... under a hidden runtime directory they change nothing",
         {"h:run"},
         .want = {"=h:run", "-d:run/systemd:lies under", "-d:run/bus:lies under"}},
        {"the filtered bus: the proxy's socket where the bus is, granted back",
         {"h:run"},
         .dbus = DBUS_FILTERED,
         .want = {"=h:run", "-d:run/systemd:lies under", "+r:run/bus:filtered session bus"}},
        {"dbus.session = allow: the bus as it is",
         {"r:run"},
         .dbus = DBUS_ALLOW,
         .want = {"=r:run", "+d:run/systemd:private socket"}},
        {"a profile's entry for the manager's socket is replaced",
         {"r:run", "w:run/systemd"},
         .want = {"=r:run", "-w:run/systemd:scudo decides", "+d:run/systemd:private socket",
                  "+d:run/bus:session bus"}},
        {"scudo's configuration read-only under a writable home",
         {"w:home", "r:run"},
         .wd = "home",
         .want = {"=w:home", "=r:run",
                  "+d:run/systemd:", "+d:run/bus:", "+r:home/.config/scudo:its own configuration",
                  "+r:home/.local/state/scudo:its own configuration",
                  "+r:home/.git:empty .git for the run"}},
        {"a project file read-only in a writable directory",
         {"w:proj"},
         .config_file = "proj/.scudo.toml",
         .want = {"=w:proj", "+r:proj/.git:stays read-only", "+r:proj/.scudo.toml:a project file it read"}},
        {"a deny inside a writable directory: each directory between them pinned",
         {"w:proj", "d:proj/config/master.key", "h:proj/a/b/c"},
         .want = {"=w:proj", "+r:proj/.git:stays read-only", "=d:proj/config/master.key", "=h:proj/a/b/c",
                  "+w:proj/config:cannot be renamed", "+w:proj/a:cannot be renamed",
                  "+w:proj/a/b:cannot be renamed"}},
        {"... and above a read entry; a missing directory is not pinned",
         {"w:proj", "r:proj/a/b/c", "r:proj/gone/x"},
         .want = {"=w:proj", "+r:proj/.git:stays read-only", "=r:proj/a/b/c", "=r:proj/gone/x",
                  "+w:proj/a:cannot be renamed", "+w:proj/a/b:cannot be renamed"}},
        {"... but not under a read-only directory, nor at the top of a writable one",
         {"r:proj", "d:proj/config/master.key", "w:empty", "d:empty/key"},
         .want = {"=r:proj", "=d:proj/config/master.key", "=w:empty", "-d:empty/key:does not exist"}},
        {"the helper's socket out of reach, whatever the profiles say",
         {"r:bpfd.sock"},
         .bpfd = true,
         .want = {"-r:bpfd.sock:scudo decides", "+d:bpfd.sock:scudo-bpfd"}},
};

static char access_char(PathAccess a) {
        return "wrhd"[a];
}

static PathAccess access_of(char c) {
        return c == 'w' ? PATH_ACCESS_WRITE : c == 'r' ? PATH_ACCESS_READ : c == 'h' ? PATH_ACCESS_HIDE :
                                                                             PATH_ACCESS_DENY;
}

/* "kind A:rel" of an entry below the root, or NULL for one elsewhere. */
static char *describe(char kind, const PlanPath *e) {
        const char *rel = path_startswith(e->path, root);
        char *s = NULL;
        if (!rel || !*rel)
                return NULL;
        if (asprintf(&s, "%c%c:%s", kind, access_char(e->access), rel) < 0)
                abort();
        return s;
}

/* Whether `got` (with reason) is wanted: the "K A:rel" part equal, the reason holding the rest. */
static bool wanted(const Case *c, const char *got, const char *reason, bool *seen) {
        size_t l = strlen(got);
        for (size_t i = 0; i < ELEMENTSOF(c->want) && c->want[i]; i++) {
                const char *w = c->want[i];
                if (strncmp(w, got, l) != 0 || (w[l] != 0 && w[l] != ':'))
                        continue;
                if (w[l] == ':' && !(reason && strstr(reason, w + l + 1)))
                        continue;
                seen[i] = true;
                return true;
        }
        return false;
}

static void run_case(const Case *c) {
        _cleanup_(plan_freep) Plan *p = plan_new();
        _cleanup_free_ char *run = in_root("run"), *home = in_root("home"), *bpfd = in_root("bpfd.sock");
        _cleanup_free_ char *wd = c->wd ? in_root(c->wd) : NULL;
        bool seen[ELEMENTSOF(c->want)] = {}, ok = true;

        if (!p)
                abort();
        p->dbus = c->dbus;
        p->working_directory = TAKE_PTR(wd);
        for (size_t i = 0; i < ELEMENTSOF(c->entries) && c->entries[i]; i++) {
                _cleanup_free_ char *path = in_root(c->entries[i] + 2);
                if (plan_add_path(p, access_of(c->entries[i][0]), path, "test") < 0)
                        abort();
        }
        if (c->config_file) {
                _cleanup_free_ char *f = in_root(c->config_file);
                if (strv_extend(&p->config_files, f) < 0)
                        abort();
        }
        /* the runtime directory only where a case is about it */
        bool rt = false;
        for (size_t i = 0; i < ELEMENTSOF(c->entries) && c->entries[i]; i++)
                rt = rt || strncmp(c->entries[i] + 2, "run", 3) == 0;
        HardenContext ctx = {
                .home = home, .runtime_dir = rt ? run : NULL, .bpfd_socket = c->bpfd ? bpfd : NULL};
        int r = plan_harden(p, &ctx);
        TAP_CHECK(r == 0 && p->hardened, "%s: hardened (%d)", c->name, r);

        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                _cleanup_free_ char *d = describe(e->reason ? '+' : '=', e);
                bool scudo = streq(e->origin, PLAN_ORIGIN_SCUDO);
                if (d && (scudo != (e->reason != NULL) || !wanted(c, d, e->reason, seen))) {
                        printf("#   %s: unexpected %s (%s)\n", c->name, d, strempty(e->reason));
                        ok = false;
                }
        }
        for (size_t i = 0; i < p->n_dropped; i++) {
                _cleanup_free_ char *d = describe('-', &p->dropped[i].entry);
                if (d && !wanted(c, d, p->dropped[i].reason, seen)) {
                        printf("#   %s: unexpected %s (%s)\n", c->name, d, p->dropped[i].reason);
                        ok = false;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(c->want) && c->want[i]; i++)
                if (!seen[i]) {
                        printf("#   %s: missing %s\n", c->name, c->want[i]);
                        ok = false;
                }
        TAP_CHECK(ok, "%s", c->name);
}

/* A grant worked out from the request (derived) never overrides a deny: in a deny's place
 * (over_deny), the deny comes back; below one, with nothing written out between, it goes. */
static void test_derived_never_overrides_deny(void) {
        static const struct {
                const char *name;
                const char *entries[4];         /* "A:rel", a capital A for a derived entry */
                const char *over_deny;          /* of the last entry */
                const char *want_kept[3];       /* "A:rel" of the entries kept */
                const char *want_dropped[4];    /* "A:rel" of the entries dropped (NULL-terminated) */
        } dcases[] = {
                {"in a deny's place: the deny comes back",
                 {"W:proj/config"},
                 "deny.toml:3",
                 {"d:proj/config"},
                 {"w:proj/config"}},
                {"... and what is derived below it goes",
                 {"W:proj/a/b/c", "W:proj/a"},
                 "deny.toml:3",
                 {"d:proj/a"},
                 {"w:proj/a", "w:proj/a/b/c"}},
                {"below a deny", {"d:proj", "R:proj/config"}, NULL, {"d:proj"}, {"r:proj/config"}},
                {"a grant written out between decides",
                 {"d:proj", "r:proj/config", "W:proj/config/master.key"},
                 NULL,
                 {"d:proj", "r:proj/config", "w:proj/config/master.key"},
                 {}},
                {"written out, a grant overrides the deny above",
                 {"d:proj", "w:proj/config"},
                 NULL,
                 {"d:proj", "w:proj/config"},
                 {}},
        };
        for (size_t i = 0; i < ELEMENTSOF(dcases); i++) {
                _cleanup_(plan_freep) Plan *p = plan_new();
                size_t n = 0;
                for (; n < ELEMENTSOF(dcases[i].entries) && dcases[i].entries[n]; n++) {
                        const char *x = dcases[i].entries[n];
                        _cleanup_free_ char *path = in_root(x + 2);
                        if (!p || plan_add_path(p, access_of((char) (x[0] | 0x20)), path, "test") < 0)
                                abort();
                        p->paths[n].derived = x[0] >= 'A' && x[0] <= 'Z';
                }
                if (dcases[i].over_deny && !(p->paths[n - 1].over_deny = strdup(dcases[i].over_deny)))
                        abort();
                TAP_CHECK(plan_harden(p, &(HardenContext) {}) == 0, "%s: hardened", dcases[i].name);
                bool ok = true;
                for (size_t k = 0; k < ELEMENTSOF(dcases[i].want_kept) && dcases[i].want_kept[k]; k++) {
                        _cleanup_free_ char *path = in_root(dcases[i].want_kept[k] + 2);
                        bool found = false;
                        for (size_t j = 0; j < p->n_paths; j++)
                                found = found ||
                                        (streq(p->paths[j].path, path) &&
                                         access_char(p->paths[j].access) == dcases[i].want_kept[k][0]);
                        if (!found) {
                                printf("#   %s: %s missing\n", dcases[i].name, dcases[i].want_kept[k]);
                                ok = false;
                        }
                }
                size_t dropped = 0;
                for (size_t j = 0; j < p->n_dropped; j++) {
                        const PlanPath *e = &p->dropped[j].entry;
                        if (!path_startswith(e->path, root) || e->access == PATH_ACCESS_DENY)
                                continue;
                        _cleanup_free_ char *d = describe('-', e);
                        bool want = false;
                        for (size_t k = 0;
                             k < ELEMENTSOF(dcases[i].want_dropped) && dcases[i].want_dropped[k]; k++)
                                want = want || streq(d + 1, dcases[i].want_dropped[k]);
                        dropped++;
                        if (!want || !strstr(p->dropped[j].reason, "never overrides a deny")) {
                                printf("#   %s: dropped %s (%s)\n", dcases[i].name, d, p->dropped[j].reason);
                                ok = false;
                        }
                }
                if (dropped != strv_length((char **) dcases[i].want_dropped))
                        ok = false;
                TAP_CHECK(ok, "derived entries: %s", dcases[i].name);
        }
}

/* scudo's entry for the system bus: 'd' deny, 'r' the proxy's socket or the socket given back,
 * 0 none; a deny dropped because the machine has no system bus, or because it lies under the
 * empty /run, counts as a deny. */
static char system_bus_entry(const Plan *p, const char **ret_reason) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (streq(p->paths[i].path, PLAN_SYSTEM_BUS_SOCKET)) {
                        *ret_reason = p->paths[i].reason;
                        if (p->paths[i].access == PATH_ACCESS_READ &&
                            p->paths[i].source == PATH_SOURCE_SYSTEM_BUS_PROXY)
                                return 'r';
                        return access_char(p->paths[i].access);
                }
        for (size_t i = 0; i < p->n_dropped; i++)
                if (streq(p->dropped[i].entry.path, PLAN_SYSTEM_BUS_SOCKET) &&
                    (strstr(p->dropped[i].reason, "does not exist") ||
                     strstr(p->dropped[i].reason, "lies under"))) {
                        *ret_reason = p->dropped[i].entry.reason;
                        return access_char(p->dropped[i].entry.access);
                }
        *ret_reason = NULL;
        return 0;
}

/* No system bus unless the plan asks for it, whether or not the network is filtered; a
 * profile's entry for the socket gives way to the key. */
static void test_system_bus(void) {
        static const struct {
                DbusMode mode;
                const char *profile;    /* a profile's entry for the socket: "r", "w" or NULL */
                char want;
                const char *why;
        } bus_cases[] = {
                { DBUS_NONE, NULL, 'd', "dbus.system" },
                { DBUS_NONE, "r", 'd', "dbus.system" },
                { DBUS_FILTERED, NULL, 'r', "filtered system bus" },
                { DBUS_FILTERED, "w", 'r', "filtered system bus" },
                { DBUS_ALLOW, NULL, 'r', "as dbus.system" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bus_cases); i++) {
                _cleanup_(plan_freep) Plan *p = plan_new();
                if (!p)
                        abort();
                p->dbus_system = bus_cases[i].mode;
                if (bus_cases[i].profile &&
                    plan_add_path(p, access_of(bus_cases[i].profile[0]), PLAN_SYSTEM_BUS_SOCKET, "test") < 0)
                        abort();
                TAP_CHECK(plan_harden(p, &(HardenContext) {}) == 0, "system bus, case %zu: hardened", i);
                const char *why = NULL;
                char got = system_bus_entry(p, &why);
                TAP_CHECK(got == bus_cases[i].want &&
                                  (!bus_cases[i].why || (why && strstr(why, bus_cases[i].why))),
                          "system bus %s%s%s: %c (%s)", dbus_mode_to_string(bus_cases[i].mode),
                          bus_cases[i].profile ? ", a profile's entry " : "", strempty(bus_cases[i].profile),
                          got ?: '-', strempty(why));
        }
}

/* What has to exist for a run is asked of the runner, never made here (explain runs this too). */
static void test_creates_nothing(void) {
        _cleanup_(plan_freep) Plan *p = plan_new();
        _cleanup_free_ char *home = in_root("home2"), *config = in_root("home2/.config");
        if (!p || mkdir(home, 0755) < 0 || plan_add_path(p, PATH_ACCESS_WRITE, home, "test") < 0)
                abort();
        p->working_directory = strdup(home);
        HardenContext ctx = { .home = home };
        TAP_CHECK(plan_harden(p, &ctx) == 0, "a writable home hardened");
        struct stat st;
        TAP_CHECK(lstat(config, &st) < 0 && errno == ENOENT, "no configuration directory made");
        _cleanup_free_ char *git = in_root("home2/.git");
        TAP_CHECK(lstat(git, &st) < 0 && errno == ENOENT, "no placeholder made");
        size_t dirs = 0, placeholders = 0;
        for (size_t i = 0; i < p->n_paths; i++) {
                dirs += p->paths[i].create == PATH_CREATE_DIR;
                placeholders += p->paths[i].create == PATH_CREATE_PLACEHOLDER;
        }
        TAP_CHECK(dirs == 2 && placeholders == 1, "... both asked of the runner (%zu, %zu)", dirs,
                  placeholders);
}

/* At most PLAN_GIT_PLACEHOLDERS_MAX placeholders. */
static void test_placeholder_limit(void) {
        _cleanup_(plan_freep) Plan *p = plan_new();
        const char *dirs[] = {"l/",
                              "l/a/",
                              "l/a/b/",
                              "l/a/b/c/",
                              "l/a/b/c/d/",
                              "l/a/b/c/d/e/",
                              "l/a/b/c/d/e/f/",
                              "l/a/b/c/d/e/f/g/",
                              "l/a/b/c/d/e/f/g/h/",
                              "l/a/b/c/d/e/f/g/h/i/"};
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                make(dirs[i]);
                _cleanup_free_ char *d = in_root(dirs[i]);
                d[strlen(d) - 1] = 0;
                if (!p || plan_add_path(p, PATH_ACCESS_WRITE, d, "test") < 0)
                        abort();
        }
        p->working_directory = in_root("l/a/b/c/d/e/f/g/h/i");
        TAP_CHECK(plan_harden(p, &(HardenContext) {}) == 0, "ten writable directories above the start");
        size_t n = 0;
        for (size_t i = 0; i < p->n_paths; i++)
                n += p->paths[i].create == PATH_CREATE_PLACEHOLDER;
        TAP_CHECK(n == PLAN_GIT_PLACEHOLDERS_MAX, "... get %d placeholders (%zu)", PLAN_GIT_PLACEHOLDERS_MAX,
                  n);
}

static void write_file(const char *rel, const char *text) {
        _cleanup_free_ char *p = in_root(rel);
        FILE *f = fopen(p, "we");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                abort();
}

static const PlanPath *entry_at(const Plan *p, const char *rel) {
        _cleanup_free_ char *path = in_root(rel);
        for (size_t i = 0; i < p->n_paths; i++)
                if (streq(p->paths[i].path, path))
                        return &p->paths[i];
        return NULL;
}

static bool dropped_at(const Plan *p, const char *rel, const char *why) {
        _cleanup_free_ char *path = in_root(rel);
        for (size_t i = 0; i < p->n_dropped; i++)
                if (streq(p->dropped[i].entry.path, path) && strstr(p->dropped[i].reason, why))
                        return true;
        return false;
}

/* git's configuration: a file the command sees read-only that holds credentials is shown as a
 * copy less them (PATH_SOURCE_GIT_CONFIG_COPY), whoever's entry shows it; one without
 * credentials, one the command cannot see and one it may write are shown as they are. */
static void test_git_config_copies(void) {
        const char *tree[] = { "g/", "g/home/", "g/proj/", "g/proj/.git/", "g/proj/.git/HEAD", "g/plain/",
                               "g/plain/.git/", "g/free/", "g/free/.git/" };
        for (size_t i = 0; i < ELEMENTSOF(tree); i++)
                make(tree[i]);
        _cleanup_free_ char *inc = in_root("g/proj/inc.cfg");
        _cleanup_free_ char *home_cfg = NULL;
        if (asprintf(&home_cfg, "[credential]\n\thelper = store\n[include]\n\tpath = %s\n", inc) < 0)
                abort();
        write_file("g/home/.gitconfig", home_cfg);
        write_file("g/proj/inc.cfg", "[github]\n\ttoken = ghp_0123456789abcdef0123456789abcdef0123\n");
        write_file("g/proj/.git/config",
                   "[remote \"o\"]\n\turl = https://me:s3cretpassw0rd@example.com/r.git\n");
        write_file("g/plain/.git/config", "[core]\n\tbare = false\n");
        write_file("g/free/.git/config", "[credential]\n\thelper = store\n");

        _cleanup_free_ char *home = in_root("g/home");
        _cleanup_(plan_freep) Plan *p = plan_new();
        if (!p)
                abort();
        const char *entries[] = { "w:g/proj", "r:g/plain", "w:g/free", "w:g/free/.git" };
        for (size_t i = 0; i < ELEMENTSOF(entries); i++) {
                _cleanup_free_ char *path = in_root(entries[i] + 2);
                if (plan_add_path(p, access_of(entries[i][0]), path, "test") < 0)
                        abort();
        }
        TAP_CHECK(plan_harden(p, &(HardenContext) { .home = home }) == 0, "git config: hardened");

        const PlanPath *e = entry_at(p, "g/home/.gitconfig");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_GIT_CONFIG_COPY &&
                  e->reason && strstr(e->reason, "holds credentials"),
                  "the home's .gitconfig with a credential helper: a copy, read-only");
        e = entry_at(p, "g/proj/.git/config");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_GIT_CONFIG_COPY,
                  "a writable project's .git/config with a password in a URL: a copy");
        e = entry_at(p, "g/proj/inc.cfg");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_GIT_CONFIG_COPY &&
                  strstr(e->reason, "includes") && strstr(e->reason, "holds credentials"),
                  "an include in a writable directory: read-only, and a copy since it holds a token");
        TAP_CHECK(!entry_at(p, "g/plain/.git/config"), "a configuration without credentials: as it is");
        e = entry_at(p, "g/free/.git/config");
        TAP_CHECK(!e || e->source != PATH_SOURCE_GIT_CONFIG_COPY,
                  "a configuration the command may write (a .git the plan grants): as it is");

        /* a profile's own read entry of the file is replaced by scudo's, saying so */
        _cleanup_(plan_freep) Plan *q = plan_new();
        _cleanup_free_ char *dot = in_root("g/home/.gitconfig");
        if (!q || plan_add_path(q, PATH_ACCESS_READ, dot, "test") < 0)
                abort();
        TAP_CHECK(plan_harden(q, &(HardenContext){.home = home}) == 0,
                  "git config named by a profile: hardened");
        e = entry_at(q, "g/home/.gitconfig");
        TAP_CHECK(e && e->source == PATH_SOURCE_GIT_CONFIG_COPY && streq(e->origin, PLAN_ORIGIN_SCUDO) &&
                  dropped_at(q, "g/home/.gitconfig", "scudo decides"),
                  "... the profile's entry dropped, scudo's copy in its place");

        /* a home the profiles hide: nothing of it is shown, nothing to copy */
        _cleanup_(plan_freep) Plan *h = plan_new();
        if (!h || plan_add_path(h, PATH_ACCESS_HIDE, home, "test") < 0)
                abort();
        TAP_CHECK(plan_harden(h, &(HardenContext){.home = home}) == 0,
                  "git config in a hidden home: hardened");
        e = entry_at(h, "g/home/.gitconfig");
        TAP_CHECK(!e || e->source != PATH_SOURCE_GIT_CONFIG_COPY,
                  "... no copy of what the command cannot see");
}

/* Repositories vendored in a project, at any depth, bare or not, and a checkout whose .git is a
 * file: each configuration that holds credentials is a copy, read-only, though the project is
 * writable; one without is left as it is, and so is a repository outside the project. */
static void test_vendored_git_config_copies(void) {
        const char *tree[] = {
                "v/", "v/home/", "v/proj/", "v/proj/src/", "v/proj/third_party/", "v/proj/third_party/a/",
                "v/proj/third_party/a/b/", "v/proj/third_party/a/b/c/", "v/proj/third_party/a/b/c/d/",
                "v/proj/third_party/a/b/c/d/lib/", "v/proj/third_party/a/b/c/d/lib/.git/",
                "v/proj/third_party/a/b/c/d/lib/.git/HEAD", "v/proj/vendor/", "v/proj/vendor/x.git/",
                "v/proj/vendor/x.git/HEAD", "v/proj/vendor/x.git/objects/", "v/proj/vendor/x.git/refs/",
                "v/proj/vendor/plain/", "v/proj/vendor/plain/.git/", "v/proj/vendor/co/", "v/gitdirs/",
                "v/gitdirs/co/", "v/other/", "v/other/deep/", "v/other/deep/.git/",
        };
        for (size_t i = 0; i < ELEMENTSOF(tree); i++)
                make(tree[i]);
        const char *token = "[remote \"o\"]\n\turl = "
                            "https://u:ghp_0123456789abcdef0123456789abcdef0123@github.com/x\n";
        write_file("v/proj/third_party/a/b/c/d/lib/.git/config", token);
        write_file("v/proj/vendor/x.git/config", token);
        write_file("v/proj/vendor/plain/.git/config", "[core]\n\tbare = false\n");
        write_file("v/gitdirs/co/config", token);
        write_file("v/other/deep/.git/config", token);
        _cleanup_free_ char *gitdir = in_root("v/gitdirs/co"), *gitfile = NULL;
        if (asprintf(&gitfile, "gitdir: %s\n", gitdir) < 0)
                abort();
        write_file("v/proj/vendor/co/.git", gitfile);

        _cleanup_free_ char *home = in_root("v/home");
        _cleanup_(plan_freep) Plan *p = plan_new();
        _cleanup_free_ char *proj = in_root("v/proj"), *other = in_root("v/other");
        if (!p || plan_add_path(p, PATH_ACCESS_WRITE, proj, "test") < 0 ||
            plan_add_path(p, PATH_ACCESS_READ, other, "test") < 0)
                abort();
        p->working_directory = in_root("v/proj/src");
        TAP_CHECK(plan_harden(p, &(HardenContext) { .home = home }) == 0, "vendored git config: hardened");
        const PlanPath *e = entry_at(p, "v/proj/third_party/a/b/c/d/lib/.git/config");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_GIT_CONFIG_COPY,
                  "a repository vendored five levels deep in a writable project: its config a copy");
        e = entry_at(p, "v/proj/vendor/x.git/config");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_GIT_CONFIG_COPY,
                  "a bare repository in the project: its config a copy");
        e = entry_at(p, "v/gitdirs/co/config");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_GIT_CONFIG_COPY,
                  "a checkout in the project whose .git file leads elsewhere: that config a copy");
        e = entry_at(p, "v/proj/vendor/plain/.git/config");
        TAP_CHECK(!e || e->source != PATH_SOURCE_GIT_CONFIG_COPY,
                  "a vendored config without credentials: as it is");
        e = entry_at(p, "v/other/deep/.git/config");
        TAP_CHECK(!e, "a repository below a directory that is not the project: not looked for");

        /* A project deeper than the walk goes: refused, not shown with a configuration unread. */
        char deep[1100] = "v/deep";
        make("v/deep/");
        for (unsigned i = 0; i <= GIT_DIR_FIND_MAX_DEPTH + 1; i++) {
                strcat(deep, "/d");
                char dir[1104];
                snprintf(dir, sizeof(dir), "%s/", deep);
                make(dir);
        }
        _cleanup_(plan_freep) Plan *q = plan_new();
        _cleanup_free_ char *top = in_root("v/deep");
        if (!q || plan_add_path(q, PATH_ACCESS_WRITE, top, "test") < 0)
                abort();
        q->working_directory = strdup(top);
        TAP_CHECK(plan_harden(q, &(HardenContext) { .home = home }) == -E2BIG,
                  "a project deeper than %u directories: refused (-E2BIG)", GIT_DIR_FIND_MAX_DEPTH);
}

/* A tool's configuration in a delegable plan: a file a profile shows read-only in the home
 * directory, or at the top of a directory it shows under $XDG_CONFIG_HOME, that holds
 * credentials is shown as a copy less them (PATH_SOURCE_CONFIG_COPY); one without, and any in a
 * plan that is not delegable, as it is. And git's configuration of a submodule is walked. */
static void test_tool_config_copies(void) {
        const char *tree[] = {"t/",
                              "t/home/",
                              "t/home/.cabal/",
                              "t/home/.cargo/",
                              "t/home/.config/",
                              "t/home/.config/go/",
                              "t/proj/",
                              "t/proj/.git/",
                              "t/proj/.git/HEAD",
                              "t/proj/.git/modules/",
                              "t/proj/.git/modules/lib/",
                              "t/proj/.git/modules/lib/HEAD",
                              "t/home/.sbt/",
                              "t/home/.sbt/1.0/",
                              "t/home/.sbt/1.0/plugins/"};
        for (size_t i = 0; i < ELEMENTSOF(tree); i++)
                make(tree[i]);
        write_file("t/home/.sbt/1.0/global.sbt", "credentials += Credentials(\"Nexus\", \"nexus.example\", "
                   "\"dev\", \"sbtPw2024x\")\n");
        write_file("t/home/.sbt/1.0/plugins/credentials.sbt",
                   "credentials += Credentials(\n  \"Nexus\",\n  \"nexus.example\",\n"
                   "  \"dev\",\n  \"sbtPw\")\n");
        write_file("t/home/.sbt/1.0/plugins/plugins.sbt",
                   "addSbtPlugin(\"com.example\" % \"x\" % \"1.0\")\n");
        write_file("t/home/.cabal/config",
                   "repository hackage.haskell.org\n  username: dev\n  password: hunter2pw\n");
        write_file("t/home/.cargo/config.toml", "[build]\njobs = 4\n");
        write_file("t/home/.config/go/env", "GOPROXY=https://dev:tok3nvalue@proxy.example/\n");
        write_file("t/proj/.git/config", "[core]\n\tbare = false\n");
        write_file("t/proj/.git/modules/lib/config",
                   "[remote \"o\"]\n\turl = https://me:s3cretpw@example.com/r.git\n");

        _cleanup_free_ char *home = in_root("t/home"), *config_home = in_root("t/home/.config");
        for (int delegable = 0; delegable <= 1; delegable++) {
                _cleanup_(plan_freep) Plan *p = plan_new();
                if (!p)
                        abort();
                p->delegable = delegable;
                const char *entries[] = {"t/home/.cabal/config", "t/home/.cargo/config.toml",
                                         "t/home/.config/go", "t/proj", "t/home/.sbt/1.0"};
                for (size_t i = 0; i < ELEMENTSOF(entries); i++) {
                        _cleanup_free_ char *path = in_root(entries[i]);
                        if (plan_add_path(p, PATH_ACCESS_READ, path, "test") < 0)
                                abort();
                }
                TAP_CHECK(plan_harden(p, &(HardenContext) { .home = home, .config_home = config_home }) == 0,
                          "tool config (delegable: %d): hardened", delegable);
                const PlanPath *e = entry_at(p, "t/home/.cabal/config");
                TAP_CHECK(e && e->access == PATH_ACCESS_READ &&
                                  (e->source == PATH_SOURCE_CONFIG_COPY) == delegable,
                          "cabal's config with its password: %s",
                          delegable ? "a copy" : "as it is (not delegable)");
                e = entry_at(p, "t/home/.config/go/env");
                TAP_CHECK(delegable ? e && e->access == PATH_ACCESS_READ &&
                                              e->source == PATH_SOURCE_CONFIG_COPY
                                    : !e,
                          "go's env file in a directory of $XDG_CONFIG_HOME: %s",
                          delegable ? "a copy" : "as it is");
                e = entry_at(p, "t/home/.sbt/1.0/global.sbt");
                TAP_CHECK(delegable ? e && e->source == PATH_SOURCE_CONFIG_COPY : !e,
                          "sbt's global.sbt with Credentials(...) in a directory shown: %s",
                          delegable ? "a copy" : "as it is");
                e = entry_at(p, "t/home/.sbt/1.0/plugins/credentials.sbt");
                TAP_CHECK(delegable ? e && e->source == PATH_SOURCE_CONFIG_COPY : !e,
                          "... and plugins/credentials.sbt, one level down: %s",
                          delegable ? "a copy" : "as it is");
                TAP_CHECK(!entry_at(p, "t/home/.sbt/1.0/plugins/plugins.sbt"), "... plugins.sbt: as it is");
                e = entry_at(p, "t/home/.cargo/config.toml");
                TAP_CHECK(e && e->source == PATH_SOURCE_SELF,
                          "a configuration without credentials: as it is");
                e = entry_at(p, "t/proj/.git/modules/lib/config");
                TAP_CHECK(e && e->source == PATH_SOURCE_GIT_CONFIG_COPY,
                          "a submodule's git configuration with a password: a copy");
        }
}

static const PlanPath *entry_exact(const Plan *p, const char *path) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (streq(p->paths[i].path, path))
                        return &p->paths[i];
        return NULL;
}

/* The delegation brokers (plan/broker-paths.h): out of reach in a sandbox that delegates
 * nothing; in one that delegates, its own broker's socket and links in an empty directory, and
 * scudo at its path; a profile's grant there refused by plan_check(). */
static void test_brokers(void) {
        _cleanup_free_ char *broot = NULL, *socket = NULL, *bin = NULL, *scudo = in_root("bin-scudo");
        if (plan_broker_root(getuid(), &broot) < 0 ||
            asprintf(&socket, "%s/" BROKER_SOCKET_NAME, broot) < 0 ||
            asprintf(&bin, "%s/" BROKER_BIN_NAME, broot) < 0)
                abort();
        make("bin-scudo");

        _cleanup_(plan_freep) Plan *d = plan_new();
        if (!d || strv_extend(&d->delegate, "tools") < 0)
                abort();
        TAP_CHECK(plan_harden(d, &(HardenContext){.scudo_path = scudo}) == 0,
                  "brokers: a plan that delegates");
        const PlanPath *e = entry_exact(d, broot);
        TAP_CHECK(e && e->access == PATH_ACCESS_HIDE && e->source == PATH_SOURCE_BROKER_DIR,
                  "... its broker's directory, empty, made by the runner (kept though missing now)");
        e = entry_exact(d, socket);
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_BROKER_SOCKET,
                  "... the broker's socket, read-only, from the runner");
        e = entry_exact(d, bin);
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_BROKER_BIN,
                  "... the routing links, read-only, from the runner");
        e = entry_exact(d, scudo);
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_SELF && e->reason,
                  "... scudo at its own path, read-only");

        /* a delegated name's executable, by its link on the command's PATH: scudo in its place */
        _cleanup_free_ char *tbin = in_root("rbin"), *link = in_root("rbin/rtool"),
                *cli = in_root("rlib/rtool/cli.js"), *path_var = NULL, *ccli = NULL;
        make("rbin/");
        make("rlib/");
        make("rlib/rtool/");
        make("rlib/rtool/cli.js");
        if (chmod(cli, 0755) < 0 || symlink(cli, link) < 0 || asprintf(&path_var, "PATH=%s", tbin) < 0 ||
            plan_path_canonicalize(cli, &ccli) < 0)
                abort();
        _cleanup_(plan_freep) Plan *rt = plan_new();
        if (!rt || strv_extend(&rt->delegate, "tools") < 0 ||
            strv_extend(&rt->delegate_executables, "rtool") < 0 ||
            strv_extend(&rt->delegate_executables, "no-such-tool") < 0 ||
            strv_extend(&rt->environment, path_var) < 0)
                abort();
        TAP_CHECK(plan_harden(rt, &(HardenContext) { .scudo_path = scudo }) == 0,
                  "routes: a plan that delegates");
        e = entry_exact(rt, ccli);
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->source == PATH_SOURCE_BROKER_ROUTE && e->given &&
                  streq(e->given, link),
                  "... scudo over the file a delegated name leads to, with the link it took");
        size_t routes = 0;
        for (size_t i = 0; i < rt->n_paths; i++)
                routes += rt->paths[i].source == PATH_SOURCE_BROKER_ROUTE;
        TAP_CHECK(routes == 1, "... and nothing for a name that is nowhere");
        _cleanup_(plan_freep) Plan *rd = plan_new();
        _cleanup_free_ char *rlib = in_root("rlib/rtool");
        if (!rd || strv_extend(&rd->delegate, "tools") < 0 ||
            strv_extend(&rd->delegate_executables, "rtool") < 0 ||
            strv_extend(&rd->environment, path_var) < 0 ||
            plan_add_path(rd, PATH_ACCESS_DENY, rlib, "t:1") < 0)
                abort();
        TAP_CHECK(plan_harden(rd, &(HardenContext) { .scudo_path = scudo }) == 0 && !entry_exact(rd, ccli),
                  "... none where the plan denies the file anyway");

        _cleanup_(plan_freep) Plan *n = plan_new();
        if (!n)
                abort();
        TAP_CHECK(plan_harden(n, &(HardenContext){.scudo_path = scudo}) == 0,
                  "brokers: a plan that delegates nothing");
        bool denied = false;
        e = entry_exact(n, broot);
        if (e)
                denied = e->access == PATH_ACCESS_DENY;
        for (size_t i = 0; i < n->n_dropped; i++)
                denied = denied || (streq(n->dropped[i].entry.path, broot) &&
                                    n->dropped[i].entry.access == PATH_ACCESS_DENY);
        TAP_CHECK(denied && !entry_exact(n, socket) && !entry_exact(n, bin) && !entry_exact(n, scudo),
                  "... every broker out of reach (or dropped as changing nothing), none bound");

        for (int access = PATH_ACCESS_WRITE; access <= PATH_ACCESS_READ; access++) {
                _cleanup_(plan_freep) Plan *g = plan_new();
                _cleanup_free_ char *error = NULL;
                if (!g || plan_add_path(g, (PathAccess) access, socket, "p.toml:3") < 0 ||
                    !(g->exec_path = strdup("/bin/true")) || strv_extend(&g->argv, "true") < 0)
                        abort();
                int r = plan_check(g, &error);
                TAP_CHECK(r < 0 && error && strstr(error, "p.toml:3") && strstr(error, "delegation brokers"),
                          "a profile's %s grant of a broker's socket is refused (%s)",
                          path_access_to_string((PathAccess) access), strempty(error));
        }
}

/* What the user's configuration points at: a dot-file's and a dot-directory's symlinks into a
 * writable checkout, read-only (a missing target made empty); a derived write below a linked
 * directory, read-only; a plain symlink of the home (~/src), not followed; a path a value of
 * ~/.gitconfig names strictly inside the checkout, read-only; safe.directory, not. */
static void test_user_config_pointers(void) {
        const char *tree[] = { "u/", "u/home/", "u/home/.config/", "u/home/.ssh/", "u/dots/", "u/dots/vimrc",
                               "u/dots/nvim/", "u/dots/nvim/lua/", "u/proj/", "u/proj/hooks/", "u/proj/x" };
        for (size_t i = 0; i < ELEMENTSOF(tree); i++)
                make(tree[i]);
        _cleanup_free_ char *home = in_root("u/home"), *dots = in_root("u/dots"), *proj = in_root("u/proj");
        _cleanup_free_ char *l1 = in_root("u/home/.vimrc"), *l2 = in_root("u/home/.ssh/config");
        _cleanup_free_ char *l3 = in_root("u/home/.config/nvim"), *l4 = in_root("u/home/src");
        _cleanup_free_ char *cfg = NULL;
        if (symlink("../dots/vimrc", l1) < 0 || symlink("../../dots/ssh_config", l2) < 0 ||
            symlink("../../dots/nvim", l3) < 0 || symlink(proj, l4) < 0)
                abort();
        if (asprintf(&cfg,
                     "[core]\n\thooksPath = %s/hooks\n\tpager = ~/../proj/x -R\n[safe]\n\tdirectory = %s\n",
                     proj, proj) < 0)
                abort();
        write_file("u/home/.gitconfig", cfg);

        _cleanup_(plan_freep) Plan *p = plan_new();
        _cleanup_(plan_freep) Plan *q = plan_new();
        if (!p || !q || plan_add_path(p, PATH_ACCESS_WRITE, dots, "test") < 0 ||
            plan_add_path(p, PATH_ACCESS_WRITE, proj, "test") < 0)
                abort();
        p->paths[p->n_paths - 1].derived = true;
        TAP_CHECK(plan_harden(p, &(HardenContext) { .home = home }) == 0, "user configuration: hardened");
        const PlanPath *e = entry_at(p, "u/dots/vimrc");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && strstr(e->reason, "/.vimrc leads here"),
                  "a dot-file's symlink into a writable checkout: read-only");
        e = entry_at(p, "u/dots/ssh_config");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && e->create == PATH_CREATE_FILE,
                  "a dot-directory's symlink to a missing file: read-only, made empty");
        e = entry_at(p, "u/dots/nvim");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ, "a linked directory: read-only");
        e = entry_at(p, "u/proj/hooks");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && strstr(e->reason, "core.hookspath names it"),
                  "core.hooksPath in a writable checkout: read-only");
        e = entry_at(p, "u/proj/x");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ && strstr(e->reason, "core.pager names it"),
                  "core.pager (~/, with arguments): read-only");
        e = entry_at(p, "u/proj");
        TAP_CHECK(e && e->access == PATH_ACCESS_WRITE,
                  "~/src -> the checkout, and safe.directory: it stays writable");

        /* started below the linked directory: the derived write becomes read-only */
        _cleanup_free_ char *lua = in_root("u/dots/nvim/lua");
        if (plan_add_path(q, PATH_ACCESS_WRITE, lua, "test") < 0)
                abort();
        q->paths[q->n_paths - 1].derived = true;
        TAP_CHECK(plan_harden(q, &(HardenContext){.home = home}) == 0,
                  "user configuration below a link: hardened");
        e = entry_at(q, "u/dots/nvim/lua");
        TAP_CHECK(e && e->access == PATH_ACCESS_READ &&
                          dropped_at(q, "u/dots/nvim/lua", "/.config/nvim leads here"),
                  "a derived write below a linked directory: read-only");
}

/* The places of plan/persistence.h, resolved once (harden_context_resolve) for both steps
 * that look at them: a derived write of ~/.local/bin refused before delegation; a symlink of a
 * $PATH directory outside the home into a writable checkout, read-only. Without the places
 * resolved, neither step has any. */
static void test_persistence_places(void) {
        const char *tree[] = { "pp/", "pp/home/", "pp/home/.local/", "pp/home/.local/bin/", "pp/home/bin/",
                               "pp/dots/", "pp/dots/tool" };
        for (size_t i = 0; i < ELEMENTSOF(tree); i++)
                make(tree[i]);
        _cleanup_free_ char *home = in_root("pp/home"), *bin = in_root("pp/home/.local/bin");
        _cleanup_free_ char *dots = in_root("pp/dots"), *link = in_root("pp/home/bin/tool");
        if (symlink("../../dots/tool", link) < 0)
                abort();

        for (int resolved = 0; resolved < 2; resolved++) {
                _cleanup_(harden_context_done) HardenContext ctx = { .home = home };
                _cleanup_(plan_freep) Plan *p = plan_new();
                if (!p || plan_add_path(p, PATH_ACCESS_WRITE, bin, "test") < 0)
                        abort();
                p->paths[p->n_paths - 1].derived = true;
                if (plan_add_path(p, PATH_ACCESS_WRITE, dots, "test") < 0)
                        abort();
                TAP_CHECK(!resolved || (harden_context_resolve(&ctx) == 0 && ctx.n_persistence > 0),
                          "persistence places %sresolved", resolved ? "" : "not ");
                TAP_CHECK(plan_refuse_persistence_writes(p, &ctx) == 0 && plan_harden(p, &ctx) == 0,
                          "persistence places %sresolved: refused and hardened", resolved ? "" : "not ");
                bool gone = !entry_at(p, "pp/home/.local/bin");
                TAP_CHECK((p->n_refused == 1) == resolved && gone == resolved,
                          "a derived write of ~/.local/bin: %s", resolved ? "refused" : "kept");
                const PlanPath *e = entry_at(p, "pp/dots/tool");
                TAP_CHECK((e && e->access == PATH_ACCESS_READ) == resolved,
                          "a symlink in ~/bin into a writable checkout: %s",
                          resolved ? "read-only" : "not looked at");
        }
}

int main(void) {
        snprintf(root, sizeof(root), "/tmp/scudo-plan-harden-XXXXXX");
        if (!mkdtemp(root))
                abort();
        const char *tree[] = {"home/",
                              "home/.ssh/",
                              "home/.ssh/id",
                              "home/.ssh/keys/",
                              "file",
                              "proj/",
                              "proj/.git/",
                              "proj/.git/HEAD",
                              "proj/.scudo.toml",
                              "empty/",
                              "run/",
                              "run/systemd/",
                              "run/bus",
                              "bpfd.sock",
                              "proj/config/",
                              "proj/config/master.key",
                              "proj/a/",
                              "proj/a/b/",
                              "proj/a/b/c/",
                              "repo/",
                              "repo/.git/",
                              "repo/.git/HEAD",
                              "repo/.git/objects/",
                              "repo/.git/refs/",
                              "repo/.git/config",
                              "repo/.git/hooks/",
                              "wt/",
                              "wt/.git",
                              "chain/",
                              "chain/a/",
                              "chain/a/b/",
                              "src/",
                              "src/foo/",
                              "src/foo/.git/",
                              "src/wt/",
                              "src/wt/.git",
                              "src/deep/",
                              "src/deep/a/",
                              "src/deep/a/b/",
                              "src/deep/a/b/.git/",
                              "src/deep/a/b/c/",
                              "src/deep/a/b/c/.git/"};
        for (size_t i = 0; i < ELEMENTSOF(tree); i++)
                make(tree[i]);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                run_case(&cases[i]);
        test_creates_nothing();
        test_placeholder_limit();
        test_system_bus();
        test_derived_never_overrides_deny();
        test_git_config_copies();
        test_vendored_git_config_copies();
        test_tool_config_copies();
        test_brokers();
        test_user_config_pointers();
        test_persistence_places();
        _cleanup_free_ char *cmd = NULL;
        if (asprintf(&cmd, "rm -rf '%s'", root) >= 0)
                (void) system(cmd);
        return tap_done();
}
