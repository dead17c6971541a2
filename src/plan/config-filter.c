/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A tool's configuration less its credentials (config-filter.h): by line for the formats made
 * of lines (INI-like, TOML, YAML, .properties, KEY=VALUE, XML), and through json-c for JSON.
 * What is a credential is util/secret-value.c's to say. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/config-filter.h"
#include "util/file-util.h"
#include "util/macro.h"
#include "util/secret-value.h"

/* A configuration file larger than this is not read: it is shown empty. */
#define MAX_CONFIG_SIZE (4u << 20)

ConfigFormat config_format_of(const char *path) {
        size_t l = strlen(path);
        if (l >= 5 && strcmp(path + l - 5, ".json") == 0)
                return CONFIG_FORMAT_JSON;
        return CONFIG_FORMAT_LINES;
}

static bool blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

/* The indentation of the line at s (n bytes), and whether it holds nothing but blanks or a
 * comment. */
static size_t indentation(const char *s, size_t n, bool *empty) {
        size_t i = 0;
        while (i < n && blank(s[i]))
                i++;
        *empty = i == n || s[i] == '#' || s[i] == ';' || (i + 1 < n && s[i] == '-' && s[i + 1] == '-');
        return i;
}

/* A section header, `[name]` or `[[name]]` (INI, TOML), at s: whether it is one, and whether
 * its last dotted name is a secret field ([credentials], [registries.x.auth]). */
static bool section_header(const char *s, size_t n, bool *secret) {
        if (n < 3 || s[0] != '[')
                return false;
        const char *close = memchr(s, ']', n);
        if (!close)
                return false;
        const char *b = s + 1;
        while (b < close && *b == '[')
                b++;
        const char *e = close;
        const char *dot = e;
        while (dot > b && dot[-1] != '.')
                dot--;
        *secret = secret_field_name(dot, (size_t) (e - dot));
        return true;
}

/* A YAML key without a value (`github-oauth:`, `auth:` before its members), whose name is a
 * secret field. */
static bool yaml_secret_parent(const char *s, size_t n) {
        while (n > 0 && blank(s[n - 1]))
                n--;
        if (n < 2 || s[n - 1] != ':')
                return false;
        size_t b = 0;
        if (s[0] == '"' || s[0] == '\'')
                b = 1;
        size_t e = n - 1;
        if (e > b && (s[e - 1] == '"' || s[e - 1] == '\''))
                e--;
        for (size_t i = b; i < e; i++)
                if (blank(s[i]) || s[i] == ':')
                        return false;
        return secret_field_name(s + b, e - b);
}

static bool ident_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The parentheses the n bytes at s open and leave open (closed ones count off; none inside a
 * double-quoted string). */
static int open_parens(const char *s, size_t n) {
        int depth = 0;
        bool quoted = false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\\' && quoted)
                        i++;
                else if (s[i] == '"')
                        quoted = !quoted;
                else if (!quoted && s[i] == '(')
                        depth++;
                else if (!quoted && s[i] == ')')
                        depth--;
        }
        return depth;
}

/* A call named as a secret on the line at s: sbt's `credentials += Credentials("realm",
 * "host", "user", "password")`, whose password is an argument by its place. Returns the
 * parentheses it leaves open for the lines after (at least 0), or -1 when there is none. */
static int secret_call(const char *s, size_t n) {
        for (size_t k = 1; k < n; k++) {
                if (s[k] != '(')
                        continue;
                size_t b = k;
                while (b > 0 && ident_char(s[b - 1]))
                        b--;
                if (b < k && secret_field_name(s + b, k - b))
                        return MAX(open_parens(s + k, n - k), 0);
        }
        return -1;
}

/* An XML element named as a secret opened on the line at s and not closed on it
 * (<packageSourceCredentials>, NuGet's): its name, for the line that closes it, in name. */
static bool secret_element(const char *s, size_t n, char *name, size_t size) {
        while (n > 0 && blank(s[n - 1]))
                n--;
        if (n < 3 || s[0] != '<' || s[1] == '/' || s[n - 1] != '>' || s[n - 2] == '/')
                return false;
        size_t l = 1;
        while (l < n && (ident_char(s[l]) || s[l] == '-' || s[l] == '.' || s[l] == ':'))
                l++;
        if (l == 1 || l - 1 >= size || !secret_field_name(s + 1, l - 1) || memmem(s, n, "</", 2))
                return false;
        memcpy(name, s + 1, l - 1);
        name[l - 1] = 0;
        return true;
}

/* A line that says which field its value is by an attribute (NuGet's <add key="Password"
 * value="..."/>), or by its first word and a blank (a netrc entry over several lines:
 * `  password x`), naming a secret. */
static bool secret_by_key(const char *s, size_t n) {
        for (const char *k = s; (k = memmem(k, n - (size_t) (k - s), "key=\"", 5)); k += 5) {
                const char *v = k + 5, *q = memchr(v, '"', n - (size_t) (v - s));
                if (q && secret_field_name(v, (size_t) (q - v)))
                        return true;
        }
        size_t w = 0;
        while (w < n && ident_char(s[w]))
                w++;
        if (w == 0 || w == n || !blank(s[w]) || !secret_field_name(s, w))
                return false;
        size_t v = w;
        while (v < n && blank(s[v]))
                v++;
        return v < n && s[v] != '=' && s[v] != ':' && s[v] != '(' && s[v] != '+';
}

