/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The network filter programs (bpf/scudo-net.bpf.c) load, under each configuration the
 * helper may set before loading, and each stays far from the verifier's limit of a million
 * processed instructions: the DNS fast path's loops are the kind whose cost for the verifier
 * can multiply with a small change (a loop within bpf_loop's callback took one past the
 * limit). Needs the privileges to load BPF programs; skipped without them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "scudo-net.skel.h"
#if HAVE_FILES_SKEL
#include "scudo-files.skel.h"
#endif
#include "tap.h"

#define PROGS_MAX 32
#define LOG_SIZE (1U << 20)
/* a tenth of the verifier's budget */
#define INSNS_MAX 100000UL

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap) {
        return 0;
}

static unsigned long processed(const char *log) {
        const char *p = strstr(log, "processed ");

        return p ? strtoul(p + strlen("processed "), NULL, 10) : 0;
}

/* Loads the programs with these settings; -1 when loading BPF is not allowed here. */
static int check(bool report_comm, bool pidns, const char *what) {
        struct scudo_net *skel;
        struct bpf_program *p;
        char *logs[PROGS_MAX] = {};
        int n = 0, k;

        skel = scudo_net__open();
        if (!skel)
                return -1;
        skel->rodata->report_comm = report_comm;
        skel->rodata->pidns_dev = pidns ? 4 : 0;
        skel->rodata->pidns_ino = pidns ? 0xeffffffcU : 0;
        bpf_object__for_each_program(p, skel->obj) {
                if (n == PROGS_MAX)
                        break;
                logs[n] = calloc(1, LOG_SIZE);
                if (!logs[n])
                        break;
                (void) bpf_program__set_log_buf(p, logs[n], LOG_SIZE);
                (void) bpf_program__set_log_level(p, 4);        /* statistics only */
                n++;
        }
        k = scudo_net__load(skel);
        if (k == -EPERM || k == -EACCES) {
                scudo_net__destroy(skel);
                for (int i = 0; i < n; i++)
                        free(logs[i]);
                return -1;
        }
        TAP_CHECK(k == 0, "programs load (%s): %d", what, k);
        n = 0;
        bpf_object__for_each_program(p, skel->obj) {
                unsigned long insns;

                if (n == PROGS_MAX || !logs[n])
                        break;
                insns = processed(logs[n]);
                TAP_CHECK(k == 0 && insns > 0 && insns < INSNS_MAX, "%s (%s): %lu instructions processed",
                          bpf_program__name(p), what, insns);
                free(logs[n]);
                n++;
        }
        scudo_net__destroy(skel);
        return 0;
}

#if HAVE_FILES_SKEL
/* The file refusal reporter (x86-64 only): it runs on every system call's exit, so it must
 * load, and attach where the kernel has the tracepoint with BTF. */
static void check_files(void) {
        static char log[LOG_SIZE];
        struct scudo_files *skel;
        struct bpf_link *link;
        unsigned long insns;
        int k;

        skel = scudo_files__open();
        TAP_CHECK(skel, "the file reporter opens");
        if (!skel)
                return;
        (void) bpf_program__set_log_buf(skel->progs.scudo_file_exit, log, sizeof(log));
        (void) bpf_program__set_log_level(skel->progs.scudo_file_exit, 4);
        k = scudo_files__load(skel);
        insns = processed(log);
        /* 40 % of the network programs' bar: its walk along the path's components (bpf_loop)
         * is the kind of loop whose cost can multiply (19,704 before the write record asked
         * the time stamps, 20,971 after; 26,590 with the walk's levels for "..", its scan for
         * "..", and its early end) */
        TAP_CHECK(k == 0 && insns > 0 && insns < INSNS_MAX * 2 / 5,
                  "the file reporter loads: %d, %lu instructions processed", k, insns);
        link = k == 0 ? bpf_program__attach(skel->progs.scudo_file_exit) : NULL;
        TAP_CHECK(link, "the file reporter attaches to tp_btf/sys_exit");
        bpf_link__destroy(link);
        scudo_files__destroy(skel);
}
#endif

int main(void) {
        libbpf_set_print(quiet);
        if (check(false, false, "no comm, no pid namespace") < 0) {
                printf("1..0 # SKIP cannot load BPF programs here\n");
                return 0;
        }
        (void) check(true, true, "comm, pid namespace");
#if HAVE_FILES_SKEL
        check_files();
#endif
        return tap_done();
}
