/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Small language helpers shared by every part of scudo: cleanup attributes, ownership
 * hand-over and errno conversion. Nothing here allocates or logs. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _noinline_ __attribute__((noinline))
#define _always_inline_ inline __attribute__((always_inline))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Take ownership of a pointer or fd, leaving the source empty so its cleanup does nothing. */
#define TAKE_PTR(p)                                 \
        ({                                          \
                __typeof__(p) _p_ = (p);            \
                (p) = NULL;                         \
                _p_;                                \
        })
#define TAKE_FD(fd)                                 \
        ({                                          \
                int _fd_ = (fd);                    \
                (fd) = -EBADF;                      \
                _fd_;                               \
        })

/* Generates `funcp(type *p)` that calls func(*p) when *p is set; for use with _cleanup_(). */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)     \
        static inline void func##p(type *p) {       \
                if (*p)                             \
                        func(*p);                   \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}
static inline void closep(int *fd) {
        *fd = safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* libc's -1/errno convention to negative errno. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
#define RET_NERRNO(expr)                            \
        ({                                          \
                int _r_ = (expr);                   \
                _r_ < 0 ? negative_errno() : _r_;   \
        })

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}
static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}
static inline const char *strempty(const char *s) {
        return s ?: "";
}
static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
