/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include <sys/types.h>

/* The command's own PID namespace (scudo-confine --private-pids): see pid-init.c. */

/* Called once the calling process has unshared CLONE_NEWPID (with a user namespace that
 * gives it the capabilities to mount). Forks the namespace's init, which mounts a /proc of
 * the namespace's own and forks the command. Returns 0 in the command's process (pid 2),
 * which goes on to exec it; the process that called it and the init never return from here
 * but exit with the command's status once it ends. A negative errno, with *ret_step naming
 * what failed, before anything ran: in the calling process, or in the init (whose exit
 * status the calling process then passes on). When the command stops (job control, in
 * pid-init.c), SIGURG goes to `notify_stop` (the scudo running the unit), if > 0. */
int pid_namespace_run(pid_t notify_stop, const char **ret_step);
