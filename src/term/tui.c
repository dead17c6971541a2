/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <vterm.h>

#include "tui.h"
#include "util/macro.h"

#define PREFIX_KEY 0x01         /* ^A */
#define KEEP_LINES 64U          /* reports kept for the context area */
#define CONTEXT_ROWS_MAX 8      /* the area's height, its title line included */
#define MAIN_ROWS_MIN 4         /* below this the context area is not shown */

typedef struct Buf {
        char *data;
        size_t len, allocated;
        bool failed;
} Buf;

struct Tui {
        VTerm *vt;
        VTermScreen *screen;
        PtyRelay *relay;
        int rows, cols;         /* the caller's terminal */
        int main_rows;          /* the command's share */
        bool context_shown;
        bool prefix;            /* ^A typed, waiting for the next key */
        bool active;            /* the terminal is ours (alternate screen, raw) */
        bool finished;
        bool cursor_visible;
        bool *dirty;            /* main_rows entries */
        char *lines[KEEP_LINES];
        unsigned n_lines, first;
        Buf out;
};

static void buf_add(Buf *b, const char *s, size_t n) {
        if (b->failed)
                return;
        if (b->len + n > b->allocated) {
                size_t a = MAX(b->allocated * 2, b->len + n + 4096);
                char *d = realloc(b->data, a);

                if (!d) {
                        b->failed = true;
                        return;
                }
                b->data = d;
                b->allocated = a;
        }
        memcpy(b->data + b->len, s, n);
        b->len += n;
}

_printf_(2, 3)
static void buf_printf(Buf *b, const char *fmt, ...) {
        char s[128];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(s, sizeof(s), fmt, ap);
        va_end(ap);
        if (n > 0)
                buf_add(b, s, MIN((size_t) n, sizeof(s) - 1));
}

/* The terminal is written like the relay writes it: waiting for it, as a terminal that
 * takes nothing holds up the command's output without the screen too. */
static void flush(Tui *t) {
        const char *p = t->out.data;
        size_t n = t->out.len;

        while (n > 0) {
                ssize_t k = write(STDOUT_FILENO, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                struct pollfd pfd = { .fd = STDOUT_FILENO, .events = POLLOUT };
                                (void) poll(&pfd, 1, 100);
                                continue;
                        }
                        break;
                }
                p += k;
                n -= (size_t) k;
        }
        t->out.len = 0;
        t->out.failed = false;
}

/* The context area's height: what is left above MAIN_ROWS_MIN, at most CONTEXT_ROWS_MAX, and
 * nothing when that is less than a title and one line. */
static int context_rows(const Tui *t) {
        int n;

        if (!t->context_shown)
                return 0;
        n = MIN(CONTEXT_ROWS_MAX, t->rows - MAIN_ROWS_MIN);
        return n >= 2 ? n : 0;
}

static void mark_all(Tui *t) {
        for (int r = 0; r < t->main_rows; r++)
                t->dirty[r] = true;
}

static void color_sgr(Buf *b, const VTermColor *c, bool fg) {
        if (fg ? VTERM_COLOR_IS_DEFAULT_FG(c) : VTERM_COLOR_IS_DEFAULT_BG(c))
                buf_printf(b, ";%d", fg ? 39 : 49);
        else if (VTERM_COLOR_IS_INDEXED(c)) {
                unsigned i = c->indexed.idx;
                if (i < 8)
                        buf_printf(b, ";%u", (fg ? 30 : 40) + i);
                else if (i < 16)
                        buf_printf(b, ";%u", (fg ? 90 : 100) + i - 8);
                else
                        buf_printf(b, ";%d;5;%u", fg ? 38 : 48, i);
        } else
                buf_printf(b, ";%d;2;%u;%u;%u", fg ? 38 : 48, c->rgb.red, c->rgb.green, c->rgb.blue);
}

static bool same_pen(const VTermScreenCell *a, const VTermScreenCell *b) {
        return a->attrs.bold == b->attrs.bold && a->attrs.underline == b->attrs.underline &&
                a->attrs.italic == b->attrs.italic && a->attrs.blink == b->attrs.blink &&
                a->attrs.reverse == b->attrs.reverse && a->attrs.strike == b->attrs.strike &&
                vterm_color_is_equal(&a->fg, &b->fg) && vterm_color_is_equal(&a->bg, &b->bg);
}

