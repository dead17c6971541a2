/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's section on tools' configuration (plan-harden.h, 2c): in a delegable
 * plan, every file a profile shows read-only in the home directory, and every file at the top
 * of a directory it shows there or one level down (~/.config/go/env, ~/.sbt/1.0/global.sbt,
 * ~/.sbt/1.0/plugins/credentials.sbt), that holds credentials (plan/config-filter.h:
 * ~/.cabal/config's hackage password, composer's github-oauth, a registry token in
 * ~/.cargo/config.toml, a /t/<token>/ channel in ~/.condarc, GOPROXY with a password in go's
 * env file, sbt's Credentials(...)) is shown as a copy less them (PATH_SOURCE_CONFIG_COPY), which
 * the runner makes when the run starts (unit/git-config-copies.h). The files are judged by
 * what they hold, not by their names. A profile that exists to use a credential (npm-publish)
 * is not delegable, and sees the file as it is. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/config-filter.h"
#include "plan/harden-internal.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

#define WHY_CREDENTIALS "a tool's configuration that holds credentials, in a sandbox that can be " \
        "delegated: the command sees a copy without them, made when the run starts"

/* Files looked at in one directory, at most: a configuration directory holds a few. And the
 * size of the largest file taken for a configuration in a directory shown. */
#define MAX_FILES_PER_DIR 32
#define MAX_CONFIG_FILE_SIZE (64 << 10)

/* `path` (canonical, a regular file) as a copy less its credentials when it holds some and the
 * command sees it read-only. */
static int judge_file(Plan *p, const char *path) {
        const PlanPath *g = harden_governing_entry(p, path);
        if (g && (g->access != PATH_ACCESS_READ || g->source != PATH_SOURCE_SELF))
                return 0;       /* writable, hidden, or a copy already */
        ConfigFiltered f = {};
        int r = config_read_filtered(path, &f);
        unsigned removed = f.removed;
        config_filtered_done(&f);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || removed == 0)
                return 0;       /* unreadable: not the command's to read either */
        for (size_t i = 0; i < p->n_paths; i++) {
                PlanPath *e = &p->paths[i];
                if (e->access != PATH_ACCESS_READ || !streq(e->path, path))
                        continue;
                char *why = strdup(WHY_CREDENTIALS);
                if (!why)
                        return -ENOMEM;
                free(e->reason);
                e->reason = why;
                e->source = PATH_SOURCE_CONFIG_COPY;
                return 0;
        }
        return harden_force_entry(p, PATH_ACCESS_READ, path, WHY_CREDENTIALS, PATH_SOURCE_CONFIG_COPY);
}

/* The regular files at the top of directory `dir`, and, `depth` > 1, in its subdirectories
 * (sbt's ~/.sbt/1.0/global.sbt and plugins/credentials.sbt, ~/.sbt/1.0/.credentials). A
 * program (an executable file) and a file larger than a configuration are not read: what
 * reading them costs every run buys nothing. */
static int judge_dir(Plan *p, const char *dir, unsigned depth) {
        _cleanup_strv_free_ char **files = NULL, **subdirs = NULL;
        DIR *d = opendir(dir);
        if (!d)
                return 0;
        size_t n = 0;
        struct dirent *de;
        int r = 0;
        while (r >= 0 && n < MAX_FILES_PER_DIR && (de = readdir(d))) {
                if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
                        continue;
                bool sub = de->d_type == DT_DIR && depth > 1 && !streq(de->d_name, ".git");
                if (!sub && de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
                        continue;
                char *f = path_join(dir, de->d_name);
                r = f ? strv_push(sub ? &subdirs : &files, f) : -ENOMEM;
                if (r < 0)
                        free(f);
                n++;
        }
        closedir(d);
        for (char **f = files; r >= 0 && f && *f; f++) {
                struct stat st;
                if (path_stat_no_symlinks(*f, &st) > 0 && S_ISREG(st.st_mode) && !(st.st_mode & 0111) &&
                    st.st_size <= MAX_CONFIG_FILE_SIZE)
                        r = judge_file(p, *f);
        }
        for (char **s = subdirs; r >= 0 && s && *s; s++)
                r = judge_dir(p, *s, depth - 1);
        return r;
}

int harden_tool_config(Plan *p, const HardenContext *ctx) {
        if (!p->delegable || !ctx->home || !path_is_absolute(ctx->home))
                return 0;

        /* The profiles' entries, by path: judging adds entries, and so moves the list. */
        _cleanup_strv_free_ char **files = NULL, **dirs = NULL;
        for (size_t i = 0; i < p->n_paths; i++) {
                const PlanPath *e = &p->paths[i];
                struct stat st;
                if (e->access != PATH_ACCESS_READ || e->source != PATH_SOURCE_SELF || e->reason ||
                    !path_startswith(e->path, ctx->home))
                        continue;
                if (path_stat_no_symlinks(e->path, &st) <= 0)
                        continue;
                int r = 0;
                if (S_ISREG(st.st_mode))
                        r = strv_extend(&files, e->path);
                else if (S_ISDIR(st.st_mode))
                        r = strv_extend(&dirs, e->path);
                if (r < 0)
                        return r;
        }
        int r = 0;
        for (char **f = files; r >= 0 && f && *f; f++)
                r = judge_file(p, *f);
        for (char **d = dirs; r >= 0 && d && *d; d++)
                r = judge_dir(p, *d, 2);
        return r == -ENOMEM ? r : 0;
}
