/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The command's own PID namespace (scudo-confine --private-pids).
 *
 * Without one, the command sees every process of the user in /proc, command lines included
 * (`mysql -psecret`), and reaches each of them by pid with what the same uid allows: its
 * /proc/PID/oom_score_adj (make it the OOM killer's chosen victim), sched_setaffinity(),
 * setpriority(), ioprio_set(). In a PID namespace of its own with a /proc of its own, the
 * user's other processes have no pid the command could name.
 *
 * Three processes:
 *   - the unit's main process (systemd's MainPID, outside the namespace) waits for the init
 *     and ends as the command did. A signal sent to it by a process (KillUnit, the SIGTERM and
 *     SIGHUP of a stop: scudo sets KillMode=mixed for this, so that nobody else gets them
 *     directly as well) goes on to the init;
 *   - the init, pid 1 inside, mounts the /proc, forks the command, reaps whatever ends in the
 *     namespace (orphans come to it), passes what the main process passes it on to every
 *     process of the namespace (kill(-1)), and once the command has ended, asks the rest to end
 *     as systemd would have (SIGTERM, SIGHUP, SIGCONT); when the init exits, the kernel kills
 *     what is left (after GRACE_SEC at most);
 *   - the command, pid 2.
 * Only signals sent by a process are passed on (si_code <= 0). Those the kernel makes for a
 * terminal (Ctrl-C on the pty, SIGWINCH, SIGHUP at a hang-up) go to the terminal's foreground
 * process group, the command's, which they reached already. The init passes on only what came
 * from outside the namespace (si_pid 0): a process of the command signalling its init does not
 * signal all of them.
 * The command's wait status reaches the main process through a pipe (the init cannot die of a
 * signal: the kernel drops those it has no handler for), and the main process ends the same
 * way, exit status N or killed by signal N, so that systemd and scudo see what the command did.
 *
 * Job control. The command runs in a process group of its own, the foreground one of its
 * terminal, whose parent (the init) is in the same session but another group: the group is not
 * orphaned, so the kernel stops it on SIGTSTP, SIGTTIN and SIGTTOU as it would outside. (For an
 * orphaned group it discards them: the ^Z of vim, less or an agent, which stop themselves with
 * kill(0, SIGTSTP), would do nothing.) When the command stops, the init says so on a second pipe,
 * which raises SIGIO in the main process, and the main process sends SIGURG to the scudo that
 * runs the unit (its pid given to scudo-confine): scudo gives the terminal back and stops as a job
 * does. On fg, scudo sends SIGCONT through the unit, which reaches the command as every signal
 * above does. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pid-init.h"

/* How long the rest of the namespace has to end after the command did: systemd's stop
 * timeout as scudo sets it (TimeoutStopSec=5s). */
#define GRACE_SEC 5

/* The signals passed on. Blocked in the main process and the init, which read them with
 * sigwaitinfo(): neither ends or stops by them (SIGTSTP from the terminal included). */
static const int forwarded[] = {
        SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM, SIGCONT, SIGTSTP, SIGWINCH,
};

/* The main process and the init need no capability once the command's process is forked;
 * theirs (in the command's user namespace) would give it nothing, as it cannot trace either
 * (the init is not dumpable, the main process is not in its namespace): best effort. */
static void drop_all_capabilities(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
        (void) syscall(SYS_capset, &h, d);
}

/* ---- /proc ---- */

#define MAX_SUBMOUNTS 64
#define MAX_MOUNTINFO (4U << 20)

typedef struct Submount {
        int tree;
        char path[256];
} Submount;

static char *read_mountinfo(void) {
        int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        size_t size = 65536, len = 0;
        char *buf = malloc(size);
        for (;;) {
                if (!buf) {
                        errno = ENOMEM;
                        break;
                }
                ssize_t k = read(fd, buf + len, size - 1 - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        free(buf);
                        buf = NULL;
                        break;
                }
                if (k == 0) {
                        buf[len] = 0;
                        break;
                }
                len += (size_t) k;
                if (len == size - 1) {
                        char *n = size < MAX_MOUNTINFO ? realloc(buf, size * 2) : NULL;
                        if (!n) {
                                free(buf);
                                errno = size < MAX_MOUNTINFO ? ENOMEM : E2BIG;
                                buf = NULL;
                                break;
                        }
                        buf = n;
                        size *= 2;
                }
        }
        int e = errno;
        (void) close(fd);
        errno = e;
        return buf;
}

