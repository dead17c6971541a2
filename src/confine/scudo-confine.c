/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo-confine: the first program run inside every sandbox, before the command.
 *
 *   scudo-confine [--check=WHAT...] [--controlling-tty] [--private-ptys] [--private-pids]
 *                 [--notify-stop=PID] [--exec-identity=DEV:INO] EXECUTABLE ARGV0 [ARG...]
 *
 * systemd has set up the namespaces, mounts and filters of the unit. First, each --check says
 * what one of those mounts must show (unit-build.c, add_check): systemd follows symlinks when
 * it mounts, so a directory swapped for a symlink between scudo's checks and the mounts (by
 * another sandbox that may write its parent) would have bound whatever the symlink points at.
 *   =:DEV:INO:PATH a bind: PATH is what scudo identified (not a symlink, same device and inode)
 *   -:PATH         a bind of something that was not there: still nothing there
 *   t:DEV:INO:PATH a hidden directory: a directory on a tmpfs, not the one that was there
 *   n:PATH         a hidden file: /dev/null in its place
 *   x:PATH         a denied path: nothing, or an inaccessible node (mode 0), not a symlink
 * A path the command cannot reach at all (EACCES) passes. Any other difference: exit 125,
 * nothing run. With --controlling-tty, standard input (scudo's pty for the command) becomes the
 * controlling terminal. Then what systemd 252 cannot do for a user manager's unit, in a user
 * namespace of the command's own (which maps only the user's uid and gid and gives the
 * capabilities to make the mounts below; the command has none of them):
 *   --private-ptys (the unit has PrivateDevices=, unit-build.c): terminals of its own
 *     (private_ptys, below);
 *   --private-pids (unless a profile says PrivatePIDs=no): a PID namespace with a /proc of its
 *     own, the command run as pid 2 under an init (pid-init.c): the user's other processes are
 *     neither visible nor reachable by pid. The command's process group is one the kernel
 *     stops (job control), and --notify-stop names the scudo told when it stops.
 * Then what neither mounts nor namespaces cover:
 *   - abstract unix sockets (an X server's @/tmp/.X11-unix/X0, some D-Bus daemons): they live
 *     in the network namespace, which the sandbox shares with the session;
 *   - signals, when the PID namespace is off: the command could kill or stop any process of
 *     the user.
 * A Landlock domain scoped for both (kernel ≥ 6.12, Landlock ABI 6) closes them: from inside,
 * connecting to an abstract socket created outside fails with EPERM, and so does kill() of a
 * process outside. A seccomp filter (seccomp.c) then refuses what reaches the user's other
 * processes by uid, whatever the namespace (setpriority() and ioprio_set() by user), and
 * prlimit64() on other processes. Nothing else is restricted, then the command is executed in
 * place.
 *
 * Kept tiny and free of scudo's libraries: it runs on every start, and it must work when only
 * this one file is bound into the sandbox. Exit 127 when the command cannot be executed, 125
 * when the domain cannot be set up on a kernel that supports it (fail closed). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "pid-init.h"
#include "seccomp.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* Debian 12's kernel headers predate the scoped field (ABI 6); the layout is fixed by ABI. */
struct confine_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

#define CONFINE_CREATE_RULESET_VERSION (1U << 0)
#define CONFINE_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define CONFINE_SCOPE_SIGNAL (1ULL << 1)
#define CONFINE_ABI_SCOPES 6

static int landlock_scope(void) {
        long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, CONFINE_CREATE_RULESET_VERSION);
        if (abi < CONFINE_ABI_SCOPES)
                return 0;       /* no Landlock, or too old for scopes: nothing to add here */

        struct confine_ruleset_attr attr = {
                .scoped = CONFINE_SCOPE_ABSTRACT_UNIX_SOCKET | CONFINE_SCOPE_SIGNAL,
        };
        int fd = (int) syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
        if (fd < 0)
                return -errno;
        /* NoNewPrivileges is set on the unit already; this is for when it is run by hand. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            syscall(__NR_landlock_restrict_self, fd, 0) < 0) {
                int r = -errno;
                (void) close(fd);
                return r;
        }
        (void) close(fd);
        return 1;
}

/* PrivateDevices= gives the unit a /dev of its own, but systemd 252 binds the session's
 * /dev/pts into it: every terminal of the user is there, and the user may open each of them.
 * From inside, a command could read what is typed into another terminal (a password at a sudo
 * prompt) before the shell there does, and write into it (escape sequences to the terminal
 * emulator). So, in a user namespace of its own that maps only the user's uid and gid, the
 * command gets a /dev/pts of its own (private_ptys, below) holding only the terminals it was
 * given and the ptys it makes itself. The mounts cannot be undone from inside: the command runs
 * with no capability in this namespace (its uid is not 0 there, and it has no other), and in
 * any namespace it makes itself, the mounts it inherits are locked together. */
static int write_proc_self(const char *name, const char *text) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/%s", name);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t n = strlen(text);
        ssize_t w = write(fd, text, n);
        int r = w < 0 ? -errno : (size_t) w == n ? 0 : -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

/* A user namespace of the command's own, mapping only the user's uid and gid, with a mount
 * namespace of its own, and `more` (CLONE_NEWPID: for the processes forked from here on). */
static int enter_user_namespace(int more, const char **ret_step) {
        char map[64];
        uid_t uid = geteuid();
        gid_t gid = getegid();
        int r;

        *ret_step = "a user namespace";
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS | more) < 0)
                return -errno;
        *ret_step = "its id maps";
        r = write_proc_self("setgroups", "deny");
        if (r < 0)
                return r;
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) uid, (unsigned) uid);
        r = write_proc_self("uid_map", map);
        if (r < 0)
                return r;
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) gid, (unsigned) gid);
        return write_proc_self("gid_map", map);
}

