/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the files of the hardening step (plan-harden.h) share: its helpers (plan-harden.c) and
 * the sections the other files hold, called in plan_harden()'s order. */

#include "plan/plan-harden.h"

/* Appends scudo's entry, with its reason, origin PLAN_ORIGIN_SCUDO. */
int harden_add_entry(Plan *p, PathAccess access, const char *path, const char *why, PathCreate create,
                     PathSource source);
/* scudo's entry at `path`, whatever the profiles say: a profile's entry for the same path is
 * dropped, saying so. */
int harden_force_entry(Plan *p, PathAccess access, const char *path, const char *why, PathSource source);
/* The entry that decides what the command can do to `path` (canonical): the one for the path
 * itself or else for its closest enclosing directory; NULL when none does. */
const PlanPath *harden_governing_entry(const Plan *p, const char *path);
/* Whether `path` (canonical) is writable only because a directory above it is. */
bool harden_writable_from_above(const Plan *p, const char *path);

/* `path` (a persistence root, or a file git's configuration includes) read-only when what it
 * leads to is in a directory the command may write, made first where missing. through_symlink:
 * only where a symlink leads there. harden-persistence.c. */
int harden_keep_runs_later(Plan *p, const char *path, bool file, bool through_symlink);

int harden_persistence(Plan *p, const HardenContext *ctx);      /* harden-persistence.c */
int harden_user_config(Plan *p, const HardenContext *ctx);     /* harden-user-config.c */
int harden_git_dirs(Plan *p);                                   /* harden-git.c */
int harden_git_config(Plan *p, const HardenContext *ctx);       /* harden-git-config.c */
int harden_tool_config(Plan *p, const HardenContext *ctx);      /* harden-tool-config.c */
int harden_sockets(Plan *p, const HardenContext *ctx);          /* harden-sockets.c */
