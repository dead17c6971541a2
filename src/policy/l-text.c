/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.text: string primitives the Lua library needs: globs, POSIX regular expressions,
 * SHA-256, and the edit distance behind every "did you mean". Internal. */
#include <fnmatch.h>
#include <limits.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/persistence.h"
#include "policy/lua-engine.h"
#include "policy/regex.h"
#include "policy/sha256.h"
#include "util/edit-distance.h"
#include "util/secret-value.h"

/* A glob ready to be matched many times: fnmatch() for the common case of globs made of
 * literal characters and '*' (environment patterns such as "*_TOKEN", "AWS_*"), in the usual
 * shapes NAME, *SUFFIX, PREFIX*, *PART* without a scan of the pattern per match; anything
 * with '?', '[' or '\\' goes to fnmatch(). */
typedef struct Glob {
        const char *p;
        size_t n;               /* strlen(p) */
        size_t stars;           /* how many '*' */
        bool fnmatch;           /* not made of literals and '*' only */
} Glob;

static Glob glob_compile(const char *p) {
        Glob g = { .p = p };

        for (const char *q = p; *q; q++, g.n++)
                if (*q == '?' || *q == '[' || *q == '\\')
                        g.fnmatch = true;
                else if (*q == '*')
                        g.stars++;
        return g;
}

/* Whether the n bytes at p occur in the sl bytes at s (memmem() without its set-up, which
 * costs more than the search in strings this short). */
static bool contains(const char *s, size_t sl, const char *p, size_t n) {
        if (n == 0)
                return true;
        for (const char *q = s, *end = s + sl; (size_t) (end - q) >= n; q++) {
                q = memchr(q, p[0], (size_t) (end - q) - n + 1);
                if (!q)
                        return false;
                if (memcmp(q + 1, p + 1, n - 1) == 0)
                        return true;
        }
        return false;
}

/* The globs glob_matches() has no shortcut for. */
static _noinline_ bool glob_matches_general(const Glob *g, const char *s) {
        const char *p = g->p, *star = NULL, *resume = NULL;

        if (g->fnmatch)
                return fnmatch(p, s, 0) == 0;
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
                        return false;
        }
        while (*p == '*')
                p++;
        return *p == 0;
}

/* sl: strlen(s). The usual shapes inline, their first or last characters compared first (most
 * names match no glob). */
static _always_inline_ bool glob_matches(const Glob *g, const char *s, size_t sl) {
        const char *p = g->p;
        size_t n = g->n;

        if (g->fnmatch)
                return glob_matches_general(g, s);
        if (g->stars == 0)
                return n == sl && (n == 0 || (p[0] == s[0] && memcmp(p, s, n) == 0));
        if (g->stars == 1 && p[0] == '*')
                return sl >= n - 1 && (n == 1 || (s[sl - 1] == p[n - 1] &&
                                                  memcmp(s + sl - (n - 1), p + 1, n - 1) == 0));
        if (g->stars == 1 && p[n - 1] == '*')
                return sl >= n - 1 && (n == 1 || (s[0] == p[0] && memcmp(s, p, n - 1) == 0));
        if (g->stars == 2 && n > 2 && p[0] == '*' && p[n - 1] == '*')
                return contains(s, sl, p + 1, n - 2);
        return glob_matches_general(g, s);
}

static bool glob_match(const char *p, const char *s) {
        Glob g = glob_compile(p);
        return glob_matches(&g, s, strlen(s));
}

static inline char ascii_lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* The l bytes at s and their NUL, in ASCII lower case, to d. */
static void copy_lower(char *d, const char *s, size_t l) {
        for (size_t i = 0; i < l; i++)
                d[i] = ascii_lower(s[i]);
        d[l] = 0;
}

