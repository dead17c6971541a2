/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* scudo-confine's seccomp filter: what the same uid is enough for, outside the sandbox, that
 * no namespace and no Landlock scope keeps the command from (see seccomp.c). */

/* Installs the filter on the calling thread (and sets no_new_privs). 0, or a negative errno;
 * nothing on architectures the filter does not know. */
int confine_seccomp(void);
