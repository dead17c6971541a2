/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The global configuration watched (inotify): /etc/scudo and its config.d, the user's
 * $XDG_CONFIG_HOME/scudo and its config.d, and the trust store's directory, each also through
 * its parent so that a directory made later is seen. `changed` runs on the watcher's own
 * thread after each burst of changes. */

typedef struct ShimWatch ShimWatch;

int shim_watch_start(void (*changed)(void *userdata), void *userdata, ShimWatch **ret);
void shim_watch_stop(ShimWatch *w);
