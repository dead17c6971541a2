/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Internals of the TOML parser, shared by toml-scan.c (the lexical layer: encoding checks,
 * positions, strings, keys, numbers, datetimes; no Lua) and toml.c (document structure and
 * the Lua values). Not an API: only toml.h is. */

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

/* A growable byte buffer that is always NUL-terminated once something was put in it. */
typedef struct TomlBuf {
        char *data;
        size_t len;
        size_t cap;
} TomlBuf;

/* One part of a dotted key; the bytes live in TomlParser.keybuf. */
typedef struct TomlKeyPart {
        size_t off;
        size_t len;
        size_t pos;             /* where the part starts in the document */
} TomlKeyPart;

typedef enum TomlValueType {
        TOML_VALUE_INTEGER,
        TOML_VALUE_FLOAT,       /* text in scratch, without '_', ready for lua_stringtonumber() */
        TOML_VALUE_INF,
        TOML_VALUE_NAN,
        TOML_VALUE_DATETIME,    /* normalized text in scratch */
        TOML_VALUE_DATETIME_LOCAL,
        TOML_VALUE_DATE_LOCAL,
        TOML_VALUE_TIME_LOCAL,
} TomlValueType;

typedef struct TomlScalar {
        TomlValueType type;
        int64_t integer;
        bool negative;          /* for inf and nan */
} TomlScalar;

typedef struct TomlParser {
        const char *data;
        size_t size;
        size_t pos;
        const char *name;

        /* Cache for toml_line_at(): line number of byte offset line_pos. */
        size_t line_pos;
        unsigned line;

        TomlBuf scratch;        /* the last decoded string, number or datetime */
        TomlBuf keybuf;         /* bytes of the parts of the last key */
        TomlKeyPart *parts;     /* the parts of the last key */
        size_t n_parts;
        size_t cap_parts;
        TomlBuf path;           /* dotted path of the current table, for messages */
        TomlBuf text;           /* scratch for formatting messages */

        char here[128];         /* toml_describe_here()'s result */
        char *error;            /* the formatted error message */
        int result;             /* set by the protected part of toml_parse() */

        lua_State *L;           /* only used by toml.c */
} TomlParser;

void toml_parser_done(TomlParser *p);

int toml_buf_put(TomlBuf *b, const void *s, size_t n);
int toml_buf_putc(TomlBuf *b, char c);
void toml_buf_reset(TomlBuf *b);
/* Appends a key part for a message: bare if it can be, else as a quoted basic string. */
int toml_buf_put_key(TomlBuf *b, const char *s, size_t n);

/* Position to 1-based line and column (columns count code points). */
unsigned toml_line_at(TomlParser *p, size_t pos);
unsigned toml_column_at(const TomlParser *p, size_t pos);

/* Records "NAME:LINE:COLUMN: message" for the byte offset pos. Returns -EINVAL, or -ENOMEM if
 * the message could not be allocated. */
int toml_error(TomlParser *p, size_t pos, const char *fmt, ...) _printf_(3, 4);

/* Checks the whole document: valid UTF-8, no control characters other than tab, LF and CR LF.
 * Skips a leading byte order mark. */
int toml_check_encoding(TomlParser *p);

static inline bool toml_eof(const TomlParser *p) {
        return p->pos >= p->size;
}
static inline int toml_peek(const TomlParser *p, size_t off) {
        return p->pos + off < p->size ? (unsigned char) p->data[p->pos + off] : -1;
}
static inline bool toml_is_digit(int c) {
        return c >= '0' && c <= '9';
}
static inline bool toml_is_bare_key_char(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || toml_is_digit(c) || c == '_' || c == '-';
}

void toml_skip_ws(TomlParser *p);
/* Skips spaces, tabs, comments and newlines (inside arrays). */
void toml_skip_ws_comments_newlines(TomlParser *p);
/* Skips a comment if there is one, not its newline. */
void toml_skip_comment(TomlParser *p);
bool toml_at_newline(const TomlParser *p);
/* Describes the character at pos for messages ("'x'", "end of line", "end of file"). */
const char *toml_describe_here(TomlParser *p);

/* Scans a string of any kind at pos into scratch. */
int toml_scan_string(TomlParser *p, bool allow_multiline);
/* Scans a (dotted) key into parts/keybuf; consumes the whitespace after it. */
int toml_scan_key(TomlParser *p);
/* Scans a number, datetime, inf or nan. */
int toml_scan_scalar(TomlParser *p, TomlScalar *ret);
