/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* How a function below the verbs says why it refuses without printing: it returns a negative
 * errno and hands the message back; the caller at the edge reports it, once. */

#include <stdarg.h>

#include "util/macro.h"

/* Returns r, with *ret_error set to the message (NULL when there was no memory for it) unless
 * ret_error is NULL. Whatever *ret_error held is not freed: it is expected to be unset. */
_printf_(3, 4) int error_message(char **ret_error, int r, const char *fmt, ...);
_printf_(3, 0) int error_messagev(char **ret_error, int r, const char *fmt, va_list ap);
