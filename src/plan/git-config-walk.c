/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/git-config-walk.h"
#include "util/file-util.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

/* git's own limit of nested includes */
#define MAX_INCLUDE_DEPTH 10
/* A configuration file larger than this is refused rather than taken as it is. */
#define MAX_CONFIG_SIZE (4u << 20)

/* The file an include names: ~/ from the home directory, a relative path from the directory
 * of the file that includes it (as git resolves it). NULL for what git would not read as a
 * path here (an empty value, %(prefix)), or with errno ENOMEM. */
static char *include_target(const char *value, const char *from, const char *home) {
        errno = 0;
        if (!value[0] || startswith(value, "%("))
                return NULL;
        if (startswith(value, "~/"))
                return home ? path_join(home, value + 2) : NULL;
        if (path_is_absolute(value))
                return strdup(value);
        _cleanup_free_ char *dir = strdup(from);
        if (!dir)
                return NULL;
        char *slash = strrchr(dir, '/');
        if (!slash)
                return NULL;
        slash[slash == dir ? 1 : 0] = 0;
        return path_join(dir, value);
}

int git_config_read_filtered(const char *canonical, GitConfigFiltered *ret) {
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r = read_regular_file(canonical, MAX_CONFIG_SIZE, &text, &size);
        if (r < 0)
                return r;
        return git_config_filter(text, size, ret);
}

int git_config_walk(char * const *start, const char *home, const GitConfigVisitor *v) {
        _cleanup_strv_free_ char **queue = strv_copy(start), **seen = NULL;
        _cleanup_free_ unsigned *depth = NULL;
        int r = 0;

        if (start && !queue)
                return -ENOMEM;
        /* depth[i]: how many includes deep queue[i] is; includes are appended as read */
        depth = calloc(strv_length(queue) + 1, sizeof(unsigned));
        if (!depth)
                return -ENOMEM;

        for (size_t i = 0; r >= 0 && queue && queue[i]; i++) {
                char canon[PATH_MAX];
                struct stat st;
                GitConfigFiltered f = {};

                if (!path_realpath_fast(queue[i], canon))
                        continue;       /* missing: git reads nothing there either */
                if (path_stat_no_symlinks(canon, &st) <= 0 || !S_ISREG(st.st_mode))
                        continue;
                if (strv_contains(seen, canon) || (v->want && !v->want(canon, v->userdata)))
                        continue;
                r = strv_extend(&seen, canon);
                if (r >= 0)
                        r = git_config_read_filtered(canon, &f);
                if (r >= 0 && v->visit)
                        r = v->visit(canon, &f, v->userdata);
                for (char **inc = f.includes; r >= 0 && inc && *inc && depth[i] < MAX_INCLUDE_DEPTH; inc++) {
                        _cleanup_free_ char *target = include_target(*inc, queue[i], home);
                        if (!target) {
                                if (errno == ENOMEM)
                                        r = -ENOMEM;
                                continue;
                        }
                        if (v->target)
                                r = v->target(target, v->userdata);
                        size_t n = strv_length(queue);
                        unsigned *d = r >= 0 ? realloc(depth, (n + 2) * sizeof(unsigned)) : NULL;
                        if (r >= 0 && !d)
                                r = -ENOMEM;
                        if (r < 0)
                                break;
                        depth = d;
                        depth[n] = depth[i] + 1;
                        r = strv_extend(&queue, target);
                }
                git_config_filtered_done(&f);
        }
        return r;
}
