/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The structural half of the TOML parser: statements, headers, keys, arrays and inline tables,
 * and the Lua values they become. The lexical half is in toml-scan.c.
 *
 * All Lua work runs in parse_protected() under lua_pcall(). The C memory it uses (buffers,
 * the error message) lives in the TomlParser owned by toml_parse()'s frame and is freed there,
 * so a Lua error (out of memory) that unwinds the protected call leaks nothing. The functions
 * below therefore allocate C memory only into TomlParser fields. */

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/toml-internal.h"
#include "policy/toml.h"

/* What we know of each table and array we made, kept in a side table while parsing. */
enum {
        TABLE_IMPLICIT = 1 << 0,        /* created on the way to a [header]; may still be defined */
        TABLE_HEADER = 1 << 1,          /* defined by a [header], or an element of [[header]] */
        TABLE_DOTTED = 1 << 2,          /* created or extended by dotted keys; they may extend it more */
        TABLE_INLINE = 1 << 3,          /* an inline table: complete once closed */
        TABLE_ARRAY = 1 << 4,           /* an array */
        TABLE_ARRAY_OF_TABLES = 1 << 5, /* an array made by [[header]]; more may be appended */
};

/* Fixed stack slots of parse_protected(). */
enum {
        IDX_PARSER = 1,         /* light userdata: the TomlParser */
        IDX_TABLES,             /* userdata: the TableMap */
        IDX_LINE_LIST,          /* the line tables of this document, by TableInfo.lines */
        IDX_LINES,              /* the registry's weak table -> line table */
        IDX_ARRAY_MT,
        IDX_DATETIME_MT,
        IDX_ROOT,
        IDX_CURRENT,            /* the table the last header selected */
};

/* Free stack slots needed by one level of parsing (keys, values and their bookkeeping). */
#define STACK_PER_LEVEL 16

static int parse_value(TomlParser *p, unsigned depth);

/* ---- side tables ---- */

/* What we know of each table and array we made: its flags and its line table, found by the
 * table's address (tables do not move, and the document holds them all). An open-addressing
 * hash in a userdata, rather than Lua tables keyed by tables: each lookup and insertion is a
 * few instructions, not a Lua table operation (the parse of a small file made hundreds). Lua
 * memory: an allocation that fails raises a memory error as any other would. */
typedef struct TableInfo {
        const void *t;          /* NULL: a free slot */
        int flags;
        lua_Integer lines;      /* index of the table's line table in IDX_LINE_LIST */
} TableInfo;

typedef struct TableMap {
        size_t cap;             /* a power of two */
        size_t n;
        TableInfo e[];
} TableMap;

#define TABLE_MAP_INITIAL 32

static size_t table_slot(const TableMap *m, const void *t) {
        uint64_t h = (uint64_t) (uintptr_t) t * UINT64_C(0x9E3779B97F4A7C15);
        return (size_t) (h >> 32) & (m->cap - 1);
}

static TableMap *table_map(lua_State *L) {
        return lua_touserdata(L, IDX_TABLES);
}

static void push_table_map(lua_State *L, size_t cap) {
        TableMap *m = lua_newuserdatauv(L, sizeof(TableMap) + cap * sizeof(TableInfo), 0);
        m->cap = cap;
        m->n = 0;
        memset(m->e, 0, cap * sizeof(TableInfo));
}

static TableInfo *table_find(lua_State *L, const void *t) {
        TableMap *m = table_map(L);
        for (size_t i = table_slot(m, t);; i = (i + 1) & (m->cap - 1)) {
                if (m->e[i].t == t)
                        return &m->e[i];
                if (!m->e[i].t)
                        return NULL;
        }
}

static void table_insert(TableMap *m, TableInfo info) {
        size_t i = table_slot(m, info.t);
        while (m->e[i].t)
                i = (i + 1) & (m->cap - 1);
        m->e[i] = info;
        m->n++;
}

/* Adds a table: the map grows (a new userdata in IDX_TABLES) past half full. */
static void table_add(lua_State *L, const void *t, int flags, lua_Integer lines) {
        TableMap *m = table_map(L);
        if (2 * (m->n + 1) > m->cap) {
                push_table_map(L, 2 * m->cap);                  /* stack: new */
                TableMap *g = lua_touserdata(L, -1);
                for (size_t i = 0; i < m->cap; i++)
                        if (m->e[i].t)
                                table_insert(g, m->e[i]);
                lua_replace(L, IDX_TABLES);                     /* stack: */
                m = g;
        }
        table_insert(m, (TableInfo) { .t = t, .flags = flags, .lines = lines });
}

