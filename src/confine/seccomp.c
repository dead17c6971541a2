/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The seccomp filter scudo-confine installs before the command. Three system calls reach
 * other processes of the user with nothing more than the same uid, through no channel a
 * mount, a PID namespace or a Landlock scope closes:
 *   - prlimit64() on another pid: RLIMIT_CPU of 1 second makes the kernel SIGKILL a process
 *     of the user that has run that long, RLIMIT_FSIZE of 0 kills the next one that writes a
 *     file, RLIMIT_NOFILE of 0 starves the rest. Refused when it would set a limit of any pid
 *     but 0 (the caller itself, which is what getrlimit()/setrlimit() use); reading another
 *     process's limits stays allowed. (Without a PID namespace of its own, any pid of the
 *     user is another process.)
 *   - setpriority() and ioprio_set() by user id: PRIO_USER / IOPRIO_WHO_USER name every
 *     process of the uid, in every PID namespace (nice 19, I/O class idle for all of them).
 *     Allowed only for one process (PRIO_PROCESS, IOPRIO_WHO_PROCESS), which `nice`,
 *     `renice -p` and `ionice -p` use; by process group (PRIO_PGRP, IOPRIO_WHO_PGRP) and
 *     anything else, refused too: an allow-list of one.
 * Refused calls fail with EPERM. Native system calls, x32 on x86-64, and the 32-bit compat
 * ABI of x86-64 and arm64. */
#include <errno.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/ioprio.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "seccomp.h"

#define X32_BIT 0x40000000U
#define RET_ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define RET_EPERM BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
/* a 32-bit load: for args[N], its low half (pid_t and int are 32 bits; a pointer or a 64-bit
 * value has a high half too, at +4 on little-endian) */
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define LOAD_HIGH(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field) + 4)
/* jumps between named positions of the program below: classic BPF jumps are relative */
#define JEQ(at, k, to_true, to_false) \
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (to_true) - ((at) + 1), (to_false) - ((at) + 1))

#if defined(__x86_64__)
#  define NATIVE_ARCH AUDIT_ARCH_X86_64
#  define NATIVE_NR_MASK (~X32_BIT)
#  define COMPAT_ARCH AUDIT_ARCH_I386
#  define COMPAT_NR_SETPRIORITY 97
#  define COMPAT_NR_IOPRIO_SET 289
#  define COMPAT_NR_PRLIMIT64 340
#elif defined(__aarch64__)
#  define NATIVE_ARCH AUDIT_ARCH_AARCH64
#  define NATIVE_NR_MASK 0xffffffffU
#  define COMPAT_ARCH AUDIT_ARCH_ARM
#  define COMPAT_NR_SETPRIORITY 97
#  define COMPAT_NR_IOPRIO_SET 314
#  define COMPAT_NR_PRLIMIT64 369
#endif

#ifdef NATIVE_ARCH
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "argument offsets assume little-endian");

/* The positions of the program's instructions, so that every jump names where it goes. */
enum {
        P_ARCH, P_IS_NATIVE, P_IS_COMPAT,
        P_NATIVE_NR, P_NATIVE_MASK, P_NATIVE_PRLIMIT, P_NATIVE_SETPRIORITY, P_NATIVE_IOPRIO,
        P_COMPAT_NR, P_COMPAT_PRLIMIT, P_COMPAT_SETPRIORITY, P_COMPAT_IOPRIO,
        P_PRLIMIT_PID, P_PRLIMIT_SELF, P_PRLIMIT_NEW_LOW, P_PRLIMIT_NO_NEW_LOW, P_PRLIMIT_NEW_HIGH,
        P_PRLIMIT_NO_NEW_HIGH,
        P_PRIO_WHICH, P_PRIO_PROCESS,
        P_IOPRIO_WHICH, P_IOPRIO_PROCESS,
        P_EPERM, P_ALLOW,
        P_LENGTH
};

static const struct sock_filter filter[P_LENGTH] = {
        [P_ARCH] = LOAD(arch),
        [P_IS_NATIVE] = JEQ(P_IS_NATIVE, NATIVE_ARCH, P_NATIVE_NR, P_IS_COMPAT),
        [P_IS_COMPAT] = JEQ(P_IS_COMPAT, COMPAT_ARCH, P_COMPAT_NR, P_ALLOW),

        [P_NATIVE_NR] = LOAD(nr),
        [P_NATIVE_MASK] = BPF_STMT(BPF_ALU | BPF_AND | BPF_K, NATIVE_NR_MASK),
        [P_NATIVE_PRLIMIT] = JEQ(P_NATIVE_PRLIMIT, __NR_prlimit64, P_PRLIMIT_PID, P_NATIVE_SETPRIORITY),
        [P_NATIVE_SETPRIORITY] = JEQ(P_NATIVE_SETPRIORITY, __NR_setpriority, P_PRIO_WHICH, P_NATIVE_IOPRIO),
        [P_NATIVE_IOPRIO] = JEQ(P_NATIVE_IOPRIO, __NR_ioprio_set, P_IOPRIO_WHICH, P_ALLOW),

        [P_COMPAT_NR] = LOAD(nr),
        [P_COMPAT_PRLIMIT] = JEQ(P_COMPAT_PRLIMIT, COMPAT_NR_PRLIMIT64, P_PRLIMIT_PID, P_COMPAT_SETPRIORITY),
        [P_COMPAT_SETPRIORITY] =
                JEQ(P_COMPAT_SETPRIORITY, COMPAT_NR_SETPRIORITY, P_PRIO_WHICH, P_COMPAT_IOPRIO),
        [P_COMPAT_IOPRIO] = JEQ(P_COMPAT_IOPRIO, COMPAT_NR_IOPRIO_SET, P_IOPRIO_WHICH, P_ALLOW),

        /* prlimit64(pid, resource, new, old): pid 0, or no new limit */
        [P_PRLIMIT_PID] = LOAD(args[0]),
        [P_PRLIMIT_SELF] = JEQ(P_PRLIMIT_SELF, 0, P_ALLOW, P_PRLIMIT_NEW_LOW),
        [P_PRLIMIT_NEW_LOW] = LOAD(args[2]),
        [P_PRLIMIT_NO_NEW_LOW] = JEQ(P_PRLIMIT_NO_NEW_LOW, 0, P_PRLIMIT_NEW_HIGH, P_EPERM),
        [P_PRLIMIT_NEW_HIGH] = LOAD_HIGH(args[2]),
        [P_PRLIMIT_NO_NEW_HIGH] = JEQ(P_PRLIMIT_NO_NEW_HIGH, 0, P_ALLOW, P_EPERM),

        /* setpriority(which, who, prio): one process only */
        [P_PRIO_WHICH] = LOAD(args[0]),
        [P_PRIO_PROCESS] = JEQ(P_PRIO_PROCESS, PRIO_PROCESS, P_ALLOW, P_EPERM),

        /* ioprio_set(which, who, ioprio): one process only */
        [P_IOPRIO_WHICH] = LOAD(args[0]),
        [P_IOPRIO_PROCESS] = JEQ(P_IOPRIO_PROCESS, IOPRIO_WHO_PROCESS, P_ALLOW, P_EPERM),

        [P_EPERM] = RET_EPERM,
        [P_ALLOW] = RET_ALLOW,
};
#endif

int confine_seccomp(void) {
#ifdef NATIVE_ARCH
        struct sock_fprog prog = { .len = P_LENGTH, .filter = (struct sock_filter *) filter };

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
                return -errno;
#endif
        return 0;
}
