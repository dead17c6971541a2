/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* fuzz-primitives: the policy engine's C primitives (scudo.text, scudo.tables, scudo.unit, the
 * TOML decoder's strings and keys) called straight from bytes, each input in a new Lua state
 * with only those modules, without the Lua library or any profile. Where a primitive has a
 * plain definition, its answer is compared with a simple C version of it (an oracle here, not
 * a second implementation), so a dropped or corrupted piece of text fails as a crash does.
 *
 * The state allocates from a region of its own: one block after the other with a poisoned red
 * zone between, each block poisoned once freed, the whole region given back after the input.
 * ASan sees an access past a block's end or after its free as it would with malloc(), without
 * malloc()'s cost per block (its fill, its quarantine's fresh pages), and no block outlives
 * the input for libFuzzer to take for a leak.
 *
 * Input: one byte picks the primitive; the rest are fields separated by 0xFF. A field that
 * starts with 0xFE, then a count (one byte), stands for the rest of it repeated that many
 * times: inputs of a few bytes reach the length where luaL_Buffer leaves the C frame
 * (LUAL_BUFFERSIZE), and with a longer rest 8 and 64 KiB. Repeated text is held to 4 KiB for
 * all the fields, or 144 KiB (72 KiB a field) when the first byte has 0x60 set: most runs are
 * short, a quarter long. The checking code here is left out of the coverage instrumentation
 * (ORACLE): it tells nothing about scudo, and its loops over each byte cost most of a run.
 * FUZZ_DEBUG=1 prints the errors the primitives raise. */
#include <fnmatch.h>
#include <lauxlib.h>
#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "policy/lua-engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FIELDS_MAX 64
#define FIELD_MAX (72U << 10)
#define FIELDS_TOTAL_MAX (144U << 10)
#define FIELDS_TOTAL_SHORT (4U << 10)

#define ORACLE __attribute__((no_sanitize("coverage")))

typedef struct Text {
        char *s;
        size_t n, cap;
} Text;

ORACLE static void text_put(Text *t, const void *s, size_t n) {
        if (t->n + n + 1 > t->cap) {
                t->cap = (t->n + n + 1) * 2;
                t->s = realloc(t->s, t->cap);
                if (!t->s)
                        abort();
        }
        memcpy(t->s + t->n, s, n);
        t->n += n;
        t->s[t->n] = 0;
}

ORACLE static void text_puts(Text *t, const char *s) {
        text_put(t, s, strlen(s));
}

/* Scratch texts for the oracles, kept from input to input: a primitive may raise (a bad
 * argument), which unwinds past the function using them, so they must not be its to free. */
static Text want, scratch1, scratch2, joined, doc_text;

typedef struct Input {
        uint8_t op;
        Text f[FIELDS_MAX];
        size_t n;
} Input;

ORACLE static void input_parse(Input *in, const uint8_t *data, size_t size) {
        size_t total = 0, max = (data[0] & 0x60) == 0x60 ? FIELDS_TOTAL_MAX : FIELDS_TOTAL_SHORT;

        in->op = data[0];
        in->n = 0;
        const uint8_t *p = data + 1, *end = data + size;
        while (p <= end && in->n < FIELDS_MAX) {
                const uint8_t *q = memchr(p, 0xFF, (size_t) (end - p)) ?: end;
                Text *t = &in->f[in->n++];
                t->n = 0;
                text_put(t, "", 0);
                if (q - p >= 2 && p[0] == 0xFE) {
                        size_t count = p[1], unit = (size_t) (q - p - 2);
                        for (size_t i = 0; i < count && unit > 0 && t->n + unit <= FIELD_MAX &&
                                           total + t->n + unit <= max; i++)
                                text_put(t, p + 2, unit);
                } else
                        text_put(t, p, (size_t) (q - p));
                total += t->n;
                p = q + 1;
        }
}

/* Field i, or "" past the last. */
static const Text *field(const Input *in, size_t i) {
        static Text empty = { .s = (char *) "" };
        return i < in->n ? &in->f[i] : &empty;
}

static void push_field(lua_State *L, const Input *in, size_t i) {
        const Text *t = field(in, i);
        lua_pushlstring(L, t->s, t->n);
}

/* A list of the fields from `from` on. */
static void push_list(lua_State *L, const Input *in, size_t from) {
        lua_createtable(L, 0, 0);
        for (size_t i = from; i < in->n; i++) {
                push_field(L, in, i);
                lua_rawseti(L, -2, (lua_Integer) (i - from + 1));
        }
}

