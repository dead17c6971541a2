/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The network rule of a git remote URL (src/plan/git-remote-url.c), table-driven: each URL
 * form git reads, with and without a user and a port, and the ones that reach no host or
 * cannot be read. */
#include <errno.h>
#include <string.h>

#include "plan/git-remote-url.h"
#include "tap.h"

static const struct {
        const char *url;
        int r;
        const char *rule;
} cases[] = {
        { "ssh://git@example.org/u/r.git", 0, "example.org:22" },
        { "ssh://git@example.org:2222/u/r.git", 0, "example.org:2222" },
        { "git+ssh://example.org/r", 0, "example.org:22" },
        { "SSH://Example.org/r", 0, "Example.org:22" },
        { "ssh://u@[::1]:2200/r", 0, "[::1]:2200" },
        { "git@github.com:u/r.git", 0, "github.com:22" },
        { "github.com:r", 0, "github.com:22" },
        { "u@[example.org:2222]:r", 0, "example.org:2222" },
        { "[::1]:r", 0, "[::1]:22" },
        { "https://example.org/r.git", 0, "example.org:443" },
        { "https://u:pw@example.org:8443/r.git", 0, "example.org:8443" },
        { "http://127.0.0.1:8080/r.git", 0, "127.0.0.1:8080" },
        { "https://example.org", 0, "example.org:443" },
        { "git://example.org/r", 0, "example.org:9418" },
        { "/srv/git/r.git", -ENOENT, NULL },
        { "../r", -ENOENT, NULL },
        { "./a:b", -ENOENT, NULL },
        { "file:///srv/r.git", -ENOENT, NULL },
        { "ext::sh -c evil", -ENOENT, NULL },
        { "fd::3", -ENOENT, NULL },
        { "ftp://example.org/r", -EPROTO, NULL },
        { "foo://example.org/r", -EPROTO, NULL },
        { "ssh://example.org:0/r", -EINVAL, NULL },
        { "ssh://example.org:99999/r", -EINVAL, NULL },
        { "ssh:///r", -EINVAL, NULL },
        { "https://exa mple.org/r", -EINVAL, NULL },
        { "-oProxyCommand=evil:r", -EINVAL, NULL },
        { "ssh://-oProxyCommand=x/r", -EINVAL, NULL },
        { "", -EINVAL, NULL },
};

int main(void) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char rule[300] = "";
                int r = git_remote_url_rule(cases[i].url, rule, sizeof rule);
                TAP_CHECK(r == cases[i].r, "'%s': %d (%d expected)", cases[i].url, r, cases[i].r);
                if (cases[i].rule)
                        TAP_STREQ(rule, cases[i].rule, "'%s' reaches %s", cases[i].url, cases[i].rule);
        }
        char small[8];
        TAP_CHECK(git_remote_url_rule("https://example.org/r", small, sizeof small) == -ENOBUFS,
                  "a rule that does not fit: -ENOBUFS");
        return tap_done();
}
