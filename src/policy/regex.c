/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "policy/regex.h"
#include "util/macro.h"

/* What PCRE2 may allocate for one pattern, its compiled code and a match together. A compiled
 * pattern is at most 64 KiB (the link size of Debian's build is 2 bytes); a match of a pattern
 * without captures needs a few KiB of frames for a command's name. */
#define REGEX_MEMORY_MAX (1024 * 1024)
/* The steps (PCRE2's match limit) one match may take: far more than any pattern needs against
 * a name, and a few tens of milliseconds at most. */
#define REGEX_STEPS_MAX 1000000

/* ---- Reading POSIX, writing PCRE2 ----
 *
 * The grammar, as glibc's regcomp() reads it with REG_EXTENDED (RE_SYNTAX_POSIX_EXTENDED):
 *
 *   alternation := branch ('|' branch)*
 *   branch      := piece*
 *   piece       := atom quantifier*          (an anchor takes no quantifier)
 *   atom        := '(' alternation ')' | bracket | '\' char | char
 *   quantifier  := '*' | '+' | '?' | '{' m '}' | '{' [m] ',' [n] '}'
 *
 * Every character that stands for itself is written escaped, so that nothing of PCRE2's own
 * syntax ("(?", "\Q", "\x", "(*VERB)", a lazy or possessive quantifier) can come through; a
 * group is written "(?:...)"; a quantifier that follows another applies to the piece so far,
 * as in POSIX ("a+*" is "(?:a+)*"). What glibc refuses is refused too, so that a pattern is
 * never read otherwise than glibc reads it. */
typedef struct Reader {
        const char *start, *p, *end;
        unsigned depth;
        char *out;
        size_t n;
        char *msg;
} Reader;

static int refuse(Reader *r, int error, const char *why) {
        (void) snprintf(r->msg, REGEX_MSG_SIZE, "%s at offset %td", why, r->p - r->start);
        return -error;
}

static int emit(Reader *r, const char *s, size_t n) {
        if (r->n + n >= REGEX_PCRE2_MAX)
                return refuse(r, E2BIG, "too long once written out");
        memcpy(r->out + r->n, s, n);
        r->n += n;
        return 0;
}

