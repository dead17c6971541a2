/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* git's configuration less its credentials (git-config-filter.h). The text is read with git's
 * own rules (config.c: sections, "subsections", quoting, backslash-newline continuing a value,
 * comments after # and ;) so that what is kept means what it meant, and what is taken out is
 * one whole entry. Anything that does not read as git's syntax is taken out too: a parser of
 * ours that disagreed with git's must not be a way to smuggle a token past the filter. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/git-config-filter.h"
#include "util/macro.h"
#include "util/secret-value.h"
#include "util/strv.h"

typedef struct Section {
        char name[64];          /* lower case; "" before the first header */
        bool drop;              /* every entry of it goes (a credential subsection, a bad header) */
} Section;

static bool is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_key_char(char c) {
        return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

static char lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* The end of the line starting at i: the index of its '\n', or n. */
static size_t line_end(const char *s, size_t n, size_t i) {
        const char *nl = memchr(s + i, '\n', n - i);
        return nl ? (size_t) (nl - s) : n;
}

/* Whether a section header starts at s[i] ('['), and then where it ends (just past ']'), its
 * lower-case name (at most sizeof(name) - 1 bytes) and its subsection, unescaped, in sub
 * (malloc'ed; NULL for none). A header git would refuse returns false. */
static bool parse_header(const char *s, size_t end, size_t i, size_t *ret_end, char name[static 64],
                         char **ret_sub) {
        size_t j = i + 1, l = 0;
        *ret_sub = NULL;
        while (j < end && (is_key_char(s[j]) || s[j] == '.')) {
                if (l >= 63)
                        return false;
                name[l++] = lower(s[j++]);
        }
        name[l] = 0;
        if (l == 0 || j >= end)
                return false;
        if (s[j] == ']') {
                /* [section.subsection], the old form: the part after the first dot */
                char *dot = strchr(name, '.');
                if (dot) {
                        *ret_sub = strdup(dot + 1);
                        if (!*ret_sub)
                                return false;
                        *dot = 0;
                }
                *ret_end = j + 1;
                return true;
        }
        if (!is_blank(s[j]) || strchr(name, '.'))
                return false;
        while (j < end && is_blank(s[j]))
                j++;
        if (j >= end || s[j] != '"')
                return false;
        _cleanup_free_ char *sub = malloc(end - j);
        size_t k = 0;
        if (!sub)
                return false;
        for (j++; j < end && s[j] != '"'; j++) {
                if (s[j] == '\\') {
                        if (++j >= end)
                                return false;
                }
                sub[k++] = s[j];
        }
        if (j + 1 >= end || s[j] != '"' || s[j + 1] != ']')
                return false;
        sub[k] = 0;
        *ret_end = j + 2;
        *ret_sub = TAKE_PTR(sub);
        return true;
}

/* Where the value of an entry starting its value at s[i] ends: just past the newline that
 * ends it (continuation lines included), or n. A quote left open at a newline is git's
 * "bad config line": then false. */
static bool value_end(const char *s, size_t n, size_t i, size_t *ret) {
        bool quote = false, comment = false;
        for (; i < n; i++) {
                char c = s[i];
                if (c == '\n') {
                        if (quote)
                                return false;
                        *ret = i + 1;
                        return true;
                }
                if (comment)
                        continue;
                if (c == '\\') {
                        if (i + 1 < n && s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n')
                                i++;
                        i++;    /* the escaped character, or the newline that continues */
                        continue;
                }
                if (c == '"')
                        quote = !quote;
                else if (!quote && (c == '#' || c == ';'))
                        comment = true;
        }
        if (quote)
                return false;
        *ret = n;
        return true;
}

/* The value starting at s[i] up to `end`, as git reads it: quotes and comments gone, escapes
 * and continuations resolved, blanks at both ends trimmed. */
static char *decode_value(const char *s, size_t i, size_t end) {
        char *d = malloc(end - i + 1);
        size_t l = 0, keep = 0;
        bool quote = false;
        if (!d)
                return NULL;
        while (i < end && is_blank(s[i]))
                i++;
        for (; i < end; i++) {
                char c = s[i];
                if (c == '\n' || (!quote && (c == '#' || c == ';')))
                        break;
                if (c == '\\' && i + 1 < end) {
                        c = s[++i];
                        if (c == '\r' || c == '\n') {
                                if (c == '\r' && i + 1 < end)
                                        i++;
                                continue;
                        }
                        d[l++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'b' ? '\b' : c;
                        keep = l;
                        continue;
                }
                if (c == '"') {
                        quote = !quote;
                        continue;
                }
                d[l++] = c;
                if (quote || !is_blank(c))
                        keep = l;
        }
        d[keep] = 0;
        return d;
}

/* Whether an entry `key` (lower case) of section `sec` goes, by its name. */
static bool credential_key(const char *sec, const char *key) {
        return streq(sec, "credential") || streq(key, "extraheader") || streq(key, "cookiefile") ||
               strstr(key, "pass") || strstr(key, "token") || strstr(key, "secret");
}

static int emit(FILE *f, const char *s, size_t l) {
        return fwrite(s, 1, l, f) == l ? 0 : -ENOMEM;
}

/* One filtering: the text, where the filtered copy goes, and what is known so far. */
typedef struct Filter {
        const char *s;
        size_t n;
        FILE *f;
        Section sec;
        unsigned removed;
        char **includes;
} Filter;

static int note(Filter *F, const char *line) {
        F->removed++;
        return fputs(line, F->f) < 0 ? -ENOMEM : 0;
}

/* A section header at s[*p] ('['), from the line's start i. Returns < 0 on an error, 1 when
 * the line is done with, 0 when an entry follows on the line: at *p, shown from *start. */
static int filter_header(Filter *F, size_t i, size_t eol, size_t next, size_t *p, size_t *start) {
        const char *s = F->s;
        size_t hend;
        _cleanup_free_ char *sub = NULL;
        int r;
        if (!parse_header(s, eol, *p, &hend, F->sec.name, &sub)) {
                F->sec.drop = true;
                r = note(F, "# (scudo: a section git cannot read removed)\n");
                return r < 0 ? r : 1;
        }
        F->sec.drop = (sub && secret_value_kind(sub, strlen(sub))) ||
                      secret_value_kind(s + i, hend - i);
        if (F->sec.drop)
                r = note(F, "# (scudo: a section naming a credential removed)\n");
        else
                r = emit(F->f, s + i, hend - i);
        /* An entry may follow on the same line: [core] editor = vi */
        size_t q = hend;
        while (q < eol && is_blank(s[q]))
                q++;
        if (q == eol || s[q] == '#' || s[q] == ';') {
                if (r >= 0 && !F->sec.drop && !secret_value_kind(s + hend, eol - hend))
                        r = emit(F->f, s + hend, next - hend);
                else if (r >= 0 && next > eol)
                        r = emit(F->f, "\n", 1);
                return r < 0 ? r : 1;
        }
        /* on a line of its own, as git reads it all the same: on the header's line the two
         * could read as one credential (a subsection ending in `secret="`, then an entry) */
        if (r >= 0)
                r = emit(F->f, "\n\t", 2);
        *p = *start = q;
        return r;
}

/* An entry, name [= value], at s[p], shown from start. *i: where the next line starts. */
static int filter_entry(Filter *F, size_t p, size_t start, size_t eol, size_t next, size_t *i) {
        const char *s = F->s;
        size_t k = p;
        char key[64];
        size_t kl = 0;
        bool ok = is_alpha(s[k]);
        int r = 0;
        while (ok && k < eol && is_key_char(s[k])) {
                if (kl >= sizeof(key) - 1) {
                        ok = false;
                        break;
                }
                key[kl++] = lower(s[k++]);
        }
        key[kl] = 0;
        size_t v = k;
        while (v < eol && is_blank(s[v]))
                v++;
        size_t end = next;
        if (ok && v < eol && s[v] == '=')
                ok = value_end(s, F->n, v + 1, &end);
        else if (ok && v < eol && s[v] != '#' && s[v] != ';')
                ok = false;
        /* A NUL ends the value where git reads it, but a copy shows what follows it too. */
        if (ok && memchr(s + p, 0, end - p))
                ok = false;
        *i = ok ? next : MAX(next, end);
        if (!ok || !F->sec.name[0])
                /* Not git's syntax (or an entry before any section): not shown. */
                return note(F, "# (scudo: a line git cannot read removed)\n");
        /* The value as git reads it is looked at too: quotes ("gh""p_...") and continued
         * lines can split a token that git joins. */
        _cleanup_free_ char *decoded = v < eol && s[v] == '=' ? decode_value(s, v + 1, end) : NULL;
        if (v < eol && s[v] == '=' && !decoded)
                return -ENOMEM;
        *i = end;
        if (F->sec.drop || credential_key(F->sec.name, key) || secret_value_kind(s + p, end - p) ||
            (decoded && secret_value_kind(decoded, strlen(decoded)))) {
                char what[160];
                F->removed++;
                (void) snprintf(what, sizeof(what), "%s.%s", F->sec.name, key);
                /* the name itself, unless it could be a token ([x] sk-...= 1) */
                return fprintf(F->f, "\t# (scudo: %s removed: a credential)\n",
                               secret_value_kind(what, strlen(what)) ? "an entry" : what) < 0 ? -ENOMEM : 0;
        }
        if (streq(key, "path") && (streq(F->sec.name, "include") || streq(F->sec.name, "includeif")) &&
            decoded) {
                r = strv_push(&F->includes, decoded);
                if (r >= 0)
                        decoded = NULL;
        }
        if (r >= 0)
                r = emit(F->f, s + start, end - start);
        return r;
}

int git_config_filter(const char *s, size_t n, GitConfigFiltered *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        _cleanup_strv_free_ char **includes = NULL;
        Filter F = { .s = s, .n = n, .sec = { .name = "" } };
        int r = 0;

        F.f = open_memstream(&buf, &len);
        if (!F.f)
                return -ENOMEM;
        size_t i = 0;
        if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {      /* git skips a UTF-8 BOM */
                r = emit(F.f, s, 3);
                i = 3;
        }
        while (r >= 0 && i < n) {
                size_t eol = line_end(s, n, i), next = eol < n ? eol + 1 : n;
                size_t p = i, start = i;        /* start: what is emitted of a kept entry */
                while (p < eol && is_blank(s[p]))
                        p++;
                if (p == eol || s[p] == '#' || s[p] == ';') {
                        /* A blank line or a comment: kept unless it holds a credential. */
                        if (!F.sec.drop && !secret_value_kind(s + i, eol - i))
                                r = emit(F.f, s + i, next - i);
                        else if (p < eol)
                                r = note(&F, "# (scudo: a comment holding a credential removed)\n");
                        i = next;
                        continue;
                }
                if (s[p] == '[') {
                        r = filter_header(&F, i, eol, next, &p, &start);
                        if (r != 0) {
                                i = next;
                                continue;
                        }
                }
                r = filter_entry(&F, p, start, eol, next, &i);
        }
        includes = F.includes;
        if (fclose(F.f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = (GitConfigFiltered) {
                .text = TAKE_PTR(buf),
                .len = len,
                .removed = F.removed,
                .includes = TAKE_PTR(includes),
        };
        return 0;
}

void git_config_filtered_done(GitConfigFiltered *f) {
        free(f->text);
        strv_free(f->includes);
        *f = (GitConfigFiltered) {};
}
