/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* network.git_remote: a profile of git's remote commands (push, fetch, pull, ls-remote, clone)
 * reaches the host of the remote the command uses, and no other. Which remote that is comes
 * from the command line (git's own options before the verb, `-C DIR` applied) and, when it
 * names none, from the repository's configuration the way git chooses (branch.B.pushRemote,
 * remote.pushDefault, branch.B.remote, "origin"); its URL from git itself (`git remote
 * get-url`, so url.*.insteadOf applies), and the host and port from the URL
 * (git-remote-url.h). Each becomes an allow rule, origin "the remote NAME (URL)".
 *
 * A delegated request (Request.delegation) is held to more, as its command line and start
 * directory are the caller's: no `-c`, `--config-env`, `--exec-path`, `--git-dir` or
 * `--work-tree`, which choose what code git runs or which configuration it reads; no URL on
 * the command line, only a remote the repository names; no remote without a host (a path,
 * file://, a helper's "X::"); and the repository's config and hooks directory must be ones the
 * caller cannot write. Called after plan_check(), for a delegated request after
 * plan_delegate(). Returns 0; -EPERM with *ret_error saying why the command is refused; -ENOMEM. */

#include "plan/plan.h"
#include "plan/request.h"

int plan_git_remote(Plan *p, const Request *req, char **ret_error);