/* Returns the flags of the table or array at idx, or -1 if it is a value (datetimes included). */
static int table_flags(lua_State *L, int idx) {
        if (lua_type(L, idx) != LUA_TTABLE)
                return -1;
        TableInfo *i = table_find(L, lua_topointer(L, idx));
        return i ? i->flags : -1;
}

static void set_table_flags(lua_State *L, int idx, int flags) {
        TableInfo *i = table_find(L, lua_topointer(L, idx));
        if (i)
                i->flags = flags;
}

/* Pushes a new table (or array) known to the side tables, with its line table. */
static void push_new_table(lua_State *L, int flags) {
        lua_Integer lines = (lua_Integer) table_map(L)->n + 1;

        /* Sized for what a configuration file's tables and arrays usually hold, so that
         * filling them seldom rehashes (each growth from empty would: 1, 2, 4 slots). */
        if (flags & TABLE_ARRAY) {
                lua_createtable(L, 4, 0);               /* stack: t */
                lua_createtable(L, 4, 0);               /* stack: t lines */
        } else {
                lua_createtable(L, 0, 4);
                lua_createtable(L, 0, 4);
        }
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);                           /* stack: t lines t lines */
        lua_rawset(L, IDX_LINES);                       /* stack: t lines */
        lua_rawseti(L, IDX_LINE_LIST, lines);           /* stack: t */
        table_add(L, lua_topointer(L, -1), flags, lines);
        if (flags & TABLE_ARRAY) {
                lua_pushvalue(L, IDX_ARRAY_MT);
                lua_setmetatable(L, -2);
        }
}

/* Pushes the line table of the table at idx; returns false (pushing nil) if there is none. */
static bool push_line_table(lua_State *L, int idx) {
        TableInfo *i = lua_type(L, idx) == LUA_TTABLE ? table_find(L, lua_topointer(L, idx)) : NULL;
        if (!i) {
                lua_pushnil(L);
                return false;
        }
        lua_rawgeti(L, IDX_LINE_LIST, i->lines);
        return true;
}

/* Records that key kidx of the table at tidx was defined on line. */
static void record_line(lua_State *L, int tidx, int kidx, unsigned line) {
        kidx = lua_absindex(L, kidx);
        if (push_line_table(L, tidx)) {                 /* stack: lines */
                lua_pushvalue(L, kidx);
                lua_pushinteger(L, line);
                lua_rawset(L, -3);
        }
        lua_pop(L, 1);                                  /* stack: */
}

static void record_index_line(lua_State *L, int tidx, lua_Integer i, unsigned line) {
        if (push_line_table(L, tidx)) {                 /* stack: lines */
                lua_pushinteger(L, line);
                lua_rawseti(L, -2, i);
        }
        lua_pop(L, 1);                                  /* stack: */
}

/* The line key kidx of the table at tidx was defined on, 0 if unknown. */
static unsigned defined_line(lua_State *L, int tidx, int kidx) {
        unsigned line = 0;

        kidx = lua_absindex(L, kidx);
        if (push_line_table(L, tidx)) {                 /* stack: lines */
                lua_pushvalue(L, kidx);
                if (lua_rawget(L, -2) == LUA_TNUMBER)   /* stack: lines line */
                        line = (unsigned) lua_tointeger(L, -1);
                lua_pop(L, 1);
        }
        lua_pop(L, 1);                                  /* stack: */
        return line;
}

/* ---- keys and paths ---- */

static void push_part(TomlParser *p, size_t i) {
        lua_pushlstring(p->L, p->keybuf.data + p->parts[i].off, p->parts[i].len);
}

static const char *path_str(const TomlParser *p) {
        return p->path.data ?: "";
}

static int path_push_part(TomlParser *p, size_t i) {
        int r = 0;
        if (p->path.len > 0)
                r = toml_buf_putc(&p->path, '.');
        if (r >= 0)
                r = toml_buf_put_key(&p->path, p->keybuf.data + p->parts[i].off, p->parts[i].len);
        return r;
}

