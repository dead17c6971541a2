/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The lexical layer of the TOML parser: encoding checks, positions and messages, strings,
 * keys, numbers and datetimes. Nothing here touches Lua; toml.c builds the values. */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/toml-internal.h"
#include "policy/toml.h"

/* Longest number token quoted back in a message. */
#define TOKEN_SHOW_MAX 40

void toml_parser_done(TomlParser *p) {
        free(p->scratch.data);
        free(p->keybuf.data);
        free(p->parts);
        free(p->path.data);
        free(p->text.data);
        free(p->error);
        *p = (TomlParser) {};
}

/* ---- buffers ---- */

static int buf_reserve(TomlBuf *b, size_t extra) {
        if (extra >= SIZE_MAX / 2 - b->len)
                return -ENOMEM;
        size_t need = b->len + extra + 1;
        if (need <= b->cap)
                return 0;
        size_t cap = MAX(MAX(need, b->cap * 2), (size_t) 64);
        char *d = realloc(b->data, cap);
        if (!d)
                return -ENOMEM;
        b->data = d;
        b->cap = cap;
        return 0;
}

int toml_buf_put(TomlBuf *b, const void *s, size_t n) {
        int r = buf_reserve(b, n);
        if (r < 0)
                return r;
        if (n > 0)
                memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = 0;
        return 0;
}

int toml_buf_putc(TomlBuf *b, char c) {
        return toml_buf_put(b, &c, 1);
}

void toml_buf_reset(TomlBuf *b) {
        b->len = 0;
        if (b->data)
                b->data[0] = 0;
}

int toml_buf_put_key(TomlBuf *b, const char *s, size_t n) {
        bool bare = n > 0;
        for (size_t i = 0; bare && i < n; i++)
                bare = toml_is_bare_key_char((unsigned char) s[i]);
        if (bare)
                return toml_buf_put(b, s, n);

        int r = toml_buf_putc(b, '"');
        for (size_t i = 0; r >= 0 && i < n; i++) {
                unsigned char c = s[i];
                if (c == '"' || c == '\\') {
                        char e[2] = { '\\', c };
                        r = toml_buf_put(b, e, 2);
                } else if (c < 0x20 || c == 0x7f) {
                        char e[8];
                        int k = snprintf(e, sizeof(e), "\\u%04X", c);
                        r = toml_buf_put(b, e, (size_t) k);
                } else
                        r = toml_buf_putc(b, (char) c);
        }
        return r < 0 ? r : toml_buf_putc(b, '"');
}

/* ---- positions and messages ---- */

static bool has_bom(const TomlParser *p) {
        return p->size >= 3 && memcmp(p->data, "\xEF\xBB\xBF", 3) == 0;
}

unsigned toml_line_at(TomlParser *p, size_t pos) {
        pos = MIN(pos, p->size);
        if (p->line == 0 || pos < p->line_pos) {
                p->line_pos = 0;
                p->line = 1;
        }
        const char *s = p->data + p->line_pos, *end = p->data + pos;
        while (s < end && (s = memchr(s, '\n', (size_t) (end - s)))) {
                p->line++;
                s++;
        }
        p->line_pos = pos;
        return p->line;
}

unsigned toml_column_at(const TomlParser *p, size_t pos) {
        size_t start = MIN(pos, p->size);
        while (start > 0 && p->data[start - 1] != '\n')
                start--;
        if (start == 0 && has_bom(p) && pos >= 3)
                start = 3;
        unsigned col = 1;
        for (size_t i = start; i < pos && i < p->size; i++)
                if (((unsigned char) p->data[i] & 0xC0) != 0x80)
                        col++;
        return col;
}

int toml_error(TomlParser *p, size_t pos, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        int k = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (k < 0) {
                msg = NULL;
                return -ENOMEM;
        }

        free(p->error);
        p->error = NULL;
        if (asprintf(&p->error, "%s:%u:%u: %s", p->name, toml_line_at(p, pos), toml_column_at(p, pos), msg) <
            0) {
                p->error = NULL;
                return -ENOMEM;
        }
        return -EINVAL;
}

bool toml_at_newline(const TomlParser *p) {
        int c = toml_peek(p, 0);
        return c == '\n' || (c == '\r' && toml_peek(p, 1) == '\n');
}