/* The fields of one mountinfo line, in place: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS
 * [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS". */
typedef struct MountLine {
        unsigned long id, parent;
        char *mount_point, *options, *fs_type, *super_options;
} MountLine;

static bool parse_line(char *line, MountLine *ret) {
        char *f[6], *save = NULL, *t;
        int n = 0;
        for (t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
                f[n++] = t;
        if (n < 6)
                return false;
        while (t && strcmp(t, "-") != 0)        /* the optional fields */
                t = strtok_r(NULL, " ", &save);
        char *fs_type = t ? strtok_r(NULL, " ", &save) : NULL;
        char *source = fs_type ? strtok_r(NULL, " ", &save) : NULL;
        char *super = source ? strtok_r(NULL, " ", &save) : NULL;
        if (!super)
                return false;
        char *end;
        *ret = (MountLine){
                .mount_point = f[4], .options = f[5], .fs_type = fs_type, .super_options = super
        };
        ret->id = strtoul(f[0], &end, 10);
        if (*end)
                return false;
        ret->parent = strtoul(f[1], &end, 10);
        return *end == 0;
}

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static bool unescape(const char *s, char *out, size_t size) {
        size_t n = 0;
        while (*s) {
                char c = *s++;
                if (c == '\\' && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' &&
                    s[2] <= '7') {
                        c = (char) ((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
                        s += 3;
                }
                if (n + 1 >= size)
                        return false;
                out[n++] = c;
        }
        out[n] = 0;
        return true;
}

/* From the super options of the /proc there, those a /proc of the namespace's own keeps:
 * which processes it shows (hidepid=, ProtectProc=) and whether it shows anything else
 * (subset=pid, ProcSubset=). */
static void proc_options(const char *super, char *out, size_t size) {
        char copy[512], *save = NULL;
        out[0] = 0;
        snprintf(copy, sizeof(copy), "%s", super);
        for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save))
                if (strncmp(o, "hidepid=", 8) == 0 || strncmp(o, "subset=", 7) == 0) {
                        size_t l = strlen(out);
                        snprintf(out + l, size - l, "%s%s", l ? "," : "", o);
                }
}

/* The mounts systemd made on the unit's /proc (ProtectKernelTunables= binds /proc/sys
 * read-only, ProtectKernelLogs= covers /proc/kmsg, ...), each taken with what is mounted on
 * it, to be put back on the same path of the new /proc. Not automount points nor binfmt_misc:
 * they sit on directories the kernel keeps empty, and hide nothing. */
static int take_submounts(char *mountinfo, Submount *subs, size_t *n, int *ret_flags, char *options,
                          size_t options_size) {
        unsigned long proc_id = 0;
        bool found = false;
        MountLine m;

        /* Two passes over a copy each: strtok_r writes into the text. */
        size_t len = strlen(mountinfo);
        char *copy = malloc(len + 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, mountinfo, len + 1);
        char *save = NULL;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                if (parse_line(line, &m) && strcmp(m.mount_point, "/proc") == 0 &&
                    strcmp(m.fs_type, "proc") == 0) {
                        /* the last one listed is the one on top */
                        proc_id = m.id;
                        found = true;
                        *ret_flags = strncmp(m.options, "ro", 2) == 0 &&
                                                     (m.options[2] == 0 || m.options[2] == ',') ?
                                             MS_RDONLY :
                                             0;
                        proc_options(m.super_options, options, options_size);
                }
        free(copy);
        if (!found)
                return 0;       /* nothing to keep; mounting a /proc will say what is wrong */

        save = NULL;
        for (char *line = strtok_r(mountinfo, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (!parse_line(line, &m) || m.parent != proc_id || strcmp(m.fs_type, "autofs") == 0 ||
                    strcmp(m.fs_type, "binfmt_misc") == 0)
                        continue;
                if (*n == MAX_SUBMOUNTS)
                        return -E2BIG;
                Submount *s = &subs[*n];
                if (!unescape(m.mount_point, s->path, sizeof(s->path)) || strncmp(s->path, "/proc/", 6) != 0)
                        return -ENAMETOOLONG;
                s->tree = open_tree(AT_FDCWD, s->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
                                    AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT);
                if (s->tree < 0)
                        return -errno;
                (*n)++;
        }
        return 0;
}

/* A /proc of the namespace's own over the unit's, with the unit's mounts on it put back. Run
 * by the init: a procfs shows the PID namespace of the process that mounts it. */
static int proc_of_its_own(const char **ret_step) {
        Submount subs[MAX_SUBMOUNTS];
        size_t n = 0;
        char options[128] = "";
        int flags = 0, r;

        *ret_step = "reading /proc/self/mountinfo";
        char *mountinfo = read_mountinfo();
        if (!mountinfo)
                return -errno;
        *ret_step = "the mounts on /proc";
        r = take_submounts(mountinfo, subs, &n, &flags, options, sizeof(options));
        free(mountinfo);

        if (r == 0) {
                *ret_step = "a /proc of its own";
                if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | (unsigned long) flags,
                          options[0] ? options : NULL) < 0)
                        r = -errno;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                *ret_step = "the mounts on /proc";
                /* a path the new /proc does not have hides nothing there */
                if (move_mount(subs[i].tree, "", AT_FDCWD, subs[i].path, MOVE_MOUNT_F_EMPTY_PATH) < 0 &&
                    errno != ENOENT)
                        r = -errno;
        }
        for (size_t i = 0; i < n; i++)
                (void) close(subs[i].tree);
        return r;
}

