/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The guard that stops a run's units when scudo dies without finishing (even by SIGKILL).
 *
 * A small child process, in its own process group so terminal signals pass it by, reads unit
 * names (and the paths of .git placeholders, which start with '/', and of a scratch
 * directory, after a '-') from a pipe. scudo writes each name before it starts the unit, and
 * an empty line once it has seen the run end. If the pipe reaches end-of-file without that
 * line, scudo is gone: the watcher stops the units over the user bus, waits until they are
 * gone, makes the end-of-run check scudo would have made (persist-check.h) with the plan it
 * was forked with, then exits. It costs one fork per run and needs nothing inside the
 * sandbox. */

#include <stdbool.h>
#include <time.h>

#include "plan/plan.h"

/* plan: the run's, complete and left unchanged from here on (the watcher has its copy). */
int watcher_start(const Plan *plan, int *ret_fd);
int watcher_add_unit(int fd, const char *unit);
/* scudo's unique name on the user bus: should scudo die, its units are stopped only once the
 * bus has dropped that name, so that a start it sent is not overtaken by the stop. */
int watcher_add_bus_client(int fd, const char *unique_name);
/* A .git placeholder (git-guard.h) to remove once the units are stopped. */
int watcher_add_placeholder(int fd, const char *path);
/* A directory of scudo's own (git-config-copies.h) whose files and itself to remove once the
 * units are stopped. One at a time. */
int watcher_add_scratch_dir(int fd, const char *path);
/* The directory of the run's delegation broker (broker/server.h): removed once the units are
 * stopped. */
int watcher_add_broker(int fd, const char *dir);
/* The time the unit is started from (the end-of-run check's "changed during the run"): sent
 * before StartTransientUnit, so that a killed run whose unit may have started is checked. */
int watcher_add_start_time(int fd, const struct timespec *since);
/* The caller's terminal is scudo's now (raw, and with `alternate` the alternate screen of
 * --tui): should scudo die, the settings the terminal had when the watcher started are put
 * back, and the alternate screen left, before the units are stopped. A crash signal is caught
 * in scudo, which does it itself before dying; after SIGKILL the watcher does. */
int watcher_guard_terminal(int fd, bool alternate);
/* Tells the watcher the run ended normally; closes fd. */
void watcher_release(int fd);
