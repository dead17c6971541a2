/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Values that are credentials by their shape, whatever the variable or key holding them is
 * called: a name-based rule misses what it did not think of (BW_SESSION, SENTRY_DSN), the
 * value of a token does not hide what it is. Each test looks for the credential anywhere in
 * the value, at a word boundary, so that `--token=ghp_...` or `Bearer ...` is found too. */
#include <stdbool.h>
#include <string.h>

#include "util/secret-value.h"

enum {
        CS_ALNUM,               /* [A-Za-z0-9] */
        CS_WORD,                /* [A-Za-z0-9_] */
        CS_WORD_DASH,           /* [A-Za-z0-9_-] (base64url) */
        CS_UPPER_DIGIT,         /* [A-Z0-9] */
};

typedef struct Token {
        const char *prefix;
        const char *kind;
        unsigned char charset;
        unsigned short min;     /* fewest characters after the prefix */
        unsigned short exact;   /* 1: exactly `min`, and no letter or digit after them */
        unsigned short digit;   /* 1: at least one digit among them (the prefix alone is common) */
} Token;

/* The prefixes of well-known token formats, each with the shortest body real tokens have
 * (shorter bodies are names and words: "sk-learn", "npm_config"). A longer prefix comes before
 * a shorter one it starts with (sk-ant- before sk-). */
