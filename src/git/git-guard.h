/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A repository planted where the command starts.
 *
 * A writable directory without a .git is where a command could make one: `git init`, then a
 * core.fsmonitor or a hook in its config. The next `git status` there outside the sandbox (a
 * shell prompt runs one after every command) would run what it says. The hardening step
 * (plan/plan-harden.h) binds an existing .git read-only; where there is none, it asks for a
 * placeholder (a read entry with create = PATH_CREATE_PLACEHOLDER): the guard makes an empty
 * directory of that name for the run, which the unit then binds read-only onto itself like any
 * other, and removes it when the run ends. An empty .git is no repository to git, so nothing
 * changes outside.
 *
 * Only the working directory and writable directories above it get one (the hardening step
 * decides): the places the user goes on working in. Two runs in the same directory share the placeholder (a
 * shared flock on it each; any empty .git is taken for one); the last to end removes it, and only while it
 * is still an empty directory. When scudo is killed, the watcher removes it (watcher.h). */

#include "plan/plan.h"

#define GIT_GUARD_MAX PLAN_GIT_PLACEHOLDERS_MAX

typedef struct GitGuard {
        size_t n;
        char *path[GIT_GUARD_MAX];     /* DIR/.git */
        int fd[GIT_GUARD_MAX];         /* the placeholder, open and flock()ed shared */
} GitGuard;

/* Makes (or joins) the placeholders the plan asks for. A .git that is anything but an empty
 * directory by now is left to the plan's read-only bind of it. Returns 0 or -errno. */
int git_guard_acquire(const Plan *plan, GitGuard *g);

/* Removes the placeholders no other run holds; frees g. */
void git_guard_release(GitGuard *g);

/* Lets go of them without removing any (the unit may still run: the watcher removes them once
 * it has stopped it); frees g. */
void git_guard_drop(GitGuard *g);

/* The placeholder at path, when no run holds it and it is still an empty directory: removed.
 * For the watcher, once scudo is gone. */
void git_guard_remove(const char *path);