/* A copy of the l bytes at s in ASCII lower case, pushed. */
static const char *push_lower(lua_State *L, const char *s, size_t l) {
        luaL_Buffer b;
        char *d = luaL_buffinitsize(L, &b, l + 1);
        copy_lower(d, s, l);
        luaL_pushresultsize(&b, l);
        return lua_tostring(L, -1);
}

/* text.fnmatch(glob, s) -> boolean */
static int l_text_fnmatch(lua_State *L) {
        const char *glob = luaL_checkstring(L, 1);
        const char *s = luaL_checkstring(L, 2);
        lua_pushboolean(L, glob_match(glob, s));
        return 1;
}

/* text.match_any(globs, s [, nocase]) -> boolean: does any glob of the list match s (without
 * regard to ASCII case, with nocase)? */
static int l_text_match_any(lua_State *L) {
        luaL_checktype(L, 1, LUA_TTABLE);
        size_t sl;
        const char *s = luaL_checklstring(L, 2, &sl);
        bool nocase = lua_toboolean(L, 3);
        lua_settop(L, 2);
        if (nocase)
                s = push_lower(L, s, sl);                                       /* stack: globs s low */
        lua_Integer n = (lua_Integer) lua_rawlen(L, 1);
        for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, 1, i);
                size_t gl;
                const char *g = lua_tolstring(L, -1, &gl);
                if (g && nocase)
                        g = push_lower(L, g, gl);
                bool m = g && glob_match(g, s);
                lua_pop(L, nocase && g ? 2 : 1);
                if (m) {
                        lua_pushboolean(L, true);
                        return 1;
                }
        }
        lua_pushboolean(L, false);
        return 1;
}

/* text.matching(globs, names [, nocase]) -> { [name] = i } for each name of the list that a
 * glob of the list matches, i the index of the first glob that does (as
 * text.match_any(globs, name, nocase) would say, for every name at once: each glob is looked
 * at once, not once per name). Both lists hold strings. */
static int l_text_matching(lua_State *L) {
        luaL_checktype(L, 1, LUA_TTABLE);
        luaL_checktype(L, 2, LUA_TTABLE);
        bool nocase = lua_toboolean(L, 3);
        size_t ng = lua_rawlen(L, 1), nn = lua_rawlen(L, 2);

        lua_settop(L, 2);
        if (ng > SIZE_MAX / sizeof(Glob) / 2)
                return luaL_error(L, "too many globs");
        /* Lua memory: nothing to free should a later allocation raise. With nocase, the
         * lower-case copies of the globs follow the Globs in the same block. */
        size_t text = 0;
        for (size_t i = 0; nocase && i < ng; i++) {
                if (lua_rawgeti(L, 1, (lua_Integer) i + 1) != LUA_TSTRING)
                        return luaL_error(L, "text.matching: glob %I is not a string", (lua_Integer) i + 1);
                size_t gl = lua_rawlen(L, -1);
                lua_pop(L, 1);
                if (gl >= SIZE_MAX / 2 - text)
                        return luaL_error(L, "globs too long");
                text += gl + 1;
        }
        Glob *globs =
                lua_newuserdatauv(L, MAX(ng, (size_t) 1) * sizeof(Glob) + text, 0); /* stack: g n box */
        char *copies = (char *) (globs + MAX(ng, (size_t) 1));
        for (size_t i = 0; i < ng; i++) {
                if (lua_rawgeti(L, 1, (lua_Integer) i + 1) != LUA_TSTRING)
                        return luaL_error(L, "text.matching: glob %I is not a string", (lua_Integer) i + 1);
                /* The string stays referenced: by the list, or its lower-case copy by the box. */
                size_t gl;
                const char *g = lua_tolstring(L, -1, &gl);
                if (nocase) {
                        copy_lower(copies, g, gl);
                        g = copies;
                        copies += gl + 1;
                }
                globs[i] = glob_compile(g);
                lua_pop(L, 1);
        }
        lua_newtable(L);                                                        /* stack: g n box set */
        for (size_t j = 0; j < nn && ng > 0; j++) {
                if (lua_rawgeti(L, 2, (lua_Integer) j + 1) != LUA_TSTRING)       /* stack: .. set name */
                        return luaL_error(L, "text.matching: name %I is not a string", (lua_Integer) j + 1);
                size_t sl;
                const char *s = lua_tolstring(L, -1, &sl);
                char low[256];
                bool m = false;
                if (strlen(s) != sl)
                        return luaL_error(L, "text.matching: name %I holds a NUL byte", (lua_Integer) j + 1);
                if (nocase && sl < sizeof(low)) {
                        copy_lower(low, s, sl);
                        s = low;
                } else if (nocase) {
                        s = push_lower(L, s, sl);                               /* stack: .. set name low */
                        lua_insert(L, -2);                                      /* stack: .. set low name */
                }
                size_t i;
                for (i = 0; i < ng && !m; i++)
                        m = glob_matches(&globs[i], s, sl);
                if (nocase && sl >= sizeof(low))
                        lua_remove(L, -2);                                      /* stack: .. set name */
                if (m) {
                        lua_pushinteger(L, (lua_Integer) i);
                        lua_rawset(L, -3);                                      /* stack: .. set */
                } else
                        lua_pop(L, 1);
        }
        return 1;
}

