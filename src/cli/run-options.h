/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The options of a run (`scudo [OPTIONS] [--] COMMAND [ARG...]`), shared by `run`, `explain`
 * and the symlink entry point, and the Request they produce. */

#include <stdbool.h>

#include "plan/plan.h"
#include "plan/request.h"
#include "cli/request-from-process.h"
#include "run/run.h"

/* What the command line of a run, of explain or of a broker's request asked for: the Request
 * (policy's input), the runner's options, and what only the CLI acts on. */
typedef struct RunCommandLine {
        Request request;
        RunOptions run;
        bool dry_run;
        bool json;              /* explain --json */
        bool list_properties;   /* explain --list-properties */

        /* A request the broker serves (verb-delegated.c): told back when the command is not
         * delegated (in_place) or why it was refused. */
        bool in_place;
        char *refusal;
} RunCommandLine;

void run_command_line_done(RunCommandLine *a);

/* Parses options and the command. Returns 1 to go on, 0 after printing help (exit 0), or a
 * negative errno after printing the reason. `verb` names the subcommand for messages
 * ("explain"), or NULL for a run. */
int parse_run_args(int argc, char **argv, const char *verb, RunCommandLine *ret);

/* Whether argv[0] names scudo itself, or a command it was linked as. */
bool invoked_as_scudo(const char *argv0);

void help_run(void);
