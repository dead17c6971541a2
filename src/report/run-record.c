/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report-format.h"
#include "report/run-record.h"
#include "util/strv.h"
#include "util/text-escape.h"

static void json_str(FILE *f, const char *s) {
        char e[4200];

        (void) text_escape(s, e, sizeof(e));
        fputc('"', f);
        for (const char *c = e; *c; c++) {
                if (*c == '"' || *c == '\\')
                        fputc('\\', f);
                fputc(*c, f);
        }
        fputc('"', f);
}

static void json_strv(FILE *f, const char *key, char * const *l) {
        bool first = true;

        fprintf(f, ",\"%s\":[", key);
        STRV_FOREACH(s, l) {
                if (!first)
                        fputc(',', f);
                json_str(f, *s);
                first = false;
        }
        fputc(']', f);
}

static void json_paths(FILE *f, const char *key, const Plan *p, PathAccess access) {
        bool first = true;

        fprintf(f, ",\"%s\":[", key);
        for (size_t i = 0; i < p->n_paths; i++) {
                if (p->paths[i].access != access)
                        continue;
                fputs(first ? "{\"path\":" : ",{\"path\":", f);
                json_str(f, p->paths[i].path);
                fputs(",\"origin\":", f);
                json_str(f, strempty(p->paths[i].origin));
                fputc('}', f);
                first = false;
        }
        fputc(']', f);
}

static void json_rules(FILE *f, const char *key, char * const *rules, char * const *origins) {
        size_t n_origins = strv_length(origins), i = 0;
        bool first = true;

        fprintf(f, ",\"%s\":[", key);
        STRV_FOREACH(r, rules) {
                fputs(first ? "{\"rule\":" : ",{\"rule\":", f);
                json_str(f, *r);
                fputs(",\"origin\":", f);
                json_str(f, i < n_origins ? origins[i] : "");
                fputc('}', f);
                first = false;
                i++;
        }
        fputc(']', f);
}

static int finish(FILE *f, char **buf, int r, char **ret) {
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(*buf);
                return r;
        }
        *ret = *buf;
        return 0;
}

int run_record_json(const Plan *plan, char **ret) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs("{\"kind\":\"run\"", f);
        json_strv(f, "command", plan->argv);
        fputs(",\"start_dir\":", f);
        json_str(f, strempty(plan->working_directory));
        json_strv(f, "profiles", plan->profiles);
        json_strv(f, "config_files", plan->config_files);
        json_paths(f, "write", plan, PATH_ACCESS_WRITE);
        json_paths(f, "read", plan, PATH_ACCESS_READ);
        fprintf(f, ",\"network_filtered\":%s", plan->network_filtered ? "true" : "false");
        json_rules(f, "allow", plan->net_allow, plan->net_allow_origin);
        json_rules(f, "deny", plan->net_deny, plan->net_deny_origin);
        fputc('}', f);
        return finish(f, &buf, ferror(f) ? -ENOMEM : 0, ret);
}

static bool since_or_later(const struct timespec *t, const struct timespec *since) {
        return t->tv_sec > since->tv_sec || (t->tv_sec == since->tv_sec && t->tv_nsec >= since->tv_nsec);
}

static bool written_below(const char *path, const struct timespec *since) {
        char *const roots[] = { (char *) path, NULL };
        unsigned n = 0;
        bool written = false;
        FTSENT *e;
        FTS *fts;

        fts = fts_open(roots, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
        if (!fts)
                return false;
        while (!written && (e = fts_read(fts))) {
                if (++n > USAGE_WALK_MAX) {
                        written = true;
                        break;
                }
                if (e->fts_info == FTS_DP || !e->fts_statp || e->fts_info == FTS_NS ||
                    e->fts_info == FTS_ERR)
                        continue;
                written = since_or_later(&e->fts_statp->st_mtim, since) ||
                        since_or_later(&e->fts_statp->st_ctim, since);
        }
        (void) fts_close(fts);
        return written;
}

int usage_record_json(const Plan *plan, const struct timespec *since, const bool *reached, char **ret) {
        char *buf = NULL;
        size_t size = 0;
        bool first = true;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs("{\"kind\":\"usage\",\"written\":[", f);
        for (size_t i = 0; i < plan->n_paths; i++) {
                if (plan->paths[i].access != PATH_ACCESS_WRITE || !written_below(plan->paths[i].path, since))
                        continue;
                if (!first)
                        fputc(',', f);
                json_str(f, plan->paths[i].path);
                first = false;
        }
        fputc(']', f);
        if (reached) {
                size_t i = 0;

                first = true;
                fputs(",\"reached\":[", f);
                STRV_FOREACH(rule, plan->net_allow) {
                        if (reached[i++]) {
                                if (!first)
                                        fputc(',', f);
                                json_str(f, *rule);
                                first = false;
                        }
                }
                fputc(']', f);
        }
        fputc('}', f);
        return finish(f, &buf, ferror(f) ? -ENOMEM : 0, ret);
}