ORACLE static bool same(lua_State *L, int idx, const char *s, size_t n) {
        size_t l;
        const char *v = lua_tolstring(L, idx, &l);
        return v && l == n && memcmp(v, s, n) == 0;
}

#define CHECK(cond)                                                             \
        do {                                                                    \
                if (!(cond)) {                                                  \
                        fprintf(stderr, "fuzz-primitives: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                \
                }                                                               \
        } while (0)

/* ---- ~ and ${NAME} ---- */

/* The variables: "!..." has no value and a reason (the whole drops out), "?..." no value and
 * no reason (it is empty), "+..." the value given as obj (a long text, say), "d..." its own
 * name and is derived, anything else its own name. */
static int fuzz_get(lua_State *L) {
        size_t n;
        const char *name = luaL_checklstring(L, 2, &n);
        if (n > 0 && name[0] == '!') {
                lua_pushnil(L);
                lua_pushboolean(L, false);
                lua_pushliteral(L, "no value");
                return 3;
        }
        if (n > 0 && name[0] == '?') {
                lua_pushnil(L);
                lua_pushboolean(L, false);
                return 2;
        }
        lua_pushvalue(L, n > 0 && name[0] == '+' ? 1 : 2);
        lua_pushboolean(L, n > 0 && name[0] == 'd');
        return 2;
}

/* What text.expand gives, by its definition: 1 with the value in out, 0 with the reason. */
ORACLE static int expand_oracle(const Text *s, const Text *home, const Text *obj, Text *out, bool *derived,
                         const char **why) {
        const char *p = s->s, *end = s->s + s->n;
        Text t = {};

        *derived = false;
        out->n = 0;
        text_put(out, "", 0);
        if (p < end && *p == '~') {
                if (end - p > 1 && p[1] != '/') {
                        *why = "~user is not supported: write the path out";
                        return 0;
                }
                text_put(&t, home->s, home->n);
                p++;
        }
        text_put(&t, p, (size_t) (end - p));
        p = t.s;
        end = t.s + t.n;
        for (;;) {
                const char *open = memmem(p, (size_t) (end - p), "${", 2);
                const char *close = open ? memchr(open + 2, '}', (size_t) (end - open - 2)) : NULL;
                if (!close) {
                        text_put(out, p, (size_t) (end - p));
                        break;
                }
                text_put(out, p, (size_t) (open - p));
                const char *name = open + 2;
                size_t nl = (size_t) (close - name);
                if (nl > 0 && name[0] == '!') {
                        *why = "no value";
                        free(t.s);
                        return 0;
                }
                if (nl > 0 && name[0] == '+')
                        text_put(out, obj->s, obj->n);
                else if (!(nl > 0 && name[0] == '?'))
                        text_put(out, name, nl);
                *derived = *derived || (nl > 0 && name[0] == 'd');
                p = close + 1;
        }
        free(t.s);
        if (memmem(out->s, out->n, "${", 2)) {
                *why = "unterminated ${";
                return 0;
        }
        return 1;
}

/* text.expand(s, home, get, obj) and text.expand_path(..., base) against the oracle. */
static void fuzz_expand(lua_State *L, int text, const Input *in, bool path) {
        const Text *s = field(in, 0), *home = field(in, 1), *obj = field(in, 2), *base = field(in, 3);
        Text *w = &want;
        bool derived;
        const char *why = NULL;

        /* Each "${+...}" is obj: the result may be many times the input. */
        size_t uses = 0;
        for (const char *u = s->s; (u = memmem(u, s->n - (size_t) (u - s->s), "${+", 3)); u += 3)
                uses++;
        if (uses * obj->n > FIELDS_TOTAL_MAX)
                return;
        int ok = expand_oracle(s, home, obj, &want, &derived, &why);
        if (ok && path) {
                if (want.n == 0) {
                        ok = 0;
                        why = "empty path";
                } else if (want.s[0] != '/') {
                        w = &joined;
                        w->n = 0;
                        text_put(w, base->s, base->n);
                        if (base->n == 0 || base->s[base->n - 1] != '/')
                                text_put(w, "/", 1);
                        text_put(w, want.s, want.n);
                        derived = true;
                }
        }

        lua_getfield(L, text, path ? "expand_path" : "expand");
        push_field(L, in, 0);
        push_field(L, in, 1);
        lua_pushcfunction(L, fuzz_get);
        push_field(L, in, 2);
        if (path)
                push_field(L, in, 3);
        lua_call(L, path ? 5 : 4, 2);                                           /* stack: .. v d */
        if (ok) {
                CHECK(same(L, -2, w->s, w->n));
                CHECK(lua_toboolean(L, -1) == derived);
        } else {
                CHECK(lua_isnil(L, -2));
                CHECK(same(L, -1, why, strlen(why)));
        }
        lua_pop(L, 2);
}

/* ---- paths ---- */

/* The components of p, less empty ones and ".", each preceded by "/". */
ORACLE static void components(const Text *p, Text *out) {
        out->n = 0;
        text_put(out, "", 0);
        for (size_t i = 0; i < p->n;) {
                size_t j = i;
                while (j < p->n && p->s[j] != '/')
                        j++;
                if (j > i && !(j - i == 1 && p->s[i] == '.')) {
                        text_put(out, "/", 1);
                        text_put(out, p->s + i, j - i);
                }
                i = j + 1;
        }
}

/* No "//", "/./", trailing "/." or "/" (but "/"). */
ORACLE static bool clean_as_written(const Text *p) {
        bool clean = p->n <= 1 || p->s[p->n - 1] != '/';
        for (size_t i = 0; i + 1 < p->n; i++)
                if (p->s[i] == '/' && (p->s[i + 1] == '/' ||
                                       (p->s[i + 1] == '.' && (i + 2 == p->n || p->s[i + 2] == '/'))))
                        clean = false;
        return clean;
}

static void fuzz_paths(lua_State *L, int text, const Input *in) {
        const Text *a = field(in, 0), *b = field(in, 1);

        /* clean_path: p itself when it has no "//", "/./", trailing "/." or "/" (but "/");
         * else "/" and the components. */
        lua_getfield(L, text, "clean_path");
        push_field(L, in, 0);
        lua_call(L, 1, 1);
        components(a, &want);
        if (clean_as_written(a)) {
                want.n = 0;
                text_put(&want, a->s, a->n);
        } else if (want.n == 0)
                text_put(&want, "/", 1);
        CHECK(same(L, -1, want.s, want.n));
        lua_pop(L, 1);

        /* join */
        lua_getfield(L, text, "join");
        push_field(L, in, 0);
        push_field(L, in, 1);
        lua_call(L, 2, 1);
        want.n = 0;
        if (b->n > 0 && b->s[0] == '/')
                text_put(&want, b->s, b->n);
        else {
                text_put(&want, a->s, a->n);
                if (a->n == 0 || a->s[a->n - 1] != '/')
                        text_put(&want, "/", 1);
                text_put(&want, b->s, b->n);
        }
        CHECK(same(L, -1, want.s, want.n));
        lua_pop(L, 1);

        /* ancestors: "/", then each prefix of the components; the last is all of them (with
         * "." kept as a component). Its output grows with the square of its input: up to
         * PATH_MAX, which is what the library gives it (the start directory). */
        if (a->n > 4096)
                return;
        lua_getfield(L, text, "ancestors");
        push_field(L, in, 0);
        lua_call(L, 1, 1);
        size_t k = 1;
        want.n = 0;
        for (size_t i = 0; i < a->n;) {
                size_t j = i;
                while (j < a->n && a->s[j] != '/')
                        j++;
                if (j > i) {
                        text_put(&want, "/", 1);
                        text_put(&want, a->s + i, j - i);
                        k++;
                        lua_rawgeti(L, -1, (lua_Integer) k);
                        CHECK(same(L, -1, want.s, want.n));
                        lua_pop(L, 1);
                }
                i = j + 1;
        }
        lua_rawgeti(L, -1, 1);
        CHECK(same(L, -1, "/", 1));
        CHECK(lua_rawlen(L, -2) == k);
        lua_pop(L, 2);

        /* first_related: c = field 0, dirs = the other fields, deep by turns. Only run. */
        lua_getfield(L, text, "first_related");
        push_field(L, in, 0);
        lua_createtable(L, 0, 0);
        for (size_t i = 1; i < in->n; i++) {
                lua_createtable(L, 2, 0);
                push_field(L, in, i);
                lua_rawseti(L, -2, 1);
                lua_pushboolean(L, i % 2);
                lua_rawseti(L, -2, 2);
                lua_rawseti(L, -2, (lua_Integer) i);
        }
        lua_call(L, 2, 1);
        CHECK(lua_isnil(L, -1) || (lua_tointeger(L, -1) >= 1 && (size_t) lua_tointeger(L, -1) < in->n));
        lua_pop(L, 1);
}

/* ---- globs ---- */

ORACLE static void lower(const Text *t, Text *out) {
        out->n = 0;
        text_put(out, t->s, t->n);
        for (size_t i = 0; i < out->n; i++)
                if (out->s[i] >= 'A' && out->s[i] <= 'Z')
                        out->s[i] = (char) (out->s[i] - 'A' + 'a');
}

/* Several '*' in the globs and a long text. */
ORACLE static bool slow_globs(const Input *in, size_t ng) {
        size_t stars = 0, longest = 0;
        for (size_t i = 0; i < in->n; i++) {
                for (size_t j = 0; i < ng && j < in->f[i].n; j++)
                        stars += in->f[i].s[j] == '*';
                longest = MAX(longest, in->f[i].n);
        }
        return stars > 2 && longest > 4096;
}

/* Every glob against every name: fnmatch, match_any and matching agree with fnmatch(3) (to
 * the first NUL, as C sees the strings), without regard to case with nocase. */
static void fuzz_globs(lua_State *L, int text, const Input *in) {
        /* Up to 8 globs and 8 names: each pair is looked at. */
        size_t m = MIN(in->n, (size_t) 16), ng = m / 2, nn = m - ng;
        bool nocase = in->op & 0x80;
        Text *a = &scratch1, *b = &scratch2;

        /* fnmatch(3) backtracks at each '*': with several, on long texts, it takes its time
         * (and so does scudo's own use of it for globs with '?', '[' or '\\'); not what this
         * target looks for. */
        if (slow_globs(in, ng))
                return;

        for (size_t i = 0; i < ng; i++)
                for (size_t j = 0; j < nn && i * nn + j < 64; j++) {
                        lua_getfield(L, text, "fnmatch");
                        push_field(L, in, i);
                        push_field(L, in, ng + j);
                        lua_call(L, 2, 1);
                        CHECK(lua_toboolean(L, -1) ==
                              (fnmatch(field(in, i)->s, field(in, ng + j)->s, 0) == 0));
                        lua_pop(L, 1);
                }

        /* matching(globs, names, nocase): the names (strings without NUL) any glob matches. */
        lua_getfield(L, text, "matching");
        push_list(L, in, 0);
        for (size_t i = ng + 1; i <= in->n; i++) {                              /* globs: the first ng */
                lua_pushnil(L);
                lua_rawseti(L, -2, (lua_Integer) i);
        }
        lua_createtable(L, 0, 0);
        size_t k = 0;
        for (size_t j = ng; j < m; j++)
                if (strlen(in->f[j].s) == in->f[j].n) {
                        push_field(L, in, j);
                        lua_rawseti(L, -2, (lua_Integer) ++k);
                }
        lua_pushboolean(L, nocase);
        lua_call(L, 3, 1);                                                      /* stack: .. set */
        for (size_t j = ng; j < m; j++) {
                if (strlen(in->f[j].s) != in->f[j].n)
                        continue;
                bool any = false;
                lower(&in->f[j], b);
                for (size_t i = 0; i < ng && !any; i++) {
                        lower(&in->f[i], a);
                        any = fnmatch(nocase ? a->s : in->f[i].s, nocase ? b->s : in->f[j].s, 0) == 0;
                }
                push_field(L, in, j);
                lua_rawget(L, -2);
                CHECK(lua_toboolean(L, -1) == any);
                lua_pop(L, 1);

                if (j >= ng + 4)
                        continue;
                lua_getfield(L, text, "match_any");
                push_list(L, in, 0);
                for (size_t i = ng + 1; i <= in->n; i++) {
                        lua_pushnil(L);
                        lua_rawseti(L, -2, (lua_Integer) i);
                }
                push_field(L, in, j);
                lua_pushboolean(L, nocase);
                lua_call(L, 3, 1);
                CHECK(lua_toboolean(L, -1) == any);
                lua_pop(L, 1);
        }
        lua_pop(L, 1);
}

/* command_matches(pattern, name, argv): only run (a "re:" pattern is left to the regex
 * fuzzing elsewhere: it is made "rx:"). */
static void fuzz_command(lua_State *L, int text, const Input *in) {
        lua_getfield(L, text, "command_matches");
        const Text *p = field(in, 0);
        if (p->n >= 3 && memcmp(p->s, "re:", 3) == 0)
                lua_pushfstring(L, "rx:%s", p->s + 3);
        else
                push_field(L, in, 0);
        push_field(L, in, 1);
        push_list(L, in, 1);
        lua_call(L, 3, 2);
        CHECK(lua_isboolean(L, -2) && lua_type(L, -1) == LUA_TSTRING);
        lua_pop(L, 2);
}

/* ---- tables ---- */

/* merge: acc and values each hold a list l, a map m and a scalar s made of the fields; the
 * lists append, the maps set, the scalar replaces. */
static void fuzz_merge(lua_State *L, int tables, const Input *in) {
        size_t half = in->n / 2;
        lua_getfield(L, tables, "merge");
        for (int side = 0; side < 2; side++) {
                size_t from = side ? half : 0, to = side ? in->n : half;
                lua_createtable(L, 0, 3);                                       /* stack: .. t */
                lua_createtable(L, 0, 0);
                lua_createtable(L, 0, 0);                                       /* stack: .. t l m */
                for (size_t i = from; i < to; i++) {
                        push_field(L, in, i);
                        lua_rawseti(L, -3, (lua_Integer) (i - from + 1));
                        push_field(L, in, i);
                        lua_pushinteger(L, (lua_Integer) (side * 1000 + i));
                        lua_rawset(L, -3);
                }
                lua_setfield(L, -3, "m");
                lua_setfield(L, -2, "l");
                push_field(L, in, from);
                lua_setfield(L, -2, "s");
        } /* stack: .. merge acc values */
        lua_pushvalue(L, -2);
        lua_insert(L, -4); /* stack: .. acc merge acc values */
        lua_createtable(L, 0, 3);
        static const char * const keys[][2] = { { "l", "list" }, { "m", "map" }, { "s", "scalar" } };
        for (size_t i = 0; i < 3; i++) {
                lua_createtable(L, 0, 1);
                lua_pushstring(L, keys[i][1]);
                lua_setfield(L, -2, "kind");
                lua_setfield(L, -2, keys[i][0]);
        }
        lua_pushnil(L);
        lua_pushboolean(L, false);
        lua_call(L, 5, 0);                                                      /* stack: .. acc */
        lua_getfield(L, -1, "l");
        CHECK(lua_rawlen(L, -1) == in->n);
        for (size_t i = 0; i < in->n; i++) {
                lua_rawgeti(L, -1, (lua_Integer) i + 1);
                CHECK(same(L, -1, in->f[i].s, in->f[i].n));
                lua_pop(L, 1);
        }
        lua_getfield(L, -2, "s");
        CHECK(same(L, -1, field(in, half)->s, field(in, half)->n));
        lua_pop(L, 3);
}

/* sorted_keys: every field a key once; the keys come back all, each after the one before. */
static void fuzz_sorted_keys(lua_State *L, int tables, const Input *in) {
        lua_getfield(L, tables, "sorted_keys");
        lua_createtable(L, 0, 0);
        for (size_t i = 0; i < in->n; i++) {
                push_field(L, in, i);
                lua_pushboolean(L, true);
                lua_rawset(L, -3);
        }
        size_t keys = 0;
        for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1))
                keys++;
        lua_call(L, 1, 1);
        CHECK(lua_rawlen(L, -1) == keys);
        for (size_t i = 2; i <= keys; i++) {
                lua_rawgeti(L, -1, (lua_Integer) i - 1);
                lua_rawgeti(L, -2, (lua_Integer) i);
                CHECK(lua_compare(L, -2, -1, LUA_OPLT));
                lua_pop(L, 2);
        }
        lua_pop(L, 1);
}

/* ---- unit properties ---- */

/* The fields as a list of values: a field starting with '#' is the integer of its length, one
 * starting with '?' a boolean, any other the string. Pushes it; out gets the text. */
static void push_values(lua_State *L, const Input *in, size_t from, Text *out) {
        char num[32];
        out->n = 0;
        text_put(out, "", 0);
        lua_createtable(L, 0, 0);
        for (size_t i = from; i < in->n; i++) {
                const Text *f = &in->f[i];
                if (i > from)
                        text_put(out, " ", 1);
                if (f->n > 0 && f->s[0] == '#') {
                        lua_pushinteger(L, (lua_Integer) f->n);
                        snprintf(num, sizeof(num), "%zu", f->n);
                        text_puts(out, num);
                } else if (f->n > 0 && f->s[0] == '?') {
                        lua_pushboolean(L, f->n % 2);
                        text_puts(out, f->n % 2 ? "yes" : "no");
                } else {
                        lua_pushlstring(L, f->s, f->n);
                        text_put(out, f->s, f->n);
                }
                lua_rawseti(L, -2, (lua_Integer) (i - from + 1));
        }
}

/* Whether a string among push_values' values holds a NUL byte. */
ORACLE static bool has_nul(const Input *in, size_t from) {
        for (size_t i = from; i < in->n; i++) {
                const Text *f = &in->f[i];
                if (!(f->n > 0 && (f->s[0] == '#' || f->s[0] == '?')) && strlen(f->s) != f->n)
                        return true;
        }
        return false;
}

static void fuzz_unit(lua_State *L, int unit, const Input *in) {
        static const char * const names[] = { "Description", "CPUWeight", "MemoryMax", "PrivateTmp",
                                              "Environment", "ReadWritePaths" };

        /* text: the values space-joined, or nil and why (a NUL byte). */
        lua_getfield(L, unit, "text");
        push_values(L, in, 0, &want);
        lua_call(L, 1, 2);
        if (has_nul(in, 0))
                CHECK(lua_isnil(L, -2) && same(L, -1, "holds a NUL byte", 16));
        else
                CHECK(same(L, -2, want.s, want.n));
        lua_pop(L, 2);

        /* check: the text, or nil and a message; never the reason as a value. */
        const char *name = names[(in->op >> 4) % ELEMENTSOF(names)];
        lua_getfield(L, unit, "check");
        lua_pushstring(L, name);
        push_values(L, in, 0, &want);
        lua_call(L, 2, 2);
        CHECK(lua_isnil(L, -2) ? lua_type(L, -1) == LUA_TSTRING : same(L, -2, want.s, want.n));
        lua_pop(L, 2);
}

/* ---- the TOML decoder's strings and keys ---- */

/* A basic string holding t: quotes, backslashes and control characters escaped. */
ORACLE static void toml_quote(Text *out, const Text *t) {
        text_put(out, "\"", 1);
        size_t run = 0;         /* bytes before i that go as they are */
        for (size_t i = 0; i < t->n; i++) {
                unsigned char c = (unsigned char) t->s[i];
                char e[8];
                if (c != '"' && c != '\\' && c >= 0x20 && c != 0x7f) {
                        run++;
                        continue;
                }
                text_put(out, t->s + i - run, run);
                run = 0;
                if (c == '"' || c == '\\') {
                        e[0] = '\\';
                        e[1] = (char) c;
                        text_put(out, e, 2);
                } else {
                        snprintf(e, sizeof(e), "\\u%04X", c);
                        text_puts(out, e);
                }
        }
        text_put(out, t->s + t->n - run, run);
        text_put(out, "\"", 1);
}

/* A document of one table (field 0 as its quoted name) whose keys are the other fields, each
 * quoted, each holding the next field as a string, and a dotted key made of two; decoded, the
 * values are the fields again (a field that is not UTF-8 makes it an error, which is fine). */
static void fuzz_toml(lua_State *L, int toml, const Input *in) {
        Text *doc = &doc_text;

        doc->n = 0;
        text_puts(doc, "[");
        toml_quote(doc, field(in, 0));
        text_puts(doc, "]\n");
        for (size_t i = 1; i + 1 < in->n; i += 2) {
                toml_quote(doc, &in->f[i]);
                text_puts(doc, in->op & 0x80 ? " = '''\n" : " = ");
                if (in->op & 0x80) {
                        /* A multi-line literal string, when the field allows one. */
                        if (memmem(in->f[i + 1].s, in->f[i + 1].n, "'''", 3) ||
                            memchr(in->f[i + 1].s, '\r', in->f[i + 1].n)) {
                                return;
                        }
                        text_put(doc, in->f[i + 1].s, in->f[i + 1].n);
                        text_puts(doc, "'''");
                } else
                        toml_quote(doc, &in->f[i + 1]);
                text_puts(doc, "\n");
        }
        lua_getfield(L, toml, "decode");
        lua_pushlstring(L, doc->s, doc->n);
        lua_pushliteral(L, "fuzz");
        lua_call(L, 2, 2);
        if (lua_isnil(L, -2)) {
                CHECK(lua_type(L, -1) == LUA_TSTRING); /* not UTF-8, a duplicate key, ... */
                lua_pop(L, 2);
                return;
        }
        push_field(L, in, 0);
        CHECK(lua_rawget(L, -3) == LUA_TTABLE);                                 /* stack: .. doc nil tbl */
        /* The last definition of a key wins only if there were no duplicates: the decoder
         * refuses those, so each key is defined once here. */
        for (size_t i = 1; i + 1 < in->n; i += 2) {
                push_field(L, in, i);
                lua_rawget(L, -2);
                CHECK(same(L, -1, in->f[i + 1].s, in->f[i + 1].n));
                lua_pop(L, 1);
        }
        lua_pop(L, 3);
}

/* ---- a state for each input ---- */

static const lua_CFunction modules[] = { luaopen_scudo_text, luaopen_scudo_tables, luaopen_scudo_unit,
                                         luaopen_scudo_toml };

/* A mapping, not malloc(): LeakSanitizer, looking for pointers to lost blocks, would scan it
 * all (most of the time, where it once was). */
#define REGION_SIZE (64U << 20)
#define RED_ZONE 32U

static char *region;
static size_t region_used;

static void *fuzz_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
        if (nsize == 0) {
                if (ptr)
                        ASAN_POISON_MEMORY_REGION(ptr, osize);
                return NULL;
        }
        size_t a = (nsize + 15) & ~(size_t) 15;
        if (a > REGION_SIZE - RED_ZONE - region_used)
                return NULL;                                    /* a memory error, for Lua */
        char *p = region + region_used;
        region_used += a + RED_ZONE;
        ASAN_UNPOISON_MEMORY_REGION(p, nsize);
        if (ptr) {
                memcpy(p, ptr, MIN(osize, nsize));
                ASAN_POISON_MEMORY_REGION(ptr, osize);
        }
        return p;
}

