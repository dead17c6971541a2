/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The policy engine's entry points: from a Request to a validated Plan. */

#include <stdbool.h>

#include "plan/plan.h"
#include "plan/request.h"

/* Resolves the profiles that apply to the request into a plan and validates it. On failure
 * returns a negative errno and a message in *ret_error (file:line where it applies). */
int policy_resolve(const Request *req, Plan **ret_plan, char **ret_error);

/* The human-readable (or JSON) account of how the plan came about. */
int policy_explain(const Request *req, bool json, char **ret_text, char **ret_error);
