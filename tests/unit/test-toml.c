/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* Unit tests of the TOML parser: messages with their positions, the Lua value mapping, line
 * origins, the size cap and behaviour under a capped Lua allocator. */

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/toml.h"
#include "tests/lua-budget.h"
#include "tap.h"
#include "util/macro.h"

static void lua_closep(lua_State **L) {
        if (*L)
                lua_close(*L);
}

static int parse_str(lua_State *L, const char *doc, char **ret_error) {
        return toml_parse(L, doc, strlen(doc), "test.toml", ret_error);
}

/* Parses doc, expecting -EINVAL with exactly the message expected and nothing pushed. */
static void check_error(lua_State *L, const char *doc, size_t size, const char *expected) {
        _cleanup_free_ char *error = NULL;
        int top = lua_gettop(L);
        int r = toml_parse(L, doc, size, "test.toml", &error);

        TAP_CHECK(r == -EINVAL && lua_gettop(L) == top, "rejected (%s)", expected);
        TAP_STREQ(error, expected, "message: %s", expected);
}

static void test_errors(lua_State *L) {
#define CHECK_ERROR(doc, expected) check_error(L, doc, sizeof(doc) - 1, expected)
        CHECK_ERROR("a = 1\nfoo 1\n", "test.toml:2:5: expected '=' after key 'foo', found '1'");
        CHECK_ERROR("[server]\n\"my key\".x\n",
                    "test.toml:2:11: expected '=' after key '\"my key\".x', found end of line");
        CHECK_ERROR("a = 1\nb = \"abc\nc = 2\n",
                    "test.toml:2:5: unterminated string (missing closing '\"')");
        CHECK_ERROR("s = '''\nabc\n",
                    "test.toml:1:5: unterminated multi-line string (missing closing \"'''\")");
        CHECK_ERROR("a.b = 1\n\na.b = 2\n", "test.toml:3:3: duplicate key 'a.b' (first defined at line 1)");
        CHECK_ERROR("[srv]\nport = 1\nport = 2\n",
                    "test.toml:3:1: duplicate key 'srv.port' (first defined at line 2)");
        CHECK_ERROR("x = { y = 1, y = 2 }\n",
                    "test.toml:1:14: duplicate key 'x.y' (first defined at line 1)");
        CHECK_ERROR("[t]\nx = 1\n[t]\n",
                    "test.toml:3:2: table 't' is already defined (first defined at line 1)");
        CHECK_ERROR("[a.b]\n[a]\n[a.b]\n",
                    "test.toml:3:4: table 'a.b' is already defined (first defined at line 1)");
        CHECK_ERROR("a = {}\n[a.b]\n",
                    "test.toml:2:2: cannot extend inline table 'a' (first defined at line 1)");
        /* Each way a header or dotted key walk refuses an existing key, with its own message. */
        CHECK_ERROR("a = 1\n[a.b]\n", "test.toml:2:2: key 'a' is not a table (first defined at line 1)");
        CHECK_ERROR("a = [1]\n[a.b]\n",
                    "test.toml:2:2: cannot extend array 'a' with a table header (first defined at line 1)");
        CHECK_ERROR("[[a]]\n[[a]]\n[a.b]\n[a.b]\n",
                    "test.toml:4:4: table 'a.b' is already defined (first defined at line 3)");
        CHECK_ERROR("a = 1\n[a]\n", "test.toml:2:2: cannot define table 'a': the key already holds a value "
                                    "(first defined at line 1)");
        CHECK_ERROR("[[a]]\n[a]\n", "test.toml:2:2: cannot define table 'a': the key already holds an array "
                                    "(first defined at line 1)");
        CHECK_ERROR("[a.b]\n\n[a]\n[a]\n",
                    "test.toml:4:2: table 'a' is already defined (first defined at line 3)");
        CHECK_ERROR("a.b = 1\n[a]\n",
                    "test.toml:2:2: table 'a' is already defined (first defined at line 1)");
        CHECK_ERROR("[a.b.c]\n[a]\nb.d = 1\n[a.b]\n",
                    "test.toml:4:4: table 'a.b' is already defined (first defined at line 1)");
        CHECK_ERROR("a = 1\n[[a]]\n", "test.toml:2:3: cannot define array of tables 'a': the key is already "
                                      "defined (first defined at line 1)");
        CHECK_ERROR("[a]\n[[a]]\n", "test.toml:2:3: cannot define array of tables 'a': the key is already "
                                    "defined (first defined at line 1)");
        CHECK_ERROR("a = 1\na.b = 2\n", "test.toml:2:1: key 'a' is not a table (first defined at line 1)");
        CHECK_ERROR(
                "a = [1]\na.b = 2\n",
                "test.toml:2:1: cannot add keys to array 'a' with dotted keys (first defined at line 1)");
        CHECK_ERROR("a = {}\na.b = 1\n",
                    "test.toml:2:1: cannot extend inline table 'a' (first defined at line 1)");
        CHECK_ERROR("[x.a]\n[x]\na.b = 1\n", "test.toml:3:1: cannot add keys to table 'x.a' with dotted "
                                             "keys: it is defined by a table header (line 1)");
        CHECK_ERROR("a = \"x\\qy\"\n", "test.toml:1:7: invalid escape sequence '\\q'");
        CHECK_ERROR("a = \"\\uD800\"\n",
                    "test.toml:1:6: escape sequence '\\uD800' is not a Unicode scalar value");
        CHECK_ERROR("# h\xc3\xa9\n# \xc3\xa9\xff\n", "test.toml:2:4: invalid UTF-8 (byte 0xFF)");
        CHECK_ERROR("a = \"\xc3\x28\"\n",
                    "test.toml:1:6: invalid UTF-8 (byte 0xC3 starts a broken sequence)");
        CHECK_ERROR("a = \"\xed\xa0\x80\"\n",
                    "test.toml:1:6: invalid UTF-8 (byte 0xED starts a broken sequence)");
        CHECK_ERROR("a = 1\rb = 2\n", "test.toml:1:6: carriage return not followed by a line feed");
        CHECK_ERROR("a = \"\x01\"\n", "test.toml:1:6: control character U+0001 is not allowed here");
        CHECK_ERROR("n = 9223372036854775808\n",
                    "test.toml:1:5: integer '9223372036854775808' does not fit in 64 bits");
        CHECK_ERROR("n = -9223372036854775809\n",
                    "test.toml:1:5: integer '-9223372036854775809' does not fit in 64 bits");
        CHECK_ERROR("n = 0x8000000000000000\n",
                    "test.toml:1:5: integer '0x8000000000000000' does not fit in 64 bits");
        CHECK_ERROR("n = 012\n", "test.toml:1:5: invalid number '012': leading zeros are not allowed");
        CHECK_ERROR(
                "n = 1__2\n",
                "test.toml:1:5: invalid number '1__2': expected digits, with '_' only between two digits");
        CHECK_ERROR("n = +0x10\n", "test.toml:1:5: invalid number '+0x10': a sign is not allowed on "
                                   "hexadecimal, octal or binary integers");
        CHECK_ERROR("d = 1900-02-29\n", "test.toml:1:5: invalid date: day 29 is not in 01-28 for 1900-02");
        CHECK_ERROR("t = 24:00:00\n", "test.toml:1:5: invalid time: 24:00:00 is out of range");
        CHECK_ERROR("a = [1, 2\n", "test.toml:1:5: unterminated array (missing ']')");
        CHECK_ERROR("a = [1 2]\n", "test.toml:1:8: expected ',' or ']' after array element, found '2'");
        CHECK_ERROR("a = {b = 1,}\n", "test.toml:1:11: trailing comma not allowed in inline table");
        CHECK_ERROR("a = {b = 1\n}\n", "test.toml:1:11: newlines are not allowed in inline tables");
        CHECK_ERROR("a = 1 b = 2\n", "test.toml:1:7: expected end of line after value, found 'b'");
        CHECK_ERROR("a = truex\n", "test.toml:1:5: expected a value, found 'truex'");
        CHECK_ERROR("a = \n", "test.toml:1:5: expected a value, found end of line");
        CHECK_ERROR("[a\n", "test.toml:1:3: expected ']' after table name 'a', found end of line");
        /* Columns count characters, not bytes. */
        CHECK_ERROR("s = \"\xc3\xa9\xc3\xa9\" x\n",
                    "test.toml:1:10: expected end of line after value, found 'x'");
#undef CHECK_ERROR
}

