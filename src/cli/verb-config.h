/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Shared by the configuration verbs (check, profiles, trust, untrust, trusted): a Request
 * without a command, describing the caller (start directory, environment, home). */

#include "plan/request.h"

/* Returns 0, or an exit status after printing why. */
int config_request(Request *ret);
