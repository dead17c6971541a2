/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include "plan/plan.h"
#include "plan/request.h"

/* confirm = true: asks [y/N] on the terminal whether to run req's command under the plan's
 * profiles. 0 when the plan does not ask or the answer is yes; -ECANCELED with *ret_error
 * saying why when there is no terminal to ask on or the answer is anything else; -ENOMEM. */
int run_confirm(const Plan *p, const Request *req, char **ret_error);
