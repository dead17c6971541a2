/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdio.h>

#include "util/error-message.h"

int error_messagev(char **ret_error, int r, const char *fmt, va_list ap) {
        if (ret_error && vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        return r;
}

int error_message(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        r = error_messagev(ret_error, r, fmt, ap);
        va_end(ap);
        return r;
}