static void test_error_details(lua_State *L) {
        _cleanup_free_ char *error = NULL;
        char deep[4 + 2 * 129 + 2];
        int top = lua_gettop(L);
        int r;

        /* 128 nested arrays are fine, the 129th is refused. */
        memcpy(deep, "a = ", 4);
        memset(deep + 4, '[', 129);
        memset(deep + 4 + 129, ']', 129);
        deep[4 + 2 * 129] = '\n';
        check_error(L, deep, 4 + 2 * 129 + 1,
                    "test.toml:1:133: arrays and inline tables are nested too deeply (maximum 128)");
        deep[4] = ' ';
        deep[4 + 2 * 129 - 1] = ' ';
        r = toml_parse(L, deep, 4 + 2 * 129 + 1, "test.toml", NULL);
        TAP_CHECK(r == 0, "128 nested arrays are accepted");
        lua_settop(L, top);

        r = toml_parse(L, "= 1", 3, NULL, &error);
        TAP_CHECK(r == -EINVAL, "error without a name");
        TAP_STREQ(error, "<input>:1:1: expected a key, found '='", "NULL name is <input>");

        r = toml_parse(L, "= 1", 3, "x", NULL);
        TAP_CHECK(r == -EINVAL && lua_gettop(L) == top, "ret_error may be NULL");
}

