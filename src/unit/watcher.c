/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <termios.h>
#include <unistd.h>

#include "git/git-guard.h"
#include "git/persist-check.h"
#include "manager-bus.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/strv.h"
#include "watcher.h"

#define WATCHER_MAX_UNITS 8
#define WATCHER_TTY_FD 4        /* the caller's terminal, when stdin was one */
#define WATCHER_ERR_FD 5        /* the caller's standard error, for the end-of-run check's reports */

/* The run's plan, as it was when scudo forked the watcher: the end-of-run check's. */
static const Plan *watched_plan;

/* What the caller's terminal was like when the watcher started, before scudo made it raw. */
static struct termios tty_saved;
static bool tty_saved_valid;

static void restore_terminal(int tty_fd, bool alternate) {
        static const char leave[] = "\033[0m\033[?25h\033[?1049l\r\n";

        if (!tty_saved_valid)
                return;
        /* the watcher is in a process group of its own, and blocks SIGTTOU: this works from
         * the background */
        (void) tcsetattr(tty_fd, TCSAFLUSH, &tty_saved);
        if (alternate)
                (void) write(tty_fd, leave, sizeof(leave) - 1);
}

/* In scudo itself, once the terminal is guarded: a crash (abort, a bad access) gives the
 * terminal back before the process dies. The watcher would too, but only after the caller's
 * shell may have seen scudo end and written its prompt to the alternate screen, which leaving
 * it then throws away. SIGKILL cannot be caught: then the watcher alone restores it. */
static const int crash_signals[] = { SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGTRAP };
static struct sigaction crash_previous[ELEMENTSOF(crash_signals)];
static volatile sig_atomic_t crash_guard_alternate = -1;  /* -1: not armed */
static volatile sig_atomic_t crash_watcher_fd = -1;

static void on_crash(int sig) {
        static const char restored[] = "=restored\n";
        int saved_errno = errno;

        if (crash_guard_alternate >= 0) {
                restore_terminal(STDIN_FILENO, crash_guard_alternate);
                crash_guard_alternate = -1;
                if (crash_watcher_fd >= 0)
                        (void) write(crash_watcher_fd, restored, sizeof(restored) - 1);
        }
        /* what was there before (the default, or a sanitizer's reporter), then the signal once
         * more: a fault re-raises itself anyway, a kill(2) would not */
        for (size_t i = 0; i < ELEMENTSOF(crash_signals); i++)
                if (crash_signals[i] == sig)
                        (void) sigaction(sig, &crash_previous[i], NULL);
        errno = saved_errno;
        (void) raise(sig);
}

static void arm_crash_guard(int fd, bool alternate) {
        crash_watcher_fd = fd;
        crash_guard_alternate = alternate;
        struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_NODEFER };
        (void) sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(crash_signals); i++)
                (void) sigaction(crash_signals[i], &sa, &crash_previous[i]);
}

/* Waits (10 s at most) until the bus has let go of scudo's connection: the bus daemon drops
 * a client's name only once it has passed on every message the client sent. A start that
 * scudo sent just before it died is then with the manager, ahead of any call made from here:
 * the stop below cannot come first and miss the unit it was to stop, leaving it running. */
static void wait_name_gone(sd_bus *bus, const char *name) {
        for (int tries = 0; tries < 1000; tries++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                int has = 0;
                int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus", "NameHasOwner", NULL, &reply, "s", name);
                if (r < 0 || sd_bus_message_read(reply, "b", &has) < 0 || !has)
                        return;
                (void) usleep(10 * 1000);
        }
}

/* Whether one of the units is still loaded (a unit that is gone answers GetUnit with an
 * error: the runs' units are collected once inactive or failed). */
static bool units_left(sd_bus *bus, char units[][256], int n) {
        for (int i = 0; i < n; i++)
                if (sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "GetUnit", NULL, NULL,
                                       "s", units[i]) >= 0)
                        return true;
        return false;
}

static void stop_units(const char *client, char units[][256], int n) {
        sd_bus *bus = NULL;
        if (sd_bus_open_user(&bus) < 0)
                return;
        if (client[0])
                wait_name_gone(bus, client);
        /* Newest first: the service before the slice that holds it. A frozen unit (scudo was
         * killed while suspended) is thawed first so that it can be stopped. */
        for (int i = n - 1; i >= 0; i--) {
                (void) sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "ThawUnit", NULL, NULL,
                                          "s", units[i]);
                (void) sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", NULL, NULL,
                                          "ss", units[i], "replace");
        }
        /* The stop sends SIGTERM, and SIGKILL only after TimeoutStopSec=: a command that ignores
         * SIGTERM would go on running, unwatched, for that long. One second of grace, then
         * SIGKILL to whatever is left (a unit that is gone answers with an error). */
        for (int tries = 0; tries < 10 && units_left(bus, units, n); tries++)
                (void) usleep(100 * 1000);
        for (int i = n - 1; i >= 0; i--)
                (void) sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "KillUnit", NULL, NULL,
                                          "ssi", units[i], "all", (int32_t) SIGKILL);
        /* The end-of-run check and the placeholders' removal need the command gone: until its
         * units are unloaded (a minute at most, for a machine under load), it may still write. */
        for (int tries = 0; tries < 600 && units_left(bus, units, n); tries++)
                (void) usleep(100 * 1000);
        sd_bus_flush_close_unref(bus);
}

