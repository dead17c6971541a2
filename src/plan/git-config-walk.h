/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Which files git reads as its configuration: the ones it starts from, and every file they
 * include (include.path and includeIf.*.path, whatever the condition), as git resolves them,
 * to git's limit of ten includes deep. The one walk of them is the hardening step's
 * (harden-git-config.c): it keeps an included file the command could write read-only, and
 * marks each one shown read-only that holds credentials to be shown as a copy less them. */

#include <stdbool.h>

#include "plan/git-config-filter.h"

typedef struct GitConfigVisitor {
        /* Each include's file as git would open it (~ and relative paths resolved, not
         * canonical), whether or not it exists, before it is read; may be NULL. 0 or -errno. */
        int (*target)(const char *path, void *userdata);
        /* Whether to read the existing regular file at `canonical`; NULL: every one. */
        bool (*want)(const char *canonical, void *userdata);
        /* Each file read, once, with its text filtered (its includes in f->includes): 0 to go on
         * (into its includes too), or -errno to stop the walk with; may be NULL. */
        int (*visit)(const char *canonical, const GitConfigFiltered *f, void *userdata);
        void *userdata;
} GitConfigVisitor;

/* The regular file at `canonical` read and filtered (git-config-filter.h); -EFBIG past 4 MiB. */
int git_config_read_filtered(const char *canonical, GitConfigFiltered *ret);

/* Walks from the files `start` (paths as git opens them; missing ones are skipped). home:
 * what "~/" in an include means (NULL: such an include is skipped). Returns 0, the first
 * -errno a callback returned, -ENOMEM, or a file's read error (-EFBIG past 4 MiB). */
int git_config_walk(char * const *start, const char *home, const GitConfigVisitor *v);