static int filter_lines(const char *text, size_t n, ConfigFiltered *ret) {
        char *out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        unsigned removed = 0;
        bool in_secret_section = false;
        size_t secret_indent = SIZE_MAX;        /* under a YAML secret parent: deeper lines */
        int call_depth = 0;                     /* in a secret call's arguments: lines until it closes */
        char element[128] = "";                 /* in a secret XML element: lines until it closes */

        for (size_t i = 0; i < n;) {
                const char *nl = memchr(text + i, '\n', n - i);
                size_t end = nl ? (size_t) (nl - text) : n, len = end - i;
                const char *line = text + i;
                bool empty, secret = false;
                size_t ind = indentation(line, len, &empty);

                if (!empty && ind <= secret_indent)
                        secret_indent = SIZE_MAX;
                bool header = ind == 0 && section_header(line, len, &secret);
                if (header)
                        in_secret_section = secret;
                bool drop = !empty && !header && (in_secret_section || secret_indent != SIZE_MAX);
                drop = drop || (header && secret);
                if (call_depth > 0) {
                        drop = true;
                        call_depth = MAX(call_depth + open_parens(line, len), 0);
                } else if (element[0]) {
                        char close[sizeof(element) + 2];
                        int l = snprintf(close, sizeof(close), "</%s", element);
                        drop = true;
                        if (l > 0 && memmem(line, len, close, (size_t) l))
                                element[0] = 0;
                } else if (!empty) {
                        int d = secret_call(line, len);
                        if (d >= 0) {
                                drop = true;
                                call_depth = d;
                        }
                        drop = drop || secret_element(line + ind, len - ind, element, sizeof(element)) ||
                                secret_by_key(line + ind, len - ind);
                }
                drop = drop || secret_value_kind(line, len);
                if (!drop && !empty && yaml_secret_parent(line + ind, len - ind))
                        secret_indent = ind;
                if (drop)
                        removed++;
                else {
                        memcpy(out + o, line, len);
                        o += len;
                }
                if (nl)
                        out[o++] = '\n';
                i = nl ? end + 1 : n;
        }
        out[o] = 0;
        *ret = (ConfigFiltered) { .text = out, .len = o, .removed = removed };
        return 0;
}

/* Takes out of o (an object or array, recursively) every member named as a secret and every
 * string that is a credential; counts them in *removed. */
static void filter_json(json_object *o, unsigned *removed) {
        if (json_object_is_type(o, json_type_object)) {
                /* Names to delete are gathered first: deleting while iterating is not allowed. */
                const char *doomed[64];
                size_t nd = 0;
                json_object_object_foreach(o, key, val) {
                        bool secret = secret_field_name(key, strlen(key)) ||
                                (json_object_is_type(val, json_type_string) &&
                                 secret_value_kind(json_object_get_string(val),
                                                   (size_t) json_object_get_string_len(val)));
                        if (secret && nd < ELEMENTSOF(doomed))
                                doomed[nd++] = key;
                        else if (secret)
                                json_object_object_add(o, key, json_object_new_string(""));
                        else
                                filter_json(val, removed);
                }
                for (size_t i = 0; i < nd; i++)
                        json_object_object_del(o, doomed[i]);
                *removed += (unsigned) nd;
        } else if (json_object_is_type(o, json_type_array)) {
                size_t n = json_object_array_length(o);
                for (size_t i = 0; i < n; i++) {
                        json_object *v = json_object_array_get_idx(o, i);
                        if (json_object_is_type(v, json_type_string) &&
                            secret_value_kind(json_object_get_string(v),
                                              (size_t) json_object_get_string_len(v))) {
                                json_object_array_put_idx(o, i, json_object_new_string(""));
                                (*removed)++;
                        } else
                                filter_json(v, removed);
                }
        }
}

static int filter_json_text(const char *text, size_t n, ConfigFiltered *ret) {
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        json_object *o = n <= INT32_MAX ? json_tokener_parse_ex(tok, text, (int) n) : NULL;
        size_t end = o ? json_tokener_get_parse_end(tok) : 0;
        while (end < n && (blank(text[end]) || text[end] == '\n'))
                end++;
        bool whole = o && json_tokener_get_error(tok) == json_tokener_success && end == n;
        json_tokener_free(tok);
        unsigned removed = 0;
        const char *s = "{}";
        if (whole) {
                filter_json(o, &removed);
                s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                   JSON_C_TO_STRING_NOSLASHESCAPE);
        } else
                removed = n > 0;        /* what cannot be read is not shown */
        char *copy = s ? strdup(s) : NULL;
        json_object_put(o);
        if (!copy)
                return -ENOMEM;
        *ret = (ConfigFiltered) { .text = copy, .len = strlen(copy), .removed = removed };
        return 0;
}

int config_filter(const char *text, size_t n, ConfigFormat format, ConfigFiltered *ret) {
        *ret = (ConfigFiltered) {};
        if (format == CONFIG_FORMAT_JSON)
                return filter_json_text(text, n, ret);
        return filter_lines(text, n, ret);
}

int config_read_filtered(const char *canonical, ConfigFiltered *ret) {
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r = read_regular_file(canonical, MAX_CONFIG_SIZE, &text, &size);
        if (r < 0)
                return r;
        return config_filter(text, size, config_format_of(canonical), ret);
}

void config_filtered_done(ConfigFiltered *f) {
        free(f->text);
        *f = (ConfigFiltered) {};
}
