/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo doctor's host checks: what the kernel and the user manager declare. None of them is
 * proof that a sandbox holds (the live probe is); each says what a missing piece means. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <linux/magic.h>

#include "config.h"
#include "cli/doctor.h"
#include "cli/request-from-process.h"
#include "cli/verb-run.h"
#include "policy/policy.h"
#include "shim/shim-path.h"
#include "shim/shim.h"
#include "plan/unit-properties.h"
#include "util/scudo-programs.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"

/* The Landlock ABI scudo-confine's scopes need (abstract sockets and signals). */
#define LANDLOCK_SCOPE_ABI 6

static const char *const state_names[_CHECK_STATE_MAX] = {
        [CHECK_OK] = "ok",
        [CHECK_DEGRADED] = "degraded",
        [CHECK_MISSING] = "missing",
};

const char *check_state_to_string(CheckState s) {
        return s >= 0 && s < _CHECK_STATE_MAX ? state_names[s] : "?";
}

void doctor_done(Doctor *d) {
        for (size_t i = 0; i < d->n_checks; i++) {
                free(d->checks[i].detail);
                free(d->checks[i].meaning);
                free(d->checks[i].fix);
        }
        free(d->checks);
        *d = (Doctor) {};
}

static int dup_or_null(const char *s, char **ret) {
        *ret = NULL;
        if (!s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int doctor_add(Doctor *d, const char *name, CheckState state, const char *detail, const char *meaning,
               const char *fix) {
        Check *n = reallocarray(d->checks, d->n_checks + 1, sizeof(Check));
        if (!n)
                return -ENOMEM;
        d->checks = n;
        Check *c = &d->checks[d->n_checks];
        *c = (Check) { .name = name, .state = state };
        if (dup_or_null(detail, &c->detail) < 0 || dup_or_null(meaning, &c->meaning) < 0 ||
            dup_or_null(fix, &c->fix) < 0) {
                free(c->detail);
                free(c->meaning);
                free(c->fix);
                return -ENOMEM;
        }
        d->n_checks++;
        return 0;
}

CheckState doctor_worst(const Doctor *d) {
        CheckState worst = CHECK_OK;
        for (size_t i = 0; i < d->n_checks; i++)
                if (d->checks[i].state > worst)
                        worst = d->checks[i].state;
        return worst;
}

/* Reads a small file into buf, without its trailing newline; -errno when it cannot. */
static int read_small(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        while (n > 0 && buf[n - 1] == '\n')
                buf[--n] = 0;
        return 0;
}

static int check_user_manager(Doctor *d) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *version = NULL, *features = NULL;
        char detail[512];

        int r = sd_bus_open_user(&bus);
        if (r >= 0)
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                               "org.freedesktop.systemd1.Manager", "Version", NULL,
                                               &version);
        if (r < 0) {
                snprintf(detail, sizeof detail, "no systemd user manager answers on the user bus (%s)",
                         strerror(-r));
                return doctor_add(
                        d, "user manager", CHECK_MISSING, detail,
                        "every sandbox is a unit of the user manager: no command can run",
                        "log in through systemd-logind, or `loginctl enable-linger $USER`, so that "
                        "`systemd --user` and its D-Bus run");
        }
        (void) sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                          "org.freedesktop.systemd1.Manager", "Features", NULL, &features);
        /* "252.39-1~deb12u2", "255.4-1ubuntu8": the number before the first dot */
        long major = strtol(version, NULL, 10);
        bool bpf_framework = features && strstr(features, "+BPF_FRAMEWORK");
        snprintf(detail, sizeof detail, "systemd %s on the user bus%s", version,
                 bpf_framework ? ""
                               : " (built without BPF_FRAMEWORK: network rules come from scudo-bpfd alone)");
        if (major < 252)
                return doctor_add(
                        d, "user manager", CHECK_MISSING, detail,
                        "scudo needs systemd 252 or later (PrivateUsers= with mounts in the user manager)",
                        "upgrade systemd");
        return doctor_add(d, "user manager", CHECK_OK, detail, NULL, NULL);
}

