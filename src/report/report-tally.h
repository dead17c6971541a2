/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* How many refusals of each kind a run had (every one, repeats included), for what the user
 * sees at the terminal when the reports go elsewhere (docs/terminal.md): the terminal's title
 * while the command runs, one summary line at the end. */

#include <stddef.h>

#include "report/report.h"

typedef struct ReportTally {
        unsigned n[_REPORT_KIND_MAX];
} ReportTally;

void report_tally_add(ReportTally *t, ReportKind kind);
unsigned report_tally_total(const ReportTally *t);
/* "3 file, 1 network" (the kinds with any, in report.h's order) into buf; the length. */
size_t report_tally_format(const ReportTally *t, char *buf, size_t size);