static size_t utf8_length(unsigned char c) {
        if (c < 0x80)
                return 1;
        if (c >= 0xF0)
                return 4;
        if (c >= 0xE0)
                return 3;
        return 2;
}

const char *toml_describe_here(TomlParser *p) {
        int c = toml_peek(p, 0);

        if (c < 0)
                return "end of file";
        if (toml_at_newline(p))
                return "end of line";
        if (c == '\t')
                return "a tab";

        /* A word is quoted whole (up to a limit), anything else as one character. */
        size_t n = MIN(utf8_length((unsigned char) c), p->size - p->pos);
        if (toml_is_bare_key_char(c))
                while (n < 24 && toml_is_bare_key_char(toml_peek(p, n)))
                        n++;

        (void) snprintf(p->here, sizeof(p->here), "'%.*s'", (int) n, p->data + p->pos);
        return p->here;
}

/* ---- encoding ---- */

static int check_utf8_sequence(TomlParser *p, size_t i, size_t *ret_len) {
        const unsigned char *s = (const unsigned char *) p->data;
        unsigned c = s[i], lo = 0x80, hi = 0xBF;
        size_t len;

        if (c >= 0xC2 && c <= 0xDF)
                len = 2;
        else if (c == 0xE0) {
                len = 3;
                lo = 0xA0;
        } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
                len = 3;
        else if (c == 0xED) {
                len = 3;
                hi = 0x9F;      /* no surrogates */
        } else if (c == 0xF0) {
                len = 4;
                lo = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3)
                len = 4;
        else if (c == 0xF4) {
                len = 4;
                hi = 0x8F;      /* nothing above U+10FFFF */
        } else
                return toml_error(p, i, "invalid UTF-8 (byte 0x%02X)", c);

        if (len > p->size - i || s[i + 1] < lo || s[i + 1] > hi)
                return toml_error(p, i, "invalid UTF-8 (byte 0x%02X starts a broken sequence)", c);
        for (size_t k = 2; k < len; k++)
                if ((s[i + k] & 0xC0) != 0x80)
                        return toml_error(p, i, "invalid UTF-8 (byte 0x%02X starts a broken sequence)", c);
        *ret_len = len;
        return 0;
}

int toml_check_encoding(TomlParser *p) {
        const unsigned char *s = (const unsigned char *) p->data;
        size_t i = has_bom(p) ? 3 : 0;

        p->pos = i;
        while (i < p->size) {
                unsigned c = s[i];

                if (c == '\r') {
                        if (i + 1 >= p->size || s[i + 1] != '\n')
                                return toml_error(p, i, "carriage return not followed by a line feed");
                        i += 2;
                } else if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F)
                        return toml_error(p, i, "control character U+%04X is not allowed here", c);
                else if (c < 0x80)
                        i++;
                else {
                        size_t len = 0;
                        int r = check_utf8_sequence(p, i, &len);
                        if (r < 0)
                                return r;
                        i += len;
                }
        }
        return 0;
}

/* ---- whitespace and comments ---- */

void toml_skip_ws(TomlParser *p) {
        while (p->pos < p->size && (p->data[p->pos] == ' ' || p->data[p->pos] == '\t'))
                p->pos++;
}

void toml_skip_comment(TomlParser *p) {
        if (toml_peek(p, 0) != '#')
                return;
        /* A CR is always followed by a LF (checked up front), so it ends the comment too. */
        while (p->pos < p->size && p->data[p->pos] != '\n' && p->data[p->pos] != '\r')
                p->pos++;
}

static void skip_newline(TomlParser *p) {
        p->pos += toml_peek(p, 0) == '\r' ? 2 : 1;
}

void toml_skip_ws_comments_newlines(TomlParser *p) {
        for (;;) {
                toml_skip_ws(p);
                toml_skip_comment(p);
                if (!toml_at_newline(p))
                        return;
                skip_newline(p);
        }
}

/* ---- strings ---- */