static void path_truncate(TomlParser *p, size_t len) {
        p->path.len = len;
        if (p->path.data)
                p->path.data[len] = 0;
}

/* The key just scanned, as written (normalized), for messages. */
static const char *key_text(TomlParser *p) {
        toml_buf_reset(&p->text);
        for (size_t i = 0; i < p->n_parts; i++)
                if ((i > 0 && toml_buf_putc(&p->text, '.') < 0) ||
                    toml_buf_put_key(&p->text, p->keybuf.data + p->parts[i].off, p->parts[i].len) < 0)
                        return "?";
        return p->text.data ?: "";
}

/* stack: t k v -> v */
static void replace_parent(lua_State *L) {
        lua_replace(L, -3);
        lua_pop(L, 1);
}

/* stack: t k -> t k child, where child is a new table stored as t[k]. */
static void create_child(lua_State *L, int flags, unsigned line) {
        push_new_table(L, flags);                       /* stack: t k child */
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_rawset(L, -5);
        record_line(L, -3, -2, line);
}

/* Pushes part i of the key and looks it up in the table on top. stack: t -> t k v */
static int lookup_part(TomlParser *p, size_t i) {
        lua_State *L = p->L;
        int r = path_push_part(p, i);
        if (r < 0)
                return r;
        push_part(p, i);
        lua_pushvalue(L, -1);
        return lua_rawget(L, -3);
}

/* Decides whether a walk may go on into the value v already at a key of its path; f is
 * table_flags() of v. Returns 0, with v replaced by the table to go into where that is another,
 * or the error. stack: t k v -> t k child */
typedef int (*DescendAccept)(TomlParser *p, size_t pos, int f, unsigned line);

/* Walks one part of a key path, the single walk of headers and of dotted keys: a missing key
 * gets a new table with flags; an existing value is for accept to allow. stack: t -> child */
static int descend(TomlParser *p, size_t i, unsigned line, int flags, DescendAccept accept) {
        lua_State *L = p->L;
        int r = lookup_part(p, i);                      /* stack: t k v */

        if (r < 0)
                return r;
        if (r == LUA_TNIL) {
                lua_pop(L, 1);
                create_child(L, flags, line);
        } else {
                r = accept(p, p->parts[i].pos, table_flags(L, -1), line);
                if (r < 0)
                        return r;
        }
        replace_parent(L);                              /* stack: child */
        return 0;
}

/* ---- table headers ---- */

/* An intermediate part of [a.b.c] or [[a.b.c]]. */
static int accept_header_part(TomlParser *p, size_t pos, int f, unsigned line) {
        lua_State *L = p->L;

        (void) line;
        if (f < 0)
                return toml_error(p, pos, "key '%s' is not a table (first defined at line %u)", path_str(p),
                                  defined_line(L, -3, -2));
        if ((f & TABLE_ARRAY) && !(f & TABLE_ARRAY_OF_TABLES))
                return toml_error(p, pos,
                                  "cannot extend array '%s' with a table header (first defined at line %u)",
                                  path_str(p), defined_line(L, -3, -2));
        if (f & TABLE_INLINE)
                return toml_error(p, pos, "cannot extend inline table '%s' (first defined at line %u)",
                                  path_str(p), defined_line(L, -3, -2));
        if (f & TABLE_ARRAY_OF_TABLES) {
                /* Headers below an array of tables go into its last element. */
                lua_rawgeti(L, -1, (lua_Integer) lua_rawlen(L, -1));    /* stack: t k array element */
                lua_replace(L, -2);                     /* stack: t k element */
        }
        return 0;
}

/* The last part of [a.b.c]. */
static int accept_header_table(TomlParser *p, size_t pos, int f, unsigned line) {
        lua_State *L = p->L;

        if (f == TABLE_IMPLICIT) {
                /* Only created on the way to some [a.b.c] so far: this defines it. */
                set_table_flags(L, -1, TABLE_HEADER);
                record_line(L, -3, -2, line);
                return 0;
        }
        unsigned first = defined_line(L, -3, -2);
        if (f < 0)
                return toml_error(p, pos, "cannot define table '%s': the key already holds a value "
                                  "(first defined at line %u)", path_str(p), first);
        if (f & TABLE_ARRAY)
                return toml_error(p, pos, "cannot define table '%s': the key already holds an array "
                                  "(first defined at line %u)", path_str(p), first);
        return toml_error(p, pos, "table '%s' is already defined (first defined at line %u)", path_str(p),
                          first);
}