static void pen(Buf *b, const VTermScreenCell *c) {
        buf_add(b, "\033[0", 3);
        if (c->attrs.bold)
                buf_add(b, ";1", 2);
        if (c->attrs.italic)
                buf_add(b, ";3", 2);
        if (c->attrs.underline)
                buf_add(b, ";4", 2);
        if (c->attrs.blink)
                buf_add(b, ";5", 2);
        if (c->attrs.reverse)
                buf_add(b, ";7", 2);
        if (c->attrs.strike)
                buf_add(b, ";9", 2);
        color_sgr(b, &c->fg, true);
        color_sgr(b, &c->bg, false);
        buf_add(b, "m", 1);
}

static void utf8(Buf *b, uint32_t cp) {
        char s[4];

        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp < 0xe000))
                cp = '?';       /* nothing the emulator keeps should steer the real terminal */
        if (cp < 0x80) {
                s[0] = (char) cp;
                buf_add(b, s, 1);
        } else if (cp < 0x800) {
                s[0] = (char) (0xc0 | (cp >> 6));
                s[1] = (char) (0x80 | (cp & 0x3f));
                buf_add(b, s, 2);
        } else if (cp < 0x10000) {
                s[0] = (char) (0xe0 | (cp >> 12));
                s[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
                s[2] = (char) (0x80 | (cp & 0x3f));
                buf_add(b, s, 3);
        } else {
                s[0] = (char) (0xf0 | (cp >> 18));
                s[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
                s[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
                s[3] = (char) (0x80 | (cp & 0x3f));
                buf_add(b, s, 4);
        }
}

static void draw_row(Tui *t, int row) {
        VTermScreenCell last = {}, cell;
        bool first = true;

        buf_printf(&t->out, "\033[%d;1H", row + 1);
        for (int col = 0; col < t->cols; ) {
                VTermPos pos = { .row = row, .col = col };

                if (!vterm_screen_get_cell(t->screen, pos, &cell)) {
                        col++;
                        continue;
                }
                if (first || !same_pen(&cell, &last)) {
                        pen(&t->out, &cell);
                        last = cell;
                        first = false;
                }
                if (cell.chars[0] == 0)
                        buf_add(&t->out, " ", 1);
                else
                        for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i]; i++)
                                utf8(&t->out, cell.chars[i]);
                col += cell.width > 1 ? cell.width : 1;
        }
        buf_add(&t->out, "\033[0m", 4);
}

/* Up to `cols` columns of a report line (escaped already: one column per character). */
static void draw_text(Buf *b, const char *s, int cols) {
        int used = 0;
        const char *p = s;

        while (*p && used < cols) {
                size_t n = 1;

                if ((unsigned char) *p >= 0xc0)
                        while ((p[n] & 0xc0) == 0x80)
                                n++;
                buf_add(b, p, n);
                p += n;
                used++;
        }
}

static void draw_context(Tui *t) {
        int n = context_rows(t);
        char title[128];

        if (n == 0)
                return;
        (void) snprintf(title, sizeof(title), " scudo: refusals (%u)  ^A s hides this, ^A ^A sends ^A ",
                        t->n_lines);
        buf_printf(&t->out, "\033[%d;1H\033[0;7m", t->main_rows + 1);
        draw_text(&t->out, title, t->cols);
        buf_add(&t->out, "\033[K\033[0m", 7);
        for (int i = 1; i < n; i++) {
                /* the last n - 1 reports, oldest first, from the top */
                int k = (int) t->n_lines > n - 1 ? (int) t->n_lines - (n - 1) + (i - 1) : i - 1;

                buf_printf(&t->out, "\033[%d;1H\033[0m", t->main_rows + 1 + i);
                if (k < (int) t->n_lines)
                        draw_text(&t->out, t->lines[(t->first + (unsigned) k) % KEEP_LINES], t->cols);
                buf_add(&t->out, "\033[K", 3);
        }
}

static void place_cursor(Tui *t) {
        VTermPos pos;
        VTermState *state = vterm_obtain_state(t->vt);

        vterm_state_get_cursorpos(state, &pos);
        buf_printf(&t->out, "\033[%d;%dH%s", pos.row + 1, pos.col + 1,
                   t->cursor_visible ? "\033[?25h" : "\033[?25l");
}

