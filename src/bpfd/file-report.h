/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The file refusal reporter's side in the helper (bpf/scudo-files.bpf.c, x86-64 only).
 *
 * The program is loaded once, when the helper starts, and attached to the exit of every
 * system call only while the file refusals of at least one cgroup are watched: it runs for
 * every process of the machine, so it is not left attached for nobody. */

#include <stdbool.h>
#include <stdint.h>

#include "net/protocol.h"
#include "scudo-files.h"

typedef struct FileReporter FileReporter;

typedef int (*FileEventCallback)(const struct file_event *e, void *userdata);

/* -EOPNOTSUPP on other architectures. */
int file_reporter_new(FileEventCallback cb, void *userdata, FileReporter **ret);
FileReporter *file_reporter_free(FileReporter *f);

/* Reports the refusals of processes in the cgroup `sid` and below it; the first watch
 * attaches the program. `prefixes` (a FILE_PREFIXES message of `prefixes_size` bytes, or
 * NULL: every failed call is sent) says where the sandbox changes the view. */
int file_reporter_watch(FileReporter *f, uint64_t sid, const void *prefixes, size_t prefixes_size,
                        bool record);
/* With `record`, where the cgroup writes is recorded (scudo-files.h): this fills in the answer
 * to WRITTEN, flags and count (its header and error are the caller's), and `dirs`. -ENODATA
 * when no record is kept for `sid`. */
int file_reporter_written(FileReporter *f, uint64_t sid, BpfdWritten *ret,
                          BpfdDirId dirs[static BPFD_WRITTEN_MAX]);
/* Forgets `sid`; the last one detaches the program. */
void file_reporter_unwatch(FileReporter *f, uint64_t sid);

int file_reporter_fd(FileReporter *f);

/* The hash the program computes of a path (scudo-files.h); exposed for tests. */
uint64_t file_prefix_hash(const char *path);
/* The prefixes map (struct file_prefix_key → struct file_prefix); exposed for tests. */
int file_reporter_prefixes_fd(FileReporter *f);
int file_reporter_consume(FileReporter *f);