/* What is in dir, and dir itself: files, and directories of files (a delegating sandbox's
 * broker directory holds its socket and a directory of links, made read-only). Nothing is
 * followed: what was made by scudo is all there should be. */
static void remove_scratch_dir(const char *dir, bool nested) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        if (nested)
                (void) fchmod(fd, 0700);
        DIR *d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return;
        }
        for (struct dirent *e; (e = readdir(d));) {
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                if (!nested && e->d_type == DT_DIR) {
                        char sub[PATH_MAX];
                        if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) < (int) sizeof(sub))
                                remove_scratch_dir(sub, true);
                } else
                        (void) unlinkat(dirfd(d), e->d_name, 0);
        }
        (void) closedir(d);
        (void) rmdir(dir);
}

static bool parse_since(const char *s, struct timespec *ret) {
        long long sec, nsec;
        char end;
        if (sscanf(s, "%lld.%lld%c", &sec, &nsec, &end) != 2 || sec < 0 || nsec < 0 || nsec >= 1000000000)
                return false;
        *ret = (struct timespec) { .tv_sec = (time_t) sec, .tv_nsec = (long) nsec };
        return true;
}

/* The end-of-run check scudo would have made (persist-check.h), with the same plan and start
 * time: a run whose scudo was killed leaves behind no more than one that ended. Its reports
 * go where scudo's would have, to the caller's standard error. */
static void check_what_stays(const struct timespec *since) {
        (void) dup2(WATCHER_ERR_FD, STDERR_FILENO);    /* else /dev/null: unsaid, but done */
        int n = persist_check(watched_plan, since);
        if (n > 0)
                log_warning("(scudo was killed: what its run left behind was checked once its "
                            "units were gone)");
        (void) close(STDERR_FILENO);
}

_noreturn_ static void watcher_main(int fd) {
        char units[WATCHER_MAX_UNITS][256];
        char placeholders[GIT_GUARD_MAX][PATH_MAX];
        char scratch[PATH_MAX] = "";
        char broker[PATH_MAX] = "";
        char client[256] = "";  /* scudo's unique name on the bus */
        char line[PATH_MAX];
        size_t len = 0;
        int n = 0, np = 0;
        int tty = 0;            /* 1: restore the terminal; 2: and leave the alternate screen */
        bool restored = false;  /* scudo did, as it crashed */
        struct timespec since = { 0 };
        bool started = false;   /* the unit's start was sent: the end-of-run check is due */

        for (;;) {
                char c;
                ssize_t k = read(fd, &c, 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;          /* scudo is gone without saying it is done */
                if (c != '\n') {
                        if (len + 1 < sizeof(line))
                                line[len++] = c;
                        continue;
                }
                if (len == 0)
                        _exit(0);       /* the run ended normally */
                line[len] = 0;
                if (streq(line, "=tty") || streq(line, "=tui")) {
                        tty = MAX(tty, line[3] == 'y' ? 1 : 2);
                } else if (streq(line, "=restored")) {
                        restored = true;
                } else if (line[0] == '+') {
                        started = parse_since(line + 1, &since);
                } else if (line[0] == '-' && line[1] == '/') {
                        memcpy(scratch, line + 1, len);
                } else if (line[0] == '!' && line[1] == '/') {
                        memcpy(broker, line + 1, len);
                } else if (line[0] == '@' && len < sizeof(client)) {
                        memcpy(client, line + 1, len);
                } else if (line[0] == '/') {
                        if (np < GIT_GUARD_MAX)
                                memcpy(placeholders[np++], line, len + 1);
                } else if (n < WATCHER_MAX_UNITS && len < sizeof(units[0]))
                        memcpy(units[n++], line, len + 1);
                len = 0;
        }
        /* The terminal first: the stop below may take a second or more. */
        if (tty && !restored)
                restore_terminal(WATCHER_TTY_FD, tty == 2);
        stop_units(client, units, n);
        /* Only once the sandbox is gone: until then, the placeholders keep it from planting a
         * repository. */
        if (started && watched_plan)
                check_what_stays(&since);
        for (int i = 0; i < np; i++)
                git_guard_remove(placeholders[i]);
        if (scratch[0])
                remove_scratch_dir(scratch, false);
        if (broker[0])
                remove_scratch_dir(broker, false);
        _exit(0);
}

int watcher_start(const Plan *plan, int *ret_fd) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        tty_saved_valid = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tty_saved) >= 0;

        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                (void) close(p[0]);
                (void) close(p[1]);
                return r;
        }
        if (pid == 0) {
                sigset_t all;
                /* Its own copy of the write end would keep the watcher from ever seeing scudo
                 * go. */
                (void) close(p[1]);
                /* Out of the terminal's foreground group; deaf to what the caller gets. */
                (void) setpgid(0, 0);
                (void) prctl(PR_SET_NAME, "scudo-watch");
                (void) sigfillset(&all);
                (void) sigprocmask(SIG_SETMASK, &all, NULL);
                /* the terminal, kept away from the low numbers rearranged below */
                int tty = tty_saved_valid ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 16) : -1;
                /* the caller's standard error, for the reports of the end-of-run check */
                int err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 16);
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null >= 0) {
                        (void) dup2(null, 0);
                        (void) dup2(null, 1);
                        (void) dup2(null, 2);
                }
                if (dup2(p[0], 3) < 0)
                        _exit(1);
                tty_saved_valid = tty >= 0 && dup2(tty, WATCHER_TTY_FD) == WATCHER_TTY_FD;
                if (!tty_saved_valid)
                        (void) close(WATCHER_TTY_FD);
                /* without it (2>&-), the check still removes what it must, unsaid */
                if (err < 0 || dup2(err, WATCHER_ERR_FD) != WATCHER_ERR_FD)
                        (void) close(WATCHER_ERR_FD);
                watched_plan = plan;
                (void) close_range(WATCHER_ERR_FD + 1, ~0U, 0);
                watcher_main(3);
        }
        (void) close(p[0]);
        *ret_fd = p[1];
        return 0;
}

