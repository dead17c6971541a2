/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* git's configuration less its credentials (src/plan/git-config-filter.c): each kind of
 * credential taken out as a whole entry, everything else kept byte for byte, git's syntax
 * (quotes, continued lines, [section.sub], an entry after its header) read as git reads it,
 * and what cannot be read not shown. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "plan/git-config-filter.h"
#include "util/secret-value.h"
#include "util/strv.h"

static GitConfigFiltered run(const char *in) {
        GitConfigFiltered f = {};
        int r = git_config_filter(in, strlen(in), &f);
        TAP_CHECK(r == 0 && f.text && strlen(f.text) == f.len, "filtered (%d)", r);
        return f;
}

/* `in` filtered holds none of `gone` (a list ending with NULL) and all of `kept`. */
static void check(const char *what, const char *in, unsigned removed, const char * const *gone,
                  const char * const *kept) {
        GitConfigFiltered f = run(in);
        if (!f.text)
                return;
        TAP_CHECK(f.removed == removed, "%s: %u removed (got %u)", what, removed, f.removed);
        for (size_t i = 0; gone && gone[i]; i++) {
                const char *g = gone[i] ?: "";
                TAP_CHECK(!strstr(f.text, g), "%s: '%.*s' gone", what, (int) strcspn(g, "\n"), g);
        }
        for (size_t i = 0; kept && kept[i]; i++) {
                const char *k = kept[i] ?: "";
                TAP_CHECK(strstr(f.text, k), "%s: '%.*s...' kept", what, (int) strcspn(k, "\n"), k);
        }
        git_config_filtered_done(&f);
}

#define L(...) ((const char * const[]) { __VA_ARGS__, NULL })

/* A NUL in a value: git stops reading the value there, but the copy would show what follows. */
static void test_nul_in_value(void) {
        static const char in[] = "[user]\n\tname = Dev\0 https://u:s3cretpw@h/t/tokentokentoken\n"
                                 "[core]\n\teditor = vi\n";
        GitConfigFiltered f = {};
        int r = git_config_filter(in, sizeof(in) - 1, &f);
        TAP_CHECK(r == 0 && f.text && !memmem(f.text, f.len, "s3cretpw", 8) && strstr(f.text, "editor = vi"),
                  "a value with a NUL: the line removed, what follows kept");
        git_config_filtered_done(&f);
}

/* A header with an entry on its line (fuzz-git-config found it): each is judged on its own, so
 * the copy has them on lines of their own, none of which reads as a credential. */
static void test_header_and_entry_apart(void) {
        static const char in[] = "[url \"htsk[-://b\xff\xe8\0\0\0\0\0\0secret=\"]\tFIJ\t\n[core] bare\n";
        GitConfigFiltered f = {};
        bool clean = true;
        int r = git_config_filter(in, sizeof(in) - 1, &f);

        for (const char *l = f.text, *end = f.text + f.len; r == 0 && l < end;) {
                const char *nl = memchr(l, '\n', (size_t) (end - l));
                size_t len = nl ? (size_t) (nl - l) : (size_t) (end - l);

                clean = clean && !secret_value_kind(l, len);
                l += len + 1;
        }
        TAP_CHECK(r == 0 && f.text && clean && memmem(f.text, f.len, "\n\tFIJ", 5) &&
                  memmem(f.text, f.len, "[core]\n\tbare", 12),
                  "an entry on a header's line: kept on a line of its own, none a credential");
        git_config_filtered_done(&f);
}