/* ---- the processes ---- */

/* Ends the way `status` says: the exit status, or the same signal (not dumping core). */
static _Noreturn void end_as(int status) {
        if (WIFSIGNALED(status)) {
                int sig = WTERMSIG(status);
                sigset_t s;
                (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
                (void) signal(sig, SIG_DFL);
                (void) sigemptyset(&s);
                (void) sigaddset(&s, sig);
                (void) sigprocmask(SIG_UNBLOCK, &s, NULL);
                (void) kill(getpid(), sig);
                _exit(128 + sig);       /* only if the signal does not end a process */
        }
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

/* The init said the command stopped: scudo is told, once per stop. */
static void pass_on_stops(int events_fd, pid_t notify) {
        char buf[64];
        ssize_t k;
        bool stopped = false;
        while ((k = read(events_fd, buf, sizeof(buf))) > 0)
                stopped = true;
        if (stopped && notify > 0)
                (void) kill(notify, SIGURG);
}

static _Noreturn void main_process(pid_t init, int status_fd, int events_fd, pid_t notify,
                                   const sigset_t *set) {
        /* The init's group is the session's first (this process leads it), the command's is
         * the terminal's foreground one: a word on the terminal from here must not stop us. */
        (void) signal(SIGTTOU, SIG_IGN);
        (void) signal(SIGTTIN, SIG_IGN);
        for (;;) {
                siginfo_t si;
                int sig = sigwaitinfo(set, &si);
                if (sig == SIGIO) {
                        pass_on_stops(events_fd, notify);
                        continue;
                }
                if (sig == SIGCHLD) {
                        int status, command;
                        if (waitpid(init, &status, WNOHANG) != init)
                                continue;
                        /* The command's status, or the init's own when it ended before
                         * there was one (a failed setup: 125, with its message). */
                        if (read(status_fd, &command, sizeof(command)) == (ssize_t) sizeof(command))
                                status = command;
                        end_as(status);
                }
                if (sig > 0 && si.si_code <= 0)
                        (void) kill(init, sig);
        }
}

static void ask_rest_to_end(void) {
        /* kill(-1) from the init: every process of the namespace but the init */
        (void) kill(-1, SIGTERM);
        (void) kill(-1, SIGHUP);
        (void) kill(-1, SIGCONT);
}

static _Noreturn void init_process(pid_t command, int status_fd, int events_fd, const sigset_t *set) {
        struct timespec deadline = {};
        bool ended = false;
        int status = 0;

        (void) signal(SIGTTOU, SIG_IGN);
        (void) signal(SIGTTIN, SIG_IGN);

        for (;;) {
                siginfo_t si;
                int sig;
                if (!ended)
                        sig = sigwaitinfo(set, &si);
                else {
                        struct timespec now, left;
                        if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
                                break;
                        left.tv_sec = deadline.tv_sec - now.tv_sec;
                        left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
                        if (left.tv_nsec < 0) {
                                left.tv_sec--;
                                left.tv_nsec += 1000000000L;
                        }
                        if (left.tv_sec < 0)
                                break;
                        sig = sigtimedwait(set, &si, &left);
                        if (sig < 0 && errno == EAGAIN)
                                break;  /* what is left is killed as the init exits */
                }
                if (sig == SIGCHLD) {
                        bool was_running = !ended;
                        pid_t p;
                        int st;
                        while ((p = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0)
                                if (p == command && WIFSTOPPED(st)) {
                                        /* a full pipe holds a word on a stop already */
                                        ssize_t w = write(events_fd, "S", 1);
                                        (void) w;
                                }
                                else if (p == command) {
                                        status = st;
                                        ended = true;
                                }
                        /* Every process of the namespace descends from the init: with no
                         * child left, nothing is left. (Checked first: kill(-1) walks every
                         * process of the system, some milliseconds on a busy one.) */
                        if (ended && p < 0 && errno == ECHILD)
                                break;
                        if (ended && was_running) {
                                ask_rest_to_end();
                                if (clock_gettime(CLOCK_MONOTONIC, &deadline) < 0)
                                        deadline = (struct timespec) {};
                                deadline.tv_sec += GRACE_SEC;
                        }
                } else if (sig > 0 && si.si_code <= 0 && si.si_pid == 0)
                        (void) kill(-1, sig);
        }
        if (write(status_fd, &status, sizeof(status)) != (ssize_t) sizeof(status))
                _exit(125);
        _exit(0);
}

/* The command's process: a group of its own, given the terminal (when it is the controlling
 * one: ENOTTY otherwise, and nothing to give). */
static int own_process_group(void) {
        sigset_t ttou, old;
        if (setpgid(0, 0) < 0)
                return -errno;
        /* Blocked while asking: setting the foreground group from a background one would
         * stop the process with SIGTTOU. */
        if (sigemptyset(&ttou) < 0 || sigaddset(&ttou, SIGTTOU) < 0 ||
            sigprocmask(SIG_BLOCK, &ttou, &old) < 0)
                return -errno;
        int r = tcsetpgrp(STDIN_FILENO, getpid()) < 0 && errno != ENOTTY ? -errno : 0;
        if (sigprocmask(SIG_SETMASK, &old, NULL) < 0)
                return -errno;
        return r;
}

int pid_namespace_run(pid_t notify_stop, const char **ret_step) {
        sigset_t set, old;
        int fds[2], events[2];
        int r;

        *ret_step = "blocking signals";
        if (sigemptyset(&set) < 0 || sigaddset(&set, SIGCHLD) < 0 || sigaddset(&set, SIGIO) < 0)
                return -errno;
        for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
                if (sigaddset(&set, forwarded[i]) < 0)
                        return -errno;
        /* Before the forks: a signal that comes in between is waiting, not lost. */
        if (sigprocmask(SIG_BLOCK, &set, &old) < 0)
                return -errno;
        *ret_step = "a pipe";
        if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(events, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        /* The init's word on a stop raises SIGIO in this process, which reads it. */
        if (fcntl(events[0], F_SETOWN, getpid()) < 0 || fcntl(events[0], F_SETFL, O_NONBLOCK | O_ASYNC) < 0)
                return -errno;

        *ret_step = "its init";
        pid_t init = fork();
        if (init < 0)
                return -errno;
        if (init > 0) {
                (void) close(fds[1]);
                (void) close(events[1]);
                drop_all_capabilities();
                main_process(init, fds[0], events[0], notify_stop, &set);
        }

        (void) close(fds[0]);
        (void) close(events[0]);
        /* Should the main process be gone (only SIGKILL does that, and systemd sends it to the
         * whole unit), the namespace goes with it. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return -errno;
        r = proc_of_its_own(ret_step);
        if (r < 0)
                return r;
        /* Not traceable by the command (nor its /proc/1 readable), though the same uid;
         * the command's process gets its own mm at exec, dumpable again. */
        *ret_step = "making the init undumpable";
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return -errno;

        *ret_step = "the command's process";
        pid_t command = fork();
        if (command < 0)
                return -errno;
        if (command == 0) {
                (void) close(fds[1]);
                (void) close(events[1]);
                *ret_step = "a process group of its own";
                r = own_process_group();
                if (r < 0)
                        return r;
                *ret_step = "restoring the signal mask";
                if (sigprocmask(SIG_SETMASK, &old, NULL) < 0)
                        return -errno;
                return 0;
        }
        drop_all_capabilities();
        init_process(command, fds[1], events[1], &set);
}
