/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "broker/wire.h"
#include "util/env-util.h"
#include "util/macro.h"
#include "util/strv.h"

static int bad(const char **ret_reason, const char *reason) {
        if (ret_reason)
                *ret_reason = reason;
        return -EBADMSG;
}

int broker_message_type(const void *buf, size_t size, const char **ret_reason) {
        BrokerHeader h;

        if (size < sizeof(h))
                return bad(ret_reason, "message shorter than its header");
        memcpy(&h, buf, sizeof(h));
        if (h.magic != BROKER_MAGIC)
                return bad(ret_reason, "bad magic");
        if (h.version != BROKER_VERSION)
                return bad(ret_reason, "unsupported protocol version");
        if (h.size != size)
                return bad(ret_reason, "size field does not match the message");
        switch (h.type) {
        case BROKER_MSG_RUN:
        case BROKER_MSG_SIGNAL:
        case BROKER_MSG_IN_PLACE:
        case BROKER_MSG_SUSPEND:
        case BROKER_MSG_EXIT:
        case BROKER_MSG_BUSY:
                return h.type;
        default:
                return bad(ret_reason, "unknown message type");
        }
}

int broker_parse_run(const void *buf, size_t size, size_t n_fds, char ***ret_argv, const char **ret_reason) {
        _cleanup_strv_free_ char **argv = NULL;
        BrokerHeader h;
        int k;

        k = broker_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != BROKER_MSG_RUN)
                return bad(ret_reason, "not a RUN message");
        if (n_fds != BROKER_RUN_FDS)
                return bad(ret_reason, "a RUN message comes with exactly three fds");
        memcpy(&h, buf, sizeof(h));
        if (size > BROKER_RUN_SIZE_MAX)
                return bad(ret_reason, "command line too long");
        if (h.value == 0 || h.value > BROKER_ARGC_MAX)
                return bad(ret_reason, "bad number of arguments");

        const char *p = (const char *) buf + sizeof(h), *end = (const char *) buf + size;
        if (p == end || end[-1] != 0)
                return bad(ret_reason, "arguments not NUL-terminated");
        /* Count first: the number the header says, no more, no fewer. */
        size_t n = 0;
        for (const char *q = p; q < end; q += strlen(q) + 1)
                n++;
        if (n != h.value)
                return bad(ret_reason, "number of arguments does not match the message");
        if (*p == 0)
                return bad(ret_reason, "empty command name");

        argv = calloc(n + 1, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++, p += strlen(p) + 1) {
                if (!utf8_is_valid(p))
                        return bad(ret_reason, "argument not valid UTF-8");
                if (!(argv[i] = strdup(p)))
                        return -ENOMEM;
        }
        *ret_argv = TAKE_PTR(argv);
        return 0;
}

int broker_parse_bare(const void *buf, size_t size, BrokerMessageType type, uint32_t *ret_value,
                      const char **ret_reason) {
        BrokerHeader h;
        int k = broker_message_type(buf, size, ret_reason);
        if (k < 0)
                return k;
        if (k != (int) type || size != sizeof(h))
                return bad(ret_reason, "unexpected message");
        memcpy(&h, buf, sizeof(h));
        *ret_value = h.value;
        return 0;
}

int broker_build_run(char * const *argv, void **ret, size_t *ret_size) {
        size_t n = 0, len = 0;

        STRV_FOREACH(a, argv) {
                len += strlen(*a) + 1;
                n++;
                if (len > BROKER_ARGV_SIZE_MAX || n > BROKER_ARGC_MAX)
                        return -E2BIG;
        }
        if (n == 0 || argv[0][0] == 0)
                return -EINVAL;

        size_t size = sizeof(BrokerHeader) + len;
        uint8_t *m = malloc(size);
        if (!m)
                return -ENOMEM;
        BrokerHeader h = {
                .magic = BROKER_MAGIC,
                .version = BROKER_VERSION,
                .type = BROKER_MSG_RUN,
                .size = (uint32_t) size,
                .value = (uint32_t) n,
        };
        memcpy(m, &h, sizeof(h));
        size_t off = sizeof(h);
        STRV_FOREACH(a, argv) {
                size_t l = strlen(*a) + 1;
                memcpy(m + off, *a, l);
                off += l;
        }
        *ret = m;
        *ret_size = size;
        return 0;
}

int broker_send(int fd, BrokerMessageType type, uint32_t value) {
        BrokerHeader h = {
                .magic = BROKER_MAGIC,
                .version = BROKER_VERSION,
                .type = (uint16_t) type,
                .size = sizeof(h),
                .value = value,
        };
        ssize_t k = send(fd, &h, sizeof(h), MSG_NOSIGNAL);
        if (k < 0)
                return negative_errno();
        return k == sizeof(h) ? 0 : -EIO;
}

int broker_send_run(int fd, char * const *argv, const int fds[static BROKER_RUN_FDS]) {
        _cleanup_free_ void *m = NULL;
        size_t size;
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * BROKER_RUN_FDS)];
        } control = {};

        int r = broker_build_run(argv, &m, &size);
        if (r < 0)
                return r;
        struct iovec iov = { .iov_base = m, .iov_len = size };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof(control.buf),
        };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * BROKER_RUN_FDS);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * BROKER_RUN_FDS);

        ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (k < 0)
                return negative_errno();
        return (size_t) k == size ? 0 : -EIO;
}

ssize_t broker_receive(int fd, void *buf, size_t size, int *fds, size_t max_fds, size_t *ret_n_fds) {
        /* Room for one fd more than accepted, so that too many show as too many rather than as
         * a cut control message; anything past that is cut (MSG_CTRUNC), and the kernel closes
         * what it could not hand over. */
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * (BROKER_RUN_FDS + 1))];
        } control = {};
        struct iovec iov = { .iov_base = buf, .iov_len = size };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof(control.buf),
        };
        size_t n = 0;
        bool odd = false;

        ssize_t k = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC);
        if (k < 0)
                return negative_errno();

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                        odd = true;
                        continue;
                }
                size_t m = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < m; i++) {
                        int f;
                        memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (n < max_fds)
                                fds[n++] = f;
                        else {
                                safe_close(f);
                                odd = true;
                        }
                }
        }
        if (odd || (mh.msg_flags & MSG_CTRUNC)) {
                for (size_t i = 0; i < n; i++)
                        safe_close(fds[i]);
                *ret_n_fds = 0;
                return -EBADMSG;
        }
        *ret_n_fds = n;
        return k;
}