int main(void) {
        check("nothing to remove",
              "[user]\n\tname = Dev\n\temail = dev@example.invalid\n[core]\n\teditor = vim\n", 0,
              NULL, L("[user]\n\tname = Dev\n\temail = dev@example.invalid\n[core]\n\teditor = vim\n"));
        check("insteadOf with a token in its subsection",
              "[url \"https://dev:ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/\"]\n"
              "\tinsteadOf = https://github.com/\n[core]\n\tpager = less\n", 2,
              L("ghp_", "dev:", "insteadOf"), L("[core]\n\tpager = less\n"));
        check("insteadOf with the token in its value",
              "[url \"https://github.com/\"]\n\tinsteadOf = https://x:tok123@github.com/\n"
              "\tpushInsteadOf = git@github.com:\n", 1,
              L("tok123"), L("[url \"https://github.com/\"]", "pushInsteadOf = git@github.com:"));
        check("extraHeader, every URL",
              "[http]\n\textraHeader = AUTHORIZATION: basic eC1hY2Nlc3M=\n"
              "[http \"https://github.com/\"]\n\textraheader = X-Token: hunter2\n\tsslVerify = true\n", 2,
              L("AUTHORIZATION", "hunter2"), L("sslVerify = true"));
        check("cookie file", "[http]\n\tcookieFile = ~/.gitcookies\n\tpostBuffer = 1048576\n", 1,
              L(".gitcookies"), L("postBuffer = 1048576"));
        check("credential section",
              "[credential]\n\thelper = \"!f() { echo password=hunter2; }; f\"\n\tusername = dev\n"
              "[credential \"https://example.com\"]\n\thelper = store\n[alias]\n\tst = status\n", 3,
              L("hunter2", "= dev", "store"), L("[credential]", "[alias]\n\tst = status\n"));
        check("names with pass, token, secret",
              "[sendemail]\n\tsmtpPass = hunter2\n\tsmtpServer = mail.example\n[github]\n\ttoken = abc\n"
              "[hub]\n\tOAuthToken = def\n[x]\n\tclientSecret = ghi\n", 4,
              L("hunter2", "= abc", "= def", "= ghi"), L("smtpServer = mail.example"));
        check("a remote URL with a password",
              "[remote \"origin\"]\n\turl = https://x-access-token:s3cr3t@github.com/o/r.git\n"
              "\tfetch = +refs/heads/*:refs/remotes/origin/*\n", 1,
              L("s3cr3t"), L("fetch = +refs/heads/*:refs/remotes/origin/*"));
        check("a proxy with a password", "[http]\n\tproxy = http://u:pw123@proxy:3128\n", 1, L("pw123"),
              NULL);
        check("a token under any name", "[alias]\n\tx = !curl -H 'x: glpat-abcdefghij0123456789' h\n", 1,
              L("glpat-"), NULL);
        check("a continued value",
              "[http]\n\textraHeader = Authorization: \\\n  Bearer abc\n[core]\n\tbare = false\n", 1,
              L("Bearer", "Authorization"), L("[core]\n\tbare = false\n"));
        check("a continued value hiding a token on its second line",
              "[alias]\n\tx = !echo \\\nghp_0123456789abcdefghijABCDEFGHIJ012345\n[core]\n\tbare = false\n",
              1, L("ghp_"), L("bare = false"));
        check("an entry on the header's line",
              "[credential] helper = store --file /x\n[core] editor = vim\n", 1,
              L("store"), L("[core]\n\teditor = vim"));
        check("the old subsection form", "[http.Example]\n\textraheader = X: y\n\tx = 1\n", 1,
              L("X: y"), L("[http.Example]", "x = 1"));
        check("a URL is no old-form subsection", "[http.https://h/]\n\tx = 1\n", 2, L("x = 1"), NULL);
        check("a comment with a token",
              "# ghp_0123456789abcdefghijABCDEFGHIJ012345\n[core]\n\tbare = false\n", 1, L("ghp_"),
              L("bare = false"));
        check("a bad header hides its section",
              "[core\n\tpassword_free = ghp_0123456789abcdefghijABCDEFGHIJ012345\n\tx = y\n[user]\n\tname = "
              "Dev\n",
              3, L("ghp_", "x = y"), L("[user]\n\tname = Dev\n"));
        check("an open quote is not git's syntax", "[core]\n\tx = \"open\n\ty = z\n", 1, L("open"),
              L("y = z"));
        check("quoted ; and # are no comment",
              "[alias]\n\tl = \"!git log --format='%h #%s'; echo\"\n", 0, NULL, L("%h #%s'; echo"));
        check("no final newline", "[core]\n\teditor = vim", 0, NULL, L("editor = vim"));
        check("a token split by quotes", "[alias]\n\tx = \"gh\"\"p_0123456789abcdefghijABCDEFGHIJ012345\"\n",
              1, L("0123456789abcdefghij"), NULL);
        check("a token split by a continued line",
              "[alias]\n\tx = gh\\\np_0123456789abcdefghijABCDEFGHIJ012345\n[core]\n\tbare = false\n", 1,
              L("0123456789abcdefghij"), L("bare = false"));
        check("a key that is a token is not named",
              "[x]\n\tsk-abcdefghijklmnopqrstu1 = 1\n", 1, L("sk-abc"), L("an entry removed"));
        check("an entry before any section", "x = 1\n[core]\n\tbare = true\n", 1, L("x = 1"),
              L("bare = true"));

        /* Includes: their paths as git reads them, whatever the quoting. */
        GitConfigFiltered f = run("[include]\n\tpath = ~/.gitconfig.local\n"
                                  "[includeIf \"gitdir:~/work/\"]\n\tpath = \"work config\" ; a comment\n"
                                  "[include]\n\tpath = rel\\\\name\n");
        TAP_CHECK(strv_length(f.includes) == 3, "three includes");
        if (strv_length(f.includes) == 3) {
                TAP_STREQ(f.includes[0], "~/.gitconfig.local", "include.path as written");
                TAP_STREQ(f.includes[1], "work config", "quotes and comment gone");
                TAP_STREQ(f.includes[2], "rel\\name", "escapes resolved");
        }
        git_config_filtered_done(&f);
        test_nul_in_value();
        test_header_and_entry_apart();
        return tap_done();
}
