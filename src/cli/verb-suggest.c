/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo suggest FILE: what would have allowed the refusals of a run, from its --report-json. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/verbs.h"
#include "report/suggest.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/macro.h"

#define SUGGEST_FILE_MAX (64U * 1024U * 1024U)

static void help(void) {
        printf("Usage: scudo suggest FILE\n"
               "\n"
               "Reads the refusal reports a run wrote with --report-json FILE and prints the profile\n"
               "changes that would have allowed what was refused: a TOML snippet, with the profile\n"
               "and the file to put it in, each value with the refusal it answers. Then the grants\n"
               "the run never used (write grants under which nothing changed, hosts never reached),\n"
               "as candidates to remove. Nothing is changed.\n");
}

/* Returns 0, or a negative errno once reported. */
static int suggest_from_file(const char *path) {
        _cleanup_free_ char *text = NULL;
        size_t size;
        unsigned line = 0;

        int r = read_regular_file(path, SUGGEST_FILE_MAX, &text, &size);
        if (r < 0)
                return log_error_errno(r, "Cannot read '%s': %m", path);
        r = suggest_write(text, getenv("HOME"), stdout, &line);
        if (r == -EBADMSG)
                return log_error_errno(r,
                                       "%s:%u: not a record of 'scudo --report-json' (the file must be one "
                                       "run's, from its first line)",
                                       path, line);
        if (r < 0)
                return log_error_errno(r, "Cannot make a suggestion: %m");
        return fflush(stdout) == 0 ? 0 : -EIO;
}

/* 2 for a wrong command line, 1 for a file that cannot be read or is not a report. */
int verb_suggest(int argc, char **argv) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                default:
                        log_error("unknown option (see 'scudo suggest --help')");
                        return 2;
                }
        if (optind + 1 != argc) {
                log_error("scudo suggest takes one file: the --report-json file of a run");
                return 2;
        }
        return suggest_from_file(argv[optind]) < 0 ? 1 : 0;
}
