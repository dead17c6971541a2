/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Whether a refused file access the kernel saw (bpf/scudo-files.bpf.c) is the sandbox's doing,
 * and which entry of the plan did it.
 *
 * A refusal is reported only when the same access would have worked outside: the path (or,
 * for what creates, removes or renames, its directory) exists outside for an ENOENT, and the
 * user may read, write or run it there for an EACCES, EPERM or EROFS. scudo looks, outside
 * and as the user, when the event arrives. So the searches along PATH, include paths and
 * library paths, where nothing is there outside either, make no report, and neither does what
 * the user could not do anyway.
 *
 * The entry is the deepest of the plan's paths at or above the path (a `deny`, a `hide`, a
 * `read` for a write), else the unit property that covers it (ProtectSystem=, ProtectHome=,
 * PrivateTmp=, PrivateDevices=), else a `.git` made read-only by scudo, else "no rule allows
 * it". A relative path is taken from the process's working directory (or the directory fd)
 * as /proc shows it when the event is read; for a process gone by then, from the directory
 * the command started in. What systemd does to set up the sandbox (processes called
 * "(name)") and scudo-confine's checks are not reported. */

#include "net/protocol.h"
#include "plan/plan.h"
#include "report/report.h"

typedef struct FileJudge FileJudge;

/* `home`: shown as "~" in the rules (may be NULL). The plan must outlive the judge. */
int file_judge_new(const Plan *plan, const char *home, FileJudge **ret);
FileJudge *file_judge_free(FileJudge *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(FileJudge *, file_judge_free);

/* 1 with *ret filled (its strings valid until the next call) when the sandbox refused the
 * access; 0 when it is not the sandbox's doing or cannot be told; -ENOMEM. */
int file_judge(FileJudge *j, const BpfdFileEvent *e, Report *ret);

/* The FILE_PREFIXES message for the plan (net/protocol.h): where it changes the file system
 * view and which errors can be refusals there, for the kernel to leave the rest out. */
int file_judge_prefixes(const Plan *plan, BpfdFilePrefixes **ret, size_t *ret_size);

/* The operation a system call and its flags stand for ("read", "write", "exec", …). */
const char *file_judge_operation(uint32_t nr, uint32_t flags);