static int one_input(lua_State *L) {
        const Input *in = lua_touserdata(L, 1);
        int base = lua_gettop(L);
        for (size_t i = 0; i < ELEMENTSOF(modules); i++)
                lua_rawgeti(L, LUA_REGISTRYINDEX, 1000 + (lua_Integer) i);
        int text = base + 1, tables = base + 2, unit = base + 3, toml = base + 4;

        switch (in->op & 0x0F) {
        case 0:
        case 1:
                fuzz_expand(L, text, in, false);
                break;
        case 2:
        case 3:
                fuzz_expand(L, text, in, true);
                break;
        case 4:
        case 5:
                fuzz_paths(L, text, in);
                break;
        case 6:
                fuzz_globs(L, text, in);
                break;
        case 7:
                fuzz_command(L, text, in);
                break;
        case 8:
                fuzz_merge(L, tables, in);
                break;
        case 9:
                fuzz_sorted_keys(L, tables, in);
                break;
        case 10:
        case 11:
        case 12:
                fuzz_unit(L, unit, in);
                break;
        default:
                fuzz_toml(L, toml, in);
                break;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static Input in;

        if (size < 1)
                return 0;
        if (!region) {
                region = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (region == MAP_FAILED)
                        abort();
                ASAN_POISON_MEMORY_REGION(region, REGION_SIZE);
        }
        lua_State *L = lua_newstate(fuzz_alloc, NULL);
        if (!L)
                abort();
        for (size_t i = 0; i < ELEMENTSOF(modules); i++) {
                lua_pushcfunction(L, modules[i]);
                if (lua_pcall(L, 0, 1, 0) != LUA_OK)
                        abort();
                lua_rawseti(L, LUA_REGISTRYINDEX, 1000 + (lua_Integer) i);
        }
        input_parse(&in, data, size);
        /* An error raised (a bad argument) is an answer too: only crashes, sanitizer reports
         * and the CHECKs above are findings. */
        lua_pushcfunction(L, one_input);
        lua_pushlightuserdata(L, &in);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK && getenv("FUZZ_DEBUG"))
                fprintf(stderr, "error: %s\n", lua_tostring(L, -1));
        /* The state goes with its region, without lua_close(): nothing in it holds C
         * memory or anything else to give back. */
        ASAN_POISON_MEMORY_REGION(region, region_used);
        region_used = 0;
        return 0;
}
