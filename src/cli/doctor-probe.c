/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo doctor's live probe: one real sandbox, started through this binary as any run is, tries
 * what the built-in profile exists to stop. Each attempt is judged twice: by what the command
 * saw inside, and by what changed outside (the file it must not read is unchanged, nothing
 * appeared where it must not write, no connection reached the listener). A user manager that
 * ignores mount settings (the "containerized execution" failure) shows here and nowhere else. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/doctor.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"

#define PROBE_TIMEOUT_MS 60000
#define PROBE_OUTPUT_MAX 8192

/* ---- inside the sandbox ---- */

static void attempt_open(const char *name, const char *path, int flags) {
        int fd = open(path, flags | O_CLOEXEC, 0600);
        if (fd >= 0) {
                close(fd);
                printf("%s breached %s\n", name, path);
        } else
                printf("%s held %s\n", name, strerror(errno));
}

int verb_doctor_probe(int argc, char **argv) {
        if (argc != 5)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "not for people: scudo doctor starts it");
        char path[PATH_MAX];

        attempt_open("hidden-file", argv[1], O_RDONLY);
        if (snprintf(path, sizeof path, "%s/written-inside", argv[2]) >= (int) sizeof path)
                return -ENAMETOOLONG;
        attempt_open("read-only", path, O_WRONLY | O_CREAT | O_EXCL);
        if (snprintf(path, sizeof path, "/tmp/%s", argv[3]) >= (int) sizeof path)
                return -ENAMETOOLONG;
        /* private /tmp is writable inside: only the outside can judge it */
        attempt_open("private-tmp", path, O_WRONLY | O_CREAT | O_EXCL);

        int port = atoi(argv[4]);
        if (port > 0) {
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0)
                        printf("network breached 127.0.0.1:%d\n", port);
                else
                        printf("network held %s\n", strerror(errno));
                if (fd >= 0)
                        close(fd);
        }
        return fflush(stdout) == 0 ? 0 : -errno;
}

/* ---- outside ---- */

typedef struct Probe {
        /* ~/scudo-doctor-XXXXXX: not a dot-directory, where no start directory is writable */
        char dir[PATH_MAX];
        char secret[PATH_MAX], ro[PATH_MAX], cwd[PATH_MAX];
        char token[33];
        char tmp_name[64];
        int listen_fd;
        int port;
} Probe;

static void remove_dir_entries(const char *dir) {
        DIR *d = opendir(dir);
        if (!d)
                return;
        struct dirent *e;
        while ((e = readdir(d)))
                if (!streq(e->d_name, ".") && !streq(e->d_name, ".."))
                        (void) unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
}

static void probe_done(Probe *p) {
        if (p->listen_fd >= 0)
                close(p->listen_fd);
        if (p->dir[0]) {
                remove_dir_entries(p->ro);
                remove_dir_entries(p->cwd);
                (void) rmdir(p->ro);
                (void) rmdir(p->cwd);
                (void) unlink(p->secret);
                (void) rmdir(p->dir);
        }
}

static int probe_prepare(Probe *p, bool with_network) {
        const char *home = getenv("HOME");
        unsigned char raw[16];

        *p = (Probe) { .listen_fd = -EBADF };
        if (!home || home[0] != '/')
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "$HOME is not set: the probe hides a file there");
        if (getrandom(raw, sizeof raw, 0) != sizeof raw)
                return log_error_errno(negative_errno(), "getrandom: %m");
        for (size_t i = 0; i < sizeof raw; i++)
                snprintf(p->token + 2 * i, 3, "%02x", raw[i]);
        snprintf(p->tmp_name, sizeof p->tmp_name, "scudo-doctor-%s", p->token);

        char tmpl[PATH_MAX];
        if (snprintf(tmpl, sizeof tmpl, "%s/scudo-doctor-XXXXXX", home) >= (int) sizeof tmpl)
                return -ENAMETOOLONG;
        if (!mkdtemp(tmpl))
                return log_error_errno(negative_errno(), "Cannot create the probe's directory in %s: %m",
                                       home);
        strcpy(p->dir, tmpl);
        snprintf(p->secret, sizeof p->secret, "%s/secret", p->dir);
        snprintf(p->ro, sizeof p->ro, "%s/ro", p->dir);
        snprintf(p->cwd, sizeof p->cwd, "%s/cwd", p->dir);
        if (mkdir(p->ro, 0700) < 0 || mkdir(p->cwd, 0700) < 0)
                return log_error_errno(negative_errno(), "Cannot create the probe's directories: %m");
        int fd = open(p->secret, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Cannot create %s: %m", p->secret);
        ssize_t n = write(fd, p->token, strlen(p->token));
        close(fd);
        if (n != (ssize_t) strlen(p->token))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "Cannot write %s", p->secret);

        if (with_network) {
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t len = sizeof sa;
                p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (p->listen_fd < 0 || bind(p->listen_fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
                    listen(p->listen_fd, 4) < 0 ||
                    getsockname(p->listen_fd, (struct sockaddr *) &sa, &len) < 0)
                        return log_error_errno(negative_errno(),
                                               "Cannot listen on loopback for the probe: %m");
                p->port = ntohs(sa.sin_port);
        }
        return 0;
}