/* The last part of [[a.b.c]]: only an array of tables may be appended to. */
static int accept_array_of_tables(TomlParser *p, size_t pos, int f, unsigned line) {
        (void) line;
        if (f < 0 || !(f & TABLE_ARRAY_OF_TABLES))
                return toml_error(p, pos, "cannot define array of tables '%s': the key is already defined "
                                  "(first defined at line %u)", path_str(p), defined_line(p->L, -3, -2));
        return 0;
}

/* The last part of [[a.b.c]]: appends a table. stack: t -> new element */
static int header_append_table(TomlParser *p, size_t i, unsigned line) {
        lua_State *L = p->L;
        int r = descend(p, i, line, TABLE_ARRAY | TABLE_ARRAY_OF_TABLES, accept_array_of_tables);

        if (r < 0)
                return r;
        lua_Integer n = (lua_Integer) lua_rawlen(L, -1) + 1;   /* stack: array */
        push_new_table(L, TABLE_HEADER);                /* stack: array element */
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, n);
        record_index_line(L, -2, n, line);
        lua_replace(L, -2);                             /* stack: element */
        return 0;
}

static int parse_header(TomlParser *p) {
        lua_State *L = p->L;
        size_t start = p->pos;
        bool array = toml_peek(p, 1) == '[';
        unsigned line = toml_line_at(p, start);
        int r;

        p->pos += array ? 2 : 1;
        toml_skip_ws(p);
        r = toml_scan_key(p);
        if (r < 0)
                return r;
        if (toml_peek(p, 0) != ']' || (array && toml_peek(p, 1) != ']'))
                return toml_error(p, p->pos, "expected '%s' after table name '%s', found %s",
                                  array ? "]]" : "]", key_text(p), toml_describe_here(p));
        p->pos += array ? 2 : 1;

        path_truncate(p, 0);
        lua_pushvalue(L, IDX_ROOT);                     /* stack: root */
        for (size_t i = 0; i + 1 < p->n_parts; i++) {
                r = descend(p, i, line, TABLE_IMPLICIT, accept_header_part);
                if (r < 0)
                        return r;
        }
        if (array)
                r = header_append_table(p, p->n_parts - 1, line);
        else
                r = descend(p, p->n_parts - 1, line, TABLE_HEADER, accept_header_table);
        if (r < 0)
                return r;
        lua_replace(L, IDX_CURRENT);                    /* stack: */
        return 0;
}

/* ---- key/value pairs ---- */

/* An intermediate part of a.b.c = v. */
static int accept_dotted_part(TomlParser *p, size_t pos, int f, unsigned line) {
        lua_State *L = p->L;

        (void) line;
        if (f == TABLE_IMPLICIT || f == TABLE_DOTTED) {
                /* A table only created on the way to a [header] is now defined by dotted keys:
                 * later headers cannot define it any more, but may still go through it. */
                if (f == TABLE_IMPLICIT)
                        set_table_flags(L, -1, TABLE_DOTTED);
                return 0;
        }
        unsigned first = defined_line(L, -3, -2);
        if (f < 0)
                return toml_error(p, pos, "key '%s' is not a table (first defined at line %u)", path_str(p),
                                  first);
        if (f & TABLE_ARRAY)
                return toml_error(
                        p, pos, "cannot add keys to array '%s' with dotted keys (first defined at line %u)",
                        path_str(p), first);
        if (f & TABLE_INLINE)
                return toml_error(p, pos, "cannot extend inline table '%s' (first defined at line %u)",
                                  path_str(p), first);
        return toml_error(p, pos, "cannot add keys to table '%s' with dotted keys: it is defined by a table "
                          "header (line %u)", path_str(p), first);
}

