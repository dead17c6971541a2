/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the broker knows of the sandbox it serves, handed to the scudo it starts for each
 * request (BROKER_CONTEXT_FD): the sandbox's unit, the profiles it delegates and its plan's
 * filesystem entries, which the delegation step checks a request against (plan-delegate.h).
 * Written once when the broker starts, to a sealed memfd that every request's scudo reads:
 * records of a kind letter and a NUL-terminated string ('U' unit, 'N' a delegated profile,
 * 'W'/'R'/'H'/'D' a path and its access). */

#include <stddef.h>

#include "plan/plan-delegate.h"
#include "plan/plan.h"

/* The fds a request's scudo gets: its connection to the client, this context, and the pipe
 * where it reports what it decided (one line each, read by the broker). */
#define BROKER_CONNECTION_FD 3
#define BROKER_CONTEXT_FD 4
#define BROKER_REPORT_FD 5

#define BROKER_CONTEXT_SIZE_MAX (16U * 1024U * 1024U)

/* A sealed memfd with the context of the sandbox `unit` whose plan is `plan`. */
int broker_context_write(const char *unit, const Plan *plan, int *ret_fd);

typedef struct BrokerContext {
        DelegationContext delegation;   /* pointing into the fields below */
        char *unit;
        char **delegated;
        PlanPath *paths;
        size_t n_paths;
} BrokerContext;

void broker_context_done(BrokerContext *c);

/* Reads it back (checking every record). -EBADMSG when it is not one. */
int broker_context_read(int fd, BrokerContext *ret);
