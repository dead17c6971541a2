/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Terminal mode: the command runs on a pseudo-terminal of its own (the unit's TTYPath), and
 * scudo relays bytes between the caller's terminal and the pty's master side. This gives the
 * command a controlling terminal (/dev/tty, job control, password prompts), window-size
 * changes (SIGWINCH) and Ctrl-C through the line discipline, none of which fd passing can. */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>
#include <termios.h>

typedef struct PtyRelay PtyRelay;

/* Called when the user types the suspend character: the runner freezes the unit. */
typedef void (*pty_suspend_fn)(void *userdata);

int pty_relay_new(PtyRelay **ret);
const char *pty_relay_slave_path(PtyRelay *p);
/* Puts the caller's terminal in raw mode and starts relaying. */
int pty_relay_start(PtyRelay *p, sd_event *e, pty_suspend_fn on_suspend, void *userdata);
/* Copies the caller's window size to the pty (on SIGWINCH). */
void pty_relay_resize(PtyRelay *p);
/* Terminal back to how we found it (before suspending or exiting), and raw again after. */
void pty_relay_restore_terminal(PtyRelay *p);
int pty_relay_raw_terminal(PtyRelay *p);
/* Writes out whatever the command printed last. */
void pty_relay_drain(PtyRelay *p);
PtyRelay *pty_relay_free(PtyRelay *p);
