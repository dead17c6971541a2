/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The count of refusals of each kind (src/report/report-tally.c), as the terminal's title and
 * the end line show it (docs/terminal.md). */
#include <string.h>

#include "report/report-tally.h"
#include "tap.h"

int main(void) {
        ReportTally t = {};
        char buf[64];

        TAP_CHECK(report_tally_total(&t) == 0, "empty tally counts nothing");
        TAP_CHECK(report_tally_format(&t, buf, sizeof(buf)) == 0 && buf[0] == 0, "empty tally says nothing");
        report_tally_add(&t, REPORT_NET);
        report_tally_add(&t, REPORT_FILE);
        report_tally_add(&t, REPORT_FILE);
        report_tally_add(&t, _REPORT_KIND_INVALID);
        report_tally_add(&t, _REPORT_KIND_MAX);
        TAP_CHECK(report_tally_total(&t) == 3, "three counted, the invalid kinds not");
        report_tally_format(&t, buf, sizeof(buf));
        TAP_CHECK(strcmp(buf, "2 file, 1 network") == 0, "kinds in order: '%s'", buf);
        TAP_CHECK(report_tally_format(&t, buf, 9) <= 8 && strlen(buf) < 9,
                  "a short buffer stays terminated");
        return tap_done();
}
