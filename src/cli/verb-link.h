/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* `scudo link NAME... [--dir DIR]` and `scudo unlink NAME... [--dir DIR]`. */
int verb_link(int argc, char **argv);
int verb_unlink(int argc, char **argv);
