/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The policy engine's entry points: from a Request to a checked and hardened Plan.
 *
 * Each call creates its own Lua state (src/policy/lua-engine.c), runs the embedded library
 * (lua/scudo/NAME.lua) on the built-in policies and the configuration files it discovers, and
 * closes the state again. Errors come back as a negative errno and a message that names the
 * file and line where one applies; every one of them means exit 125 and nothing runs. */

#include <stdbool.h>

#include "plan/plan.h"
#include "plan/request.h"

/* Discovers and reads the configuration (trust checked), matches and merges the profiles,
 * expands variables, runs hooks, then plan_normalize(), plan_check() and plan_harden(). It
 * prints and asks nothing: the notices a run shows (a project file that is not trusted,
 * warnings from hooks, an entry dropped as it leads out of a writable directory) come back in
 * *ret_warnings (NULL: dropped), one line each, control characters shown as '?', whether or
 * not it fails; a plan that says confirm = true is the caller's to ask about. Inside a sandbox
 * (req->nested), one-run options that would widen it fail (-EPERM). A request that came
 * through a broker (req->delegation) goes through the delegation step right after the checks
 * (plan/plan-delegate.h): refused with -EPERM, or a plan whose delegation_in_place says the
 * caller runs it itself. */
int policy_resolve(const Request *req, Plan **ret_plan, char ***ret_warnings, char **ret_error);

/* The human-readable (or JSON) account of how the plan came about: files and their trust,
 * profiles and why they matched, extend chains, every entry with its origin, what was dropped
 * and why, and whether the plan passes validation. Fails only where resolution itself fails. */
int policy_explain(const Request *req, bool json, char **ret_text, char **ret_error);

/* The hardened plan p as --dry-run prints it: a line per thing the run gets, through explain's
 * printer (lua/scudo/explain.lua), which alone says whether a grant would be created. */
int policy_print_plan(const Plan *p, char **ret_text, char **ret_error);

/* `scudo check`: validates the given files (relative to req->start_dir), or with paths NULL
 * or empty everything a run from req->start_dir would read. The report lists each file; the
 * number of errors goes to *ret_errors. Untrusted .lua files are compiled, never run. */
int policy_check(const Request *req, const char *const *paths, char **ret_report, int *ret_errors,
                 char **ret_error);

/* `scudo profiles`: every profile, its description, matches, extend chain and definitions. */
int policy_profiles(const Request *req, char **ret_text, char **ret_error);

/* The command names some profile selects by name, as seen from req->start_dir, one a line,
 * sorted: what the FUSE shim lists (src/shim/, docs/shim.md). "re:" patterns add none. */
int policy_command_names(const Request *req, char **ret_text, char **ret_error);

/* `scudo trust`: the files to record, with their content hashes, and a summary of what they
 * grant (each TOML file's profiles with their keys as written; what each Lua file is), for the
 * user to read before they are recorded. The given paths (files, or directories for their
 * project files; default: the project files of req->start_dir alone) and the hook files a TOML
 * file among them names inside its own directory tree. Only regular files named .scudo.toml or
 * *.lua are accepted. Paths come back as trust keys (trust.h). The rule: lua/scudo/admin.lua. */
int policy_trust_targets(const Request *req, const char *const *paths, char ***ret_paths,
                         char ***ret_hashes, char **ret_summary, char **ret_error);

/* For tests and benchmarks: read the system configuration from `dir` instead of
 * SCUDO_SYSCONFDIR (NULL: back to the default); turn the SIGALRM watchdog off (it is on by
 * default and must be off under a fuzzer that uses SIGALRM itself). */
void policy_set_sysconfdir(const char *dir);
void policy_set_watchdog(bool on);
