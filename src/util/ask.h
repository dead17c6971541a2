/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A yes/no question on the terminal. */

#include <stdio.h>

/* Prints question and " [y/N] " on out, then reads one line from in_fd, byte by byte, so that
 * nothing beyond the answer is taken from input that belongs to a command started later.
 * Returns 1 for "y", "Y" or "yes", 0 for any other answer or the end of input, or a negative
 * errno when reading fails. Whether in_fd is a terminal is the caller's to check. */
int ask_yes_no(int in_fd, FILE *out, const char *question);