/* text.secret_values(names, values) -> { [name] = kind } for each name of the list whose
 * value (values[name], a string) is a credential by its shape (util/secret-value.h): the kind
 * is a phrase such as "a GitHub token", never the value. Names without a value are skipped. */
static int l_text_secret_values(lua_State *L) {
        luaL_checktype(L, 1, LUA_TTABLE);
        luaL_checktype(L, 2, LUA_TTABLE);
        size_t nn = lua_rawlen(L, 1);

        lua_settop(L, 2);
        lua_newtable(L);                                                        /* stack: names values set */
        for (size_t j = 0; j < nn; j++) {
                if (lua_rawgeti(L, 1, (lua_Integer) j + 1) != LUA_TSTRING)      /* stack: .. set name */
                        return luaL_error(L, "text.secret_values: name %zu is not a string", j + 1);
                lua_pushvalue(L, -1);
                const char *kind = NULL;
                if (lua_rawget(L, 2) == LUA_TSTRING) { /* stack: .. set name value */
                        size_t vl;
                        const char *v = lua_tolstring(L, -1, &vl);
                        kind = secret_value_kind(v, vl);
                }
                lua_pop(L, 1);                                                  /* stack: .. set name */
                if (kind) {
                        lua_pushstring(L, kind);
                        lua_rawset(L, -3);                                      /* stack: .. set */
                } else
                        lua_pop(L, 1);
        }
        return 1;
}

/* ---- variables (expand.lua) ---- */

/* Pushes the expansion of the string at index 1 as value, derived (or nil, why), for
 * text.expand and text.expand_path: home at 2, get at 3, obj at 4; nothing else on the stack
 * below what it pushes is touched. */
