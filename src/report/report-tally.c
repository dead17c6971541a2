/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdio.h>

#include "report/report-tally.h"

void report_tally_add(ReportTally *t, ReportKind kind) {
        if (kind >= 0 && kind < _REPORT_KIND_MAX && t->n[kind] < UINT32_MAX)
                t->n[kind]++;
}

unsigned report_tally_total(const ReportTally *t) {
        unsigned total = 0;
        for (int k = 0; k < _REPORT_KIND_MAX; k++)
                total += t->n[k];
        return total;
}

size_t report_tally_format(const ReportTally *t, char *buf, size_t size) {
        size_t len = 0;
        if (size == 0)
                return 0;
        buf[0] = 0;
        for (int k = 0; k < _REPORT_KIND_MAX; k++) {
                if (t->n[k] == 0)
                        continue;
                int w = snprintf(buf + len, size - len, "%s%u %s", len ? ", " : "", t->n[k],
                                 report_kind_to_string((ReportKind) k));
                if (w < 0 || (size_t) w >= size - len)
                        break;
                len += (size_t) w;
        }
        return len;
}
