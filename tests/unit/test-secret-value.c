/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Values that are credentials by their shape (src/util/secret-value.c): each format found on
 * its own and inside a longer value, and the everyday values of a developer's environment
 * (paths, colours, proxies without a password, ssh URLs) left alone. */
#include <string.h>

#include "tap.h"
#include "util/secret-value.h"

static const char *kind(const char *s) {
        return secret_value_kind(s, strlen(s));
}

static void secret(const char *s, const char *expected) {
        TAP_STREQ(kind(s), expected, "'%.24s...' is %s", s, expected);
}

static void harmless(const char *s) {
        const char *k = kind(s);
        TAP_CHECK(k == NULL, "'%.40s' is no credential (said: %s)", s, k ? k : "nothing");
}

int main(void) {
        /* Tokens, alone and inside a longer value. */
        secret("ghp_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token");
        secret("gho_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token");
        secret("ghu_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token");
        secret("ghs_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token");
        secret("ghr_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token");
        secret("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "a GitHub token");
        secret("--token=ghp_0123456789abcdefghijABCDEFGHIJ012345 -v", "a GitHub token");
        secret("glpat-abcdefghij0123456789", "a GitLab token");
        secret("xoxb-1234567890-abcdefghijkl", "a Slack token");
        secret("xoxp-1234567890-abcdefghijkl", "a Slack token");
        secret("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", "an Anthropic key");
        secret("sk-proj-abcdefghijklmnop0123456789ABCD", "an OpenAI key");
        secret("sk-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL", "an OpenAI key");
        secret("AKIAIOSFODNN7EXAMPLE", "an AWS access key id");
        secret("ASIAIOSFODNN7EXAMPLE", "an AWS access key id");
        secret("id=AKIAIOSFODNN7EXAMPLE,secret=x", "an AWS access key id");
        secret("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl", "a JSON Web Token");
        secret("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.", "a JSON Web Token");
        secret("-----BEGIN PRIVATE KEY-----\nMIIEvQ...\n-----END PRIVATE KEY-----", "a PEM private key");
        secret("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl", "a PEM private key");
        secret("x -----BEGIN RSA PRIVATE KEY----- y", "a PEM private key");
        secret("-----BEGIN PGP PRIVATE KEY BLOCK-----", "a PEM private key");
        secret("npm_abcdefghijklmnopqrstuvwxyz0123456789", "an npm token");
        secret("hf_abcdefghijklmnopqrstuvwxyz01234567", "a Hugging Face token");

        /* URLs with credentials, under any scheme. */
        secret("postgres://app:hunter2@db.example:5432/app", "a URL with a password");
        secret("https://user:tok@github.com/org/repo.git", "a URL with a password");
        secret("http://proxyuser:proxypass@proxy:3128", "a URL with a password");
        secret("redis://:s3cret@cache:6379/0", "a URL with a password");
        secret("mirror https://u:p@m.example/ and more", "a URL with a password");
        secret("https://0123456789abcdef0123456789abcdef@github.com/", "a URL with a token as its user name");

        /* Headers and settings. */
        secret("Authorization: Basic dXNlcjpwYXNz", "an Authorization header");
        secret("Bearer abcdefghijklmnopqrstuvwxyz", "a bearer token");
        secret("host=db user=app password=hunter2", "a password setting");
        secret("Server=x;Database=y;Password=hunter2;", "a password setting");

        /* The everyday environment. */
        harmless("/usr/local/bin:/usr/bin:/bin:/home/dev/.cargo/bin");
        harmless("rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:*.tar=01;31");
        harmless("http://proxy.example:3128");
        harmless("ssh://git@github.com/org/repo.git");
        harmless("git@github.com:org/repo.git");
        harmless("https://github.com/org/repo");
        harmless("http://host:8080/path@version");
        harmless("en_US.UTF-8");
        harmless("xterm-256color");
        harmless("/home/dev/.ssh/id_ed25519");
        harmless("task-runner");
        harmless("sk-learn");
        harmless("sk-this-is-a-long-option-name-without-digits");
        harmless("AKIA");
        harmless("AKIAIOSFODNN7EXAMPLEX");
        harmless("ghp_short");
        harmless("password=");
        harmless("eyJhbGciOiJIUzI1NiJ9");
        harmless("-----BEGIN CERTIFICATE-----");
        harmless("a desk-0123456789abcdefghijklmnop");
        harmless("");

        /* A value is bounded by its length, not by a NUL. */
        TAP_CHECK(secret_value_kind("ghp_0123456789abcdefghijABCDEFGHIJ012345", 10) == NULL,
                  "only the bytes given are looked at");
        TAP_CHECK(secret_value_kind(NULL, 0) == NULL, "no value is no credential");
        return tap_done();
}