static void test_size_cap(lua_State *L) {
        _cleanup_free_ char *big = malloc(TOML_MAX_SIZE + 1), *error = NULL;
        int top = lua_gettop(L);
        int r;

        if (!big)
                abort();
        /* One comment filling exactly TOML_MAX_SIZE bytes. */
        memset(big, 'x', TOML_MAX_SIZE + 1);
        big[0] = '#';
        r = toml_parse(L, big, TOML_MAX_SIZE, "big.toml", &error);
        TAP_CHECK(r == 0 && lua_gettop(L) == top + 1, "a document of TOML_MAX_SIZE bytes is accepted");
        lua_settop(L, top);

        r = toml_parse(L, big, TOML_MAX_SIZE + 1, "big.toml", &error);
        TAP_CHECK(r == -EFBIG && lua_gettop(L) == top, "a larger document is refused with -EFBIG");
        TAP_STREQ(error, "big.toml: document too large (1048577 bytes, the maximum is 1048576)",
                  "-EFBIG message");
}

/* Pushes root[key]; root at idx. */
static int get(lua_State *L, int idx, const char *key) {
        return lua_getfield(L, idx, key);
}

static void check_datetime(lua_State *L, int root, const char *key, const char *kind, const char *value) {
        get(L, root, key);
        TAP_CHECK(toml_is_datetime(L, -1), "%s has the datetime metatable", key);
        get(L, -1, "kind");
        TAP_STREQ(lua_tostring(L, -1), kind, "%s kind", key);
        lua_pop(L, 1);
        get(L, -1, "value");
        TAP_STREQ(lua_tostring(L, -1), value, "%s value", key);
        lua_pop(L, 1);
        TAP_STREQ(luaL_tolstring(L, -1, NULL), value, "%s __tostring", key);
        lua_pop(L, 2);
}