/* A new user namespace comes with every capability in it, the bounding set full again. The
 * command loses them at exec (its uid is not 0 here), but nothing should be left to regain:
 * the bounding set goes back to empty, as systemd left it, and no ambient set. */
static int drop_capabilities(const char **ret_step) {
        *ret_step = "dropping capabilities";
        for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                        return -errno;
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

/* Numbers below this get a name in /dev/pts for a pty the command makes (PTY_LINKS). */
#define PTY_LINKS 64U
#define PTY_SLAVE_MAJOR 136U            /* UNIX98_PTY_SLAVE_MAJOR, 8 majors of 256 */
#define PTY_GIVEN_MAX 3

/* The pty number of a standard stream that is a pty slave of the session's, or -1. */
static long given_pty(int fd) {
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) < PTY_SLAVE_MAJOR ||
            major(st.st_rdev) >= PTY_SLAVE_MAJOR + 8)
                return -1;
        return (long) (major(st.st_rdev) - PTY_SLAVE_MAJOR) * 256 + (long) minor(st.st_rdev);
}

static int make_file(const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        (void) close(fd);
        return 0;
}

/* /dev/pts becomes a tmpfs of the command's own, read-only once made, holding:
 *   - the ptys of the session it was given as standard streams (scudo's relay: a terminal of
 *     the caller's is never given as it is), bound at the very names they have outside:
 *     ttyname() of them, and `tty`, say what they say outside;
 *   - .own, a devpts instance of its own, and its ptmx as /dev/pts/ptmx and over /dev/ptmx
 *     (systemd's bind of the session's ptmx there finds no devpts beside it: no pty could be
 *     made before);
 *   - for every other number below PTY_LINKS, a symlink into .own, where ptsname() of a pty the
 *     command makes leads (openpty() does not need the name).
 * Nothing else of the session's ptys is reachable. A pty the command makes whose number is one
 * of a given terminal's has no name of its own in /dev/pts (openpty() and forkpty() do not
 * care; opening ptsname() gets the given terminal). */
