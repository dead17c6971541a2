/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "pty-relay.h"
#include "util/macro.h"

#define RELAY_BUF 65536

struct PtyRelay {
        int input, output, terminal;    /* the caller's: see pty_relay_new() */
        int master;
        /* Our own handle on the slave side, handed to the command. Kept open: without it the
         * master reports hang-up whenever no process has the terminal open (after the command
         * exits), and epoll reports hang-ups whether asked for or not. */
        int slave;
        char slave_path[64];
        struct termios saved, raw_mode;
        bool saved_valid, raw;
        sd_event_source *in_source, *master_source;
        /* bytes read from the caller and not yet accepted by the pty (it may be full while
         * the command is not reading; blocking there could deadlock the relay) */
        char in_buf[RELAY_BUF];
        size_t in_len;
        pty_suspend_fn on_suspend;
        void *userdata;
        bool input_paused;      /* the command is stopped: the caller's input is its shell's */
        PtyRelayLayer layer;    /* output == NULL: none */
        /* Where the command's output stands: in an escape sequence, or a UTF-8 character, no
         * title of ours may be put in (pty_relay_title). */
        enum { OUT_GROUND, OUT_ESC, OUT_CSI, OUT_STRING, OUT_STRING_ESC } out_state;
        unsigned utf8_left;
        char title[256];        /* "" none; written when due, at a clean point of the output */
        bool title_due, title_pushed;
};

static int write_all(int fd, const char *buf, size_t n);
static void update_events(PtyRelay *p);
static void flush_input(PtyRelay *p);

int pty_relay_new(PtyRelay **ret, int input, int output, int terminal) {
        _cleanup_free_ PtyRelay *p = calloc(1, sizeof(PtyRelay));
        if (!p)
                return -ENOMEM;
        p->input = input;
        p->output = output;
        p->terminal = terminal;
        p->slave = -EBADF;
        p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (p->master < 0)
                return negative_errno();
        if (grantpt(p->master) < 0 || unlockpt(p->master) < 0 ||
            ptsname_r(p->master, p->slave_path, sizeof(p->slave_path)) != 0) {
                int r = negative_errno();
                (void) close(p->master);
                return r;
        }

        p->slave = open(p->slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (p->slave < 0) {
                int r = negative_errno();
                (void) close(p->master);
                return r;
        }
        /* The pty starts with the caller's settings and size, as if it were the terminal. When
         * no input is relayed, the caller's terminal stays as it is, and does the output
         * processing (\n to \r\n) itself: the pty passes output on unchanged. */
        if (tcgetattr(terminal, &p->saved) >= 0) {
                struct termios t = p->saved;
                p->saved_valid = true;
                if (input < 0)
                        t.c_oflag &= ~(tcflag_t) OPOST;
                (void) tcsetattr(p->slave, TCSANOW, &t);
        }
        pty_relay_resize(p);
        *ret = TAKE_PTR(p);
        return 0;
}

int pty_relay_slave_fd(PtyRelay *p) {
        return p->slave;
}

void pty_relay_set_layer(PtyRelay *p, const PtyRelayLayer *layer) {
        p->layer = *layer;
}

void pty_relay_resize(PtyRelay *p) {
        struct winsize ws;
        if (ioctl(p->terminal, TIOCGWINSZ, &ws) < 0)
                return;
        if (p->layer.size)
                p->layer.size(&ws, p->layer.userdata);
        (void) ioctl(p->master, TIOCSWINSZ, &ws);
}

static void track_output(PtyRelay *p, const char *buf, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) buf[i];
                switch (p->out_state) {
                case OUT_GROUND:
                        if (c == 0x1b)
                                p->out_state = OUT_ESC;
                        else if (c >= 0xc0)
                                p->utf8_left = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
                        else if (c >= 0x80 && p->utf8_left > 0)
                                p->utf8_left--;
                        else
                                p->utf8_left = 0;
                        break;
                case OUT_ESC:   /* CSI, a string (OSC, DCS, APC, PM, SOS), or ESC's intermediates */
                        p->out_state = c == '[' ? OUT_CSI :
                                       c == ']' || c == 'P' || c == '_' || c == '^' ||
                                       c == 'X' ? OUT_STRING :
                                       c >= 0x20 && c <= 0x2f ? OUT_ESC : OUT_GROUND;
                        break;
                case OUT_CSI:
                        if (c >= 0x40 && c <= 0x7e)
                                p->out_state = OUT_GROUND;
                        break;
                case OUT_STRING:
                        if (c == 0x07)
                                p->out_state = OUT_GROUND;
                        else if (c == 0x1b)
                                p->out_state = OUT_STRING_ESC;
                        break;
                case OUT_STRING_ESC:
                        p->out_state = c == '\\' ? OUT_GROUND : OUT_STRING;
                        break;
                }
        }
}

