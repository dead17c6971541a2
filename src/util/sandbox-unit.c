/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "file-util.h"
#include "macro.h"
#include "sandbox-unit.h"

/* A cgroup listing is a line per hierarchy; dozens of bytes each. */
#define CGROUP_LISTING_MAX (64U * 1024U)

bool sandbox_unit_name_is_valid(const char *name, size_t len) {
        const size_t pl = strlen(SCUDO_UNIT_PREFIX), sl = strlen(SCUDO_UNIT_SUFFIX);

        if (len != SCUDO_UNIT_NAME_MAX - 1 || memcmp(name, SCUDO_UNIT_PREFIX, pl) != 0 ||
            memcmp(name + len - sl, SCUDO_UNIT_SUFFIX, sl) != 0)
                return false;
        for (size_t i = pl; i < len - sl; i++)
                if (!strchr("0123456789abcdef", name[i]) || name[i] == 0)
                        return false;
        return true;
}

/* Looks at the cgroup path p[0, n): the first component after "user@UID.service" that names a
 * sandbox unit. */
static int unit_in_path(const char *p, size_t n, const char *manager, char ret[SCUDO_UNIT_NAME_MAX]) {
        bool below_manager = false;

        for (size_t i = 0; i < n; ) {
                while (i < n && p[i] == '/')
                        i++;
                size_t start = i;
                while (i < n && p[i] != '/')
                        i++;
                size_t len = i - start;
                if (len == 0)
                        break;
                if (!below_manager)
                        below_manager = len == strlen(manager) && memcmp(p + start, manager, len) == 0;
                else if (sandbox_unit_name_is_valid(p + start, len)) {
                        memcpy(ret, p + start, len);
                        ret[len] = 0;
                        return 1;
                }
        }
        return 0;
}

int sandbox_unit_from_cgroup(const char *text, size_t size, uid_t uid, char ret[SCUDO_UNIT_NAME_MAX]) {
        char manager[64];

        (void) snprintf(manager, sizeof(manager), "user@%u.service", (unsigned) uid);
        for (const char *line = text, *end = text + size, *next; line < end; line = next) {
                const char *nl = memchr(line, '\n', (size_t) (end - line));
                next = nl ? nl + 1 : end;
                const char *stop = nl ?: end;
                /* ID:CONTROLLERS:PATH, where PATH may hold ':' itself */
                const char *c1 = memchr(line, ':', (size_t) (stop - line));
                const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t) (stop - c1 - 1)) : NULL;
                if (!c2)
                        continue;
                bool unified = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
                bool named = (size_t) (c2 - c1 - 1) == strlen("name=systemd") &&
                        memcmp(c1 + 1, "name=systemd", strlen("name=systemd")) == 0;
                if ((unified || named) && unit_in_path(c2 + 1, (size_t) (stop - c2 - 1), manager, ret))
                        return 1;
        }
        return 0;
}

int sandbox_unit_of(pid_t pid, char ret[SCUDO_UNIT_NAME_MAX]) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        size_t size;

        if (pid == 0)
                (void) snprintf(path, sizeof(path), "/proc/self/cgroup");
        else
                (void) snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long) pid);
        int r = read_regular_file(path, CGROUP_LISTING_MAX, &text, &size);
        if (r < 0)
                return r;
        return sandbox_unit_from_cgroup(text, size, getuid(), ret);
}