static int private_ptys(const char **ret_step) {
        long given[PTY_GIVEN_MAX];
        int trees[PTY_GIVEN_MAX];
        size_t n = 0;
        char path[64];
        int r = 0;

        /* The given terminals, taken from the session's /dev/pts while it is still in view
         * (as mounts: a file opened in another mount namespace cannot be bound here). */
        *ret_step = "the terminal it was given";
        for (int fd = 0; fd < 3 && r == 0; fd++) {
                long k = given_pty(fd);
                bool seen = k < 0;
                for (size_t i = 0; i < n && !seen; i++)
                        seen = given[i] == k;
                if (seen)
                        continue;
                struct stat a, b;
                snprintf(path, sizeof(path), "/dev/pts/%ld", k);
                int t = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
                if (t < 0 && errno != ENOENT)
                        r = -errno;
                else if (t < 0 || fstat(t, &a) < 0 || fstat(fd, &b) < 0 || a.st_ino != b.st_ino ||
                         a.st_dev != b.st_dev) {
                        /* A pty of another devpts (the caller's, in a container): it has no
                         * name here; ttyname() of it fails inside, nothing else changes. */
                        if (t >= 0)
                                (void) close(t);
                } else {
                        given[n] = k;
                        trees[n++] = t;
                }
        }

        if (r == 0) {
                *ret_step = "a /dev/pts of its own";
                if (mount("tmpfs", "/dev/pts", "tmpfs", MS_NOSUID | MS_NOEXEC | MS_NODEV,
                          "mode=0755,size=64k") < 0 ||
                    mkdir("/dev/pts/.own", 0755) < 0)
                        r = -errno;
        }
        if (r == 0) {
                *ret_step = "a devpts instance";
                if (mount("devpts", "/dev/pts/.own", "devpts", MS_NOSUID | MS_NOEXEC,
                          "mode=0600,ptmxmode=0666") < 0)
                        r = -errno;
        }
        if (r == 0) {
                *ret_step = "ptmx";
                r = make_file("/dev/pts/ptmx");
                if (r == 0 && (mount("/dev/pts/.own/ptmx", "/dev/pts/ptmx", NULL, MS_BIND, NULL) < 0 ||
                               mount("/dev/pts/.own/ptmx", "/dev/ptmx", NULL, MS_BIND, NULL) < 0))
                        r = -errno;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                snprintf(path, sizeof(path), "/dev/pts/%ld", given[i]);
                r = make_file(path);
                if (r == 0 && move_mount(trees[i], "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        r = -errno;
        }
        for (unsigned m = 0; m < PTY_LINKS && r == 0; m++) {
                bool taken = false;
                for (size_t i = 0; i < n && !taken; i++)
                        taken = given[i] == (long) m;
                if (taken)
                        continue;
                char target[32];
                snprintf(path, sizeof(path), "/dev/pts/%u", m);
                snprintf(target, sizeof(target), ".own/%u", m);
                if (symlink(target, path) < 0)
                        r = -errno;
        }
        if (r == 0 && mount(NULL, "/dev/pts", NULL,
                            MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC | MS_NODEV, NULL) < 0)
                r = -errno;
        for (size_t i = 0; i < n; i++)
                (void) close(trees[i]);
        return r;
}

/* "DEV:INO:" at *s: the two numbers, and s moved past them; false when malformed. */
static int parse_identity(const char **s, unsigned long long *dev, unsigned long long *ino) {
        char *end;
        errno = 0;
        *dev = strtoull(*s, &end, 10);
        if (errno || end == *s || *end != ':')
                return 0;
        *s = end + 1;
        *ino = strtoull(*s, &end, 10);
        if (errno || end == *s || *end != ':')
                return 0;
        *s = end + 1;
        return 1;
}

static const char MALFORMED[] = "malformed check";

/* NULL when the path shows what the check says, or what is wrong (MALFORMED itself for a
 * check that does not parse). */
static const char *check_one(const char *spec, const char **ret_path) {
        unsigned long long dev = 0, ino = 0;
        const char *s = spec + 2;
        struct stat st;
        struct statfs fs;
        char kind = spec[0];

        *ret_path = spec;
        if (spec[0] == 0 || spec[1] != ':' ||
            ((kind == '=' || kind == 't') && !parse_identity(&s, &dev, &ino)))
                return MALFORMED;
        *ret_path = s;
        if (s[0] != '/')
                return MALFORMED;
        if (lstat(s, &st) < 0) {
                if (errno == EACCES)
                        return NULL;    /* out of the command's reach altogether */
                if (errno == ENOENT || errno == ENOTDIR)
                        return kind == '-' || kind == 'x' ? NULL : "missing";
                return strerror(errno);
        }
        if (S_ISLNK(st.st_mode))
                return "a symlink";
        switch (kind) {
        case '=':
                return st.st_dev == dev && st.st_ino == ino ? NULL : "another file or directory";
        case '-':
                return "there, though it was not";
        case 't':
                if (!S_ISDIR(st.st_mode) || statfs(s, &fs) < 0 || fs.f_type != TMPFS_MAGIC)
                        return "not an empty directory of its own";
                return st.st_dev == dev && st.st_ino == ino ? "not hidden" : NULL;
        case 'n':
                return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) ? NULL : "not hidden";
        case 'x':
                return (st.st_mode & 07777) == 0 ? NULL : "not inaccessible";
        default:
                return MALFORMED;
        }
}

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* Before Linux 6.14 a process executed from a descriptor is named after its number ("3" in
 * ps, in /proc/PID/comm, in the file refusal reports): there, a binary too is executed by its
 * name, compared microseconds before, as a script always is. */
static bool exec_from_fd_keeps_name(void) {
        struct utsname u;
        unsigned major = 0, minor = 0;
        return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
                (major > 6 || (major == 6 && minor >= 14));
}

/* Whether the file fd is named as `path` ends: a process executed from a descriptor is named
 * after the file's own name, /usr/bin/vim's target after vim.basic, where `ps`, the reports and
 * the user expect the name they ran: such a file is executed by its name, checked just before. */
static bool fd_has_the_name(int fd, const char *path) {
        char link[64], target[PATH_MAX];
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
                return false;
        target[n] = 0;
        const char *a = strrchr(target, '/'), *b = strrchr(path, '/');
        return strcmp(a ? a + 1 : target, b ? b + 1 : path) == 0;
}

static int cannot_exec(const char *path, int e) {
        fprintf(stderr, "scudo: '%s' cannot be executed inside the sandbox: %s\n", path, strerror(e));
        return e == ENOENT ? 127 : 126;
}

/* Executes `path` if it is still the file scudo checked before it started the unit (device and
 * inode, which scudo's open descriptor keeps from being given to another file): a file swapped
 * in meanwhile (by anything that may write its directory) is refused, never run. A binary is
 * executed through the descriptor this checked, so nothing can come between. A script ("#!")
 * cannot be: its interpreter would get /dev/fd/N for its name and the descriptor closed; it is
 * executed by its name, checked microseconds before (docs/shim.md, "What runs"); so is a binary
 * where the kernel would not name it (exec_from_fd_keeps_name).
 * Returns only on failure: 125 for another file, 126/127 as a shell would. */
static int exec_checked(const char *path, char **argv, const char *identity) {
        unsigned long long dev, ino;
        struct stat st;
        char head[2], id[48];
        const char *s = id;

        if (!identity) {
                execv(path, argv);
                return cannot_exec(path, errno);
        }
        /* "DEV:INO", as the checks' identities with their ':' */
        int n = snprintf(id, sizeof(id), "%s:", identity);
        if (n < 0 || (size_t) n >= sizeof(id) || !parse_identity(&s, &dev, &ino) || *s) {
                fprintf(stderr, "scudo-confine: malformed --exec-identity\n");
                return 125;
        }
        /* Readable for the "#!" (an executable it may not read is no script) */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == EACCES)
                fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return cannot_exec(path, errno);
        if (!S_ISREG(st.st_mode) || st.st_dev != dev || st.st_ino != ino) {
                fprintf(stderr, "scudo: %s is not the file scudo checked before starting the sandbox: "
                        "it was replaced meanwhile; the command was not run\n", path);
                return 125;
        }
        if ((pread(fd, head, 2, 0) == 2 && head[0] == '#' && head[1] == '!') || !exec_from_fd_keeps_name() ||
            !fd_has_the_name(fd, path))
                execv(path, argv);
        else
                syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
        return cannot_exec(path, errno);
}