static void test_values(lua_State *L) {
        static const char doc[] =
                "i = 42\n"
                "h = 0xff\n"
                "f = 1.0\n"
                "e = 1e2\n"
                "pinf = +inf\n"
                "ninf = -inf\n"
                "nan = nan\n"
                "b = true\n"
                "s = \"a\\u0000b\\U0001F600\"\n"
                "ml = \"\"\"\nx \\\n   y\"\"\"\n"
                "empty_array = []\n"
                "empty_table = {}\n"
                "arr = [1, \"two\", [3]]\n"
                "odt = 1979-05-27 07:32:00z\n"
                "ldt = 1979-05-27t07:32:00.999\n"
                "ld = 2000-02-29\n"
                "lt = 23:59:60\n"
                "[[aot]]\n"
                "x = 1\n"
                "[[aot]]\n";
        _cleanup_free_ char *error = NULL;
        int r = parse_str(L, doc, &error);

        TAP_CHECK(r == 0, "value document parses (%s)", strempty(error));
        if (r < 0)
                return;
        int root = lua_gettop(L);

        TAP_CHECK(lua_getmetatable(L, root) == 0, "the root table has no metatable");

        get(L, root, "i");
        TAP_CHECK(lua_isinteger(L, -1) && lua_tointeger(L, -1) == 42, "integer is a Lua integer");
        get(L, root, "h");
        TAP_CHECK(lua_isinteger(L, -1) && lua_tointeger(L, -1) == 255, "hex integer");
        get(L, root, "f");
        TAP_CHECK(lua_type(L, -1) == LUA_TNUMBER && !lua_isinteger(L, -1) && lua_tonumber(L, -1) == 1.0,
                  "1.0 is a Lua float");
        get(L, root, "e");
        TAP_CHECK(!lua_isinteger(L, -1) && lua_tonumber(L, -1) == 100.0, "1e2 is a Lua float");
        get(L, root, "pinf");
        TAP_CHECK(isinf(lua_tonumber(L, -1)) && lua_tonumber(L, -1) > 0, "+inf");
        get(L, root, "ninf");
        TAP_CHECK(isinf(lua_tonumber(L, -1)) && lua_tonumber(L, -1) < 0, "-inf");
        get(L, root, "nan");
        TAP_CHECK(isnan(lua_tonumber(L, -1)), "nan");
        get(L, root, "b");
        TAP_CHECK(lua_type(L, -1) == LUA_TBOOLEAN && lua_toboolean(L, -1), "boolean");
        lua_settop(L, root);

        size_t n;
        get(L, root, "s");
        const char *s = lua_tolstring(L, -1, &n);
        TAP_CHECK(n == 7 && memcmp(s, "a\0b\xF0\x9F\x98\x80", 7) == 0, "escapes incl. \\u0000 and \\U");
        get(L, root, "ml");
        TAP_STREQ(lua_tostring(L, -1), "x y", "multi-line string with a line-ending backslash");
        lua_settop(L, root);

        get(L, root, "empty_array");
        TAP_CHECK(lua_type(L, -1) == LUA_TTABLE && toml_is_array(L, -1) &&
                  lua_rawlen(L, -1) == 0, "empty array has the array metatable");
        get(L, root, "empty_table");
        TAP_CHECK(lua_type(L, -1) == LUA_TTABLE && !lua_getmetatable(L, -1), "empty table has no metatable");
        get(L, root, "arr");
        TAP_CHECK(toml_is_array(L, -1) && lua_rawlen(L, -1) == 3, "array of 3");
        lua_rawgeti(L, -1, 3);
        TAP_CHECK(toml_is_array(L, -1), "nested array has the array metatable");
        lua_settop(L, root);

        get(L, root, "aot");
        TAP_CHECK(toml_is_array(L, -1) && lua_rawlen(L, -1) == 2,
                  "array of tables is an array");
        lua_rawgeti(L, -1, 1);
        TAP_CHECK(lua_type(L, -1) == LUA_TTABLE && !lua_getmetatable(L, -1),
                  "its elements are plain tables");
        lua_settop(L, root);

        check_datetime(L, root, "odt", "datetime", "1979-05-27T07:32:00Z");
        check_datetime(L, root, "ldt", "datetime-local", "1979-05-27T07:32:00.999");
        check_datetime(L, root, "ld", "date-local", "2000-02-29");
        check_datetime(L, root, "lt", "time-local", "23:59:60");
        lua_settop(L, root - 1);
}

