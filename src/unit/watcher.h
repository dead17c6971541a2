/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The guard that stops a run's units when scudo dies without finishing (even by SIGKILL).
 *
 * A small child process, in its own process group so terminal signals pass it by, reads unit
 * names (and the paths of .git placeholders, which start with '/') from a pipe. scudo writes each name before it starts the unit, and an empty line once
 * it has seen the run end. If the pipe reaches end-of-file without that line, scudo is gone:
 * the watcher stops the units over the user bus, then exits. It costs one fork per run and
 * needs nothing inside the sandbox. */

int watcher_start(int *ret_fd);
int watcher_add_unit(int fd, const char *unit);
/* A .git placeholder (git-guard.h) to remove once the units are stopped. */
int watcher_add_placeholder(int fd, const char *path);
/* Tells the watcher the run ended normally; closes fd. */
void watcher_release(int fd);
