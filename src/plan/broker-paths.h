/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Where the delegation brokers are (broker/server.h): every broker's directory is below
 * /run/user/UID/scudo, out of reach in every sandbox. Inside the one sandbox that delegates,
 * that directory is a tmpfs of its own holding its broker's socket (`broker`) and the links
 * that route the delegated commands to scudo (`bin`): the one place a scudo inside looks for
 * its broker. The hardening step puts these on the plan (harden-sockets.c), plan_check()
 * refuses a profile's grant there, and the runner binds what the entries name. */

#include <errno.h>
#include <stdio.h>
#include <sys/types.h>

#define BROKER_DIR_NAME "scudo"
#define BROKER_SOCKET_NAME "broker"
#define BROKER_BIN_NAME "bin"
/* In `bin`: which command each executable scudo takes the place of is (broker/route.h). */
#define BROKER_ROUTE_MAP_NAME ".routes"
/* In the root: the project walk's cache (plan/git-dir-cache.h), out of every sandbox's reach. */
#define GIT_DIR_CACHE_NAME "git-dirs"

/* /run/user/UID/scudo. 0 or -ENOMEM. */
static inline int plan_broker_root(uid_t uid, char **ret) {
        return asprintf(ret, "/run/user/%u/" BROKER_DIR_NAME, (unsigned) uid) < 0 ? -ENOMEM : 0;
}
