/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Reading and writing the broker's messages (protocol.h). The parsers take the bytes as
 * received and either accept them whole or say what is wrong; nothing is trusted before it has
 * been compared with the message size. They do no I/O: the unit tests and the fuzzer call them
 * directly. The send and receive helpers below them do the socket's part. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker/broker-protocol.h"

/* Checks the header of a message of `size` bytes; returns its type or -EBADMSG. */
int broker_message_type(const void *buf, size_t size, const char **ret_reason);

/* Checks a RUN message whole, received with `n_fds` fds: exactly BROKER_RUN_FDS; `value`
 * arguments, 1..BROKER_ARGC_MAX, back to back, each NUL-terminated and valid UTF-8 (D-Bus
 * carries nothing else), argv[0] not empty, nothing after the last NUL. On success *ret_argv is
 * a copy (NULL-terminated). Returns 0, -EBADMSG (and why), or -ENOMEM. */
int broker_parse_run(const void *buf, size_t size, size_t n_fds, char ***ret_argv, const char **ret_reason);

/* Checks a message that is a bare header, of the given type; *ret_value its value. */
int broker_parse_bare(const void *buf, size_t size, BrokerMessageType type, uint32_t *ret_value,
                      const char **ret_reason);

/* The RUN message for argv, in a new buffer. -E2BIG when the command line is longer than the
 * protocol carries, -EINVAL for an empty one. */
int broker_build_run(char * const *argv, void **ret, size_t *ret_size);

/* Sends a bare message. */
int broker_send(int fd, BrokerMessageType type, uint32_t value);

/* Sends RUN for argv with the three fds (the caller's standard streams). */
int broker_send_run(int fd, char * const *argv, const int fds[static BROKER_RUN_FDS]);

/* Receives one message into buf (`size` bytes: one more than the largest accepted, so that a
 * longer one shows). Fds that came with it go to `fds` (at most max_fds; when more came, or they
 * came in anything but SCM_RIGHTS, every one is closed and -EBADMSG returned); each is
 * close-on-exec. Returns the message's size (longer than `size` when it was cut: the caller
 * refuses it), 0 at the end of the connection, or -errno. */
ssize_t broker_receive(int fd, void *buf, size_t size, int *fds, size_t max_fds, size_t *ret_n_fds);
