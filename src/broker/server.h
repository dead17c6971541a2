/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The broker of a sandbox that delegates (an agent's): outside it, served from the event loop
 * of the scudo that runs that sandbox (src/unit/run.c), so it lives exactly as long as the
 * sandbox does, and needs no process or unit of its own.
 *
 * Its directory, /run/user/UID/scudo/ID (ID: the sandbox's own), holds its socket (`broker`)
 * and the links that route the delegated commands to scudo (`bin`, route.h). Inside that one
 * sandbox, /run/user/UID/scudo is a tmpfs of its own, with the socket and the links bound
 * read-only at /run/user/UID/scudo/broker and /run/user/UID/scudo/bin; in every other sandbox
 * /run/user/UID/scudo is inaccessible (unit-build.c), so none reaches another's broker.
 *
 * For each connection the broker hands the connection to a scudo it started ahead
 * (`scudo __broker-request`, with the socket the connection comes on, the context of
 * context.h and a report pipe as its only fds, in a session of its own; the next one starts
 * at once), which checks who asks and what, and runs the command like any other
 * invocation (src/cli/verb-delegated.c). The broker itself reads nothing from the
 * connection. It reports what each of them decided through the run's report feed
 * (log.target, or --tui's context area). When the sandbox ends, it accepts no more, and the
 * scudos it started stop their units: their callers are gone with the sandbox (see
 * broker_stop()). */

#include <stdint.h>
#include <systemd/sd-event.h>
#include <sys/types.h>

#include "plan/plan.h"
#include "report/report-feed.h"

typedef struct Broker Broker;

/* Starts the broker of the sandbox `unit` (whose unit is not started yet) for `plan`, which
 * delegates. Its directory is named to the watcher first (watcher_fd), which removes it should
 * scudo die. Logs its errors. */
int broker_start(const Plan *plan, const char *unit, sd_event *event, ReportFeed *feed, int watcher_fd,
                 Broker **ret);

/* What the sandbox's unit gets (unit-build.h): paths outside. */
const char *broker_socket(const Broker *b);
const char *broker_bin(const Broker *b);

/* The sandbox has ended: no more requests; the socket and links go. The scudos still running
 * get until `timeout_usec` (CLOCK_MONOTONIC, relative) to stop their units and end (their
 * callers are gone with the sandbox, which they see), running `event` meanwhile; then
 * SIGKILL, whereupon their own watchers stop their units. */
void broker_stop(Broker *b, uint64_t timeout_usec);

Broker *broker_free(Broker *b);

/* Removes a broker's directory: the socket, the links, nothing else (the watcher's part). */
void broker_dir_remove(const char *dir);
