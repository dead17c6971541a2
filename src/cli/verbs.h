/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Subcommands about configuration: each takes argv starting at its own name and returns a
 * negative errno after reporting why, or the exit status (0, or a verb's own positive one);
 * main() turns the first into scudo's (cli/exit-status.h). */
int verb_explain(int argc, char **argv);
int verb_check(int argc, char **argv);
int verb_profiles(int argc, char **argv);
int verb_trust(int argc, char **argv);
int verb_untrust(int argc, char **argv);
int verb_trusted(int argc, char **argv);
int verb_suggest(int argc, char **argv);
/* Whether this host can confine anything (verb-doctor.c, doctor.h). */
int verb_doctor(int argc, char **argv);
/* The FUSE shim (verb-shim.c): mount it, or print its path or PATH line; the names it lists
 * for one directory (started by the shim); how each matched command starts (verb-status.c). */
int verb_shim(int argc, char **argv);
int verb_shim_names(int argc, char **argv);
int verb_status(int argc, char **argv);
/* One request to a sandbox's delegation broker, started by the broker (verb-delegated.c). */
/* `scudo __in-place COMMAND [ARG...]`, inside a sandbox only: what scudo-route hands on when the
 * broker says a command runs in place; found on PATH past the routing links (cli/verb-run.c). */
int verb_in_place(int argc, char **argv);
int verb_broker_request(int argc, char **argv);