/* key = value, stored into the table at tidx. */
static int parse_keyval(TomlParser *p, int tidx, unsigned depth) {
        lua_State *L = p->L;
        size_t path_len = p->path.len;
        int r;

        r = toml_scan_key(p);
        if (r < 0)
                return r;
        if (toml_peek(p, 0) != '=')
                return toml_error(p, p->pos, "expected '=' after key '%s', found %s", key_text(p),
                                  toml_describe_here(p));
        p->pos++;
        toml_skip_ws(p);

        size_t last = p->n_parts - 1, pos = p->parts[last].pos;
        unsigned line = toml_line_at(p, p->parts[0].pos);

        lua_pushvalue(L, tidx);                         /* stack: t */
        for (size_t i = 0; i < last; i++) {
                r = descend(p, i, line, TABLE_DOTTED, accept_dotted_part);
                if (r < 0)
                        return r;
        }
        r = lookup_part(p, last);                       /* stack: t k v */
        if (r < 0)
                return r;
        if (r != LUA_TNIL)
                return toml_error(p, pos, "duplicate key '%s' (first defined at line %u)", path_str(p),
                                  defined_line(L, -3, -2));
        lua_pop(L, 1);                                  /* stack: t k */

        r = parse_value(p, depth);                      /* stack: t k v */
        if (r < 0)
                return r;
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_rawset(L, -5);
        record_line(L, -3, -2, line);
        lua_pop(L, 3);                                  /* stack: */
        path_truncate(p, path_len);
        return 0;
}

/* ---- values ---- */

static int check_depth(TomlParser *p, unsigned depth) {
        if (depth > TOML_MAX_DEPTH)
                return toml_error(p, p->pos, "arrays and inline tables are nested too deeply (maximum %u)",
                                  TOML_MAX_DEPTH);
        if (!lua_checkstack(p->L, STACK_PER_LEVEL))
                return -ENOMEM;
        return 0;
}

static int parse_array(TomlParser *p, unsigned depth) {
        lua_State *L = p->L;
        size_t start = p->pos;
        int r = check_depth(p, depth);

        if (r < 0)
                return r;
        p->pos++;
        push_new_table(L, TABLE_ARRAY);                 /* stack: a */
        for (lua_Integer n = 1;; n++) {
                toml_skip_ws_comments_newlines(p);
                if (toml_peek(p, 0) == ']')
                        break;
                if (toml_eof(p))
                        return toml_error(p, start, "unterminated array (missing ']')");

                unsigned line = toml_line_at(p, p->pos);
                r = parse_value(p, depth);              /* stack: a v */
                if (r < 0)
                        return r;
                lua_rawseti(L, -2, n);                  /* stack: a */
                record_index_line(L, -1, n, line);

                toml_skip_ws_comments_newlines(p);
                if (toml_peek(p, 0) == ']')
                        break;
                if (toml_eof(p))
                        return toml_error(p, start, "unterminated array (missing ']')");
                if (toml_peek(p, 0) != ',')
                        return toml_error(p, p->pos, "expected ',' or ']' after array element, found %s",
                                          toml_describe_here(p));
                p->pos++;
        }
        p->pos++;
        return 0;
}

static int parse_inline_table(TomlParser *p, unsigned depth) {
        lua_State *L = p->L;
        size_t start = p->pos;
        int r = check_depth(p, depth);

        if (r < 0)
                return r;
        p->pos++;
        push_new_table(L, TABLE_INLINE);                /* stack: t */
        int tidx = lua_gettop(L);

        toml_skip_ws(p);
        if (toml_peek(p, 0) == '}') {
                p->pos++;
                return 0;
        }
        for (;;) {
                if (toml_eof(p))
                        return toml_error(p, start, "unterminated inline table (missing '}')");
                if (toml_at_newline(p))
                        return toml_error(p, p->pos, "newlines are not allowed in inline tables");
                r = parse_keyval(p, tidx, depth);
                if (r < 0)
                        return r;

                toml_skip_ws(p);
                if (toml_peek(p, 0) == '}') {
                        p->pos++;
                        return 0;
                }
                if (toml_eof(p))
                        return toml_error(p, start, "unterminated inline table (missing '}')");
                if (toml_at_newline(p))
                        return toml_error(p, p->pos, "newlines are not allowed in inline tables");
                if (toml_peek(p, 0) != ',')
                        return toml_error(p, p->pos, "expected ',' or '}' in inline table, found %s",
                                          toml_describe_here(p));
                size_t comma = p->pos++;
                toml_skip_ws(p);
                if (toml_peek(p, 0) == '}')
                        return toml_error(p, comma, "trailing comma not allowed in inline table");
        }
}

