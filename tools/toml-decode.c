/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* toml-decode: the decoder the toml-test suite drives. Reads a TOML document on stdin, parses it
 * with toml_parse() and prints it as the suite's "tagged JSON" on stdout. Exits 0 on success,
 * 1 with the parser's message on stderr when the document is invalid. */

#include <errno.h>
#include <inttypes.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/toml.h"
#include "util/macro.h"

static void lua_closep(lua_State **L) {
        if (*L)
                lua_close(*L);
}

/* Reads all of stdin, at most one byte more than the parser accepts. */
static int read_stdin(char **ret, size_t *ret_size) {
        size_t cap = TOML_MAX_SIZE + 2, n = 0;
        _cleanup_free_ char *buf = malloc(cap);

        if (!buf)
                return -ENOMEM;
        while (n < cap - 1) {
                size_t k = fread(buf + n, 1, cap - 1 - n, stdin);
                if (k == 0)
                        break;
                n += k;
        }
        if (ferror(stdin))
                return -EIO;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

static void print_string(FILE *f, const char *s, size_t n) {
        fputc('"', f);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = s[i];
                switch (c) {
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                case '\r':
                        fputs("\\r", f);
                        break;
                default:
                        if (c < 0x20 || c == 0x7f)
                                fprintf(f, "\\u%04x", c);
                        else
                                fputc(c, f);
                }
        }
        fputc('"', f);
}

static void print_tagged(FILE *f, const char *type, const char *value) {
        fprintf(f, "{\"type\":\"%s\",\"value\":", type);
        print_string(f, value, strlen(value));
        fputc('}', f);
}

static void print_number(FILE *f, lua_State *L, int idx) {
        char buf[64];

        if (lua_isinteger(L, idx)) {
                snprintf(buf, sizeof(buf), "%" PRId64, (int64_t) lua_tointeger(L, idx));
                print_tagged(f, "integer", buf);
                return;
        }
        double d = lua_tonumber(L, idx);
        if (isnan(d))
                snprintf(buf, sizeof(buf), "nan");
        else if (isinf(d))
                snprintf(buf, sizeof(buf), "%sinf", d < 0 ? "-" : "");
        else
                snprintf(buf, sizeof(buf), "%.17g", d);
        print_tagged(f, "float", buf);
}

static void print_value(FILE *f, lua_State *L, int idx);

static void print_array(FILE *f, lua_State *L, int idx) {
        lua_Integer n = (lua_Integer) lua_rawlen(L, idx);

        fputc('[', f);
        for (lua_Integer i = 1; i <= n; i++) {
                if (i > 1)
                        fputc(',', f);
                lua_rawgeti(L, idx, i);
                print_value(f, L, lua_gettop(L));
                lua_pop(L, 1);
        }
        fputc(']', f);
}

static void print_datetime(FILE *f, lua_State *L, int idx) {
        lua_getfield(L, idx, "kind");
        lua_getfield(L, idx, "value");
        print_tagged(f, lua_tostring(L, -2), lua_tostring(L, -1));
        lua_pop(L, 2);
}

static void print_table(FILE *f, lua_State *L, int idx) {
        bool first = true;

        fputc('{', f);
        lua_pushnil(L);
        while (lua_next(L, idx)) {                      /* stack: key value */
                size_t n;
                const char *k = lua_tolstring(L, -2, &n); /* keys are always strings */

                if (!first)
                        fputc(',', f);
                first = false;
                print_string(f, k, n);
                fputc(':', f);
                print_value(f, L, lua_gettop(L));
                lua_pop(L, 1);
        }
        fputc('}', f);
}

static void print_value(FILE *f, lua_State *L, int idx) {
        luaL_checkstack(L, 8, NULL);
        switch (lua_type(L, idx)) {
        case LUA_TSTRING: {
                size_t n;
                const char *s = lua_tolstring(L, idx, &n);
                fputs("{\"type\":\"string\",\"value\":", f);
                print_string(f, s, n);
                fputc('}', f);
                break;
        }
        case LUA_TBOOLEAN:
                print_tagged(f, "bool", lua_toboolean(L, idx) ? "true" : "false");
                break;
        case LUA_TNUMBER:
                print_number(f, L, idx);
                break;
        case LUA_TTABLE:
                if (toml_is_array(L, idx))
                        print_array(f, L, idx);
                else if (toml_is_datetime(L, idx))
                        print_datetime(f, L, idx);
                else
                        print_table(f, L, idx);
                break;
        default:
                fputs("null", f);
        }
}

static int l_print_document(lua_State *L) {
        print_value(stdout, L, 1);
        fputc('\n', stdout);
        return 0;
}

int main(void) {
        _cleanup_(lua_closep) lua_State *L = NULL;
        _cleanup_free_ char *data = NULL, *error = NULL;
        size_t size;
        int r;

        r = read_stdin(&data, &size);
        if (r < 0) {
                fprintf(stderr, "toml-decode: failed to read stdin: %s\n", strerror(-r));
                return 1;
        }
        L = luaL_newstate();
        if (!L) {
                fprintf(stderr, "toml-decode: out of memory\n");
                return 1;
        }

        r = toml_parse(L, data, size, "<stdin>", &error);
        if (r < 0) {
                fprintf(stderr, "%s\n", error ?: strerror(-r));
                return 1;
        }
        /* stack: document */
        lua_pushcfunction(L, l_print_document);
        lua_insert(L, -2);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
                fprintf(stderr, "toml-decode: %s\n",
                        lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "Lua error");
                return 1;
        }
        if (fflush(stdout) != 0) {
                fprintf(stderr, "toml-decode: failed to write stdout: %m\n");
                return 1;
        }
        return 0;
}