static void render(Tui *t, bool context) {
        if (!t->active)
                return;
        buf_add(&t->out, "\033[?25l", 6);
        for (int r = 0; r < t->main_rows; r++)
                if (t->dirty[r]) {
                        draw_row(t, r);
                        t->dirty[r] = false;
                }
        if (context)
                draw_context(t);
        place_cursor(t);
        flush(t);
}

static int on_damage(VTermRect rect, void *userdata) {
        Tui *t = userdata;

        for (int r = MAX(rect.start_row, 0); r < rect.end_row && r < t->main_rows; r++)
                t->dirty[r] = true;
        return 1;
}

static int on_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *userdata) {
        return 1;
}

static int on_settermprop(VTermProp prop, VTermValue *val, void *userdata) {
        Tui *t = userdata;

        if (prop == VTERM_PROP_CURSORVISIBLE)
                t->cursor_visible = val->boolean;
        return 1;
}

static int on_bell(void *userdata) {
        Tui *t = userdata;

        if (t->active)
                buf_add(&t->out, "\a", 1);
        return 1;
}

static const VTermScreenCallbacks screen_callbacks = {
        .damage = on_damage,
        .movecursor = on_movecursor,
        .settermprop = on_settermprop,
        .bell = on_bell,
};

/* The emulator's answers to the command's queries (where is the cursor, what are you). */
static void on_vterm_output(const char *s, size_t len, void *userdata) {
        Tui *t = userdata;

        if (t->relay)
                pty_relay_send(t->relay, s, len);
}

/* Lays the areas out for a terminal of rows × cols. */
static int layout(Tui *t, int rows, int cols) {
        bool *dirty;
        int main_rows;

        t->rows = MAX(rows, 1);
        t->cols = MAX(cols, 1);
        main_rows = MAX(t->rows - context_rows(t), 1);
        dirty = reallocarray(t->dirty, (size_t) main_rows, sizeof(bool));
        if (!dirty)
                return -ENOMEM;
        t->dirty = dirty;
        t->main_rows = main_rows;
        vterm_set_size(t->vt, t->main_rows, t->cols);
        mark_all(t);
        return 0;
}

static void redraw(Tui *t) {
        if (!t->active)
                return;
        buf_add(&t->out, "\033[0m\033[H\033[2J", 10);
        mark_all(t);
        render(t, true);
}

static void layer_output(const char *buf, size_t n, void *userdata) {
        Tui *t = userdata;

        vterm_input_write(t->vt, buf, n);
        render(t, false);
}

static void toggle_context(Tui *t) {
        t->context_shown = !t->context_shown;
        if (t->relay)
                pty_relay_resize(t->relay);     /* calls layer_size: new layout, the command's window */
        redraw(t);
}

static size_t layer_input(char *buf, size_t n, void *userdata) {
        Tui *t = userdata;
        size_t out = 0;

        for (size_t i = 0; i < n; i++) {
                char c = buf[i];

                if (t->prefix) {
                        t->prefix = false;
                        if (c == 's')
                                toggle_context(t);
                        else if (c == PREFIX_KEY)
                                buf[out++] = c;
                        /* any other key after the prefix: nothing, as screen(1) does */
                        continue;
                }
                if (c == PREFIX_KEY) {
                        t->prefix = true;
                        continue;
                }
                buf[out++] = c;
        }
        return out;
}

static void layer_size(struct winsize *ws, void *userdata) {
        Tui *t = userdata;

        if (layout(t, ws->ws_row, ws->ws_col) < 0)
                return;
        ws->ws_row = (unsigned short) t->main_rows;
        redraw(t);
}

static void layer_release(void *userdata) {
        Tui *t = userdata;

        if (!t->active)
                return;
        t->active = false;
        /* out of the alternate screen, the cursor shown, no attributes left on */
        buf_add(&t->out, "\033[0m\033[?25h\033[?1049l", 18);
        flush(t);
}

static void layer_take(void *userdata) {
        Tui *t = userdata;

        if (t->active || t->finished)
                return;
        t->active = true;
        buf_add(&t->out, "\033[?1049h", 8);
        redraw(t);
}

