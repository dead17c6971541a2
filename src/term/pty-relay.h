/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Terminal mode: the command runs on a pseudo-terminal of its own (the unit's TTYPath), and
 * scudo relays bytes between the caller's terminal and the pty's master side. This gives the
 * command a controlling terminal (/dev/tty, job control, password prompts), window-size
 * changes (SIGWINCH) and Ctrl-C through the line discipline, none of which fd passing can.
 * And it keeps the caller's terminal out of the command's hands: given as it is, a terminal
 * is one the command could read from (any stream of it: /dev/fd/2 opens it for reading too),
 * with no job control to stop it, as it is not the command's controlling terminal. Only what
 * scudo relays reaches the pty: nothing, unless standard input is the terminal. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <systemd/sd-event.h>
#include <termios.h>

typedef struct PtyRelay PtyRelay;

/* Called when the user types the suspend character: the runner freezes the unit. */
typedef void (*pty_suspend_fn)(void *userdata);

/* A layer between the pty and the caller's terminal: the --tui screen (tui.h) shows what the
 * command writes in an area of its own, keeps some keys, and gives the command a window of
 * that area's size. Without one, bytes pass as they are. */
typedef struct PtyRelayLayer {
        /* What the command wrote, instead of writing it to the output. */
        void (*output)(const char *buf, size_t n, void *userdata);
        /* What the user typed: keeps its own keys, moves the rest to the front of buf and
         * returns how many to pass on. */
        size_t (*input)(char *buf, size_t n, void *userdata);
        /* The command's window, from the caller's (changed in place). */
        void (*size)(struct winsize *ws, void *userdata);
        /* The terminal is given back (to suspend, at the end), or taken again. */
        void (*release)(void *userdata);
        void (*take)(void *userdata);
        void *userdata;
} PtyRelayLayer;

/* `input`: the caller's standard input, when it is a terminal whose input the command is to
 * get (put in raw mode while relaying), or -EBADF; `output`: where what the command prints on
 * the pty goes; `terminal`: the caller's terminal, whose settings and size the pty starts with. */
int pty_relay_new(PtyRelay **ret, int input, int output, int terminal);
/* Before pty_relay_start(). */
void pty_relay_set_layer(PtyRelay *p, const PtyRelayLayer *layer);
/* Bytes for the command, as if typed (a terminal's answer to a query). Never blocks. */
void pty_relay_send(PtyRelay *p, const char *buf, size_t n);
/* The pty's slave side, to hand to the command in place of the streams that are terminals. */
int pty_relay_slave_fd(PtyRelay *p);
/* Starts relaying (the caller's terminal in raw mode, when input is relayed). */
int pty_relay_start(PtyRelay *p, sd_event *e, pty_suspend_fn on_suspend, void *userdata);
/* Copies the caller's window size to the pty (on SIGWINCH). */
void pty_relay_resize(PtyRelay *p);
/* Terminal back to how we found it (before suspending or exiting), and raw again after
 * (when input is relayed; nothing otherwise). In the background, setting the terminal stops
 * scudo with SIGTTOU, as it would any program, until it is in the foreground again. */
void pty_relay_restore_terminal(PtyRelay *p);
int pty_relay_raw_terminal(PtyRelay *p);
/* The caller's terminal's title, while input is relayed and no layer is set: written between
 * the command's escape sequences and characters, never inside one; the terminal's own title
 * is back when the terminal is given back (where the terminal keeps a stack of titles). */
void pty_relay_title(PtyRelay *p, const char *title);
/* Stops reading the caller's input while the command is stopped (paused) and reads it again
 * when it goes on: a delegated command's caller stays running, and what the user types then is
 * for the caller's shell (fg, jobs), not for the stopped command. */
void pty_relay_pause_input(PtyRelay *p, bool paused);
/* Writes out whatever the command printed last. */
void pty_relay_drain(PtyRelay *p);
PtyRelay *pty_relay_free(PtyRelay *p);
