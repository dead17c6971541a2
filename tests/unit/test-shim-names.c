/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* What the FUSE shim lists (policy_command_names(), lua/scudo/admin.lua): a name pattern's name,
 * a command line's first word, no "re:" pattern, project files only when trusted, 5,000
 * profiles within the engine's budgets. */
#include "policy-test.h"
#include "shim/shim-path.h"
#include "tap.h"

#define ARGV(...) ((const char *const[]) { __VA_ARGS__, NULL })

static char **names_from(const char *dir) {
        Request req;
        char *text = NULL, *err = NULL, **names = NULL;
        pt_request(&req, dir, ARGV("x"), NULL);
        int r = policy_command_names(&req, &text, &err);
        if (r < 0)
                fprintf(stderr, "# %s\n", err ?: "(no message)");
        if (r >= 0 && shim_names_parse(text, &names) < 0)
                names = NULL;
        request_done(&req);
        free(text);
        free(err);
        return names;
}

int main(void) {
        pt_setup();
        pt_mkdir("proj/sub");
        pt_mkdir("elsewhere");
        pt_write("home/.config/scudo/config.toml",
                 "[g]\nmatch = [\"gtool\", \"gline publish\", \"re:^regex-.*\", \"scudo\"]\n");
        pt_write("proj/.scudo.toml", "[p]\nmatch = [\"ptool\"]\n");

        char **n = names_from("elsewhere");
        TAP_CHECK(n && shim_names_contain(n, "gtool"), "a name pattern lists its name");
        TAP_CHECK(n && shim_names_contain(n, "gline"), "a command-line pattern lists its first word");
        TAP_CHECK(n && !shim_names_contain(n, "regex-") && !shim_names_contain(n, "^regex-.*"),
                  "a re: pattern lists nothing");
        TAP_CHECK(n && !shim_names_contain(n, "scudo"), "scudo itself is never listed");
        TAP_CHECK(n && shim_names_contain(n, "npm") && shim_names_contain(n, "make"),
                  "the built-in profiles' names");
        TAP_CHECK(n && !shim_names_contain(n, "ptool"), "another directory's project file adds nothing");
        strv_free(n);

        n = names_from("proj/sub");
        TAP_CHECK(n && !shim_names_contain(n, "ptool"), "an untrusted project file adds nothing");
        strv_free(n);
        pt_trust("proj/.scudo.toml");
        n = names_from("proj/sub");
        TAP_CHECK(n && shim_names_contain(n, "ptool") && shim_names_contain(n, "gtool"),
                  "a trusted project file adds its names, below it too");
        strv_free(n);

        /* 5,000 profiles in one file */
        size_t cap = 5000 * 64;
        char *big = malloc(cap), *w = big;
        for (int i = 0; i < 5000; i++)
                w += snprintf(w, cap - (size_t) (w - big), "[p%d]\nmatch = [\"tool%d\"]\n", i, i);
        pt_write("home/.config/scudo/config.d/big.toml", "%s", big);
        free(big);
        n = names_from("elsewhere");
        TAP_CHECK(n && shim_names_contain(n, "tool0") && shim_names_contain(n, "tool4999"),
                  "5,000 profiles: every name");
        strv_free(n);

        pt_cleanup();
        return tap_done();
}