static void push_expansion(lua_State *L) {
        size_t n, hl;
        const char *s = luaL_checklstring(L, 1, &n);
        const char *home = luaL_checklstring(L, 2, &hl);
        luaL_checktype(L, 3, LUA_TFUNCTION);
        bool derived = false;

        if (n > 0 && s[0] == '~') {
                if (n > 1 && s[1] != '/') {
                        lua_pushnil(L);
                        lua_pushliteral(L, "~user is not supported: write the path out");
                        return;
                }
                lua_pushlstring(L, home, hl);
                lua_pushlstring(L, s + 1, n - 1);
                lua_concat(L, 2);                                               /* stack: .. s' */
                lua_replace(L, 1);
                s = lua_tolstring(L, 1, &n);
        }
        const char *open = memmem(s, n, "${", 2);
        if (!open) {
                lua_pushvalue(L, 1);
                lua_pushboolean(L, false);
                return;
        }

        /* The buffer's box stays on top whenever the buffer may grow (see docs/internals.md,
         * "C modules"): the text before each variable is added before get() is called, and
         * the value get() left on top goes in with luaL_addvalue, the one call made for that. */
        luaL_Buffer b;
        size_t at = 0;
        luaL_buffinit(L, &b);                                                   /* stack: .. box */
        while (open) {
                size_t o = (size_t) (open - s);
                const char *close = memchr(s + o + 2, '}', n - o - 2);
                if (!close)
                        break;
                size_t c = (size_t) (close - s);
                luaL_addlstring(&b, s + at, o - at);
                lua_pushvalue(L, 3);
                lua_pushvalue(L, 4);
                lua_pushlstring(L, s + o + 2, c - o - 2);
                lua_call(L, 2, 3);                                              /* stack: .. v d why */
                if (!lua_toboolean(L, -3)) {
                        if (lua_toboolean(L, -1)) {
                                lua_pushnil(L);
                                lua_insert(L, -2);                              /* stack: .. v d nil why */
                                return;
                        }
                        lua_pop(L, 3);
                        lua_pushliteral(L, "");
                } else {
                        derived = derived || lua_toboolean(L, -2);
                        lua_pop(L, 2);                                          /* stack: .. v */
                        if (!lua_isstring(L, -1))
                                luaL_error(L, "text.expand: the value of a variable is not text");
                }
                luaL_addvalue(&b);                                              /* stack: .. box */
                at = c + 1;
                open = at <= n ? memmem(s + at, n - at, "${", 2) : NULL;
        }
        luaL_addlstring(&b, s + at, n - at);
        luaL_pushresult(&b);                                                    /* stack: .. out */
        size_t ol;
        const char *out = lua_tolstring(L, -1, &ol);
        if (memmem(out, ol, "${", 2)) {
                lua_pushnil(L);
                lua_pushliteral(L, "unterminated ${");
                return;
        }
        lua_pushboolean(L, derived);
}

/* text.expand(s, home, get, obj) -> value, derived | nil, why
 * The mechanics of expand.lua's M:expand, which says what the variables mean: a leading "~"
 * or "~/" becomes home ("~user" is refused), then each "${NAME}" in turn, left to right (the
 * first "}" after "${" ends the name), is replaced by the value get(obj, NAME) returns as
 * value, derived, why. A variable without a value but with a why makes the whole value drop
 * out, without looking at later ones; derived tells whether any variable used was. A result
 * still holding "${" is refused. */
static int l_text_expand(lua_State *L) {
        lua_settop(L, 4);
        push_expansion(L);
        return 2;
}

/* text.expand_path(s, home, get, obj, base) -> path, derived | nil, why
 * text.expand for a path (expand.lua's M:path): an empty result is refused, and a relative one
 * is joined to base (as util.join does), which makes it derived. */
static int l_text_expand_path(lua_State *L) {
        size_t lb, lp;
        const char *base = luaL_checklstring(L, 5, &lb);

        lua_settop(L, 5);
        push_expansion(L);                                                      /* stack: .. p d */
        const char *p = lua_tolstring(L, -2, &lp);
        if (!p)
                return 2;
        if (lp == 0) {
                lua_pushnil(L);
                lua_pushliteral(L, "empty path");
                return 2;
        }
        if (p[0] == '/')
                return 2;
        lua_pop(L, 1);                                                          /* stack: .. p */
        lua_pushvalue(L, 5);
        if (lb > 0 && base[lb - 1] == '/')
                lua_insert(L, -2);                                              /* stack: .. base p */
        else {
                lua_pushliteral(L, "/");
                lua_rotate(L, -3, -1);                                          /* stack: .. base "/" p */
        }
        lua_concat(L, lb > 0 && base[lb - 1] == '/' ? 2 : 3);
        lua_pushboolean(L, true);
        return 2;
}