static int l_datetime_tostring(lua_State *L) {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_pushliteral(L, "value");
        if (lua_rawget(L, 1) != LUA_TSTRING)
                lua_pushliteral(L, "<invalid datetime>");
        return 1;
}

static void push_datetime(TomlParser *p, const char *kind) {
        lua_State *L = p->L;

        lua_createtable(L, 0, 2);                       /* stack: dt */
        lua_pushstring(L, kind);
        lua_setfield(L, -2, "kind");
        lua_pushlstring(L, p->scratch.data, p->scratch.len);
        lua_setfield(L, -2, "value");
        lua_pushvalue(L, IDX_DATETIME_MT);
        lua_setmetatable(L, -2);
}

static int parse_scalar(TomlParser *p) {
        lua_State *L = p->L;
        size_t start = p->pos;
        TomlScalar v;
        int r = toml_scan_scalar(p, &v);

        if (r < 0)
                return r;
        switch (v.type) {
        case TOML_VALUE_INTEGER:
                lua_pushinteger(L, (lua_Integer) v.integer);
                return 0;
        case TOML_VALUE_FLOAT:
                if (lua_stringtonumber(L, p->scratch.data) == 0)
                        return toml_error(p, start, "invalid floating point number");
                return 0;
        case TOML_VALUE_INF:
                lua_pushnumber(L, v.negative ? -HUGE_VAL : HUGE_VAL);
                return 0;
        case TOML_VALUE_NAN:
                lua_pushnumber(L, v.negative ? -NAN : NAN);
                return 0;
        case TOML_VALUE_DATETIME:
                push_datetime(p, "datetime");
                return 0;
        case TOML_VALUE_DATETIME_LOCAL:
                push_datetime(p, "datetime-local");
                return 0;
        case TOML_VALUE_DATE_LOCAL:
                push_datetime(p, "date-local");
                return 0;
        case TOML_VALUE_TIME_LOCAL:
                push_datetime(p, "time-local");
                return 0;
        }
        return -EINVAL;
}

/* Whether the bare word at pos is exactly word. */
static bool at_word(const TomlParser *p, const char *word) {
        size_t n = strlen(word);
        return p->size - p->pos >= n && memcmp(p->data + p->pos, word, n) == 0 &&
                !toml_is_bare_key_char(toml_peek(p, n));
}

/* Parses one value and pushes it. */
static int parse_value(TomlParser *p, unsigned depth) {
        int c = toml_peek(p, 0);
        int r;

        switch (c) {
        case '"':
        case '\'':
                r = toml_scan_string(p, /* allow_multiline= */ true);
                if (r < 0)
                        return r;
                lua_pushlstring(p->L, p->scratch.data, p->scratch.len);
                return 0;
        case '[':
                return parse_array(p, depth + 1);
        case '{':
                return parse_inline_table(p, depth + 1);
        case 't':
        case 'f':
                if (at_word(p, c == 't' ? "true" : "false")) {
                        lua_pushboolean(p->L, c == 't');
                        p->pos += c == 't' ? 4 : 5;
                        return 0;
                }
                break;
        case '+':
        case '-':
        case 'i':
        case 'n':
                return parse_scalar(p);
        default:
                if (toml_is_digit(c))
                        return parse_scalar(p);
        }
        return toml_error(p, p->pos, "expected a value, found %s", toml_describe_here(p));
}

/* ---- document ---- */

static int parse_document(TomlParser *p) {
        for (;;) {
                const char *what;
                int r;

                toml_skip_ws(p);
                toml_skip_comment(p);
                if (toml_eof(p))
                        return 0;
                if (toml_at_newline(p)) {
                        p->pos += toml_peek(p, 0) == '\r' ? 2 : 1;
                        continue;
                }

                if (toml_peek(p, 0) == '[') {
                        r = parse_header(p);
                        what = "table header";
                } else {
                        r = parse_keyval(p, IDX_CURRENT, 0);
                        what = "value";
                }
                if (r < 0)
                        return r;

                toml_skip_ws(p);
                toml_skip_comment(p);
                if (!toml_eof(p) && !toml_at_newline(p))
                        return toml_error(p, p->pos, "expected end of line after %s, found %s", what,
                                          toml_describe_here(p));
        }
}