static int write_file_string(const char *path, const char *s) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, s, strlen(s));
        int e = n < 0 ? -errno : 0;
        close(fd);
        return e;
}

/* Whether a child can make a user namespace and, in it, mount: what the user manager does for
 * every sandbox (PrivateUsers=yes and its mounts). 1 yes, 0 no (errno in *ret_errno). */
static int try_userns_mount(int *ret_errno) {
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0) {
                int e = -errno;
                close(pipefd[0]);
                close(pipefd[1]);
                return e;
        }
        if (pid == 0) {
                int e = 0;
                uid_t uid = getuid();
                gid_t gid = getgid();
                char map[64];
                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                        e = errno;
                if (!e && (write_file_string("/proc/self/setgroups", "deny") < 0 ||
                           (snprintf(map, sizeof map, "%u %u 1", uid, uid),
                            write_file_string("/proc/self/uid_map", map) < 0) ||
                           (snprintf(map, sizeof map, "%u %u 1", gid, gid),
                            write_file_string("/proc/self/gid_map", map) < 0)))
                        e = errno ? errno : EPERM;
                if (!e && mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        e = errno;
                if (!e && mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k") < 0)
                        e = errno;
                (void) !write(pipefd[1], &e, sizeof e);
                _exit(0);
        }
        close(pipefd[1]);
        int e = EIO;
        if (read(pipefd[0], &e, sizeof e) != sizeof e)
                e = EIO;
        close(pipefd[0]);
        (void) waitpid(pid, NULL, 0);
        *ret_errno = e;
        return e == 0;
}

static int check_userns(Doctor *d) {
        char v[64], detail[512];
        if (read_small("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof v) >= 0 && streq(v, "0"))
                return doctor_add(d, "user namespaces", CHECK_MISSING,
                                  "kernel.unprivileged_userns_clone = 0",
                                  "the user manager cannot make a sandbox's user namespace: every run fails",
                                  "sysctl kernel.unprivileged_userns_clone=1");
        if (read_small("/proc/sys/user/max_user_namespaces", v, sizeof v) >= 0 && streq(v, "0"))
                return doctor_add(d, "user namespaces", CHECK_MISSING, "user.max_user_namespaces = 0",
                                  "the user manager cannot make a sandbox's user namespace: every run fails",
                                  "sysctl user.max_user_namespaces=15000");
        bool apparmor =
                read_small("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v, sizeof v) >= 0 &&
                streq(v, "1");
        int e = 0;
        int r = try_userns_mount(&e);
        if (r < 0)
                return r;
        if (r == 0) {
                snprintf(detail, sizeof detail, "a user namespace of this user cannot mount (%s)%s",
                         strerror(e), apparmor ? "; kernel.apparmor_restrict_unprivileged_userns = 1" : "");
                return doctor_add(
                        d, "user namespaces", apparmor ? CHECK_DEGRADED : CHECK_MISSING, detail,
                        "if the user manager is restricted the same way, systemd starts units with "
                        "their mount settings ignored: the live probe below says whether it is",
                        apparmor ? "install scudo's AppArmor profile (the Debian package does), which "
                                   "grants userns to the programs that make scudo's namespaces"
                                 : "allow unprivileged user namespaces on this host");
        }
        snprintf(detail, sizeof detail, "unprivileged user namespaces work%s",
                 apparmor ? " (AppArmor restricts them; this program is allowed)" : "");
        return doctor_add(d, "user namespaces", CHECK_OK, detail, NULL, NULL);
}

/* The names of the properties that need `controller`, ", "-separated, into buf. */
static void properties_needing(const char *controller, char *buf, size_t size) {
        size_t l = 0;
        buf[0] = 0;
        for (size_t i = 0; unit_property_name_at(i); i++) {
                const char *name = unit_property_name_at(i);
                const char *c = unit_property_controller(name);
                if (!c || !streq(c, controller))
                        continue;
                int n = snprintf(buf + l, size - l, "%s%s=", l ? ", " : "", name);
                if (n < 0 || (size_t) n >= size - l)
                        break;
                l += n;
        }
}

/* The profiles whose own definitions set a property that needs one of the controllers in
 * `missing` (", "-separated), as `scudo profiles` lists them, ", "-separated into buf. */
static void profiles_needing(const char *missing, char *buf, size_t size) {
        _cleanup_(request_done) Request req = {};
        _cleanup_free_ char *text = NULL, *error = NULL;
        size_t l = 0;

        buf[0] = 0;
        if (request_from_process(&req) < 0 || policy_profiles(&req, &text, &error) < 0)
                return;
        char profile[128] = "";
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                if (line[0] != ' ') {
                        snprintf(profile, sizeof profile, "%.*s", (int) strcspn(line, " "), line);
                        continue;
                }
                const char *props = startswith(line, "    unit: ");
                if (!props)
                        continue;
                bool affected = false;
                for (const char *p = props; *p && !affected;) {
                        size_t n = MIN(strcspn(p, "="), sizeof(char[64]) - 1);
                        char name[64];
                        memcpy(name, p, n);
                        name[n] = 0;
                        const char *c = unit_property_controller(name);
                        affected = c && strstr(missing, c);
                        p += strcspn(p, ",");
                        p += strspn(p, ", ");
                }
                if (!affected)
                        continue;
                int k = snprintf(buf + l, size - l, "%s%s", l ? ", " : "", profile);
                if (k < 0 || (size_t) k >= size - l)
                        break;
                l += k;
        }
}

static int check_cgroup(Doctor *d) {
        struct statfs sfs;
        char path[PATH_MAX], controllers[512], detail[1024], meaning[1024];
        const char *root = "/sys/fs/cgroup";

        if (statfs(root, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
                root = "/sys/fs/cgroup/unified";
                if (statfs(root, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
                        return doctor_add(
                                d, "cgroup v2", CHECK_MISSING, "no cgroup2 hierarchy is mounted",
                                "scudo-bpfd attaches its programs to a sandbox's cgroup2 directory, "
                                "and the sandbox's cgroup proves which sandbox a process is in",
                                "boot with the unified cgroup hierarchy "
                                "(systemd.unified_cgroup_hierarchy=1)");
        }
        unsigned uid = getuid();
        snprintf(path, sizeof path, "%s/user.slice/user-%u.slice/user@%u.service/cgroup.controllers", root,
                 uid, uid);
        if (read_small(path, controllers, sizeof controllers) < 0)
                controllers[0] = 0;

        static const char *const wanted[] = { "memory", "pids", "cpu", "io" };
        char missing[64] = "", props[512] = "";
        size_t ml = 0, pl = 0;
        for (size_t i = 0; i < ELEMENTSOF(wanted); i++) {
                bool found = false;
                const char *p = controllers;
                size_t n = strlen(wanted[i]);
                while ((p = strstr(p, wanted[i]))) {
                        if ((p == controllers || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
                                found = true;
                        p += n;
                }
                if (found)
                        continue;
                char these[256];
                properties_needing(wanted[i], these, sizeof these);
                int k = snprintf(missing + ml, sizeof missing - ml, "%s%s", ml ? ", " : "", wanted[i]);
                if (k > 0 && (size_t) k < sizeof missing - ml)
                        ml += k;
                k = snprintf(props + pl, sizeof props - pl, "%s%s", pl ? ", " : "", these);
                if (k > 0 && (size_t) k < sizeof props - pl)
                        pl += k;
        }
        if (ml == 0) {
                snprintf(detail, sizeof detail, "cgroup v2; the user manager has %s", controllers);
                return doctor_add(d, "cgroup controllers", CHECK_OK, detail, NULL, NULL);
        }
        snprintf(detail, sizeof detail, "cgroup v2; the user manager's cgroup lacks %s (it has: %s)",
                 missing, controllers[0] ? controllers : "none");
        char affected[512];
        profiles_needing(missing, affected, sizeof affected);
        snprintf(meaning, sizeof meaning,
                 "a profile that sets %s is refused (exit 125): systemd would accept the limit and enforce "
                 "nothing; %s%s",
                 props, affected[0] ? "the profiles that set one here: " : "no profile here sets one",
                 affected);
        return doctor_add(d, "cgroup controllers", CHECK_DEGRADED, detail, meaning,
                          "delegate them to the user manager: a drop-in for user@.service with "
                          "`Delegate=pids memory cpu io` (Debian's own default)");
}

static int check_landlock(Doctor *d) {
        char detail[256];
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0) {
                snprintf(detail, sizeof detail, "Landlock is not available (%s)", strerror(errno));
                return doctor_add(
                        d, "Landlock", CHECK_DEGRADED, detail,
                        "a sandbox can reach abstract unix sockets of the host (and, without a PID "
                        "namespace, signal processes outside)",
                        "use a kernel with Landlock enabled (lsm=...,landlock), Linux 6.12 or later");
        }
        snprintf(detail, sizeof detail, "Landlock ABI %ld", abi);
        if (abi < LANDLOCK_SCOPE_ABI)
                return doctor_add(
                        d, "Landlock", CHECK_DEGRADED, detail,
                        "no Landlock scopes before ABI 6: a sandbox can reach abstract unix sockets of "
                        "the host",
                        "Linux 6.12 or later");
        return doctor_add(d, "Landlock", CHECK_OK, detail, NULL, NULL);
}

static const char *bpfd_socket(void) {
        const char *s = getenv("SCUDO_BPFD_SOCKET");
        return s && s[0] == '/' ? s : SCUDO_BPFD_SOCKET;
}

bool doctor_helper_reachable(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = bpfd_socket();
        if (strlen(path) >= sizeof sa.sun_path)
                return false;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0;
}

static int check_helper(Doctor *d) {
        char detail[512];
        bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
        bool up = doctor_helper_reachable();
        if (btf && up) {
                snprintf(detail, sizeof detail, "scudo-bpfd answers at %s; the kernel has BTF",
                         bpfd_socket());
                return doctor_add(d, "network helper", CHECK_OK, detail, NULL, NULL);
        }
        snprintf(detail, sizeof detail, "%s%s%s", up ? "" : "scudo-bpfd does not answer at ",
                 up ? "" : bpfd_socket(),
                 btf ? "" : (up ? "the kernel has no BTF" : "; the kernel has no BTF"));
        return doctor_add(d, "network helper", CHECK_DEGRADED, detail,
                          "a profile with network rules is refused (exit 125), and refused file accesses "
                          "are not reported",
                          btf ? "systemctl enable --now scudo-bpfd.socket"
                              : "a kernel built with CONFIG_DEBUG_INFO_BTF");
}

/* scudo's links (scudo link): each NAME in ~/.local/bin that is a symlink to this scudo, and
 * whether NAME finds it first on PATH. */
static int check_links(Doctor *d) {
        const char *home = getenv("HOME"), *path_env = getenv("PATH");
        _cleanup_free_ char *dir = NULL, *self = realpath("/proc/self/exe", NULL);
        char detail[2048] = "", fix[2048];
        size_t l = 0;
        unsigned n_links = 0, n_bad = 0;

        if (!home || home[0] != '/' || !self)
                return 0;
        dir = path_join(home, ".local/bin");
        if (!dir)
                return -ENOMEM;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return 0;
        DIR *dp = fdopendir(dfd);
        if (!dp)
                return -errno;
        dfd = -EBADF;
        struct dirent *e;
        while ((e = readdir(dp))) {
                char link[PATH_MAX], target[PATH_MAX];
                if (e->d_type != DT_LNK ||
                    snprintf(link, sizeof link, "%s/%s", dir, e->d_name) >= (int) sizeof link)
                        continue;
                if (!realpath(link, target) || !streq(target, self))
                        continue;
                n_links++;
                /* the first NAME on PATH */
                _cleanup_free_ char *first = NULL;
                for (const char *p = path_env ? path_env : ""; *p && !first;) {
                        size_t k = strcspn(p, ":");
                        char cand[PATH_MAX];
                        if (k > 0 &&
                            snprintf(cand, sizeof cand, "%.*s/%s", (int) k, p, e->d_name) <
                                    (int) sizeof cand &&
                            access(cand, X_OK) == 0)
                                first = strdup(cand);
                        p += k + (p[k] == ':');
                }
                char first_real[PATH_MAX];
                if (first && realpath(first, first_real) && streq(first_real, self))
                        continue;
                n_bad++;
                int k = snprintf(detail + l, sizeof detail - l, "%s%s runs %s first", l ? "; " : "",
                                 e->d_name, first ? first : "nothing on PATH");
                if (k > 0 && (size_t) k < sizeof detail - l)
                        l += k;
        }
        closedir(dp);
        if (n_links == 0)
                return 0;
        if (n_bad == 0) {
                snprintf(detail, sizeof detail, "%u command%s linked in %s, each found first on PATH",
                         n_links, n_links == 1 ? "" : "s", dir);
                return doctor_add(d, "links", CHECK_OK, detail, NULL, NULL);
        }
        snprintf(fix, sizeof fix, "put %s before the directories named on PATH", dir);
        return doctor_add(d, "links", CHECK_DEGRADED, detail,
                          "those commands run unconfined when started by name", fix);
}

static int check_installation(Doctor *d) {
        _cleanup_free_ char *confine = scudo_program_path(SCUDO_CONFINE_NAME);
        char detail[PATH_MAX + 64];
        if (!confine)
                return doctor_add(
                        d, "installation", CHECK_MISSING,
                        "scudo-confine is neither beside scudo nor in " SCUDO_LIBEXECDIR,
                        "it runs inside every sandbox before the command: every run fails with 125",
                        "reinstall scudo");
        snprintf(detail, sizeof detail, "scudo-confine at %s", confine);
        return doctor_add(d, "installation", CHECK_OK, detail, NULL, NULL);
}

/* The FUSE shim: mounted, and first on this PATH, or not in use at all (links then do its
 * work). A dead mount is what makes a command on PATH fail with ENOTCONN. */
static int check_shim(Doctor *d) {
        _cleanup_free_ char *mount = NULL;
        char detail[PATH_MAX + 128];
        if (shim_mount_path(&mount) < 0)
                return 0;
        ShimState st = shim_mount_state(mount);
        int pos = shim_path_position(getenv("PATH"), mount);
        if (st == SHIM_ABSENT && pos < 0)
                return doctor_add(d, "shim", CHECK_OK, "not in use (commands are confined through links or "
                                  "`scudo COMMAND`)", NULL, NULL);
        if (st == SHIM_STALE) {
                snprintf(detail, sizeof detail, "the mount at %s is dead", mount);
                return doctor_add(
                        d, "shim", CHECK_DEGRADED, detail,
                        "commands it lists fail with 'Transport endpoint is not connected' (they never "
                        "run unconfined through it)",
                        "systemctl --user restart scudo-shim");
        }
        if (st == SHIM_ABSENT) {
                snprintf(detail, sizeof detail, "%s is on PATH but not mounted", mount);
                return doctor_add(d, "shim", CHECK_DEGRADED, detail,
                                  "the commands it would list run unconfined, found after it on PATH",
                                  "systemctl --user enable --now scudo-shim");
        }
        if (pos != 0) {
                snprintf(detail, sizeof detail, "mounted at %s, but %s", mount,
                         pos < 0 ? "not on PATH" : "not first on PATH");
                return doctor_add(d, "shim", CHECK_DEGRADED, detail,
                                  "a command found before it on PATH runs unconfined",
                                  "put it first: eval \"$(scudo shim --print-env bash)\" (or zsh, fish)");
        }
        snprintf(detail, sizeof detail, "mounted at %s, first on PATH", mount);
        return doctor_add(d, "shim", CHECK_OK, detail, NULL, NULL);
}

int doctor_check_host(Doctor *d) {
        int (*const checks[])(Doctor *) = {
                check_user_manager, check_installation, check_userns, check_cgroup,
                check_landlock,     check_helper,       check_shim,   check_links,
        };
        for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
                int r = checks[i](d);
                if (r < 0)
                        return r;
        }
        return 0;
}