/* ---- paths as strings (build.lua) ---- */

/* The next non-empty component of p[0, n) at or after *i: its start and length; *i moves past
 * it. false when there is none left. */
static bool next_component(const char *p, size_t n, size_t *i, size_t *ret_start, size_t *ret_len) {
        size_t k = *i, j;

        while (k < n && p[k] == '/')
                k++;
        if (k == n) {
                *i = n;
                return false;
        }
        for (j = k; j < n && p[j] != '/'; j++)
                ;
        *ret_start = k;
        *ret_len = j - k;
        *i = j;
        return true;
}

/* Whether the path needs no cleaning: no "//" or "/./", no trailing "/." or "/" ("/" aside). */
static bool path_is_clean(const char *p, size_t n) {
        for (size_t i = 0; i + 1 < n; i++)
                if (p[i] == '/' && (p[i + 1] == '/' || (p[i + 1] == '.' && (i + 2 == n || p[i + 2] == '/'))))
                        return false;
        return n <= 1 || p[n - 1] != '/';
}

/* text.clean_path(p) -> p with "//" and "/./" collapsed and a trailing "/" or "/." dropped, the
 * result starting with "/"; ".." is left as it is. p itself when there is nothing to clean (most
 * paths), without making a new string. */
static int l_text_clean_path(lua_State *L) {
        size_t n;
        const char *p = luaL_checklstring(L, 1, &n);

        if (path_is_clean(p, n)) {
                lua_settop(L, 1);
                return 1;
        }
        /* "/" then the components, less empty ones and ".", joined by "/". */
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addchar(&b, '/');
        bool first = true;
        size_t i = 0, start, len;
        while (next_component(p, n, &i, &start, &len)) {
                if (len == 1 && p[start] == '.')
                        continue;
                if (!first)
                        luaL_addchar(&b, '/');
                luaL_addlstring(&b, p + start, len);
                first = false;
        }
        luaL_pushresult(&b);
        return 1;
}

/* text.join(a, b) -> b when it is absolute, else a and b joined by one "/" (none added when a
 * ends with one). */
static int l_text_join(lua_State *L) {
        size_t la, lb;
        const char *a = luaL_checklstring(L, 1, &la);
        const char *b = luaL_checklstring(L, 2, &lb);

        if (lb > 0 && b[0] == '/') {
                lua_settop(L, 2);
                return 1;
        }
        lua_settop(L, 2);
        if (la > 0 && a[la - 1] == '/') {
                lua_concat(L, 2);
                return 1;
        }
        lua_pushliteral(L, "/");
        lua_insert(L, 2);                                                       /* stack: a "/" b */
        lua_concat(L, 3);
        return 1;
}

/* text.ancestors(dir) -> { "/", "/a", "/a/b", ... }: the directories from / down to dir, made
 * of its components (empty ones left out), outermost first. */
static int l_text_ancestors(lua_State *L) {
        size_t n;
        const char *d = luaL_checklstring(L, 1, &n);
        luaL_Buffer b;
        lua_Integer k = 1;

        lua_createtable(L, 8, 0);                                               /* stack: d list */
        lua_pushliteral(L, "/");
        lua_rawseti(L, -2, k);
        /* Each entry is the one before, "/" and the next component: built in a buffer. */
        size_t i = 0, start, len;
        luaL_buffinit(L, &b);
        while (next_component(d, n, &i, &start, &len)) {
                luaL_addchar(&b, '/');
                luaL_addlstring(&b, d + start, len);
                lua_pushlstring(L, luaL_buffaddr(&b), luaL_bufflen(&b));       /* stack: d list buf entry */
                lua_rawseti(L, -3, ++k);
        }
        luaL_pushresult(&b);
        lua_pop(L, 1);                                                          /* stack: d list */
        return 1;
}