static int put_utf8(TomlBuf *b, uint32_t cp) {
        char u[4];
        size_t n;

        if (cp < 0x80) {
                u[0] = (char) cp;
                n = 1;
        } else if (cp < 0x800) {
                u[0] = (char) (0xC0 | (cp >> 6));
                u[1] = (char) (0x80 | (cp & 0x3F));
                n = 2;
        } else if (cp < 0x10000) {
                u[0] = (char) (0xE0 | (cp >> 12));
                u[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
                u[2] = (char) (0x80 | (cp & 0x3F));
                n = 3;
        } else {
                u[0] = (char) (0xF0 | (cp >> 18));
                u[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
                u[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
                u[3] = (char) (0x80 | (cp & 0x3F));
                n = 4;
        }
        return toml_buf_put(b, u, n);
}

static int hex_value(int c) {
        if (toml_is_digit(c))
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* \uXXXX or \UXXXXXXXX at pos (the backslash). */
static int scan_unicode_escape(TomlParser *p, unsigned n_digits) {
        size_t at = p->pos;
        uint32_t cp = 0;

        for (unsigned i = 0; i < n_digits; i++) {
                int v = hex_value(toml_peek(p, 2 + i));
                if (v < 0)
                        return toml_error(p, at, "escape sequence '\\%c' needs %u hexadecimal digits",
                                          p->data[at + 1], n_digits);
                cp = cp << 4 | (uint32_t) v;
        }
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return toml_error(p, at, "escape sequence '\\%c%.*s' is not a Unicode scalar value",
                                  p->data[at + 1], (int) n_digits, p->data + at + 2);
        p->pos += 2 + n_digits;
        return put_utf8(&p->scratch, cp);
}

static int scan_escape(TomlParser *p) {
        int c = toml_peek(p, 1);
        char out;

        switch (c) {
        case 'b':
                out = '\b';
                break;
        case 't':
                out = '\t';
                break;
        case 'n':
                out = '\n';
                break;
        case 'f':
                out = '\f';
                break;
        case 'r':
                out = '\r';
                break;
        case '"':
                out = '"';
                break;
        case '\\':
                out = '\\';
                break;
        case 'u':
                return scan_unicode_escape(p, 4);
        case 'U':
                return scan_unicode_escape(p, 8);
        default:
                if (c > 0x20 && c < 0x7F)
                        return toml_error(p, p->pos, "invalid escape sequence '\\%c'", c);
                size_t at = p->pos++;
                const char *what = toml_describe_here(p);
                return toml_error(p, at, "invalid escape sequence: '\\' followed by %s", what);
        }
        p->pos += 2;
        return toml_buf_putc(&p->scratch, out);
}

static bool byte_in(char c, const char *set) {
        return memchr(set, c, strlen(set)) != NULL;
}

/* Copies bytes up to the next one that is in stop (at least one byte). */
static int copy_run(TomlParser *p, const char *stop) {
        size_t end = p->pos + 1;
        while (end < p->size && !byte_in(p->data[end], stop))
                end++;
        int r = toml_buf_put(&p->scratch, p->data + p->pos, end - p->pos);
        p->pos = end;
        return r;
}

static int scan_basic_string(TomlParser *p) {
        size_t start = p->pos++;

        for (;;) {
                int r, c = toml_peek(p, 0);

                if (c < 0 || c == '\n' || c == '\r')
                        return toml_error(p, start, "unterminated string (missing closing '\"')");
                if (c == '"') {
                        p->pos++;
                        return 0;
                }
                if (c == '\\')
                        r = scan_escape(p);
                else
                        r = copy_run(p, "\"\\\n\r");
                if (r < 0)
                        return r;
        }
}

static int scan_literal_string(TomlParser *p) {
        size_t start = p->pos++;

        for (;;) {
                int c = toml_peek(p, 0);

                if (c < 0 || c == '\n' || c == '\r')
                        return toml_error(p, start, "unterminated string (missing closing \"'\")");
                if (c == '\'') {
                        p->pos++;
                        return 0;
                }
                int r = copy_run(p, "'\n\r");
                if (r < 0)
                        return r;
        }
}

/* At a run of quote characters inside a multi-line string: 1 or 2 are content; 3 or more close
 * the string, and up to 2 of them right before the closing three are still content.
 * Returns 1 when the string ended. */
static int scan_ml_quotes(TomlParser *p, char q) {
        size_t k = 0;
        while (toml_peek(p, k) == q)
                k++;

        size_t content = k < 3 ? k : MIN(k - 3, (size_t) 2);
        int r = toml_buf_put(&p->scratch, p->data + p->pos, content);
        if (r < 0)
                return r;
        p->pos += k < 3 ? k : content + 3;
        return k >= 3;
}

/* A backslash at the end of a line (trailing spaces allowed) in a multi-line basic string
 * swallows all whitespace and newlines up to the next other character. Returns 1 if it was one. */
static int scan_line_ending_backslash(TomlParser *p) {
        size_t q = p->pos + 1;
        while (q < p->size && (p->data[q] == ' ' || p->data[q] == '\t'))
                q++;
        if (q >= p->size || (p->data[q] != '\n' && p->data[q] != '\r'))
                return 0;
        p->pos = q;
        while (p->pos < p->size && byte_in(p->data[p->pos], " \t\r\n"))
                p->pos++;
        return 1;
}

static int scan_ml_string(TomlParser *p, char q) {
        size_t start = p->pos;
        const char *stop = q == '"' ? "\"\\\r" : "'\r";

        p->pos += 3;
        /* A newline right after the opening delimiter is trimmed. */
        if (toml_at_newline(p))
                skip_newline(p);

        for (;;) {
                int r, c = toml_peek(p, 0);

                if (c < 0)
                        return toml_error(p, start, "unterminated multi-line string (missing closing %s)",
                                          q == '"' ? "'\"\"\"'" : "\"'''\"");
                if (c == q) {
                        r = scan_ml_quotes(p, q);
                        if (r != 0)
                                return r < 0 ? r : 0;
                        continue;
                }
                if (c == '\r') {
                        /* CR LF is normalized to LF. */
                        p->pos += 2;
                        r = toml_buf_putc(&p->scratch, '\n');
                } else if (c == '\\' && q == '"') {
                        r = scan_line_ending_backslash(p);
                        if (r == 0)
                                r = scan_escape(p);
                } else
                        r = copy_run(p, stop);
                if (r < 0)
                        return r;
        }
}

int toml_scan_string(TomlParser *p, bool allow_multiline) {
        char q = p->data[p->pos];

        toml_buf_reset(&p->scratch);
        if (toml_peek(p, 1) == q && toml_peek(p, 2) == q) {
                if (!allow_multiline)
                        return toml_error(p, p->pos, "multi-line strings cannot be used as keys");
                return scan_ml_string(p, q);
        }
        return q == '"' ? scan_basic_string(p) : scan_literal_string(p);
}

/* ---- keys ---- */

static int add_key_part(TomlParser *p, const char *s, size_t n, size_t pos) {
        if (p->n_parts >= p->cap_parts) {
                size_t cap = MAX(p->cap_parts * 2, (size_t) 8);
                TomlKeyPart *parts = reallocarray(p->parts, cap, sizeof(TomlKeyPart));
                if (!parts)
                        return -ENOMEM;
                p->parts = parts;
                p->cap_parts = cap;
        }
        p->parts[p->n_parts++] = (TomlKeyPart) { .off = p->keybuf.len, .len = n, .pos = pos };
        return toml_buf_put(&p->keybuf, s, n);
}

static int scan_key_part(TomlParser *p, bool after_dot) {
        size_t start = p->pos;
        int r, c = toml_peek(p, 0);

        if (c == '"' || c == '\'') {
                r = toml_scan_string(p, /* allow_multiline= */ false);
                if (r < 0)
                        return r;
                return add_key_part(p, p->scratch.data, p->scratch.len, start);
        }
        if (!toml_is_bare_key_char(c))
                return toml_error(p, start, "expected a key%s, found %s", after_dot ? " after '.'" : "",
                                  toml_describe_here(p));
        while (toml_is_bare_key_char(toml_peek(p, 0)))
                p->pos++;
        return add_key_part(p, p->data + start, p->pos - start, start);
}

int toml_scan_key(TomlParser *p) {
        p->n_parts = 0;
        toml_buf_reset(&p->keybuf);

        for (;;) {
                if (p->n_parts >= TOML_MAX_DEPTH)
                        return toml_error(p, p->pos, "key has too many dotted parts (maximum %u)",
                                          TOML_MAX_DEPTH);
                int r = scan_key_part(p, p->n_parts > 0);
                if (r < 0)
                        return r;
                toml_skip_ws(p);
                if (toml_peek(p, 0) != '.')
                        return 0;
                p->pos++;
                toml_skip_ws(p);
        }
}

/* ---- datetimes ---- */

static bool digits_at(const TomlParser *p, size_t off, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!toml_is_digit(toml_peek(p, off + i)))
                        return false;
        return true;
}

/* Exactly n digits, copied to scratch. */
static int scan_field(TomlParser *p, size_t start, unsigned n, const char *what, unsigned *ret) {
        if (!digits_at(p, 0, n))
                return toml_error(p, p->pos, "invalid %s: expected %u digits", what, n);
        unsigned v = 0;
        for (unsigned i = 0; i < n; i++)
                v = v * 10 + (unsigned) (p->data[p->pos + i] - '0');
        int r = toml_buf_put(&p->scratch, p->data + p->pos, n);
        p->pos += n;
        *ret = v;
        return r;
}

static int expect_sep(TomlParser *p, size_t start, char sep, const char *what) {
        if (toml_peek(p, 0) != sep)
                return toml_error(p, p->pos, "invalid %s: expected '%c', found %s", what, sep,
                                  toml_describe_here(p));
        p->pos++;
        return toml_buf_putc(&p->scratch, sep);
}

static unsigned days_in_month(unsigned year, unsigned month) {
        static const unsigned days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
        bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        return month == 2 && leap ? 29 : days[month - 1];
}

static int scan_date(TomlParser *p, size_t start) {
        unsigned year, month, day;
        int r;

        if ((r = scan_field(p, start, 4, "date", &year)) < 0 ||
            (r = expect_sep(p, start, '-', "date")) < 0 ||
            (r = scan_field(p, start, 2, "date", &month)) < 0 ||
            (r = expect_sep(p, start, '-', "date")) < 0 ||
            (r = scan_field(p, start, 2, "date", &day)) < 0)
                return r;
        if (month < 1 || month > 12)
                return toml_error(p, start, "invalid date: month %02u is not in 01-12", month);
        if (day < 1 || day > days_in_month(year, month))
                return toml_error(p, start, "invalid date: day %02u is not in 01-%02u for %04u-%02u",
                                  day, days_in_month(year, month), year, month);
        return 0;
}

static int scan_time(TomlParser *p, size_t start) {
        unsigned hour, minute, second;
        int r;

        if ((r = scan_field(p, start, 2, "time", &hour)) < 0 ||
            (r = expect_sep(p, start, ':', "time")) < 0 ||
            (r = scan_field(p, start, 2, "time", &minute)) < 0 ||
            (r = expect_sep(p, start, ':', "time")) < 0 ||
            (r = scan_field(p, start, 2, "time", &second)) < 0)
                return r;
        if (hour > 23 || minute > 59 || second > 60)
                return toml_error(p, start, "invalid time: %02u:%02u:%02u is out of range", hour, minute,
                                  second);

        if (toml_peek(p, 0) != '.')
                return 0;
        if (!toml_is_digit(toml_peek(p, 1)))
                return toml_error(p, p->pos + 1, "invalid time: expected digits after '.'");
        size_t end = p->pos + 1;
        while (end < p->size && toml_is_digit((unsigned char) p->data[end]))
                end++;
        r = toml_buf_put(&p->scratch, p->data + p->pos, end - p->pos);
        p->pos = end;
        return r;
}

static int scan_offset(TomlParser *p, size_t start) {
        unsigned hour, minute;
        int r, c = toml_peek(p, 0);

        if (c == 'Z' || c == 'z') {
                p->pos++;
                return toml_buf_putc(&p->scratch, 'Z');
        }
        r = toml_buf_putc(&p->scratch, (char) c);
        if (r < 0)
                return r;
        p->pos++;
        if ((r = scan_field(p, start, 2, "time offset", &hour)) < 0 ||
            (r = expect_sep(p, start, ':', "time offset")) < 0 ||
            (r = scan_field(p, start, 2, "time offset", &minute)) < 0)
                return r;
        if (hour > 23 || minute > 59)
                return toml_error(p, start, "invalid time offset: %02u:%02u is out of range", hour, minute);
        return 0;
}

/* A date, optionally followed by 'T', 't' or ' ' and a time, then optionally an offset. */
static int scan_datetime(TomlParser *p, TomlScalar *ret) {
        size_t start = p->pos;
        int r, c;

        toml_buf_reset(&p->scratch);
        r = scan_date(p, start);
        if (r < 0)
                return r;

        c = toml_peek(p, 0);
        if (!(c == 'T' || c == 't' || (c == ' ' && digits_at(p, 1, 2) && toml_peek(p, 3) == ':'))) {
                ret->type = TOML_VALUE_DATE_LOCAL;
                return 0;
        }
        p->pos++;
        if ((r = toml_buf_putc(&p->scratch, 'T')) < 0 || (r = scan_time(p, start)) < 0)
                return r;

        c = toml_peek(p, 0);
        if (c != 'Z' && c != 'z' && c != '+' && c != '-') {
                ret->type = TOML_VALUE_DATETIME_LOCAL;
                return 0;
        }
        r = scan_offset(p, start);
        if (r < 0)
                return r;
        ret->type = TOML_VALUE_DATETIME;
        return 0;
}

/* ---- numbers ---- */

static bool is_number_char(int c) {
        return toml_is_bare_key_char(c) || c == '.' || c == '+';
}

/* DIGIT *( ["_"] DIGIT ), digits copied to scratch. Returns the number of digits, 0 if malformed. */
static size_t scan_digit_group(TomlParser *p, const char *s, size_t n, size_t *i, int *ret_r) {
        size_t k = *i, count = 0;

        *ret_r = 0;
        if (k >= n || !toml_is_digit(s[k]))
                return 0;
        for (;;) {
                int r = toml_buf_putc(&p->scratch, s[k++]);
                if (r < 0) {
                        *ret_r = r;
                        return 0;
                }
                count++;
                if (k < n && s[k] == '_') {
                        k++;
                        if (k >= n || !toml_is_digit(s[k]))
                                return 0;
                } else if (k >= n || !toml_is_digit(s[k]))
                        break;
        }
        *i = k;
        return count;
}

static int number_error(TomlParser *p, size_t start, const char *tok, size_t n, const char *why) {
        return toml_error(p, start, "invalid number '%.*s%s': %s", (int) MIN(n, (size_t) TOKEN_SHOW_MAX),
                          tok, n > TOKEN_SHOW_MAX ? "..." : "", why);
}

static int digit_in_base(int c, unsigned base) {
        int v = hex_value(c);
        return v >= 0 && (unsigned) v < base ? v : -1;
}

/* 0x, 0o, 0b integers: no sign, '_' only between digits, must fit in int64. */
static int parse_based_integer(TomlParser *p, size_t start, const char *tok, size_t n, unsigned base,
                               TomlScalar *ret) {
        const char *s = tok + 2;
        size_t m = n - 2;
        uint64_t v = 0;

        if (m == 0)
                return number_error(p, start, tok, n, "expected digits after the prefix");
        for (size_t i = 0; i < m; i++) {
                if (s[i] == '_') {
                        if (i == 0 || i + 1 >= m || s[i + 1] == '_')
                                return number_error(p, start, tok, n, "'_' must sit between two digits");
                        continue;
                }
                int d = digit_in_base((unsigned char) s[i], base);
                if (d < 0)
                        return number_error(p, start, tok, n, "invalid digit for the base");
                if (v > ((uint64_t) INT64_MAX - (uint64_t) d) / base)
                        return toml_error(p, start, "integer '%.*s' does not fit in 64 bits",
                                          (int) MIN(n, (size_t) TOKEN_SHOW_MAX), tok);
                v = v * base + (uint64_t) d;
        }
        ret->type = TOML_VALUE_INTEGER;
        ret->integer = (int64_t) v;
        return 0;
}

/* scratch holds an optional '-' and decimal digits. */
static int convert_decimal(TomlParser *p, size_t start, const char *tok, size_t n, TomlScalar *ret) {
        const char *s = p->scratch.data;
        bool neg = *s == '-';
        uint64_t v = 0, limit = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;

        for (s += neg; *s; s++) {
                uint64_t d = (uint64_t) (*s - '0');
                if (v > (limit - d) / 10)
                        return toml_error(p, start, "integer '%.*s%s' does not fit in 64 bits",
                                          (int) MIN(n, (size_t) TOKEN_SHOW_MAX), tok,
                                          n > TOKEN_SHOW_MAX ? "..." : "");
                v = v * 10 + d;
        }
        ret->type = TOML_VALUE_INTEGER;
        ret->integer = neg ? (int64_t) (0 - v) : (int64_t) v;
        return 0;
}

static int parse_decimal(TomlParser *p, size_t start, const char *tok, size_t n, TomlScalar *ret) {
        size_t i = 0, digits;
        bool is_float = false;
        int r;

        toml_buf_reset(&p->scratch);
        if (tok[0] == '+' || tok[0] == '-') {
                if (tok[0] == '-' && (r = toml_buf_putc(&p->scratch, '-')) < 0)
                        return r;
                i++;
        }

        size_t int_start = i;
        digits = scan_digit_group(p, tok, n, &i, &r);
        if (r < 0)
                return r;
        if (digits == 0)
                return number_error(p, start, tok, n, "expected digits, with '_' only between two digits");
        if (digits > 1 && tok[int_start] == '0')
                return number_error(p, start, tok, n, "leading zeros are not allowed");

        if (i < n && tok[i] == '.') {
                i++;
                if ((r = toml_buf_putc(&p->scratch, '.')) < 0)
                        return r;
                digits = scan_digit_group(p, tok, n, &i, &r);
                if (r < 0)
                        return r;
                if (digits == 0)
                        return number_error(p, start, tok, n, "expected digits after '.'");
                is_float = true;
        }
        if (i < n && (tok[i] == 'e' || tok[i] == 'E')) {
                i++;
                if ((r = toml_buf_putc(&p->scratch, 'e')) < 0)
                        return r;
                if (i < n && (tok[i] == '+' || tok[i] == '-') &&
                    (r = toml_buf_putc(&p->scratch, tok[i++])) < 0)
                        return r;
                digits = scan_digit_group(p, tok, n, &i, &r);
                if (r < 0)
                        return r;
                if (digits == 0)
                        return number_error(p, start, tok, n, "expected digits in the exponent");
                is_float = true;
        }
        if (i != n)
                return number_error(p, start, tok, n, "unexpected characters");

        if (is_float) {
                ret->type = TOML_VALUE_FLOAT;
                return 0;
        }
        return convert_decimal(p, start, tok, n, ret);
}

static int scan_number(TomlParser *p, TomlScalar *ret) {
        size_t start = p->pos, end = p->pos;

        while (end < p->size && is_number_char((unsigned char) p->data[end]))
                end++;
        const char *tok = p->data + start, *s = tok;
        size_t n = end - start;
        bool sign = n > 0 && (tok[0] == '+' || tok[0] == '-');

        p->pos = end;
        s += sign;
        size_t m = n - sign;
        if (m == 3 && (memcmp(s, "inf", 3) == 0 || memcmp(s, "nan", 3) == 0)) {
                ret->type = s[0] == 'i' ? TOML_VALUE_INF : TOML_VALUE_NAN;
                ret->negative = tok[0] == '-';
                return 0;
        }
        if (m >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) {
                if (sign)
                        return number_error(
                                p, start, tok, n,
                                "a sign is not allowed on hexadecimal, octal or binary integers");
                return parse_based_integer(p, start, tok, n, s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2, ret);
        }
        if (m == 0 || !toml_is_digit(s[0]))
                return number_error(p, start, tok, n, "not a number");
        return parse_decimal(p, start, tok, n, ret);
}

int toml_scan_scalar(TomlParser *p, TomlScalar *ret) {
        *ret = (TomlScalar) {};

        if (digits_at(p, 0, 4) && toml_peek(p, 4) == '-')
                return scan_datetime(p, ret);
        if (digits_at(p, 0, 2) && toml_peek(p, 2) == ':') {
                size_t start = p->pos;
                toml_buf_reset(&p->scratch);
                ret->type = TOML_VALUE_TIME_LOCAL;
                return scan_time(p, start);
        }
        return scan_number(p, ret);
}
