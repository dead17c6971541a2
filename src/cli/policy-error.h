/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A failed call into the policy engine, reported once: the engine's message when it gave one
 * (it names the file and line), else the errno with the caller's words. Returns -abs(r). */

#include "util/log.h"

#define log_policy_error(r, error, ...) \
        ((error) ? log_error_errno((r), "%s", (error)) : log_error_errno((r), __VA_ARGS__))
