/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "git/git-config-keys.h"
#include "util/macro.h"

/* The keys `git init`, `git clone` and `cargo new` write: none of them names a program, a
 * hook or another place to read configuration or write a working tree from. */
static const char * const benign_keys[] = {
        "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
        "core.ignorecase", "core.precomposeunicode", "core.symlinks", "extensions.objectformat",
        "remote.*.url", "remote.*.fetch", "branch.*.remote", "branch.*.merge", "user.name", "user.email",
};

static bool key_benign(const char *section, bool sub, const char *key) {
        char full[256];
        int n = snprintf(full, sizeof(full), "%s.%s%s", section, sub ? "*." : "", key);
        if (n < 0 || (size_t) n >= sizeof(full))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(benign_keys); i++)
                if (streq(full, benign_keys[i]))
                        return true;
        return false;
}

bool git_config_keys_benign(char *text, GitConfigInclude on_include, void *userdata) {
        bool benign = true;
        char section[128] = "";
        bool sub = false;
        for (char *line = text, *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                char *s = line + strspn(line, " \t\r");
                if (!*s || *s == '#' || *s == ';')
                        continue;
                if (*s == '[') {
                        char *end = strchr(s, ']');
                        if (!end) {
                                benign = false;
                                continue;
                        }
                        *end = 0;
                        size_t k = strcspn(s + 1, " \t\".");
                        if (k >= sizeof(section))
                                k = sizeof(section) - 1;
                        for (size_t i = 0; i < k; i++)
                                section[i] = (char) tolower((unsigned char) s[1 + i]);
                        section[k] = 0;
                        sub = s[1 + k] != 0;
                        const char *after = end + 1 + strspn(end + 1, " \t\r");
                        if (*after && *after != '#' && *after != ';')
                                benign = false;        /* a key on the header's line */
                        continue;
                }
                size_t k = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
                char key[128];
                if (k == 0 || k >= sizeof(key)) {
                        benign = false;
                        continue;
                }
                for (size_t i = 0; i < k; i++)
                        key[i] = (char) tolower((unsigned char) s[i]);
                key[k] = 0;
                size_t len = strlen(s);
                while (len > 0 && s[len - 1] == '\r')
                        len--;
                if (len > 0 && s[len - 1] == '\\')
                        benign = false;        /* a value going on to the next line */
                if (!key_benign(section, sub, key))
                        benign = false;
                if ((streq(section, "include") || streq(section, "includeif")) && streq(key, "path")) {
                        const char *v = s + k + strspn(s + k, " \t");
                        if (*v == '=' && on_include)
                                on_include(v + 1 + strspn(v + 1, " \t"), userdata);
                }
        }
        return benign;
}
