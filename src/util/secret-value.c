/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Values that are credentials by their structure, whatever the variable or key holding them is
 * called: a name-based rule misses what it did not think of (BW_SESSION, SENTRY_DSN), and so
 * does a list of token formats. A value is judged by what credentials are made of: a field
 * named as a secret (`password=`, `-Dgpg.passphrase=`, `;Pwd=...;`, `"token": "..."`,
 * `AccountKey=`), a URL's userinfo, a `user:password` pair, a PEM private key, a JWT, a netrc
 * line, a base64 value that decodes to any of these, and a long token of random characters.
 * The prefixes of well-known formats are a fast path that also names the kind. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "util/secret-value.h"

enum {
        CS_ALNUM,               /* [A-Za-z0-9] */
        CS_WORD,                /* [A-Za-z0-9_] */
        CS_WORD_DASH,           /* [A-Za-z0-9_-] (base64url) */
        CS_UPPER_DIGIT,         /* [A-Z0-9] */
        CS_LOWER_DIGIT,         /* [a-z0-9] */
        CS_HEX,                 /* [0-9a-f] */
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
 * (shorter bodies are names and words: "sk-learn", "npm_config"). In order of first character
 * (token_ranges); a longer prefix comes before a shorter one it starts with (sk-ant- before
 * sk-). */
static const Token tokens[] = {
        { "AKIA",        "an AWS access key id",            CS_UPPER_DIGIT, 16, 1, 0 },
        { "ASIA",        "an AWS access key id",            CS_UPPER_DIGIT, 16, 1, 0 },
        { "AIza",        "a Google API key",                CS_WORD_DASH,   35, 1, 0 },
        { "AGE-SECRET-KEY-1", "an age secret key",          CS_UPPER_DIGIT, 50, 0, 0 },
        { "ATATT3",      "an Atlassian token",              CS_WORD_DASH,   40, 0, 0 },
        { "CFPAT-",      "a Contentful token",              CS_WORD_DASH,   40, 0, 0 },
        { "FlyV1 ",      "a Fly.io token",                  CS_WORD_DASH,   32, 0, 0 },
        { "FLWSECK-",    "a Flutterwave key",               CS_WORD_DASH,   32, 0, 0 },
        { "GOOG1",       "a Google Cloud HMAC key",         CS_UPPER_DIGIT, 50, 0, 0 },
        { "HRKU-",       "a Heroku key",                    CS_WORD_DASH,   40, 0, 0 },
        { "LTAI",        "an Alibaba Cloud key",            CS_ALNUM,       16, 0, 1 },
        { "NRAK-",       "a New Relic key",                 CS_UPPER_DIGIT, 27, 0, 0 },
        { "PMAK-",       "a Postman key",                   CS_WORD_DASH,   40, 0, 0 },
        { "SG.",         "a SendGrid key",                  CS_WORD_DASH,   20, 0, 0 },
        { "apify_api_",  "an Apify token",                  CS_ALNUM,       30, 0, 0 },
        { "dckr_pat_",   "a Docker token",                  CS_WORD_DASH,   20, 0, 0 },
        { "dop_v1_",     "a DigitalOcean token",            CS_HEX,         64, 0, 0 },
        { "doo_v1_",     "a DigitalOcean token",            CS_HEX,         64, 0, 0 },
        { "dor_v1_",     "a DigitalOcean token",            CS_HEX,         64, 0, 0 },
        { "dp.pt.",      "a Doppler token",                 CS_ALNUM,       40, 0, 0 },
        { "dp.st.",      "a Doppler token",                 CS_WORD_DASH,   40, 0, 0 },
        { "dapi",        "a Databricks token",              CS_HEX,         32, 0, 1 },
        { "dt0c01.",     "a Dynatrace token",               CS_UPPER_DIGIT, 24, 0, 0 },
        { "fo1_",        "a Fly.io token",                  CS_WORD_DASH,   32, 0, 0 },
        { "figd_",       "a Figma token",                   CS_WORD_DASH,   32, 0, 0 },
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
        { "glc_",        "a Grafana token",                 CS_WORD_DASH,   32, 0, 0 },
        { "glsa_",       "a Grafana token",                 CS_WORD_DASH,   32, 0, 0 },
        { "gsk_",        "a Groq key",                      CS_ALNUM,       40, 0, 0 },
        { "hf_",         "a Hugging Face token",            CS_ALNUM,       30, 0, 0 },
        { "hvs.",        "a Vault token",                   CS_WORD_DASH,   24, 0, 0 },
        { "hvb.",        "a Vault token",                   CS_WORD_DASH,   24, 0, 0 },
        { "hvr.",        "a Vault token",                   CS_WORD_DASH,   24, 0, 0 },
        { "key-",        "a Mailgun key",                   CS_HEX,         32, 1, 1 },
        { "lin_api_",    "a Linear key",                    CS_ALNUM,       32, 0, 0 },
        { "npm_",        "an npm token",                    CS_ALNUM,       36, 1, 1 },
        { "ntn_",        "a Notion token",                  CS_ALNUM,       40, 0, 0 },
        { "oy2",         "a NuGet key",                     CS_LOWER_DIGIT, 43, 1, 0 },
        { "ops_eyJ",     "a 1Password token",               CS_WORD_DASH,   40, 0, 0 },
        { "pypi-",       "a PyPI token",                    CS_WORD_DASH,   50, 0, 0 },
        { "pul-",        "a Pulumi token",                  CS_HEX,         40, 0, 0 },
        { "pscale_tkn_", "a PlanetScale token",             CS_WORD_DASH,   32, 0, 0 },
        { "pscale_pw_",  "a PlanetScale password",          CS_WORD_DASH,   32, 0, 0 },
        { "pplx-",       "a Perplexity key",                CS_ALNUM,       40, 0, 0 },
        { "phx_",        "a PostHog key",                   CS_ALNUM,       40, 0, 0 },
        { "rk_live_",    "a Stripe key",                    CS_ALNUM,       20, 0, 0 },
        { "rk_test_",    "a Stripe key",                    CS_ALNUM,       20, 0, 0 },
        { "rubygems_",   "a RubyGems key",                  CS_HEX,         48, 0, 0 },
        { "rnd_",        "a Render key",                    CS_ALNUM,       32, 0, 0 },
        { "r8_",         "a Replicate token",               CS_ALNUM,       30, 0, 0 },
        { "sk-ant-",     "an Anthropic key",                CS_WORD_DASH,   20, 0, 0 },
        { "sk-",         "an OpenAI key",                   CS_WORD_DASH,   20, 0, 1 },
        { "sk_live_",    "a Stripe key",                    CS_ALNUM,       20, 0, 0 },
        { "sk_test_",    "a Stripe key",                    CS_ALNUM,       20, 0, 0 },
        { "shpat_",      "a Shopify token",                 CS_ALNUM,       32, 0, 0 },
        { "shpss_",      "a Shopify token",                 CS_ALNUM,       32, 0, 0 },
        { "shpca_",      "a Shopify token",                 CS_ALNUM,       32, 0, 0 },
        { "shppa_",      "a Shopify token",                 CS_ALNUM,       32, 0, 0 },
        { "sq0atp-",     "a Square token",                  CS_WORD_DASH,   22, 0, 0 },
        { "sq0csp-",     "a Square token",                  CS_WORD_DASH,   40, 0, 0 },
        { "secret_",     "a Notion token",                  CS_ALNUM,       43, 0, 1 },
        { "sntrys_",     "a Sentry token",                  CS_WORD_DASH,   40, 0, 0 },
        { "sntryu_",     "a Sentry token",                  CS_HEX,         64, 0, 0 },
        { "sbp_",        "a Supabase token",                CS_HEX,         40, 0, 0 },
        { "sb_secret_",  "a Supabase key",                  CS_WORD_DASH,   24, 0, 0 },
        { "sk.eyJ",      "a Mapbox token",                  CS_WORD_DASH,   40, 0, 0 },
        { "shippo_live_", "a Shippo token",                 CS_HEX,         40, 0, 0 },
        { "tskey-",      "a Tailscale key",                 CS_WORD_DASH,   20, 0, 1 },
        { "whsec_",      "a Stripe key",                    CS_ALNUM,       24, 0, 0 },
        { "xoxa-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxb-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxp-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxr-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxs-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxe-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xoxe.",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xapp-",       "a Slack token",                   CS_WORD_DASH,   10, 0, 1 },
        { "xkeysib-",    "a Brevo key",                     CS_HEX,         64, 0, 0 },
        { "xai-",        "an xAI key",                      CS_ALNUM,       40, 0, 0 },
        { "ya29.",       "a Google OAuth token",            CS_WORD_DASH,   30, 0, 0 },
};

/* Field names that say their value is a secret: after lower-casing and dropping '_', '-',
 * '.', a name that ends with one of these (`MAVEN_OPTS=-Dgpg.passphrase=`, `AccountKey=`,
 * `X-Amz-Signature=`, npm's `_authToken=`). */
typedef struct Word {
        const char *w;
        size_t len;
} Word;

#define WORD(s) { s, sizeof(s) - 1 }

static const Word secret_fields[] = {
        WORD("password"), WORD("passwd"), WORD("pwd"), WORD("passphrase"), WORD("secret"),
        WORD("token"), WORD("apikey"), WORD("accountkey"), WORD("accesskey"), WORD("privatekey"),
        WORD("secretkey"), WORD("sharedaccesskey"), WORD("sig"), WORD("signature"), WORD("auth"),
        WORD("credential"), WORD("credentials"), WORD("clientsecret"), WORD("sessionkey"),
        WORD("masterkey"),
};

/* The last letters of the words above. */
#define SECRET_FIELD_LAST_LETTERS "dentyghls"

/* Values such a field holds that are no secret. */
static const char *const placeholder_values[] = {
        "true", "false", "none", "null", "nil", "yes", "no", "on", "off", "required", "optional",
        "basic", "bearer", "disabled", "enabled", "default", "auto", "prompt", "env", "file",
};

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_upper(char c) {
        return c >= 'A' && c <= 'Z';
}

static bool is_lower(char c) {
        return c >= 'a' && c <= 'z';
}

static bool is_alnum(char c) {
        return is_digit(c) || is_upper(c) || is_lower(c);
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool in_charset(char c, unsigned charset) {
        switch (charset) {
        case CS_ALNUM:
                return is_alnum(c);
        case CS_WORD:
                return is_alnum(c) || c == '_';
        case CS_WORD_DASH:
                return is_alnum(c) || c == '_' || c == '-';
        case CS_LOWER_DIGIT:
                return is_lower(c) || is_digit(c);
        case CS_HEX:
                return is_digit(c) || (c >= 'a' && c <= 'f');
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

/* Whether the n bytes at s are the lower-case word w, without regard to case. */
static bool equals_nocase(const char *s, size_t n, const char *w) {
        return n == strlen(w) && starts_nocase(s, n, w);
}

/* How many of the n bytes at s are in the charset, from the start. */
static size_t span(const char *s, size_t n, unsigned charset) {
        size_t i = 0;
        while (i < n && in_charset(s[i], charset))
                i++;
        return i;
}

static size_t token_len[sizeof(tokens) / sizeof(tokens[0])];

static bool token_at(size_t index, const char *s, size_t n) {
        const Token *t = &tokens[index];
        size_t pl = token_len[index];
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

static bool is_key_char(char c) {
        return is_alnum(c) || c == '_' || c == '-' || c == '.';
}

bool secret_field_name(const char *k, size_t n) {
        /* Most names end in none of the words' last letters, or are shorter than the shortest
         * word: told at once, without the copy below (LS_COLORS alone holds some 300 names). */
        size_t last = n;
        while (last > 0 && !is_alnum(k[last - 1]))
                last--;
        if (last < 3 || !strchr(SECRET_FIELD_LAST_LETTERS, lower(k[last - 1])))
                return false;
        char norm[64];
        size_t l = 0;
        for (size_t i = n > 256 ? n - 256 : 0; i < n; i++)
                if (is_alnum(k[i])) {
                        if (l == sizeof(norm))
                                memmove(norm, norm + 1, --l);
                        norm[l++] = lower(k[i]);
                }
        for (size_t f = 0; f < sizeof(secret_fields) / sizeof(secret_fields[0]); f++) {
                size_t fl = secret_fields[f].len;
                if (l >= fl && norm[l - 1] == secret_fields[f].w[fl - 1] &&
                    memcmp(norm + l - fl, secret_fields[f].w, fl) == 0)
                        return true;
        }
        return false;
}

/* The value that starts at s (after `=` or `:` and any blanks): its start and length, quotes
 * taken off. */
static size_t field_value(const char *s, size_t n, const char **start) {
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
        char quote = i < n && (s[i] == '"' || s[i] == '\'') ? s[i] : 0;
        if (quote)
                i++;
        size_t b = i;
        /* a quoted value ends at its quote, or at the end of the line: no format the fields
         * come from (INI, TOML, JSON, YAML, the shell) carries one across lines */
        while (i < n && (quote ? s[i] != quote && s[i] != '\n' : !strchr(" \t\r\n;&,\"'}]<", s[i])))
                i++;
        *start = s + b;
        return i - b;
}

static bool secret_field_value(const char *v, size_t n);

/* A field's value that is an object (`"github-oauth": {"github.com": "..."}`): its first
 * member's value. */
static bool secret_object_value(const char *s, size_t n) {
        const char *colon = memchr(s, ':', n);
        if (!colon)
                return false;
        const char *v;
        size_t vl = field_value(colon + 1, n - (size_t) (colon + 1 - s), &v);
        return v > colon + 1 && (v[-1] == '"' || v[-1] == '\'') && secret_field_value(v, vl);
}

/* Whether a secret field's value is a secret: not empty or a placeholder, a reference to
 * something else (`${VAR}`, `$VAR`, `%VAR%`), or a file's path. */
static bool secret_field_value(const char *v, size_t n) {
        if (n < 3 || v[0] == '$' || v[0] == '%' || v[0] == '<' || v[0] == '{' || v[0] == '[')
                return false;
        if (v[0] == '/' || (n > 1 && v[0] == '~' && v[1] == '/') || (n > 1 && v[0] == '.' && v[1] == '/'))
                return false;
        for (size_t p = 0; p < sizeof(placeholder_values) / sizeof(placeholder_values[0]); p++)
                if (equals_nocase(v, n, placeholder_values[p]))
                        return false;
        for (size_t i = 0; i < n; i++)
                if (v[i] != '*' && v[i] != 'x' && v[i] != 'X')
                        return true;
        return false;       /* a mask: "****" */
}

/* `key=value`, `-Dkey=value`, `;Key=value;`, `"key": "value"`, `key: value` at the separator at
 * s[i] ('=' or ':'), the key a secret field. */
static bool secret_field_at(const char *s, size_t n, size_t i) {
        size_t e = i;
        while (s[i] == '=' && e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
                e--;                    /* INI's and TOML's "key = value" */
        if (e > 0 && (s[e - 1] == '"' || s[e - 1] == '\''))
                e--;                    /* JSON's "key": */
        if (s[i] == ':' && e > 0 && s[e - 1] == ' ')
                return false;           /* "a : b" is no field */
        size_t b = e;
        while (b > 0 && is_key_char(s[b - 1]))
                b--;
        if (b == e || (b > 0 && (s[b - 1] == '/' || s[b - 1] == '\\')))
                return false;           /* none, or a path's last name ("/opt/secret:/usr/bin") */
        if (s[i] == ':' && i + 2 < n && s[i + 1] == '/' && s[i + 2] == '/')
                return false;           /* a URL's scheme */
        if (!secret_field_name(s + b, e - b))
                return false;
        size_t j = i + 1;
        while (j < n && (s[j] == ' ' || s[j] == '\t'))
                j++;
        if (j < n && s[j] == '{')
                return secret_object_value(s + j, n - j);
        const char *v;
        size_t vl = field_value(s + i + 1, n - i - 1, &v);
        return secret_field_value(v, vl);
}

/* An XML element named as a secret with text in it: `<password>x</password>`; `i` is the
 * '>' of its start tag. */
static bool secret_element_at(const char *s, size_t n, size_t i) {
        size_t b = i;
        while (b > 0 && is_key_char(s[b - 1]))
                b--;
        if (b == i || b == 0 || s[b - 1] != '<' || !secret_field_name(s + b, i - b))
                return false;
        size_t e = i + 1;
        while (e < n && s[e] != '<')
                e++;
        const char *v = s + i + 1;
        size_t vl = e - i - 1;
        while (vl > 0 && is_space(*v)) {
                v++;
                vl--;
        }
        while (vl > 0 && is_space(v[vl - 1]))
                vl--;
        return secret_field_value(v, vl);
}

/* A netrc line: `machine HOST login USER password PASS` (or `default ... password PASS`). */
static bool netrc_password_at(const char *s, size_t n, size_t i) {
        if (!starts_nocase(s + i, n - i, "password") || i + 8 >= n || !is_space(s[i + 8]))
                return false;
        bool netrc = false;
        for (size_t j = 0; j + 6 <= i && !netrc; j++)
                netrc = (j == 0 || is_space(s[j - 1])) &&
                        (starts_nocase(s + j, i - j, "machine ") || starts_nocase(s + j, i - j, "login ") ||
                         starts_nocase(s + j, i - j, "default "));
        size_t v = i + 8;
        while (v < n && is_space(s[v]))
                v++;
        return netrc && v < n;
}

/* anaconda.org's and other channels' `https://HOST/t/<token>/...`: the name after /t/ in a URL
 * long and with a digit. `i` is where that name starts. */
static bool url_token_path(const char *s, size_t n, size_t i) {
        if (!memmem(s, i, "://", 3))
                return false;
        size_t l = span(s + i, n - i, CS_WORD_DASH);
        bool digit = false;
        for (size_t j = i; j < i + l && !digit; j++)
                digit = is_digit(s[j]);
        return l >= 12 && digit && (i + l == n || s[i + l] == '/');
}

typedef struct TokenRange {
        unsigned char start, end;
} TokenRange;

/* token_ranges[c]: the prefixes that start with c, tokens[start] to tokens[end - 1] (the table
 * is in order of first character), so that each place in a value is looked up once instead
 * of against every prefix. Made by the first call; a call that finds it unmade makes the same
 * one again. */
static TokenRange token_ranges[256];
static bool token_ranges_made;

static void make_token_ranges(void) {
        if (__atomic_load_n(&token_ranges_made, __ATOMIC_ACQUIRE))
                return;
        for (size_t t = 0; t < sizeof(tokens) / sizeof(tokens[0]); t++) {
                TokenRange *r = &token_ranges[(unsigned char) tokens[t].prefix[0]];
                token_len[t] = strlen(tokens[t].prefix);
                if (r->end == 0)
                        r->start = (unsigned char) t;
                r->end = (unsigned char) (t + 1);
        }
        __atomic_store_n(&token_ranges_made, true, __ATOMIC_RELEASE);
}

/* The fast path and the rules that look at a place in the value. */
static const char *kind_at(const char *s, size_t n, size_t i) {
        char c = s[i];
        if (c == ':' && i + 2 < n && s[i + 1] == '/' && s[i + 2] == '/') {
                const char *k = url_with_credentials(s, n, i);
                if (k)
                        return k;
        }
        if (c == '-' && pem_private_key_at(s + i, n - i))
                return "a PEM private key";
        if ((c == '=' || c == ':') && secret_field_at(s, n, i))
                return "a credential setting";
        if (c == '>' && secret_element_at(s, n, i))
                return "a credential setting";
        /* The rest start a word. */
        if (i > 0 && is_alnum(s[i - 1]))
                return NULL;
        if (c == 'e' && jwt_at(s + i, n - i))
                return "a JSON Web Token";
        if (lower(c) == 'b' && starts_nocase(s + i, n - i, "bearer ") &&
            span(s + i + 7, n - i - 7, CS_WORD_DASH) >= 16)
                return "a bearer token";
        if (lower(c) == 'a' && starts_nocase(s + i, n - i, "authorization:"))
                return "an Authorization header";
        if (lower(c) == 'p' && netrc_password_at(s, n, i))
                return "a netrc password";
        const TokenRange *range = &token_ranges[(unsigned char) c];
        for (size_t t = range->start; t < range->end; t++)
                if (token_at(t, s + i, n - i))
                        return tokens[t].kind;
        if (c == 't' && i > 0 && s[i - 1] == '/' && i + 2 < n && s[i + 1] == '/' &&
            url_token_path(s, n, i + 2))
                return "a URL with a token in its path";
        if (c == 'h' && starts_nocase(s + i, n - i, "hooks.slack.com/services/t"))
                return "a Slack webhook";
        if (c == 'd' && (starts_nocase(s + i, n - i, "discord.com/api/webhooks/") ||
                         starts_nocase(s + i, n - i, "discordapp.com/api/webhooks/")))
                return "a Discord webhook";
        return NULL;
}

/* The whole value is `user:password`: one colon, no blanks or slashes, a user name, and after
 * it something a password is made of (a letter and a digit, or a symbol; not a port, a version,
 * an image tag or a list such as "en_US:en" or "ubuntu:GNOME"). */
static bool user_password_pair(const char *s, size_t n) {
        const char *colon = memchr(s, ':', n);
        if (!colon || colon == s || memchr(colon + 1, ':', n - (size_t) (colon - s) - 1))
                return false;
        size_t ul = (size_t) (colon - s), pl = n - ul - 1;
        if (pl < 6 || pl > 256)
                return false;
        for (size_t i = 0; i < ul; i++)
                if (!is_key_char(s[i]) && s[i] != '@')
                        return false;
        const char *p = colon + 1;
        bool letter = false, digit = false, symbol = false;
        for (size_t i = 0; i < pl; i++) {
                if (is_space(p[i]) || p[i] == '/' || p[i] == '=' || p[i] == ';' || p[i] == ',')
                        return false;
                letter |= is_upper(p[i]) || is_lower(p[i]);
                digit |= is_digit(p[i]);
                symbol |= !is_alnum(p[i]) && p[i] != '.' && p[i] != '-' && p[i] != '_';
        }
        if (is_digit(p[0]) || (p[0] == 'v' && pl > 1 && is_digit(p[1])))
                return false;           /* a port, a version, an image's tag */
        if (pl >= 32 && span(p, pl, CS_HEX) == pl)
                return false;           /* a hash: "sha256:e3b0..." */
        return (letter && digit) || symbol;
}

/* The bits of entropy per character of the n bytes at s, by their frequencies. */
static double entropy(const char *s, size_t n) {
        unsigned count[256] = {};
        for (size_t i = 0; i < n; i++)
                count[(unsigned char) s[i]]++;
        double h = 0;
        for (size_t c = 0; c < 256; c++)
                if (count[c]) {
                        double p = (double) count[c] / (double) n;
                        h -= p * log2(p);
                }
        return h;
}

/* A run of random characters: long, upper and lower case and digits mixed (hashes, hex and
 * base32 ids are one case), the case changing often (CamelCase names change once a word), and
 * close to the entropy a random string of that length has. The threshold and the figures it
 * was measured on are in tests/unit/test-secret-value.c. */
static bool ssh_public_key(const char *s, size_t n);

static bool random_token(const char *s, size_t n) {
        if (n < SECRET_RANDOM_MIN_LENGTH || ssh_public_key(s, n))
                return false;
        size_t up = 0, lo = 0, dg = 0, changes = 0;
        int last = -1;
        for (size_t i = 0; i < n; i++) {
                int cls = is_upper(s[i]) ? 0 : is_lower(s[i]) ? 1 : is_digit(s[i]) ? 2 : 3;
                up += cls == 0;
                lo += cls == 1;
                dg += cls == 2;
                if (last >= 0 && cls != last)
                        changes++;
                last = cls;
        }
        if (up < 2 || lo < 2 || (dg < 2 && (dg < 1 || n < 32)) || changes * 5 < n)
                return false;
        /* A random string of n characters over 64 has about log2(n) - (n / 64) / 2 / ln 2 bits
         * per character (few repeats); a word-made name has far fewer distinct characters. */
        double len = (double) (n < 64 ? n : 64);
        double expected = log2(len) - len / 64.0 / 2.0 / log(2.0);
        return entropy(s, n) >= expected * SECRET_RANDOM_ENTROPY_RATIO;
}

static int base64_value(char c) {
        if (is_upper(c))
                return c - 'A';
        if (is_lower(c))
                return c - 'a' + 26;
        if (is_digit(c))
                return c - '0' + 52;
        if (c == '+' || c == '-')
                return 62;
        if (c == '/' || c == '_')
                return 63;
        return -1;
}

/* An SSH public key as ssh writes it (known_hosts, authorized_keys, *.pub): base64 of the key's
 * wire form, which starts with its type's name, length first ("\0\0\0\x0bssh-ed25519"). Public,
 * however random the rest looks. */
static bool ssh_public_key(const char *s, size_t n) {
        unsigned char b[48];
        size_t nb = 0;
        for (size_t i = 0; i + 4 <= n && nb + 3 <= sizeof b; i += 4) {
                int v[4];
                for (size_t k = 0; k < 4; k++)
                        if ((v[k] = base64_value(s[i + k])) < 0)
                                return false;
                b[nb++] = (unsigned char) (v[0] << 2 | v[1] >> 4);
                b[nb++] = (unsigned char) ((v[1] & 15) << 4 | v[2] >> 2);
                b[nb++] = (unsigned char) ((v[2] & 3) << 6 | v[3]);
        }
        if (nb < 8 || b[0] || b[1] || b[2] || b[3] < 3 || (size_t) b[3] + 4 > nb)
                return false;
        const char *name = (const char *) b + 4;
        size_t nl = b[3];
        if (!(starts_nocase(name, nl, "ssh-") || starts_nocase(name, nl, "ecdsa-") ||
              starts_nocase(name, nl, "sk-")))
                return false;
        for (size_t i = 0; i < nl; i++)
                if (!(is_lower(name[i]) || is_digit(name[i]) || name[i] == '-' || name[i] == '@' ||
                      name[i] == '.'))
                        return false;
        return true;
}

static const char *judge(const char *s, size_t n, unsigned depth);

/* A base64 (or base64url) run decoded: when it decodes to text, the text judged again
 * (`KUBE_CONFIG_DATA`, `Basic dXNlcjpwYXNz`, a base64 PEM key), and *text set: encoded text
 * is no random token. */
static const char *decoded_kind(const char *s, size_t n, unsigned depth, bool *text) {
        char out[4096];
        size_t o = 0, printable = 0;
        unsigned acc = 0, bits = 0;
        if (n < 16 || depth >= 2 || n % 4 == 1)
                return NULL;
        for (size_t i = 0; i < n && s[i] != '=' && o < sizeof(out); i++) {
                int v = base64_value(s[i]);
                if (v < 0)
                        return NULL;
                acc = (acc << 6) | (unsigned) v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        char c = (char) ((acc >> bits) & 0xff);
                        out[o++] = c;
                        printable += (c >= 0x20 && c < 0x7f) || is_space(c);
                }
        }
        if (o < 8 || printable * 10 < o * 9)
                return NULL;            /* not text: the rest judge it as it is */
        *text = true;
        return judge(out, o, depth + 1);
}

static bool is_token_char(char c) {
        return is_alnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-';
}

/* Whether a name between separators `sep` in the run is a word: three letters or more of one
 * case ("org/JTC1/docs", "EVP_PKEY_get1_encoded"). Random base64 rarely has one. */
static bool has_word(const char *t, size_t n, char sep) {
        for (size_t a = 0, z; a < n; a = z + 1) {
                const char *slash = memchr(t + a, sep, n - a);
                z = slash ? (size_t) (slash - t) : n;
                size_t lo = 0, up = 0;
                for (size_t i = a; i < z; i++) {
                        lo += is_lower(t[i]);
                        up += is_upper(t[i]);
                }
                if (z - a >= 3 && (lo == z - a || up == z - a))
                        return true;
        }
        return false;
}

/* A run with a '/' that is a path or a URL's: from the root, "//", or with a word in it. */
static bool path_like(const char *t, size_t n) {
        return t[0] == '/' || memmem(t, n, "//", 2) || has_word(t, n, '/');
}

/* A run judged name by name: a path, or an identifier whose names are words. */
static bool judged_by_names(const char *t, size_t n, char *sep) {
        if (memchr(t, '/', n) && path_like(t, n)) {
                *sep = '/';
                return true;
        }
        if (memchr(t, '_', n) && has_word(t, n, '_')) {
                *sep = '_';
                return true;
        }
        if (memchr(t, '-', n) && has_word(t, n, '-')) {
                *sep = '-';
                return true;
        }
        return false;
}

/* Whether the run is a random token, judged name by name where it is made of names: a path's
 * "scudo-plan-harden-6JoirN" is three words and a short random suffix, no token. Each level
 * splits at another separator, so three levels are all there are. */
static bool random_run(const char *t, size_t n, unsigned depth) {
        char sep;
        if (depth < 3 && judged_by_names(t, n, &sep)) {
                for (size_t a = 0, z; a < n; a = z + 1) {
                        const char *at = memchr(t + a, sep, n - a);
                        z = at ? (size_t) (at - t) : n;
                        if (random_run(t + a, z - a, depth + 1))
                                return true;
                }
                return false;
        }
        return random_token(t, n);
}

static const char *judge(const char *s, size_t n, unsigned depth) {
        for (size_t i = 0; i < n; i++) {
                const char *k = kind_at(s, n, i);
                if (k)
                        return k;
        }
        if (user_password_pair(s, n))
                return "a user name and password";
        for (size_t i = 0; i < n;) {
                if (!is_token_char(s[i])) {
                        i++;
                        continue;
                }
                size_t b = i;
                while (i < n && is_token_char(s[i]))
                        i++;
                const char *t = s + b;
                size_t tl = i - b;
                /* A path is no token ("/usr/lib/x86_64-linux-gnu"), nor an identifier made of
                 * words, though one of their names may be. */
                char sep;
                if (judged_by_names(t, tl, &sep)) {
                        if (random_run(t, tl, 0))
                                return "a random token";
                        continue;
                }
                bool text = false;
                const char *k = decoded_kind(t, tl, depth, &text);
                if (k)
                        return k;
                if (!text && random_token(t, tl))
                        return "a random token";
        }
        return NULL;
}

const char *secret_value_kind(const char *s, size_t n) {
        if (!s)
                return NULL;
        make_token_ranges();
        return judge(s, n, 0);
}
