/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Logging for the edge of the program (main, run(), the daemons). Library code in util/,
 * plan/ and policy/ returns negative errno and leaves the reporting to its caller.
 * Messages go to stderr prefixed with the program name. */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>

#include "macro.h"

typedef enum LogLevel {
        LOG_LEVEL_ERROR,
        LOG_LEVEL_WARNING,
        LOG_LEVEL_NOTICE,
        LOG_LEVEL_INFO,
        LOG_LEVEL_DEBUG,
} LogLevel;

void log_set_program(const char *name);
/* Where the lines below the error level go instead of stderr (NULL: stderr again): a delegated
 * run's warnings are its broker's to report (cli/verb-delegated.c), not the caller's output. */
typedef void (*LogSink)(LogLevel level, const char *message);
void log_set_sink(LogSink sink);
bool log_has_sink(void);
void log_set_max_level(LogLevel level);
LogLevel log_get_max_level(void);

/* Prints the message; `%m` expands to strerror(-error). Returns -abs(error) (or -EIO when
 * error is 0) so that callers can write `return log_error_errno(r, "…: %m");`. */
int log_full_errno(LogLevel level, int error, const char *fmt, ...) _printf_(3, 4);

/* Marks an errno made up by scudo itself, not returned by a call. */
#define SYNTHETIC_ERRNO(e) (e)

#define log_error_errno(e, ...) log_full_errno(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
#define log_error(...) ((void) log_full_errno(LOG_LEVEL_ERROR, 0, __VA_ARGS__))
#define log_warning(...) ((void) log_full_errno(LOG_LEVEL_WARNING, 0, __VA_ARGS__))
#define log_notice(...) ((void) log_full_errno(LOG_LEVEL_NOTICE, 0, __VA_ARGS__))
#define log_info(...) ((void) log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__))
#define log_debug(...) ((void) log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__))
#define log_oom() log_error_errno(ENOMEM, "Out of memory")
