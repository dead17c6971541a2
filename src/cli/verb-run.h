/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include "run-options.h"

/* Runs the parsed request; returns the exit status. */
int run_request(RunArgs *args);
