/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include "run-options.h"

/* Runs the parsed request. Returns a negative errno once the reason is reported (scudo's own
 * failure, 125 on the way out), or the exit status: the command's, or 127 and 126 when it
 * cannot be found or executed (cli/exit-status.h). */
int verb_run(RunCommandLine *args);