static bool is_alnum(unsigned char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A character standing for itself, in a class or outside: a letter or digit as it is, other
 * printable ASCII after a '\' (which PCRE2 takes as the character itself, in a class too), any
 * other byte as \x{hh}. */
static int emit_char(Reader *r, unsigned char c) {
        char buf[8];

        if (is_alnum(c))
                return emit(r, (char *) &c, 1);
        if (c > ' ' && c < 0x7f)
                return emit(r, (char[]) { '\\', (char) c }, 2);
        int n = snprintf(buf, sizeof buf, "\\x{%02x}", c);
        return emit(r, buf, (size_t) n);
}

/* The POSIX character classes, which PCRE2 knows by the same names and, in the "C" locale of
 * its default tables, with the same members. */
static bool is_class_name(const char *name, size_t n) {
        static const char *const names[] = { "alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                             "lower", "print", "punct", "space", "upper", "xdigit" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
                        return true;
        return false;
}

/* One element of a bracket expression, r->p at it: a character (in *ret_c), a character class
 * (its name in [*ret_name, +*ret_n)), or an equivalence class. "[.c.]" and "[=c=]" are the
 * character c in the "C" locale; glibc refuses longer names there. */
typedef enum { ELEM_CHAR, ELEM_CLASS, ELEM_EQUIV } ElemKind;

static int read_element(Reader *r, ElemKind *ret_kind, unsigned char *ret_c, const char **ret_name,
                        size_t *ret_n) {
        const char *p = r->p;

        if (*p == '[' && p + 1 < r->end && strchr(":.=", p[1])) {
                char delim = p[1];
                const char *name = p + 2, *e = name;
                while (e + 1 < r->end && !(e[0] == delim && e[1] == ']'))
                        e++;
                if (e + 1 >= r->end)
                        return refuse(r, EINVAL, "'[' without its ']'");
                size_t n = (size_t) (e - name);
                if (delim == ':') {
                        if (!is_class_name(name, n))
                                return refuse(r, EINVAL, "an unknown character class");
                        *ret_kind = ELEM_CLASS;
                        *ret_name = name;
                        *ret_n = n;
                } else {
                        if (n != 1)
                                return refuse(r, EINVAL, "a collating element that is not one character");
                        *ret_kind = delim == '=' ? ELEM_EQUIV : ELEM_CHAR;
                        *ret_c = (unsigned char) name[0];
                }
                r->p = e + 2;
                return 0;
        }
        *ret_kind = ELEM_CHAR;
        *ret_c = (unsigned char) *p;
        r->p = p + 1;
        return 0;
}

/* A bracket expression, r->p at its '['. Inside, '\' is a character; a ']' first (after any
 * '^') is a character; a '-' is a range between two characters, or a character first or
 * last; "[:name:]", "[.c.]" and "[=c=]" as in read_element(). */
static int read_bracket(Reader *r) {
        int k;

        r->p++;
        if ((k = emit(r, "[", 1)) < 0)
                return k;
        if (r->p < r->end && *r->p == '^') {
                r->p++;
                if ((k = emit(r, "^", 1)) < 0)
                        return k;
        }
        for (bool first = true;; first = false) {
                if (r->p >= r->end)
                        return refuse(r, EINVAL, "'[' without its ']'");
                if (*r->p == ']' && !first)
                        break;
                if (*r->p == '-' && !first && !(r->p + 1 < r->end && r->p[1] == ']'))
                        return refuse(r, EINVAL, "a '-' that is neither a range nor first or last");
                ElemKind kind;
                unsigned char lo = 0, hi;
                const char *name = NULL;
                size_t n = 0;
                if ((k = read_element(r, &kind, &lo, &name, &n)) < 0)
                        return k;
                if (kind == ELEM_CLASS) {
                        if ((k = emit(r, "[:", 2)) < 0 || (k = emit(r, name, n)) < 0 ||
                            (k = emit(r, ":]", 2)) < 0)
                                return k;
                        continue;
                }
                if (kind == ELEM_CHAR && r->p + 1 < r->end && r->p[0] == '-' && r->p[1] != ']') {
                        r->p++;
                        if ((k = read_element(r, &kind, &hi, &name, &n)) < 0)
                                return k;
                        if (kind != ELEM_CHAR || hi < lo)
                                return refuse(r, EINVAL,
                                              "a range out of order or not between two characters");
                        if ((k = emit_char(r, lo)) < 0 || (k = emit(r, "-", 1)) < 0 ||
                            (k = emit_char(r, hi)) < 0)
                                return k;
                        continue;
                }
                if ((k = emit_char(r, lo)) < 0)
                        return k;
        }
        r->p++;
        return emit(r, "]", 1);
}

/* A count of at most RE_DUP_MAX (32767, glibc's limit), or -1 when there is no digit, or -2
 * when it is larger. */
static long read_count(Reader *r) {
        long n = -1;

        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
                n = (n < 0 ? 0 : n) * 10 + (*r->p - '0');
                if (n > RE_DUP_MAX)
                        return -2;
                r->p++;
        }
        return n;
}

/* One quantifier, r->p at it, written out as PCRE2 reads it ("{,n}" as "{0,n}"). glibc ends a
 * count at an escaped ',' as well; that is refused here. */
static int read_quantifier(Reader *r) {
        char c = *r->p;

        if (c != '{') {
                r->p++;
                return emit(r, &c, 1);
        }
        const char *open = r->p++;
        long m = read_count(r), n;
        bool comma = r->p < r->end && *r->p == ',';
        if (comma) {
                r->p++;
                n = read_count(r);
        } else
                n = m;
        if (m == -2 || n == -2) {
                r->p = open;
                return refuse(r, E2BIG, "a count over 32767");
        }
        if (r->p >= r->end || *r->p != '}' || (m < 0 && !comma) || (n >= 0 && m > n)) {
                r->p = open;
                return refuse(r, EINVAL, "a bad count '{...}'");
        }
        r->p++;
        char buf[32];
        int k;
        if (!comma)
                k = snprintf(buf, sizeof buf, "{%ld}", m);
        else if (n < 0)
                k = snprintf(buf, sizeof buf, "{%ld,}", m < 0 ? 0 : m);
        else
                k = snprintf(buf, sizeof buf, "{%ld,%ld}", m < 0 ? 0 : m, n);
        return emit(r, buf, (size_t) k);
}

static int read_alternation(Reader *r);

/* An atom, r->p at it; *ret_anchor tells whether it is an anchor. glibc's own escapes: \w \W
 * \s \S (the same classes in PCRE2), \b \B, \< \> (word start and end), \` \' (start and end
 * of the string). */
static int read_atom(Reader *r, bool *ret_anchor) {
        char c = *r->p;
        int k;

        *ret_anchor = false;
        switch (c) {
        case '(': {
                if (++r->depth > REGEX_DEPTH_MAX)
                        return refuse(r, E2BIG, "groups nested more than 32 deep");
                const char *open = r->p++;
                if ((k = emit(r, "(?:", 3)) < 0 || (k = read_alternation(r)) < 0)
                        return k;
                if (r->p >= r->end) {
                        r->p = open;
                        return refuse(r, EINVAL, "'(' without its ')'");
                }
                r->p++;
                r->depth--;
                return emit(r, ")", 1);
        }
        case '[':
                return read_bracket(r);
        case '\\': {
                static const struct {
                        char c;
                        bool anchor;
                        const char *pcre2;
                } escapes[] = {
                        { 'w', false, "\\w" }, { 'W', false, "\\W" }, { 's', false, "\\s" },
                        { 'S', false, "\\S" }, { 'b', true, "\\b" },  { 'B', true, "\\B" },
                        { '<', true, "\\b(?=\\w)" }, { '>', true, "\\b(?<=\\w)" },
                        { '`', true, "\\A" }, { '\'', true, "\\z" },
                };
                if (r->p + 1 >= r->end)
                        return refuse(r, EINVAL, "a '\\' at the end");
                c = r->p[1];
                if (c >= '1' && c <= '9')
                        return refuse(r, EINVAL,
                                      "a back-reference (not part of POSIX extended regular expressions)");
                r->p += 2;
                for (size_t i = 0; i < ELEMENTSOF(escapes); i++)
                        if (escapes[i].c == c) {
                                *ret_anchor = escapes[i].anchor;
                                return emit(r, escapes[i].pcre2, strlen(escapes[i].pcre2));
                        }
                return emit_char(r, (unsigned char) c);
        }
        case '^':
        case '$':
                /* anchors anywhere in POSIX extended syntax; "$" is the very end here (PCRE2's
                 * "$" would also match before a final newline) */
                *ret_anchor = true;
                r->p++;
                return emit(r, c == '^' ? "\\A" : "\\z", 2);
        case '.':
                /* any character, a newline too (PCRE2_DOTALL) */
                r->p++;
                return emit(r, ".", 1);
        case '*':
        case '+':
        case '?':
        case '{':
                return refuse(r, EINVAL, "a repetition of nothing");
        default:
                r->p++;
                return emit_char(r, (unsigned char) c);
        }
}

static int read_piece(Reader *r) {
        size_t start = r->n;
        bool anchor;
        int k = read_atom(r, &anchor);

        for (bool first = true; k >= 0 && r->p < r->end && strchr("*+?{", *r->p); first = false) {
                if (anchor)
                        return refuse(r, EINVAL, "a repetition of an anchor");
                if (!first) {
                        /* the piece so far in a group of its own */
                        if (r->n + 4 >= REGEX_PCRE2_MAX)
                                return refuse(r, E2BIG, "too long once written out");
                        memmove(r->out + start + 3, r->out + start, r->n - start);
                        memcpy(r->out + start, "(?:", 3);
                        r->n += 3;
                        if ((k = emit(r, ")", 1)) < 0)
                                return k;
                }
                k = read_quantifier(r);
        }
        return k;
}

static int read_alternation(Reader *r) {
        while (r->p < r->end && *r->p != ')') {
                int k = *r->p == '|' ? (r->p++, emit(r, "|", 1)) : read_piece(r);
                if (k < 0)
                        return k;
        }
        return 0;
}

int regex_translate(const char *re, size_t len, char ret[static REGEX_PCRE2_MAX],
                    char ret_msg[static REGEX_MSG_SIZE]) {
        if (len > REGEX_MAX || strnlen(re, len) != len) {
                (void) snprintf(ret_msg, REGEX_MSG_SIZE, "longer than %d bytes or holding NUL", REGEX_MAX);
                return -E2BIG;
        }
        Reader r = { .start = re, .p = re, .end = re + len, .out = ret, .msg = ret_msg };
        int k = emit(&r, "\\A(?:", 5);
        if (k >= 0)
                k = read_alternation(&r);
        if (k < 0)
                return k;
        if (r.p < r.end)
                return refuse(&r, EINVAL, "a ')' without its '(' (write '\\)' for the character)");
        if ((k = emit(&r, ")\\z", 3)) < 0)
                return k;
        ret[r.n] = 0;
        return 0;
}

/* ---- Compiling and matching within the budgets ---- */

/* PCRE2's allocations for one pattern, counted against REGEX_MEMORY_MAX: each block carries
 * its size in front of it (16 bytes, keeping malloc's alignment). */
typedef struct Budget {
        size_t used;
} Budget;

static void *budget_malloc(size_t size, void *data) {
        Budget *b = data;

        if (size > REGEX_MEMORY_MAX - b->used)
                return NULL;
        size_t *block = malloc(size + 16);
        if (!block)
                return NULL;
        block[0] = size;
        b->used += size;
        return (char *) block + 16;
}

static void budget_free(void *p, void *data) {
        Budget *b = data;

        if (!p)
                return;
        size_t *block = (size_t *) ((char *) p - 16);
        b->used -= block[0];
        free(block);
}

/* Everything one match needs, freed together. */
typedef struct Match {
        Budget budget;
        pcre2_general_context *general;
        pcre2_compile_context *compile;
        pcre2_match_context *match;
        pcre2_code *code;
        pcre2_match_data *data;
} Match;

static void match_done(Match *m) {
        pcre2_match_data_free(m->data);
        pcre2_code_free(m->code);
        pcre2_match_context_free(m->match);
        pcre2_compile_context_free(m->compile);
        pcre2_general_context_free(m->general);
}

/* Options: '.' matches a newline as in POSIX; the pattern is bytes, never UTF or Unicode
 * properties, whatever it says, and "\C" (one code unit) is refused. */
#define COMPILE_OPTIONS                                                                 \
        (PCRE2_DOTALL | PCRE2_NO_AUTO_CAPTURE | PCRE2_NEVER_UTF | PCRE2_NEVER_UCP |     \
         PCRE2_NEVER_BACKSLASH_C)

int regex_match(const char *re, size_t len, const char *s, size_t slen,
                char ret_msg[static REGEX_MSG_SIZE]) {
        _cleanup_(match_done) Match m = {};
        char pattern[REGEX_PCRE2_MAX];
        int error;
        PCRE2_SIZE offset;

        int r = regex_translate(re, len, pattern, ret_msg);
        if (r < 0)
                return r;
        m.general = pcre2_general_context_create(budget_malloc, budget_free, &m.budget);
        if (m.general)
                m.compile = pcre2_compile_context_create(m.general);
        if (m.compile)
                m.match = pcre2_match_context_create(m.general);
        if (!m.match || pcre2_set_match_limit(m.match, REGEX_STEPS_MAX) < 0) {
                (void) snprintf(ret_msg, REGEX_MSG_SIZE, "out of memory");
                return -ENOMEM;
        }
        m.code = pcre2_compile((PCRE2_SPTR) pattern, PCRE2_ZERO_TERMINATED, COMPILE_OPTIONS, &error, &offset,
                               m.compile);
        if (!m.code) {
                char why[REGEX_MSG_SIZE / 2];
                (void) pcre2_get_error_message(error, (PCRE2_UCHAR *) why, sizeof why);
                (void) snprintf(ret_msg, REGEX_MSG_SIZE, "%s",
                                error == PCRE2_ERROR_HEAP_FAILED ? "needs more than 1 MiB to compile" :
                                error == PCRE2_ERROR_PATTERN_TOO_LARGE ?
                                        "too large once its repetitions are written out" : why);
                return error == PCRE2_ERROR_HEAP_FAILED ? -ENOMEM :
                        error == PCRE2_ERROR_PATTERN_TOO_LARGE ? -E2BIG : -EINVAL;
        }
        m.data = pcre2_match_data_create(1, m.general);
        if (!m.data) {
                (void) snprintf(ret_msg, REGEX_MSG_SIZE, "needs more than 1 MiB to match");
                return -ENOMEM;
        }
        r = pcre2_match(m.code, (PCRE2_SPTR) s, slen, 0, 0, m.data, m.match);
        if (r >= 0)
                return 1;
        if (r == PCRE2_ERROR_NOMATCH)
                return 0;
        if (r == PCRE2_ERROR_MATCHLIMIT || r == PCRE2_ERROR_DEPTHLIMIT) {
                (void) snprintf(ret_msg, REGEX_MSG_SIZE, "takes more than %d steps to match '%.64s'",
                                REGEX_STEPS_MAX, s);
                return -ERANGE;
        }
        if (r == PCRE2_ERROR_NOMEMORY || r == PCRE2_ERROR_HEAPLIMIT) {
                (void) snprintf(ret_msg, REGEX_MSG_SIZE, "needs more than 1 MiB to match '%.64s'", s);
                return -ENOMEM;
        }
        char why[REGEX_MSG_SIZE / 2];
        (void) pcre2_get_error_message(r, (PCRE2_UCHAR *) why, sizeof why);
        (void) snprintf(ret_msg, REGEX_MSG_SIZE, "cannot be matched: %s", why);
        return -EIO;
}

/* False when s lacks the literal start of re, which every string re matches (whole) starts
 * with: the characters before the first special one, less one that a quantifier follows, an
 * escaped special character standing for itself. Known only of a regex without '(', ')' or
 * '|', which leaves it one concatenation; true for any other. */
static bool regex_prefix_allows(const char *re, size_t len, const char *s, size_t slen) {
        static const char special[] = ".[]()*+?{}|^$\\";
        const char *end = re + len, *s_end = s + slen;

        if (memchr(re, '(', len) || memchr(re, ')', len) || memchr(re, '|', len))
                return true;
        for (const char *p = re; p < end;) {
                char c = *p;
                const char *next = p + 1;
                if (c == '\\') {
                        if (next >= end || !strchr(special, *next))
                                break;
                        c = *next;
                        next++;
                } else if (strchr(special, c))
                        break;
                /* A quantifier after c, even '+' ("a+*" is "(a+)*"), may leave it out. */
                if (next < end && strchr("*+?{", *next))
                        break;
                if (s >= s_end || *s != c)
                        return false;
                s++;
                p = next;
        }
        return true;
}

int regex_matches(const char *re, size_t len, const char *s, size_t slen,
                  char ret_msg[static REGEX_MSG_SIZE]) {
        if (len == 2 && memcmp(re, ".*", 2) == 0)
                return 1;
        if (!regex_prefix_allows(re, len, s, slen))
                return 0;
        return regex_match(re, len, s, slen, ret_msg);
}