static const Token tokens[] = {
        { "ghp_",        "a GitHub token",                  CS_ALNUM,       30, 0, 0 },
        { "gho_",        "a GitHub token",                  CS_ALNUM,       30, 0, 0 },
        { "ghu_",        "a GitHub token",                  CS_ALNUM,       30, 0, 0 },
        { "ghs_",        "a GitHub token",                  CS_ALNUM,       30, 0, 0 },
        { "ghr_",        "a GitHub token",                  CS_ALNUM,       30, 0, 0 },
        { "github_pat_", "a GitHub token",                  CS_WORD,        30, 0, 0 },
        { "glpat-",      "a GitLab token",                  CS_WORD_DASH,   20, 0, 0 },
        { "gldt-",       "a GitLab token",                  CS_WORD_DASH,   20, 0, 0 },
        { "glrt-",       "a GitLab token",                  CS_WORD_DASH,   20, 0, 0 },
        { "glptt-",      "a GitLab token",                  CS_WORD_DASH,   20, 0, 0 },
        { "glft-",       "a GitLab token",                  CS_WORD_DASH,   20, 0, 0 },
        { "glcbt-",      "a GitLab token",                  CS_WORD_DASH,   20, 0, 0 },
        { "glsoat-",     "a GitLab token",                  CS_WORD_DASH,   20, 0, 0 },
        { "xoxa-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxb-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxp-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxr-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxs-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxe-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xapp-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "sk-ant-",     "an Anthropic key",                CS_WORD_DASH,   20, 0, 0 },
        { "sk-",         "an OpenAI key",                   CS_WORD_DASH,   20, 0, 1 },
        { "sk_live_",    "a Stripe key",                    CS_ALNUM,       20, 0, 0 },
        { "rk_live_",    "a Stripe key",                    CS_ALNUM,       20, 0, 0 },
        { "AKIA",        "an AWS access key id",            CS_UPPER_DIGIT, 16, 1, 0 },
        { "ASIA",        "an AWS access key id",            CS_UPPER_DIGIT, 16, 1, 0 },
        { "AIza",        "a Google API key",                CS_WORD_DASH,   35, 1, 0 },
        { "npm_",        "an npm token",                    CS_ALNUM,       36, 1, 1 },
        { "pypi-",       "a PyPI token",                    CS_WORD_DASH,   50, 0, 0 },
        { "hf_",         "a Hugging Face token",            CS_ALNUM,       30, 0, 0 },
        { "dckr_pat_",   "a Docker token",                  CS_WORD_DASH,   20, 0, 0 },
};

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_upper(char c) {
        return c >= 'A' && c <= 'Z';
}

static bool is_alnum(char c) {
        return is_digit(c) || is_upper(c) || (c >= 'a' && c <= 'z');
}

static bool in_charset(char c, unsigned charset) {
        switch (charset) {
        case CS_ALNUM:
                return is_alnum(c);
        case CS_WORD:
                return is_alnum(c) || c == '_';
        case CS_WORD_DASH:
                return is_alnum(c) || c == '_' || c == '-';
        default:
                return is_upper(c) || is_digit(c);
        }
}

static char lower(char c) {
        return is_upper(c) ? (char) (c - 'A' + 'a') : c;
}

/* Whether the n bytes at s start with the lower-case word w, without regard to case. */
static bool starts_nocase(const char *s, size_t n, const char *w) {
        size_t l = strlen(w);
        if (n < l)
                return false;
        for (size_t i = 0; i < l; i++)
                if (lower(s[i]) != w[i])
                        return false;
        return true;
}

/* How many of the n bytes at s are in the charset, from the start. */
static size_t span(const char *s, size_t n, unsigned charset) {
        size_t i = 0;
        while (i < n && in_charset(s[i], charset))
                i++;
        return i;
}

static bool token_at(const Token *t, const char *s, size_t n) {
        size_t pl = strlen(t->prefix);
        if (n < pl || memcmp(s, t->prefix, pl) != 0)
                return false;
        size_t body = span(s + pl, n - pl, t->charset);
        if (body < t->min)
                return false;
        if (t->exact && (body != t->min || (pl + body < n && is_alnum(s[pl + body]))))
                return false;
        if (t->digit) {
                bool d = false;
                for (size_t i = pl; i < pl + body && !d; i++)
                        d = is_digit(s[i]);
                if (!d)
                        return false;
        }
        return true;
}

/* eyJ...(header).eyJ...(payload).: a JSON object, base64url-encoded, twice. */
static bool jwt_at(const char *s, size_t n) {
        for (int part = 0; part < 2; part++) {
                if (n < 3 || memcmp(s, "eyJ", 3) != 0)
                        return false;
                size_t l = span(s, n, CS_WORD_DASH);
                if (l < 10 || l >= n || s[l] != '.')
                        return false;
                s += l + 1;
                n -= l + 1;
        }
        return true;
}

/* A URL whose authority holds user:password@ (with a password), or a long user name alone
 * (`https://<token>@host`). `i` is where "://" starts. */
static const char *url_with_credentials(const char *s, size_t n, size_t i) {
        /* A scheme: a letter, then letters, digits, '+', '-', '.'. */
        size_t b = i;
        while (b > 0 && (is_alnum(s[b - 1]) || s[b - 1] == '+' || s[b - 1] == '-' || s[b - 1] == '.'))
                b--;
        if (b == i || !is_alnum(s[b]) || is_digit(s[b]))
                return NULL;
        const char *a = s + i + 3, *end = s + n, *at = NULL, *q;
        for (q = a; q < end && !strchr("/?#\"'<> \t\r\n\\", *q); q++)
                if (*q == '@')
                        at = q;
        if (!at)
                return NULL;
        const char *colon = memchr(a, ':', (size_t) (at - a));
        if (colon && colon + 1 < at)
                return "a URL with a password";
        if (!colon && at - a >= 20)
                return "a URL with a token as its user name";
        return NULL;
}

/* -----BEGIN ... PRIVATE KEY----- (PKCS#8, RSA, EC, OpenSSH, PGP's "PRIVATE KEY BLOCK"). */
static bool pem_private_key_at(const char *s, size_t n) {
        static const char begin[] = "-----BEGIN ";
        if (n < sizeof(begin) - 1 || memcmp(s, begin, sizeof(begin) - 1) != 0)
                return false;
        static const char key[] = "PRIVATE KEY";
        for (size_t i = sizeof(begin) - 1; i + sizeof(key) - 1 <= n && s[i] != '\n' && s[i] != '-'; i++)
                if (memcmp(s + i, key, sizeof(key) - 1) == 0)
                        return true;
        return false;
}

const char *secret_value_kind(const char *s, size_t n) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (c == ':' && i + 2 < n && s[i + 1] == '/' && s[i + 2] == '/') {
                        const char *k = url_with_credentials(s, n, i);
                        if (k)
                                return k;
                }
                if (c == '-' && pem_private_key_at(s + i, n - i))
                        return "a PEM private key";
                /* The rest start a word. */
                if (i > 0 && is_alnum(s[i - 1]))
                        continue;
                if (c == 'e' && jwt_at(s + i, n - i))
                        return "a JSON Web Token";
                if (lower(c) == 'b' && starts_nocase(s + i, n - i, "bearer ") &&
                    span(s + i + 7, n - i - 7, CS_WORD_DASH) >= 16)
                        return "a bearer token";
                if (lower(c) == 'a' && starts_nocase(s + i, n - i, "authorization:"))
                        return "an Authorization header";
                if (lower(c) == 'p') {
                        size_t l = starts_nocase(s + i, n - i, "password=") ? 9 :
                                   starts_nocase(s + i, n - i, "passwd=") ? 7 : 0;
                        if (l > 0 && i + l < n && !strchr(" \t;&", s[i + l]))
                                return "a password setting";
                }
                for (size_t t = 0; t < sizeof(tokens) / sizeof(tokens[0]); t++)
                        if (tokens[t].prefix[0] == c && token_at(&tokens[t], s + i, n - i))
                                return tokens[t].kind;
        }
        return NULL;
}
