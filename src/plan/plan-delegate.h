/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The delegation step: what a command that a sandbox asks its broker for may be given.
 *
 * The request is the calling sandbox's (an agent's), and so is its command line: nothing in it
 * may widen what the delegated sandbox gets. The profiles decide what a run grants, in Lua;
 * here, in C, on the validated plan resolved for the request, is whether the command is
 * delegated at all and every limit a delegated run is held to (docs/delegation.md, "What a
 * request cannot do"). Called right after plan_check() for a request that came through a
 * broker (Request.delegation); a run from a terminal never gets here. */

#include <stdbool.h>
#include <stddef.h>

#include "plan/plan.h"
#include "plan/request.h"

/* The sandbox a request comes from, as the broker knows it: from its own records and the
 * kernel, never from the request. */
typedef struct DelegationContext {
        const char *caller_unit;        /* the calling sandbox's unit, scudo-ID.service */
        char **delegated;               /* the profiles it delegates (its Plan.delegate) */
        const PlanPath *caller_paths;   /* its plan's entries, validated (canonical) */
        size_t n_caller_paths;
} DelegationContext;

typedef enum Delegation {
        DELEGATION_IN_PLACE,            /* no delegated profile matches: it runs inside the caller */
        DELEGATION_OUTSIDE,             /* a sandbox of its own, under every profile it matches */
} Delegation;

/* Decides whether the command is delegated: whether a profile it matched is one the caller
 * delegates. If it is, checks each limit; then makes what the delegated sandbox reports go to
 * the caller's stderr (log.target "stderr"), where the one who has to understand a failure
 * reads. Returns 0 with *ret set; -EPERM with *ret_error saying why the request is refused;
 * -ENOMEM. */
int plan_delegate(Plan *p, const Request *req, const DelegationContext *ctx, Delegation *ret,
                  char **ret_error);

/* Whether the caller can write `path` (canonical): the closest entry of its plan at or above it
 * (of several for one path, the most restrictive) grants write. */
bool delegation_caller_can_write(const DelegationContext *ctx, const char *path);

/* Whether `path` (canonical) lies inside what the caller can write: at or below one of its plan's
 * write entries, whatever the caller's plan says of places below that entry. */
bool delegation_inside_caller_writes(const DelegationContext *ctx, const char *path);

/* Whether a plan adds up to no sandbox: it hides and denies nothing, and leaves the file system
 * as it is (ProtectSystem= and ProtectHome= unset or off). */
bool plan_adds_up_to_nothing(const Plan *p);
