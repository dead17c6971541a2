/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <ctype.h>
#include <stdint.h>

#include "edit-distance.h"
#include "macro.h"

size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, bool ignore_case) {
        size_t row[EDIT_DISTANCE_MAX + 1];

        if (la > EDIT_DISTANCE_MAX || lb > EDIT_DISTANCE_MAX)
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diag = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t up = row[j];
                        unsigned char x = (unsigned char) a[i - 1], y = (unsigned char) b[j - 1];
                        size_t cost = (ignore_case ? tolower(x) == tolower(y) : x == y) ? 0 : 1;
                        row[j] = MIN(MIN(up + 1, row[j - 1] + 1), diag + cost);
                        diag = up;
                }
        }
        return row[lb];
}