/* Pushes lines[key] for the table on top and returns it as an integer (0 if absent). */
static lua_Integer line_of(lua_State *L, const char *key, lua_Integer index) {
        lua_Integer line;

        toml_push_lines(L, -1);
        if (!lua_istable(L, -1)) {
                lua_pop(L, 1);
                return 0;
        }
        if (key)
                lua_getfield(L, -1, key);
        else
                lua_rawgeti(L, -1, index);
        line = lua_tointeger(L, -1);
        lua_pop(L, 2);
        return line;
}

static void test_lines(lua_State *L) {
        static const char doc[] =
                "# comment\n"           /* 1 */
                "top = 1\n"             /* 2 */
                "\n"                    /* 3 */
                "[server]\n"            /* 4 */
                "host = 'x'\n"          /* 5 */
                "ports = [\n"           /* 6 */
                "  80,\n"               /* 7 */
                "  443,\n"              /* 8 */
                "]\n"                   /* 9 */
                "[[peer]]\n"            /* 10 */
                "[[peer]]\n"            /* 11 */
                "a.b = 2\n";            /* 12 */
        int r = parse_str(L, doc, NULL);

        TAP_CHECK(r == 0, "line document parses");
        if (r < 0)
                return;

        TAP_CHECK(line_of(L, "top", 0) == 2, "line of top");
        TAP_CHECK(line_of(L, "server", 0) == 4, "line of [server]");
        TAP_CHECK(line_of(L, "peer", 0) == 10, "line of the first [[peer]]");

        get(L, -1, "server");
        TAP_CHECK(line_of(L, "host", 0) == 5, "line of server.host");
        TAP_CHECK(line_of(L, "ports", 0) == 6, "line of server.ports");
        get(L, -1, "ports");
        TAP_CHECK(line_of(L, NULL, 1) == 7 && line_of(L, NULL, 2) == 8, "lines of array elements");
        lua_pop(L, 2);

        get(L, -1, "peer");
        TAP_CHECK(line_of(L, NULL, 1) == 10 && line_of(L, NULL, 2) == 11, "lines of [[peer]] elements");
        lua_rawgeti(L, -1, 2);
        TAP_CHECK(line_of(L, "a", 0) == 12, "line of a dotted key's table");
        get(L, -1, "a");
        TAP_CHECK(line_of(L, "b", 0) == 12, "line of a dotted key");
        lua_pop(L, 3);

        lua_newtable(L);
        toml_push_lines(L, -1);
        TAP_CHECK(lua_isnil(L, -1), "no lines for a table the parser did not make");
        lua_pop(L, 3);
}


/* Every allocation budget either fails cleanly with -ENOMEM or parses; ASan checks for leaks. */
static void test_memory_errors(void) {
        static const char doc[] =
                "title = \"x\"\n"
                "[a.b]\n"
                "c = [1, 2.5, {d = 1979-05-27}]\n"
                "e.f.g = \"\"\"multi\nline\"\"\"\n"
                "[[t]]\n"
                "u = {v = [[1], [2]]}\n";
        unsigned failures = 0, bad = 0;
        bool parsed = false;

        for (size_t extra = 0; extra < 64 * 1024 && !parsed; extra += 16) {
                Budget b = { .limit = SIZE_MAX };
                _cleanup_(lua_closep) lua_State *L = lua_newstate(capped_alloc, &b);
                _cleanup_free_ char *error = NULL;

                if (!L)
                        abort();
                b.limit = b.used + extra;
                int r = parse_str(L, doc, &error);
                if (r == -ENOMEM && lua_gettop(L) == 0 && !error)
                        failures++;
                else if (r == 0 && lua_gettop(L) == 1)
                        parsed = true;
                else
                        bad++;
                b.limit = SIZE_MAX;
        }
        TAP_CHECK(failures > 0 && bad == 0, "%u capped allocations failed cleanly with -ENOMEM", failures);
        TAP_CHECK(parsed, "the document parses once the budget suffices");
}

int main(void) {
        _cleanup_(lua_closep) lua_State *L = luaL_newstate();

        if (!L)
                return 1;
        test_errors(L);
        test_error_details(L);
        test_size_cap(L);
        test_values(L);
        test_lines(L);
        TAP_CHECK(lua_gettop(L) == 0, "the stack is balanced");
        test_memory_errors();
        return tap_done();
}
