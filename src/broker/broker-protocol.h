/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The wire format between a scudo inside a sandbox that delegates (the client, see client.h)
 * and the broker outside it (server.h, and the scudo it starts for each request).
 *
 * The transport is a SOCK_SEQPACKET unix socket: message boundaries are kept, and each message
 * is read whole or refused. Every message is a BrokerHeader, and only RUN has more after it.
 * Integers are in host byte order (both ends are on one machine). The broker trusts nothing
 * the client says: it checks every field (wire.h), and what the request means (who asks, from
 * which directory, under which profiles) it learns from the kernel and its own configuration.
 *
 * A connection carries one command:
 *   client → RUN      the command line; exactly BROKER_RUN_FDS fds ride with it (SCM_RIGHTS):
 *                     the client's standard input, output and error
 *   client → SIGNAL   0..n: a signal the client received, to act on as if the delegated
 *                     scudo had received it (`value`: SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 *                     SIGWINCH, or SIGCONT after a SUSPEND)
 *   broker → IN_PLACE no delegated profile matches: the client runs the command itself,
 *                     inside its sandbox (the connection is over)
 *   broker → SUSPEND  the user typed the suspend character: the client stops itself (job
 *                     control) and sends SIGNAL SIGCONT when continued
 *   broker → EXIT     the command ran outside (or was refused): `value` is the exit status,
 *                     0..255, 128+N for signal N, 125 refused (why: on the client's stderr)
 *   broker → BUSY     the broker runs BROKER_RUNNING_MAX commands already: refused unread
 * The client closing the connection means it is gone: the delegated command is stopped. */

#include <assert.h>
#include <stdint.h>

#define BROKER_MAGIC UINT32_C(0x42444353)       /* "SCDB" in memory on little-endian */
#define BROKER_VERSION 1

/* A command line of at most this many bytes (its arguments, each with its NUL) and arguments.
 * Kept below the socket's default send buffer (about 208 KiB), which bounds a SEQPACKET
 * message; far above what a tool's command line needs. */
#define BROKER_ARGV_SIZE_MAX (128U * 1024U)
#define BROKER_ARGC_MAX 4096U
#define BROKER_RUN_FDS 3U

/* Commands running through one broker at once; more are refused (BUSY). Each is a scudo and a
 * unit outside the agent's sandbox, beyond its own limits. */
#define BROKER_RUNNING_MAX 32U

/* The socket's path inside the sandbox: plan/broker-paths.h. */
#include "plan/broker-paths.h"

typedef enum BrokerMessageType {
        BROKER_MSG_RUN = 1,
        BROKER_MSG_SIGNAL = 2,
        BROKER_MSG_IN_PLACE = 16,
        BROKER_MSG_SUSPEND = 17,
        BROKER_MSG_EXIT = 18,
        BROKER_MSG_BUSY = 19,
} BrokerMessageType;

typedef struct BrokerHeader {
        uint32_t magic;
        uint16_t version;
        uint16_t type;                  /* BrokerMessageType */
        uint32_t size;                  /* the whole message, header included */
        uint32_t value;                 /* RUN: argc; SIGNAL: signo; EXIT: status; else 0 */
} BrokerHeader;
static_assert(sizeof(BrokerHeader) == 16, "BrokerHeader layout");

/* RUN: the header, then `value` NUL-terminated arguments back to back, nothing after the last
 * NUL; argv[0] as the caller typed it (a name, or a path). */
#define BROKER_RUN_SIZE_MAX (sizeof(BrokerHeader) + BROKER_ARGV_SIZE_MAX)