/* text.first_related(c, dirs) -> i | nil: the index of the first entry of dirs, each { dir,
 * deep }, whose dir is c, lies below c, or (deep entries) holds c below it: the test the
 * hardening step applies to derived write grants (plan/persistence.h), for Lua's own use. */
static int l_text_first_related(lua_State *L) {
        size_t lc;
        const char *c = luaL_checklstring(L, 1, &lc);
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_Integer n = (lua_Integer) lua_rawlen(L, 2);

        for (lua_Integer i = 1; i <= n; i++) {
                size_t ld;
                if (lua_rawgeti(L, 2, i) != LUA_TTABLE)                         /* stack: c dirs e */
                        return luaL_error(L, "text.first_related: entry %I is not a table", i);
                if (lua_rawgeti(L, -1, 1) != LUA_TSTRING)                       /* stack: c dirs e dir */
                        return luaL_error(L, "text.first_related: entry %I has no directory", i);
                const char *d = lua_tolstring(L, -1, &ld);
                lua_rawgeti(L, -2, 2); /* stack: c dirs e dir deep */
                bool deep = lua_toboolean(L, -1);
                bool related = persistence_related(c, lc, d, ld, deep);
                lua_pop(L, 3);                                                  /* stack: c dirs */
                if (related) {
                        lua_pushinteger(L, i);
                        return 1;
                }
        }
        lua_pushnil(L);
        return 1;
}

/* text.regex(re, s) -> boolean | nil, message
 * POSIX extended syntax; the whole of s must match (regex.h). */
static int l_text_regex(lua_State *L) {
        size_t len, slen;
        const char *re = luaL_checklstring(L, 1, &len);
        const char *s = luaL_checklstring(L, 2, &slen);
        char msg[REGEX_MSG_SIZE];

        /* No Lua call while PCRE2 holds memory. */
        int r = regex_match(re, len, s, slen, msg);
        if (r < 0) {
                lua_pushnil(L);
                lua_pushfstring(L, "bad regular expression '%s': %s", re, msg);
                return 2;
        }
        lua_pushboolean(L, r);
        return 1;
}

/* text.sha256(data) -> lower-case hex; raises when there is no hash (then nothing is trusted:
 * the evaluation fails) */