int tui_new(Tui **ret) {
        struct winsize ws = {};
        Tui *t;

        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
                return -ENOTTY;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
                ws = (struct winsize) { .ws_row = 24, .ws_col = 80 };
        t = calloc(1, sizeof(Tui));
        if (!t)
                return -ENOMEM;
        t->context_shown = true;
        t->cursor_visible = true;
        t->vt = vterm_new(ws.ws_row, ws.ws_col);
        if (!t->vt) {
                free(t);
                return -ENOMEM;
        }
        vterm_set_utf8(t->vt, 1);
        vterm_output_set_callback(t->vt, on_vterm_output, t);
        t->screen = vterm_obtain_screen(t->vt);
        vterm_screen_set_callbacks(t->screen, &screen_callbacks, t);
        vterm_screen_enable_altscreen(t->screen, 1);
        vterm_screen_reset(t->screen, 1);
        if (layout(t, ws.ws_row, ws.ws_col) < 0) {
                tui_free(t);
                return -ENOMEM;
        }
        *ret = t;
        return 0;
}

Tui *tui_free(Tui *t) {
        if (!t)
                return NULL;
        layer_release(t);
        for (unsigned i = 0; i < KEEP_LINES; i++)
                free(t->lines[i]);
        free(t->dirty);
        free(t->out.data);
        vterm_free(t->vt);
        free(t);
        return NULL;
}

void tui_attach(Tui *t, PtyRelay *relay) {
        const PtyRelayLayer layer = {
                .output = layer_output,
                .input = layer_input,
                .size = layer_size,
                .release = layer_release,
                .take = layer_take,
                .userdata = t,
        };

        t->relay = relay;
        pty_relay_set_layer(relay, &layer);
        pty_relay_resize(relay);
}

void tui_report(const char *line, void *userdata) {
        Tui *t = userdata;
        char *copy;

        if (t->finished) {
                (void) dprintf(STDERR_FILENO, "scudo: %s\n", line);
                return;
        }
        copy = strdup(line);
        if (!copy)
                return;
        if (t->n_lines == KEEP_LINES) {
                free(t->lines[t->first]);
                t->lines[t->first] = copy;
                t->first = (t->first + 1) % KEEP_LINES;
        } else
                t->lines[(t->first + t->n_lines++) % KEEP_LINES] = copy;
        if (t->active) {
                draw_context(t);
                place_cursor(t);
                flush(t);
        }
}

/* What the command left on its screen, as text, where the terminal's own screen goes on: the
 * alternate screen the TUI drew on is gone with it. */
static void replay_screen(Tui *t) {
        int last = -1;

        for (int r = 0; r < t->main_rows; r++) {
                for (int col = 0; col < t->cols; col++) {
                        VTermScreenCell cell;
                        VTermPos pos = { .row = r, .col = col };

                        if (vterm_screen_get_cell(t->screen, pos, &cell) && cell.chars[0] &&
                            cell.chars[0] != ' ') {
                                last = r;
                                break;
                        }
                }
        }
        for (int r = 0; r <= last; r++) {
                int end = 0;

                for (int col = 0; col < t->cols; col++) {
                        VTermScreenCell cell;
                        VTermPos pos = { .row = r, .col = col };

                        if (vterm_screen_get_cell(t->screen, pos, &cell) && cell.chars[0] &&
                            cell.chars[0] != ' ')
                                end = col + 1;
                }
                for (int col = 0; col < end; ) {
                        VTermScreenCell cell;
                        VTermPos pos = { .row = r, .col = col };

                        if (!vterm_screen_get_cell(t->screen, pos, &cell)) {
                                col++;
                                continue;
                        }
                        if (!cell.chars[0])
                                buf_add(&t->out, " ", 1);
                        for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i]; i++)
                                utf8(&t->out, cell.chars[i]);
                        col += cell.width > 1 ? cell.width : 1;
                }
                buf_add(&t->out, "\r\n", 2);
        }
        flush(t);
}

void tui_finish(Tui *t) {
        if (!t || t->finished)
                return;
        layer_release(t);
        t->finished = true;
        replay_screen(t);
        for (unsigned i = 0; i < t->n_lines; i++)
                (void) dprintf(STDERR_FILENO, "scudo: %s\n", t->lines[(t->first + i) % KEEP_LINES]);
}
