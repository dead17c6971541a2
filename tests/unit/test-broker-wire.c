/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The broker's wire format (src/broker/wire.c): what a RUN message must be to be accepted, and
 * the fds that come with it over a real socket pair: exactly three, and none left open when the
 * message is refused. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/wire.h"
#include "tap.h"
#include "util/strv.h"

static size_t open_fds(void) {
        size_t n = 0;
        for (int fd = 0; fd < 1024; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        n++;
        return n;
}

static void put_header(uint8_t *m, uint16_t type, uint32_t size, uint32_t value) {
        BrokerHeader h = { .magic = BROKER_MAGIC, .version = BROKER_VERSION, .type = type, .size = size,
                           .value = value };
        memcpy(m, &h, sizeof(h));
}

static int parse(const uint8_t *m, size_t size, size_t n_fds, const char **reason) {
        char **argv = NULL;
        int r = broker_parse_run(m, size, n_fds, &argv, reason);
        strv_free(argv);
        return r;
}

static void test_parse(void) {
        char *argv[] = { (char *) "npm", (char *) "install", (char *) "", NULL };
        void *m;
        size_t size;
        const char *reason = NULL;
        char **got = NULL;

        TAP_CHECK(broker_build_run(argv, &m, &size) == 0, "a command line builds");
        TAP_CHECK(broker_parse_run(m, size, 3, &got, &reason) == 0 && strv_length(got) == 3 &&
                  streq(got[0], "npm") && streq(got[1], "install") && streq(got[2], ""),
                  "and parses back, an empty argument included");
        strv_free(got);
        TAP_CHECK(parse(m, size, 2, &reason) == -EBADMSG && strstr(reason, "three fds"), "two fds: refused");
        TAP_CHECK(parse(m, size, 4, &reason) == -EBADMSG, "four fds: refused");
        TAP_CHECK(parse(m, size - 1, 3, &reason) == -EBADMSG && strstr(reason, "size field"),
                  "a message shorter than its size field: refused");

        uint8_t *b = malloc(size + 8);
        memcpy(b, m, size);
        memcpy(b + size, "extra\0\0\0", 8);
        put_header(b, BROKER_MSG_RUN, (uint32_t) size + 8, 3);
        TAP_CHECK(parse(b, size + 8, 3, &reason) == -EBADMSG && strstr(reason, "does not match"),
                  "arguments beyond the count: refused");
        put_header(b, BROKER_MSG_RUN, (uint32_t) size, 4);
        TAP_CHECK(parse(b, size, 3, &reason) == -EBADMSG, "a count beyond the arguments: refused");
        put_header(b, BROKER_MSG_RUN, (uint32_t) size, 0);
        TAP_CHECK(parse(b, size, 3, &reason) == -EBADMSG, "no arguments: refused");
        memcpy(b, m, size);
        b[size - 1] = 'x';
        TAP_CHECK(parse(b, size, 3, &reason) == -EBADMSG && strstr(reason, "NUL"),
                  "a last argument without its NUL: refused");
        memcpy(b, m, size);
        ((BrokerHeader *) b)->magic ^= 1;
        TAP_CHECK(parse(b, size, 3, &reason) == -EBADMSG && strstr(reason, "magic"), "bad magic: refused");
        memcpy(b, m, size);
        ((BrokerHeader *) b)->version = 2;
        TAP_CHECK(parse(b, size, 3, &reason) == -EBADMSG, "another version: refused");
        memcpy(b, m, size);
        b[sizeof(BrokerHeader)] = 0;
        TAP_CHECK(parse(b, size, 3, &reason) == -EBADMSG, "an empty command name: refused");
        memcpy(b, m, size);
        b[sizeof(BrokerHeader) + 4] = (char) 0xff;
        TAP_CHECK(parse(b, size, 3, &reason) == -EBADMSG && strstr(reason, "UTF-8"),
                  "an argument that is not UTF-8: refused");
        TAP_CHECK(parse(b, 10, 3, &reason) == -EBADMSG && strstr(reason, "shorter"),
                  "a short header: refused");
        free(b);
        free(m);

        /* The largest command line that fits, and one byte more. */
        char *big = malloc(BROKER_ARGV_SIZE_MAX);
        memset(big, 'a', BROKER_ARGV_SIZE_MAX);
        big[BROKER_ARGV_SIZE_MAX - 1] = 0;
        char *one[] = { big, NULL };
        TAP_CHECK(broker_build_run(one, &m, &size) == 0 && parse(m, size, 3, &reason) == 0,
                  "a command line of the largest size: accepted");
        free(m);
        char *two[] = { big, (char *) "", NULL };
        TAP_CHECK(broker_build_run(two, &m, &size) == -E2BIG, "one byte more does not build");
        b = calloc(1, sizeof(BrokerHeader) + BROKER_ARGV_SIZE_MAX + 1);
        memcpy(b + sizeof(BrokerHeader), big, BROKER_ARGV_SIZE_MAX);
        put_header(b, BROKER_MSG_RUN, sizeof(BrokerHeader) + BROKER_ARGV_SIZE_MAX + 1, 2);
        TAP_CHECK(parse(b, sizeof(BrokerHeader) + BROKER_ARGV_SIZE_MAX + 1, 3, &reason) == -EBADMSG &&
                  strstr(reason, "too long"), "nor is it accepted");
        free(b);
        free(big);

        uint8_t h[sizeof(BrokerHeader)];
        uint32_t v = 0;
        put_header(h, BROKER_MSG_EXIT, sizeof(h), 42);
        TAP_CHECK(broker_parse_bare(h, sizeof(h), BROKER_MSG_EXIT, &v, &reason) == 0 && v == 42, "EXIT 42");
        TAP_CHECK(broker_parse_bare(h, sizeof(h), BROKER_MSG_SIGNAL, &v, &reason) == -EBADMSG,
                  "an EXIT is no SIGNAL");
        put_header(h, 99, sizeof(h), 0);
        TAP_CHECK(broker_message_type(h, sizeof(h), &reason) == -EBADMSG, "an unknown type: refused");
}

/* A RUN sent with `n` fds over a socket pair, received as the broker receives it. */
static ssize_t roundtrip(int n, size_t *ret_n_fds, int fds[BROKER_RUN_FDS + 1]) {
        int sv[2];
        int mine[8];
        void *m;
        size_t size;
        uint8_t buf[BROKER_RUN_SIZE_MAX + 1];
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * 8)];
        } control = {};

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        for (int i = 0; i < n; i++)
                mine[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
        char *argv[] = { (char *) "tool", NULL };
        (void) broker_build_run(argv, &m, &size);
        struct iovec iov = { .iov_base = m, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (n > 0) {
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(c), mine, sizeof(int) * n);
        }
        ssize_t k = sendmsg(sv[0], &mh, 0);
        free(m);
        for (int i = 0; i < n; i++)
                close(mine[i]);
        if (k < 0)
                return -errno;
        k = broker_receive(sv[1], buf, sizeof(buf), fds, BROKER_RUN_FDS + 1, ret_n_fds);
        close(sv[0]);
        close(sv[1]);
        return k;
}

static void test_fds(void) {
        int fds[BROKER_RUN_FDS + 1];
        size_t n = 0, before = open_fds();

        ssize_t k = roundtrip(3, &n, fds);
        TAP_CHECK(k > 0 && n == 3, "three fds arrive with the message");
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
        TAP_CHECK(open_fds() == before, "and nothing else stays open");

        k = roundtrip(7, &n, fds);
        TAP_CHECK(k == -EBADMSG && n == 0, "seven fds: the message is refused");
        TAP_CHECK(open_fds() == before, "and none of them stays open");

        k = roundtrip(0, &n, fds);
        TAP_CHECK(k > 0 && n == 0, "no fds: received, for the parser to refuse");
}

int main(void) {
        test_parse();
        test_fds();
        return tap_done();
}