/* The title, if due and the command's output is at a clean point: the terminal's own title
 * pushed first (xterm's title stack), to be popped when the terminal is given back. */
static void write_title(PtyRelay *p) {
        char seq[sizeof(p->title) + 32];
        if (!p->title_due || !p->raw || p->layer.output || p->out_state != OUT_GROUND || p->utf8_left > 0)
                return;
        int n = snprintf(seq, sizeof(seq), "%s\033]2;%s\007", p->title_pushed ? "" : "\033[22;2t", p->title);
        if (n > 0 && (size_t) n < sizeof(seq) && write_all(p->output, seq, (size_t) n) >= 0) {
                p->title_pushed = true;
                p->title_due = false;
        }
}

void pty_relay_title(PtyRelay *p, const char *title) {
        size_t k = 0;
        /* printable ASCII only: nothing of it may end the sequence or start another */
        for (const char *s = title; *s && k + 1 < sizeof(p->title); s++)
                p->title[k++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
        p->title[k] = 0;
        p->title_due = k > 0;
        write_title(p);
}

/* What the command wrote goes to the caller's terminal, or to the layer. */
static void show(PtyRelay *p, const char *buf, size_t n) {
        if (p->layer.output) {
                p->layer.output(buf, n, p->layer.userdata);
                return;
        }
        (void) write_all(p->output, buf, n);
        track_output(p, buf, n);
        write_title(p);
}

static int write_all(int fd, const char *buf, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, buf, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                                (void) poll(&pfd, 1, 100);
                                continue;
                        }
                        return negative_errno();
                }
                buf += k;
                n -= (size_t) k;
        }
        return 0;
}

static void update_events(PtyRelay *p) {
        /* Read more from the caller only while there is room; watch the master for writability
         * only while input is pending. */
        if (p->in_source)
                (void) sd_event_source_set_enabled(
                        p->in_source,
                        !p->input_paused && p->in_len < sizeof(p->in_buf) ? SD_EVENT_ON : SD_EVENT_OFF);
        (void) sd_event_source_set_io_events(p->master_source, EPOLLIN | (p->in_len > 0 ? EPOLLOUT : 0));
}

static void flush_input(PtyRelay *p) {
        while (p->in_len > 0) {
                ssize_t k = write(p->master, p->in_buf, p->in_len);
                if (k <= 0)
                        break;
                memmove(p->in_buf, p->in_buf + k, p->in_len - (size_t) k);
                p->in_len -= (size_t) k;
        }
}

/* The suspend character typed by the user: with the pty in the command's hands, the kernel
 * would send SIGTSTP to a process group that no shell controls (it is discarded), so scudo
 * handles it: the runner freezes the unit and suspends itself. */
static bool is_suspend_char(PtyRelay *p, char c) {
        struct termios t;
        if (tcgetattr(p->master, &t) < 0)
                return false;
        return (t.c_lflag & ISIG) && t.c_cc[VSUSP] != _POSIX_VDISABLE && (cc_t) c == t.c_cc[VSUSP];
}

static int on_input(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        PtyRelay *p = userdata;
        char buf[RELAY_BUF];
        size_t room = sizeof(p->in_buf) - p->in_len;
        ssize_t k = read(fd, buf, MIN(room, sizeof(buf)));
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k <= 0) {
                /* The caller's input is gone (closed terminal): stop reading it. */
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return 0;
        }
        if (p->layer.input)
                k = (ssize_t) p->layer.input(buf, (size_t) k, p->layer.userdata);
        for (ssize_t i = 0; i < k; i++) {
                if (p->on_suspend && is_suspend_char(p, buf[i])) {
                        /* Pass on what came before it, then suspend; the character itself
                         * is consumed here. */
                        flush_input(p);
                        p->on_suspend(p->userdata);
                        continue;
                }
                p->in_buf[p->in_len++] = buf[i];
        }
        flush_input(p);
        update_events(p);
        return 0;
}