int main(int argc, char **argv) {
        int i = 1;
        for (; i < argc && strncmp(argv[i], "--check=", 8) == 0; i++) {
                const char *path, *wrong = check_one(argv[i] + 8, &path);
                if (wrong == MALFORMED) {
                        fprintf(stderr, "scudo-confine: malformed %s\n", argv[i]);
                        return 125;
                }
                if (wrong) {
                        fprintf(stderr,
                                "scudo: %s is not what scudo checked before starting the sandbox (%s): it "
                                "changed meanwhile; the command was not run\n",
                                path, wrong);
                        return 125;
                }
        }
        bool ctty = false, ptys = false, pids = false;
        pid_t notify_stop = 0;
        const char *identity = NULL;
        for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
                if (strncmp(argv[i], "--exec-identity=", 16) == 0)
                        identity = argv[i] + 16;
                else if (strncmp(argv[i], "--notify-stop=", 14) == 0) {
                        char *end;
                        errno = 0;
                        long v = strtol(argv[i] + 14, &end, 10);
                        if (errno || *end || v <= 0 || v > INT32_MAX) {
                                fprintf(stderr, "scudo-confine: malformed %s\n", argv[i]);
                                return 125;
                        }
                        notify_stop = (pid_t) v;
                } else if (strcmp(argv[i], "--controlling-tty") == 0)
                        ctty = true;
                else if (strcmp(argv[i], "--private-ptys") == 0)
                        ptys = true;
                else if (strcmp(argv[i], "--private-pids") == 0)
                        pids = true;
                else
                        break;
        }
        argc -= i - 1;
        argv += i - 1;
        if (argc < 3 || strncmp(argv[1], "--", 2) == 0) {
                fprintf(stderr,
                        "usage: scudo-confine [--check=WHAT...] [--controlling-tty] [--private-ptys] "
                        "[--private-pids] [--notify-stop=PID] [--exec-identity=DEV:INO] EXECUTABLE "
                        "ARGV0 [ARG...]\n");
                return 125;
        }
        /* Standard input is scudo's pty for the command: its controlling terminal, as
         * StandardInput=tty would have made it (systemd made this process a session leader). */
        if (ctty && ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0) {
                fprintf(stderr,
                        "scudo: cannot give the command its terminal (%s); the command was not run\n",
                        strerror(errno));
                return 125;
        }
        if (ptys || pids) {
                const char *step, *what = ptys ? "terminals" : "a PID namespace";
                int p = enter_user_namespace(pids ? CLONE_NEWPID : 0, &step);
                if (p >= 0 && ptys)
                        p = private_ptys(&step);
                if (p >= 0 && pids) {
                        what = "a PID namespace";
                        /* From here on, in the command's process (the others end in there). */
                        p = pid_namespace_run(notify_stop, &step);
                }
                if (p >= 0)
                        p = drop_capabilities(&step);
                if (p < 0) {
                        fprintf(stderr,
                                "scudo: cannot give the command %s of its own (%s: %s); the command was not "
                                "run. Where unprivileged user namespaces are restricted, --property "
                                "PrivateDevices=false --property PrivatePIDs=false runs it with the "
                                "session's /dev and processes, every terminal of the user included\n",
                                what, step, strerror(-p));
                        return 125;
                }
        }
        int r = landlock_scope();
        if (r < 0) {
                fprintf(stderr, "scudo: cannot confine the command (landlock: %s)\n", strerror(-r));
                return 125;
        }
        r = confine_seccomp();
        if (r < 0) {
                fprintf(stderr, "scudo: cannot confine the command (seccomp: %s)\n", strerror(-r));
                return 125;
        }
        return exec_checked(argv[1], argv + 2, identity);
}