static bool has_metatable(lua_State *L, int idx, const char *name) {
        bool r = false;
        if (lua_type(L, idx) == LUA_TTABLE && lua_getmetatable(L, idx)) {      /* stack: mt */
                luaL_getmetatable(L, name);                                     /* stack: mt named */
                r = lua_rawequal(L, -1, -2);
                lua_pop(L, 2);
        }
        return r;
}

bool toml_is_array(lua_State *L, int idx) {
        return has_metatable(L, idx, TOML_ARRAY_METATABLE);
}

bool toml_is_datetime(lua_State *L, int idx) {
        return has_metatable(L, idx, TOML_DATETIME_METATABLE);
}

static void push_lines_registry(lua_State *L) {
        if (luaL_getsubtable(L, LUA_REGISTRYINDEX, TOML_LINES_KEY))
                return;
        lua_createtable(L, 0, 1);                       /* stack: lines mt */
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);                        /* stack: lines */
}

static void push_datetime_metatable(lua_State *L) {
        if (!luaL_newmetatable(L, TOML_DATETIME_METATABLE))
                return;
        lua_pushcfunction(L, l_datetime_tostring);
        lua_setfield(L, -2, "__tostring");
}

/* lua_CFunction run under lua_pcall(): returns the document table, or nothing with p->result set. */
static int parse_protected(lua_State *L) {
        TomlParser *p = lua_touserdata(L, IDX_PARSER);
        int r;

        if (!lua_checkstack(L, IDX_CURRENT + STACK_PER_LEVEL)) {
                p->result = -ENOMEM;
                return 0;
        }
        lua_settop(L, IDX_PARSER);
        push_table_map(L, TABLE_MAP_INITIAL);           /* IDX_TABLES */
        lua_newtable(L);                                /* IDX_LINE_LIST */
        push_lines_registry(L);                         /* IDX_LINES */
        luaL_newmetatable(L, TOML_ARRAY_METATABLE);     /* IDX_ARRAY_MT */
        push_datetime_metatable(L);                     /* IDX_DATETIME_MT */
        push_new_table(L, TABLE_HEADER);                /* IDX_ROOT */
        lua_pushvalue(L, IDX_ROOT);                     /* IDX_CURRENT */

        r = toml_check_encoding(p);
        if (r >= 0)
                r = parse_document(p);
        if (r < 0) {
                p->result = r;
                return 0;
        }
        lua_pushvalue(L, IDX_ROOT);
        return 1;
}

int toml_parse(lua_State *L, const char *data, size_t size, const char *name, char **ret_error) {
        _cleanup_(toml_parser_done) TomlParser p = {
                .data = data ?: "",
                .size = size,
                .name = name ?: "<input>",
                .line = 1,
                .L = L,
        };
        char *message = NULL;
        int r;

        if (size > TOML_MAX_SIZE) {
                if (asprintf(&message, "%s: document too large (%zu bytes, the maximum is %u)",
                             p.name, size, TOML_MAX_SIZE) < 0)
                        message = NULL;
                r = -EFBIG;
        } else if (!lua_checkstack(L, 3))
                r = -ENOMEM;
        else {
                lua_pushcfunction(L, parse_protected);
                lua_pushlightuserdata(L, &p);
                int status = lua_pcall(L, 1, 1, 0);
                if (status == LUA_OK && p.result == 0)
                        return 0;

                if (status == LUA_OK) {
                        r = p.result;
                        message = r == -EINVAL ? TAKE_PTR(p.error) : NULL;
                } else if (status == LUA_ERRMEM)
                        r = -ENOMEM;
                else {
                        r = -EIO;
                        /* No conversions here: we are not protected any more. */
                        if (lua_type(L, -1) != LUA_TSTRING ||
                            asprintf(&message, "%s: %s", p.name, lua_tostring(L, -1)) < 0)
                                message = NULL;
                }
                lua_pop(L, 1);
        }

        if (ret_error)
                *ret_error = message;
        else
                free(message);
        return r;
}

void toml_push_lines(lua_State *L, int idx) {
        idx = lua_absindex(L, idx);
        if (lua_getfield(L, LUA_REGISTRYINDEX, TOML_LINES_KEY) != LUA_TTABLE) {
                lua_pop(L, 1);
                lua_pushnil(L);
                return;
        }
        lua_pushvalue(L, idx);
        lua_rawget(L, -2);                              /* stack: registry-lines lines */
        lua_remove(L, -2);
}
