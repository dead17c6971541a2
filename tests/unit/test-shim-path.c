/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The FUSE shim's pure logic (src/shim/shim-path.c): which names it may list, where the real
 * command is looked up after it, PATH out of an environment block. */
#include <stdlib.h>
#include <string.h>

#include "shim/shim-path.h"
#include "tap.h"
#include "util/macro.h"
#include "util/strv.h"

#define SHIM "/run/user/1000/scudo/shim"

static void search(const char *path, const char *want_r, int want_rc, const char *what) {
        char *got = NULL;
        int r = shim_search_path(path, SHIM, &got);
        TAP_CHECK(r == want_rc, "%s: returns %d (got %d)", what, want_rc, r);
        if (want_r)
                TAP_STREQ(got ?: "(null)", want_r, "%s", what);
        else
                TAP_CHECK(!got, "%s: no search path", what);
        free(got);
}

int main(void) {
        TAP_CHECK(shim_name_is_listable("npm"), "a plain name is listable");
        TAP_CHECK(!shim_name_is_listable("scudo"), "scudo itself is never listed");
        TAP_CHECK(!shim_name_is_listable("a/b") && !shim_name_is_listable(".") &&
                  !shim_name_is_listable("..") && !shim_name_is_listable(""), "no path, dot or empty name");
        char longname[300];
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = 0;
        TAP_CHECK(!shim_name_is_listable(longname), "no name longer than NAME_MAX");

        search(SHIM ":/usr/bin:/bin", "/usr/bin:/bin", 1, "first on PATH: what follows");
        search("/home/u/bin:" SHIM ":/usr/bin", "/usr/bin", 1, "later on PATH: only what follows");
        search(SHIM ":/a:" SHIM "/:/b", "/a:/b", 1, "twice on PATH: the second skipped");
        search(SHIM "/:.::rel:/c", "/c", 1, "relative and empty entries skipped");
        search(SHIM, "", 1, "nothing after it");
        search("/usr/bin:/bin", NULL, 0, "not on PATH: unknown");
        search(NULL, NULL, 0, "no PATH: the default, without the shim");
        search(SHIM "x:/usr/bin", NULL, 0, "a longer directory is not the shim");

        static const char block[] = "HOME=/h\0PATHX=/no\0PATH=/usr/bin:/bin\0TERM=x";
        TAP_STREQ(shim_environ_get(block, sizeof(block) - 1, "PATH") ?: "(null)", "/usr/bin:/bin",
                  "PATH found, not PATHX");
        TAP_CHECK(shim_environ_get(block, sizeof(block) - 1, "TERM") == NULL,
                  "an unterminated last entry is not trusted");
        TAP_CHECK(shim_environ_get(block, 10, "PATH") == NULL, "a block cut short: not read past its end");
        TAP_CHECK(shim_environ_get("", 0, "PATH") == NULL, "an empty block");

        char **names = NULL;
        TAP_CHECK(shim_names_parse("npm\nscudo\nmake\n\nnpm\na/b\ncargo", &names) == 0, "a listing parses");
        TAP_CHECK(strv_length(names) == 3, "sorted, each once, scudo and paths left out");
        TAP_STREQ(names[0], "cargo", "first");
        TAP_STREQ(names[2], "npm", "last");
        TAP_CHECK(shim_names_contain(names, "make") && !shim_names_contain(names, "scudo") &&
                  !shim_names_contain(names, "zz") && !shim_names_contain(names, "a"), "lookup in the list");
        strv_free(names);
        names = NULL;
        TAP_CHECK(shim_names_parse("", &names) == 0 && strv_length(names) == 0, "an empty listing");
        TAP_CHECK(!shim_names_contain(names, "x"), "nothing in an empty list");
        strv_free(names);
        return tap_done();
}
