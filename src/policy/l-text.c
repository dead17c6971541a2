/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.text: string primitives the Lua library needs: globs, POSIX regular expressions,
 * SHA-256, and the edit distance behind every "did you mean". Internal. */
#include <fnmatch.h>
#include <lauxlib.h>
#include <regex.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/lua-engine.h"
#include "policy/sha256.h"
#include "util/edit-distance.h"

/* Longer regular expressions are refused; they are one-line match patterns. */
#define REGEX_MAX 1024

/* fnmatch() for the common case of globs made of literal characters and '*' (environment
 * patterns such as "*_TOKEN", "AWS_*"); anything else goes to fnmatch(). Returns -1 when the
 * pattern is not such a glob. */
static int glob_star(const char *p, const char *s) {
        const char *star = NULL, *resume = NULL;
        size_t stars = 0, n = 0;

        for (const char *q = p; *q; q++, n++)
                if (*q == '?' || *q == '[' || *q == '\\')
                        return -1;
                else if (*q == '*')
                        stars++;
        /* The usual shapes first: NAME, *SUFFIX, PREFIX*, *PART*. */
        size_t sl = strlen(s);
        if (stars == 0)
                return streq(p, s);
        if (stars == 1 && p[0] == '*')
                return sl >= n - 1 && memcmp(s + sl - (n - 1), p + 1, n - 1) == 0;
        if (stars == 1 && p[n - 1] == '*')
                return strncmp(s, p, n - 1) == 0;
        if (stars == 2 && n > 2 && p[0] == '*' && p[n - 1] == '*')
                return memmem(s, sl, p + 1, n - 2) != NULL;
        while (*s) {
                if (*p == '*') {
                        star = p++;
                        resume = s;
                } else if (*p == *s) {
                        p++;
                        s++;
                } else if (star) {
                        p = star + 1;
                        s = ++resume;
                } else
                        return 0;
        }
        while (*p == '*')
                p++;
        return *p == 0;
}

static bool glob_match(const char *p, const char *s) {
        int r = glob_star(p, s);
        return r >= 0 ? r == 1 : fnmatch(p, s, 0) == 0;
}

/* text.fnmatch(glob, s) -> boolean */
static int l_text_fnmatch(lua_State *L) {
        const char *glob = luaL_checkstring(L, 1);
        const char *s = luaL_checkstring(L, 2);
        lua_pushboolean(L, glob_match(glob, s));
        return 1;
}

/* text.match_any(globs, s) -> boolean: does any glob of the list match s? */
static int l_text_match_any(lua_State *L) {
        luaL_checktype(L, 1, LUA_TTABLE);
        const char *s = luaL_checkstring(L, 2);
        lua_Integer n = (lua_Integer) lua_rawlen(L, 1);
        for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, 1, i);
                const char *g = lua_tostring(L, -1);
                bool m = g && glob_match(g, s);
                lua_pop(L, 1);
                if (m) {
                        lua_pushboolean(L, true);
                        return 1;
                }
        }
        lua_pushboolean(L, false);
        return 1;
}

/* text.regex(re, s) -> boolean | nil, message
 * POSIX extended syntax; the whole of s must match. */
static int l_text_regex(lua_State *L) {
        size_t len;
        const char *re = luaL_checklstring(L, 1, &len);
        size_t slen;
        const char *s = luaL_checklstring(L, 2, &slen);
        char anchored[REGEX_MAX + 8], msg[256];
        regex_t rx;

        if (len > REGEX_MAX || strlen(re) != len) {
                lua_pushnil(L);
                lua_pushfstring(L, "regular expression longer than %d bytes or holding NUL", REGEX_MAX);
                return 2;
        }
        (void) snprintf(anchored, sizeof(anchored), "^(%s)$", re);
        /* No Lua call between regcomp and regfree. */
        int r = regcomp(&rx, anchored, REG_EXTENDED | REG_NOSUB);
        if (r != 0) {
                (void) regerror(r, &rx, msg, sizeof(msg));
                regfree(&rx);
                lua_pushnil(L);
                lua_pushfstring(L, "bad regular expression '%s': %s", re, msg);
                return 2;
        }
        bool m = strlen(s) == slen && regexec(&rx, s, 0, NULL, 0) == 0;
        regfree(&rx);
        lua_pushboolean(L, m);
        return 1;
}

/* text.sha256(data) -> lower-case hex */
static int l_text_sha256(lua_State *L) {
        size_t len;
        const char *data = luaL_checklstring(L, 1, &len);
        char hex[SHA256_HEX_SIZE];
        sha256_hex(data, len, hex);
        lua_pushstring(L, hex);
        return 1;
}

/* text.distance(a, b) -> Levenshtein distance (large for long strings) */
static int l_text_distance(lua_State *L) {
        size_t la, lb;
        const char *a = luaL_checklstring(L, 1, &la);
        const char *b = luaL_checklstring(L, 2, &lb);
        size_t d = edit_distance(a, la, b, lb, false);

        lua_pushinteger(L, d == SIZE_MAX ? EDIT_DISTANCE_MAX * 2 : (lua_Integer) d);
        return 1;
}

static const luaL_Reg text_functions[] = {
        { "fnmatch", l_text_fnmatch },
        { "match_any", l_text_match_any },
        { "regex", l_text_regex },
        { "sha256", l_text_sha256 },
        { "distance", l_text_distance },
        { NULL, NULL },
};

int luaopen_scudo_text(lua_State *L) {
        luaL_newlib(L, text_functions);
        return 1;
}