/* Runs the sandbox; its stdout and stderr into out/err (NUL-terminated, cut at the size), its
 * exit status (or -1) into *ret_status. */
static int probe_run(const Probe *p, char *out, size_t out_size, char *err, size_t err_size, int *ret_status)
{
        _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
        const char *home = getenv("HOME");
        char port[16];
        int o[2], e[2];

        if (!self)
                return log_error_errno(negative_errno(), "Cannot find scudo's own binary: %m");
        snprintf(port, sizeof port, "%d", p->port);
        /* The binary itself must be there inside: under a hidden $HOME (a build tree), give it back. */
        _cleanup_free_ char *self_dir = strdup(self);
        if (!self_dir)
                return -ENOMEM;
        *strrchr(self_dir, '/') = 0;
        bool under_home = path_startswith(self_dir, home) != NULL;
        const char *argv[16];
        size_t n = 0;
        argv[n++] = self;
        if (p->port > 0)
                argv[n++] = "--no-network";
        argv[n++] = "--fs-read";
        argv[n++] = p->ro;
        if (under_home) {
                argv[n++] = "--fs-read";
                argv[n++] = self_dir;
        }
        argv[n++] = "--";
        argv[n++] = self;
        argv[n++] = "__doctor-probe";
        argv[n++] = p->secret;
        argv[n++] = p->ro;
        argv[n++] = p->tmp_name;
        argv[n++] = port;
        argv[n] = NULL;

        if (pipe2(o, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(e, O_CLOEXEC) < 0) {
                close(o[0]);
                close(o[1]);
                return -errno;
        }
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0 ||
                    chdir(p->cwd) < 0)
                        _exit(125);
                execv(self, (char **) argv);
                _exit(127);
        }
        close(o[1]);
        close(e[1]);
        size_t lo = 0, le = 0;
        struct pollfd fds[2] = { { .fd = o[0], .events = POLLIN }, { .fd = e[0], .events = POLLIN } };
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        int open_fds = 2;
        while (open_fds > 0) {
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
                if (elapsed >= PROBE_TIMEOUT_MS) {
                        (void) kill(pid, SIGTERM);
                        break;
                }
                if (poll(fds, 2, PROBE_TIMEOUT_MS - elapsed) < 0 && errno != EINTR)
                        break;
                for (int i = 0; i < 2; i++) {
                        if (fds[i].fd < 0 || !fds[i].revents)
                                continue;
                        char *buf = i ? err : out;
                        size_t *l = i ? &le : &lo, size = i ? err_size : out_size;
                        char scratch[512];
                        bool room = *l + 1 < size;
                        ssize_t k = read(fds[i].fd, room ? buf + *l : scratch,
                                         room ? size - 1 - *l : sizeof scratch);
                        if (k <= 0) {
                                close(fds[i].fd);
                                fds[i].fd = -1;
                                open_fds--;
                        } else if (room)
                                *l += k;
                }
        }
        for (int i = 0; i < 2; i++)
                if (fds[i].fd >= 0)
                        close(fds[i].fd);
        out[lo] = 0;
        err[le] = 0;
        int status;
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        *ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return 0;
}

/* The word after NAME in the probe's output: "held", "breached", or NULL when it said nothing. */
static const char *said(const char *out, const char *name, char *detail, size_t size) {
        size_t n = strlen(name);
        for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                if (strncmp(l, name, n) || l[n] != ' ')
                        continue;
                const char *w = l + n + 1, *rest = strchr(w, ' '), *end = strchr(w, '\n');
                if (!end)
                        end = w + strlen(w);
                if (rest && rest < end)
                        snprintf(detail, size, "%.*s", (int) (end - rest - 1), rest + 1);
                else
                        detail[0] = 0;
                if (!strncmp(w, "held", 4))
                        return "held";
                if (!strncmp(w, "breached", 8))
                        return "breached";
        }
        return NULL;
}

static int add_attempt(Doctor *d, const char *name, const char *what, bool held, const char *seen,
                       const char *fix)
{
        char detail[1024];
        snprintf(detail, sizeof detail, "%s: %s (%s)", what, held ? "refused" : "NOT refused", seen);
        return doctor_add(d, name, held ? CHECK_OK : CHECK_MISSING, detail,
                          held ? NULL
                               : "the sandbox does not hold: commands run with access their profile denies",
                          held ? NULL : fix);
}

static bool dir_is_empty(const char *path) {
        DIR *d = opendir(path);
        if (!d)
                return true;
        struct dirent *e;
        bool empty = true;
        while (empty && (e = readdir(d)))
                empty = streq(e->d_name, ".") || streq(e->d_name, "..");
        closedir(d);
        return empty;
}