static int on_master(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        PtyRelay *p = userdata;
        char buf[RELAY_BUF];

        if (revents & EPOLLOUT)
                flush_input(p);
        if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t k = read(fd, buf, sizeof(buf));
                if (k > 0)
                        show(p, buf, (size_t) k);
                else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
                        /* Cannot happen while we hold the slave open; if it does, stop
                         * watching rather than spin on a hang-up. */
                        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                        return 0;
                }
        }
        update_events(p);
        return 0;
}

int pty_relay_raw_terminal(PtyRelay *p) {
        if (p->input < 0 || !p->saved_valid || p->raw)
                return 0;
        struct termios raw = p->saved;
        cfmakeraw(&raw);
        if (tcsetattr(p->input, TCSANOW, &raw) < 0)
                return negative_errno();
        /* as the terminal took it */
        if (tcgetattr(p->input, &p->raw_mode) < 0)
                p->raw_mode = raw;
        p->raw = true;
        if (p->layer.take)
                p->layer.take(p->layer.userdata);
        p->title_due = p->title[0] != 0;
        write_title(p);
        return 0;
}

static bool same_mode(const struct termios *a, const struct termios *b) {
        return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag && a->c_cflag == b->c_cflag &&
               a->c_lflag == b->c_lflag && memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) == 0;
}

void pty_relay_restore_terminal(PtyRelay *p) {
        struct termios now;
        if (!p || !p->raw)
                return;
        p->raw = false;
        if (p->layer.release)
                p->layer.release(p->layer.userdata);
        if (p->title_pushed) {
                /* the terminal's own title back (a terminal without the stack keeps ours) */
                (void) write_all(p->output, "\033[23;2t", 7);
                p->title_pushed = false;
        }
        /* Changed since it was made raw: another program of the same job has the terminal now
         * (`scudo cmd | less`), and its settings stay. */
        if (tcgetattr(p->input, &now) >= 0 && !same_mode(&now, &p->raw_mode))
                return;
        (void) tcsetattr(p->input, TCSADRAIN, &p->saved);
}

void pty_relay_send(PtyRelay *p, const char *buf, size_t n) {
        n = MIN(n, sizeof(p->in_buf) - p->in_len);     /* a terminal's answers are short */
        memcpy(p->in_buf + p->in_len, buf, n);
        p->in_len += n;
        flush_input(p);
        if (p->master_source)
                update_events(p);
}

void pty_relay_pause_input(PtyRelay *p, bool paused) {
        if (!p)
                return;
        p->input_paused = paused;
        if (p->master_source)
                update_events(p);
}

int pty_relay_start(PtyRelay *p, sd_event *e, pty_suspend_fn on_suspend, void *userdata) {
        int r;

        p->on_suspend = on_suspend;
        p->userdata = userdata;
        if (p->input >= 0) {
                r = sd_event_add_io(e, &p->in_source, p->input, EPOLLIN, on_input, p);
                if (r < 0)
                        return r;
        }
        r = sd_event_add_io(e, &p->master_source, p->master, EPOLLIN, on_master, p);
        if (r < 0)
                return r;
        return pty_relay_raw_terminal(p);
}

void pty_relay_drain(PtyRelay *p) {
        char buf[RELAY_BUF];
        for (;;) {
                struct pollfd pfd = { .fd = p->master, .events = POLLIN };
                if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & POLLIN))
                        break;
                ssize_t k = read(p->master, buf, sizeof(buf));
                if (k <= 0)
                        break;
                show(p, buf, (size_t) k);
        }
}

PtyRelay *pty_relay_free(PtyRelay *p) {
        if (!p)
                return NULL;
        pty_relay_restore_terminal(p);
        sd_event_source_disable_unref(p->in_source);
        sd_event_source_disable_unref(p->master_source);
        safe_close(p->slave);
        safe_close(p->master);
        free(p);
        return NULL;
}
