/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The scudo inside a sandbox that delegates: it asks the broker, and the broker decides.
 *
 * Whether this sandbox has a broker is the kernel's to say, as whether it is a sandbox at all
 * (util/sandbox-unit.h): the socket is a read-only bind mount at /run/user/UID/scudo/broker,
 * under a tmpfs of scudo's own, in the sandbox that delegates, and nowhere else; no variable
 * points elsewhere. A socket there that does not answer is an error, never a reason to run the
 * command in place: where it runs is the broker's to decide. */

#include <stdbool.h>
#include <sys/types.h>

typedef enum BrokerAnswer {
        BROKER_NONE,            /* this sandbox delegates nothing: run the command in place */
        BROKER_RUN_IN_PLACE,    /* the broker says: not delegated, run it in place */
        BROKER_RAN,             /* it ran outside (or was refused there): *ret_status */
} BrokerAnswer;

/* Whether this sandbox has a broker: its socket at /run/user/UID/scudo/broker. */
bool broker_client_present(uid_t uid);

/* Hands argv and the standard streams to the broker, passes on the signals this process gets
 * (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH; and stops itself when the broker says the user
 * typed the suspend character), and waits for the answer. Returns a BrokerAnswer (with
 * *ret_status for BROKER_RAN), or a negative errno after printing why (the broker cannot be
 * reached, or went away). */
int broker_client_run(uid_t uid, char * const *argv, int *ret_status);

/* broker_client_run() for a command started inside the sandbox `unit` through its routing
 * (broker_route_name()): what the broker says, or, when it says "in place" for a command whose
 * executables are scudo's here (nothing else of it could run, and a copy found elsewhere is not
 * what was asked for), -EPERM after saying why. */
int broker_client_route(uid_t uid, const char *unit, char **argv, int *ret_status);