static int judge(Doctor *d, const Probe *p, const char *out) {
        static const char *const user_manager_fix =
                "the user manager cannot set up mount namespaces (on Ubuntu 24.04+: AppArmor's "
                "restriction of user namespaces; install scudo's AppArmor profile, or see "
                "`journalctl --user -u 'scudo-*'`)";
        char detail[512], seen[600], buf[64] = "";
        const char *w;
        int r;

        /* the hidden file: unreadable inside, and unchanged outside */
        w = said(out, "hidden-file", detail, sizeof detail);
        int fd = open(p->secret, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t k = read(fd, buf, sizeof buf - 1);
                buf[k > 0 ? k : 0] = 0;
                close(fd);
        }
        bool unchanged = streq(buf, p->token);
        snprintf(seen, sizeof seen, "%s; %s outside", detail, unchanged ? "unchanged" : "CHANGED");
        r = add_attempt(d, "probe: hidden file", "reading a file of $HOME the profile hides",
                        w && streq(w, "held") && unchanged, seen, user_manager_fix);
        if (r < 0)
                return r;

        /* the read-only path: nothing made inside, nothing there outside */
        w = said(out, "read-only", detail, sizeof detail);
        bool empty = dir_is_empty(p->ro);
        snprintf(seen, sizeof seen, "%s; %s outside", detail, empty ? "nothing written" : "a file WRITTEN");
        r = add_attempt(d, "probe: read-only path", "writing a path given read-only",
                        w && streq(w, "held") && empty, seen, user_manager_fix);
        if (r < 0)
                return r;

        /* /tmp: writable inside, but private: the file must not be in the host's /tmp */
        char host_tmp[PATH_MAX];
        snprintf(host_tmp, sizeof host_tmp, "/tmp/%s", p->tmp_name);
        bool leaked = access(host_tmp, F_OK) == 0;
        if (leaked)
                (void) unlink(host_tmp);
        w = said(out, "private-tmp", detail, sizeof detail);
        snprintf(seen, sizeof seen, "%s",
                 leaked ? "the file appeared in the host's /tmp" : "the host's /tmp untouched");
        r = add_attempt(d, "probe: private /tmp", "writing /tmp", w && !leaked, seen, user_manager_fix);
        if (r < 0)
                return r;

        if (p->port > 0) {
                w = said(out, "network", detail, sizeof detail);
                int c = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                bool reached = c >= 0;
                if (c >= 0)
                        close(c);
                snprintf(seen, sizeof seen, "%s; %s", detail,
                         reached ? "the listener outside was REACHED" : "the listener outside saw nothing");
                r = add_attempt(d, "probe: network", "connecting to an address the rules refuse",
                                w && streq(w, "held") && !reached, seen,
                                "scudo-bpfd's programs are not in force: see `journalctl -u scudo-bpfd`");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The last line of scudo's own messages: why the sandbox did not start. */
static const char *last_line(char *text) {
        size_t n = strlen(text);
        while (n > 0 && text[n - 1] == '\n')
                text[--n] = 0;
        char *l = strrchr(text, '\n');
        return l ? l + 1 : text;
}

static int probe_once(Doctor *d, bool with_network) {
        Probe p;
        char out[PROBE_OUTPUT_MAX], err[PROBE_OUTPUT_MAX], detail[PROBE_OUTPUT_MAX + 64];
        int status = -1;

        int r = probe_prepare(&p, with_network);
        if (r >= 0)
                r = probe_run(&p, out, sizeof out, err, sizeof err, &status);
        if (r < 0) {
                probe_done(&p);
                if (r == -ENOMEM)
                        return r;
                snprintf(detail, sizeof detail, "the probe could not be prepared: %s", strerror(-r));
                return doctor_add(d, "probe", CHECK_MISSING, detail,
                                  "without the probe nothing shows that a sandbox holds here", NULL);
        }
        if (!strstr(out, "hidden-file ")) {
                snprintf(detail, sizeof detail, "no sandbox could be started (exit %d): %s", status,
                         err[0] ? last_line(err) : "no message");
                r = doctor_add(
                        d, "probe", CHECK_MISSING, detail,
                        "scudo refuses every run here: it never runs a command less confined than its "
                        "profile says",
                        "mend what the message names; the checks above point at the usual causes");
        } else
                r = judge(d, &p, out);
        probe_done(&p);
        return r;
}

/* A helper that answers its socket but cannot attach (a unit file edited, capabilities taken
 * away) makes every run with network rules fail: then the probe is run again without them, so
 * that the filesystem is still judged, and the helper is named as what failed. */
int doctor_probe(Doctor *d, bool with_network) {
        size_t n = d->n_checks;
        int r = probe_once(d, with_network);
        if (r < 0 || !with_network || d->n_checks != n + 1 || !streq(d->checks[n].name, "probe") ||
            d->checks[n].state != CHECK_MISSING)
                return r;
        _cleanup_free_ char *detail = TAKE_PTR(d->checks[n].detail);
        free(d->checks[n].meaning);
        free(d->checks[n].fix);
        d->n_checks = n;
        r = probe_once(d, false);
        if (r < 0)
                return r;
        if (d->n_checks > n && streq(d->checks[n].name, "probe"))
                return 0;       /* no sandbox at all: the helper is not the cause */
        return doctor_add(
                d, "probe: network", CHECK_DEGRADED, detail,
                "a run with network rules fails (exit 125): the helper answers but cannot restrict",
                "see `journalctl -u scudo-bpfd` and the installed scudo-bpfd.service");
}