static int l_text_sha256(lua_State *L) {
        size_t len;
        const char *data = luaL_checklstring(L, 1, &len);
        char hex[SHA256_HEX_SIZE];
        if (sha256_hex(data, len, hex) < 0)
                return luaL_error(L, "cannot hash a configuration file: libgcrypt did not start");
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

static bool is_space(char c) {
        return c == ' ' || (c >= '\t' && c <= '\r');   /* Lua's %s in the "C" locale */
}

/* A word "[-X]" of a command-line pattern: an option that takes the next argument as its value. */
static bool is_valued_option(const char *w, size_t wl) {
        return wl >= 4 && w[0] == '[' && w[1] == '-' && w[wl - 1] == ']';
}

/* Whether the pattern names the argument a (al bytes) as "[a]". */
static bool pattern_has_valued_option(const char *pattern, size_t pl, const char *a, size_t al) {
        for (size_t i = 0; i + al + 2 <= pl; i++)
                if (pattern[i] == '[' && (i == 0 || is_space(pattern[i - 1])) &&
                    memcmp(pattern + i + 1, a, al) == 0 && pattern[i + al + 1] == ']' &&
                    (i + al + 2 == pl || is_space(pattern[i + al + 2])))
                        return true;
        return false;
}

/* text.command_matches(pattern, name, argv) -> boolean, kind | nil, "regex", message
 * match.lua's test of one match pattern against the command (see there): kind "regex"
 * ("re:REGEX", POSIX ERE on name, whole; nil and why when the regex is over its budgets for
 * this name), "line" (a pattern holding a space: its first word is name, then each further
 * word in order among argv[2..], arguments starting with "-" allowed in between, "-" and "--"
 * not; a word "[-X]" is no word to find but an option whose value is the next argument, so
 * that "git [-C] push" matches `git -C dir push` and not `git -C push`) or "name" (the pattern
 * is name). */
static int l_text_command_matches(lua_State *L) {
        size_t pl, nl;
        const char *pattern = luaL_checklstring(L, 1, &pl);
        const char *name = luaL_checklstring(L, 2, &nl);
        luaL_checktype(L, 3, LUA_TTABLE);

        if (pl >= 3 && memcmp(pattern, "re:", 3) == 0) {
                char msg[REGEX_MSG_SIZE];
                int r = regex_matches(pattern + 3, pl - 3, name, nl, msg);
                if (r < 0) {
                        lua_pushnil(L);
                        lua_pushliteral(L, "regex");
                        lua_pushstring(L, msg);
                        return 3;
                }
                lua_pushboolean(L, r);
                lua_pushliteral(L, "regex");
                return 2;
        }
        if (!memchr(pattern, ' ', pl)) {
                lua_pushboolean(L, pl == nl && memcmp(pattern, name, pl) == 0);
                lua_pushliteral(L, "name");
                return 2;
        }

        /* The words of the pattern one after the other: [w, w + wl). */
        const char *w = pattern, *end = pattern + pl;
        size_t wl = 0;
#define NEXT_ANY_WORD()                                                         \
        do {                                                                    \
                w += wl;                                                        \
                while (w < end && is_space(*w))                                 \
                        w++;                                                    \
                wl = 0;                                                         \
                while (w + wl < end && !is_space(w[wl]))                        \
                        wl++;                                                   \
        } while (0)
#define NEXT_WORD()                                                             \
        do {                                                                    \
                NEXT_ANY_WORD();                                                \
                while (wl > 0 && is_valued_option(w, wl))                       \
                        NEXT_ANY_WORD();                                        \
        } while (0)
        NEXT_WORD();
        bool m = wl > 0 && wl == nl && memcmp(w, name, nl) == 0;
        if (m) {
                NEXT_WORD();
                lua_Integer n = (lua_Integer) lua_rawlen(L, 3);
                for (lua_Integer j = 2; j <= n && wl > 0; j++) {
                        size_t al;
                        if (lua_rawgeti(L, 3, j) != LUA_TSTRING)                /* stack: p n argv a */
                                return luaL_error(L, "text.command_matches: argument %I is not a string", j);
                        const char *a = lua_tolstring(L, -1, &al);
                        bool word = al == wl && memcmp(a, w, wl) == 0;
                        bool skip = al >= 2 && a[0] == '-' && !(al == 2 && a[1] == '-');
                        bool valued = skip && pattern_has_valued_option(pattern, pl, a, al);
                        lua_pop(L, 1);                                          /* stack: p n argv */
                        if (valued)
                                j++;                                            /* and its value */
                        else if (word)
                                NEXT_WORD();
                        else if (!skip) {
                                m = false;
                                break;
                        }
                }
                m = m && wl == 0;
        }
#undef NEXT_WORD
#undef NEXT_ANY_WORD
        lua_pushboolean(L, m);
        lua_pushliteral(L, "line");
        return 2;
}

static const luaL_Reg text_functions[] = {
        { "fnmatch", l_text_fnmatch },
        { "match_any", l_text_match_any },
        { "matching", l_text_matching },
        { "secret_values", l_text_secret_values },
        { "clean_path", l_text_clean_path },
        { "join", l_text_join },
        { "ancestors", l_text_ancestors },
        { "expand", l_text_expand },
        { "expand_path", l_text_expand_path },
        { "first_related", l_text_first_related },
        { "regex", l_text_regex },
        { "command_matches", l_text_command_matches },
        { "sha256", l_text_sha256 },
        { "distance", l_text_distance },
        { NULL, NULL },
};

int luaopen_scudo_text(lua_State *L) {
        luaL_newlib(L, text_functions);
        return 1;
}