int watcher_add_unit(int fd, const char *unit) {
        char buf[300];
        int l = snprintf(buf, sizeof(buf), "%s\n", unit);
        if (l < 0 || (size_t) l >= sizeof(buf) || strchr(unit, '\n'))
                return -EINVAL;
        if (write(fd, buf, (size_t) l) != l)
                return -EIO;
        return 0;
}

int watcher_add_bus_client(int fd, const char *unique_name) {
        char buf[300];
        int l = snprintf(buf, sizeof(buf), "@%s\n", unique_name);
        if (l < 0 || (size_t) l >= sizeof(buf) || strchr(unique_name, '\n'))
                return -EINVAL;
        if (write(fd, buf, (size_t) l) != l)
                return -EIO;
        return 0;
}

int watcher_add_placeholder(int fd, const char *path) {
        size_t l = strlen(path);
        if (path[0] != '/' || l + 1 >= PATH_MAX || strchr(path, '\n'))
                return -EINVAL;
        struct iovec v[2] = { { (void *) path, l }, { (void *) "\n", 1 } };
        if (writev(fd, v, 2) != (ssize_t) (l + 1))
                return -EIO;
        return 0;
}

int watcher_add_scratch_dir(int fd, const char *path) {
        size_t l = strlen(path);
        if (path[0] != '/' || l + 2 >= PATH_MAX || strchr(path, '\n'))
                return -EINVAL;
        struct iovec v[3] = { { (void *) "-", 1 }, { (void *) path, l }, { (void *) "\n", 1 } };
        if (writev(fd, v, 3) != (ssize_t) (l + 2))
                return -EIO;
        return 0;
}

int watcher_add_broker(int fd, const char *dir) {
        size_t l = strlen(dir);
        if (dir[0] != '/' || l + 2 >= PATH_MAX || strchr(dir, '\n'))
                return -EINVAL;
        struct iovec v[3] = { { (void *) "!", 1 }, { (void *) dir, l }, { (void *) "\n", 1 } };
        if (writev(fd, v, 3) != (ssize_t) (l + 2))
                return -EIO;
        return 0;
}

int watcher_add_start_time(int fd, const struct timespec *since) {
        char buf[64];
        int l = snprintf(buf, sizeof(buf), "+%lld.%09ld\n", (long long) since->tv_sec, since->tv_nsec);
        if (l < 0 || (size_t) l >= sizeof(buf))
                return -EINVAL;
        if (write(fd, buf, (size_t) l) != l)
                return -EIO;
        return 0;
}

int watcher_guard_terminal(int fd, bool alternate) {
        const char *line = alternate ? "=tui\n" : "=tty\n";

        if (write(fd, line, 5) != 5)
                return -EIO;
        if (tty_saved_valid)
                arm_crash_guard(fd, alternate);
        return 0;
}

void watcher_release(int fd) {
        if (fd < 0)
                return;
        crash_guard_alternate = -1;
        crash_watcher_fd = -1;
        (void) write(fd, "\n", 1);
        (void) close(fd);
}
