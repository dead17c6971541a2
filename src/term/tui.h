/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* --tui: the command on its pty in the main area of the caller's terminal, and a context area
 * below it keeping the last refusal reports.
 *
 * What the command writes goes through a terminal emulator (libvterm) the size of the main
 * area, and the cells that changed are drawn on the caller's terminal, in its alternate
 * screen; the command's window is that area, so full-screen programs lay themselves out in
 * it. Keys go to the command as they are, but for the prefix ^A: `^A s` shows or hides the
 * context area, `^A ^A` sends a ^A. The terminal is given back on every way out: at the end,
 * to suspend (Ctrl-Z), and, should scudo die, by the watcher (watcher.h), which puts back
 * the settings it saw at the start and leaves the alternate screen. */

#include "pty-relay.h"

typedef struct Tui Tui;

/* -ENOTTY when standard input and output are not both terminals. */
int tui_new(Tui **ret);
Tui *tui_free(Tui *t);

/* Puts the screen between the relay and the terminal (before pty_relay_start()). */
void tui_attach(Tui *t, PtyRelay *relay);

/* A line for the context area (a ReportScreenFn). Once the screen is given back for good, to
 * stderr instead. */
void tui_report(const char *line, void *userdata);

/* The run is over and the terminal given back: the reports the context area showed are
 * written to stderr, where they stay. */
void tui_finish(Tui *t);
