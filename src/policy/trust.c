/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/macro.h"
#include "policy/sha256.h"
#include "policy/trust.h"
#include "util/file-util.h"
#include "util/path-util.h"

/* More entries than this and the store is considered damaged. */
#define TRUST_MAX_ENTRIES 100000
#define TRUST_STORE_MAX (16U << 20)

int trust_store_path(char **ret) {
        const char *state = secure_getenv("XDG_STATE_HOME");
        char *r;

        if (state && path_is_absolute(state))
                r = path_join(state, "scudo/trusted");
        else {
                const char *home = secure_getenv("HOME");
                if (!home || !path_is_absolute(home)) {
                        struct passwd *pw = getpwuid(getuid());
                        if (!pw || !path_is_absolute(pw->pw_dir))
                                return -ENXIO;
                        home = pw->pw_dir;
                }
                r = path_join(home, ".local/state/scudo/trusted");
        }
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

int trust_hash_file(const char *path, size_t max, char **ret_sha256) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        char hex[SHA256_HEX_SIZE];

        int r = read_regular_file(path, max, &data, &size);
        if (r < 0)
                return r;
        r = sha256_hex(data, size, hex);
        if (r < 0)
                return r;
        char *s = strdup(hex);
        if (!s)
                return -ENOMEM;
        *ret_sha256 = s;
        return 0;
}

void trust_entries_free(TrustEntry *e, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(e[i].path);
                free(e[i].sha256);
        }
        free(e);
}

static bool is_sha256_hex(const char *s, size_t len) {
        if (len != SHA256_HEX_SIZE - 1)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!strchr("0123456789abcdef", s[i]) || s[i] == 0)
                        return false;
        return true;
}

int trust_load(const char *store, TrustEntry **ret, size_t *ret_n) {
        _cleanup_free_ char *data = NULL;
        size_t size, n = 0;
        TrustEntry *entries = NULL;

        int r = read_regular_file(store, TRUST_STORE_MAX, &data, &size);
        if (r == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;

        for (char *line = data, *next; line < data + size; line = next) {
                char *nl = memchr(line, '\n', (size_t) (data + size - line));
                next = nl ? nl + 1 : data + size;
                if (nl)
                        *nl = 0;
                char *sp = strchr(line, ' ');
                /* Lines that do not parse are skipped: a damaged store trusts less, not more. */
                if (!sp || !is_sha256_hex(line, (size_t) (sp - line)) || !path_is_absolute(sp + 1))
                        continue;
                if (n >= TRUST_MAX_ENTRIES)
                        break;
                TrustEntry *ne = realloc(entries, sizeof(TrustEntry) * (n + 1));
                if (!ne) {
                        trust_entries_free(entries, n);
                        return -ENOMEM;
                }
                entries = ne;
                entries[n].sha256 = strndup(line, (size_t) (sp - line));
                entries[n].path = strdup(sp + 1);
                if (!entries[n].sha256 || !entries[n].path) {
                        trust_entries_free(entries, n + 1);
                        return -ENOMEM;
                }
                n++;
        }
        *ret = entries;
        *ret_n = n;
        return 0;
}

int trust_check(const char *store, const char *path, const char *sha256) {
        TrustEntry *e = NULL;
        size_t n = 0;
        int found = 0;

        int r = trust_load(store, &e, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (streq(e[i].path, path) && streq(e[i].sha256, sha256))
                        found = 1;
        trust_entries_free(e, n);
        return found;
}

/* Writes the entries, except the one for `skip`, plus (path, sha256) if set: the file replaced
 * whole, on disk before it replaces the old one (a trust lost to a crash is asked again). */
static int trust_write(const char *store, TrustEntry *e, size_t n, const char *skip, const char *path,
                       const char *sha256) {
        _cleanup_free_ char *dir = strdup(store), *text = NULL;
        size_t size = 0;
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return -EINVAL;
        *slash = 0;
        int r = mkdir_p(dir, 0700);
        if (r < 0)
                return r;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!skip || !streq(e[i].path, skip))
                        fprintf(f, "%s %s\n", e[i].sha256, e[i].path);
        if (path)
                fprintf(f, "%s %s\n", sha256, path);
        bool cut = ferror(f);
        if (fclose(f) != 0 || cut || !text)
                return -ENOMEM;
        return file_replace(store, &(FilePart) { text, size }, 1, true);
}

int trust_add(const char *store, const char *path, const char *sha256) {
        TrustEntry *e = NULL;
        size_t n = 0;

        if (!path_is_absolute(path) || strchr(path, '\n') || !is_sha256_hex(sha256, strlen(sha256)))
                return -EINVAL;
        int r = trust_load(store, &e, &n);
        if (r < 0)
                return r;
        r = trust_write(store, e, n, path, path, sha256);
        trust_entries_free(e, n);
        return r;
}

int trust_remove(const char *store, const char *path) {
        TrustEntry *e = NULL;
        size_t n = 0;
        bool found = false;

        int r = trust_load(store, &e, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (streq(e[i].path, path))
                        found = true;
        if (found)
                r = trust_write(store, e, n, path, NULL, NULL);
        trust_entries_free(e, n);
        return r < 0 ? r : found;
}
