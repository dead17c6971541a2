/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "log.h"

static const char *program = "scudo";
static LogLevel max_level = LOG_LEVEL_NOTICE;
static LogSink sink;

void log_set_program(const char *name) {
        program = name;
}

void log_set_max_level(LogLevel level) {
        max_level = level;
}

void log_set_sink(LogSink s) {
        sink = s;
}

bool log_has_sink(void) {
        return sink != NULL;
}

LogLevel log_get_max_level(void) {
        return max_level;
}

int log_full_errno(LogLevel level, int error, const char *fmt, ...) {
        int e = error < 0 ? -error : error;
        char buf[4096], msg[4096];
        size_t j = 0;
        va_list ap;

        if (level > max_level)
                return e > 0 ? -e : -EIO;

        /* Expand %m ourselves: the errno it names is the argument, not the global errno. */
        for (const char *p = fmt; *p && j + 1 < sizeof(buf); p++) {
                if (p[0] == '%' && p[1] == '%') {
                        if (j + 2 >= sizeof(buf))
                                break;
                        buf[j++] = '%';
                        buf[j++] = '%';
                        p++;
                } else if (p[0] == '%' && p[1] == 'm') {
                        const char *s = strerror(e > 0 ? e : EIO);
                        for (; *s && j + 2 < sizeof(buf); s++) {
                                if (*s == '%')
                                        buf[j++] = '%';
                                buf[j++] = *s;
                        }
                        p++;
                } else
                        buf[j++] = *p;
        }
        buf[j] = 0;

        va_start(ap, fmt);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        (void) vsnprintf(msg, sizeof(msg), buf, ap);
#pragma GCC diagnostic pop
        va_end(ap);

        if (sink && level > LOG_LEVEL_ERROR) {
                sink(level, msg);
                return e > 0 ? -e : -EIO;
        }
        (void) fprintf(stderr, "%s: %s%s\n", program,
                       level == LOG_LEVEL_WARNING ? "warning: " : "", msg);
        return e > 0 ? -e : -EIO;
}
