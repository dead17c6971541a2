/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The question confirm = true asks before a run: terminal UI, so the edge's, not the policy
 * engine's, which only says that the plan asks (Plan.confirm). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run-confirm.h"
#include "util/ask.h"
#include "util/strv.h"

int run_confirm(const Plan *p, const Request *req, char **ret_error) {
        _cleanup_free_ char *question = NULL;
        size_t size = 0;

        if (!p->confirm)
                return 0;
        if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) {
                if (ret_error && asprintf(ret_error,
                                          "a profile for '%s' asks for confirmation (confirm = true), but "
                                          "there is no terminal to ask on; not running it",
                                          strempty(req->argv ? req->argv[0] : NULL)) < 0)
                        *ret_error = NULL;
                return -ECANCELED;
        }
        FILE *q = open_memstream(&question, &size);
        if (!q)
                return -ENOMEM;
        fprintf(q, "scudo: run");
        STRV_FOREACH(a, req->argv)
                fprintf(q, " %s", *a);
        fprintf(q, " under");
        STRV_FOREACH(a, p->profiles)
                fprintf(q, " %s", *a);
        fputc('?', q);
        if (fclose(q) != 0)
                return -ENOMEM;
        int r = ask_yes_no(STDIN_FILENO, stderr, question);
        if (r > 0)
                return 0;
        if (ret_error)
                *ret_error = strdup("not confirmed; not running it");
        return -ECANCELED;
}
