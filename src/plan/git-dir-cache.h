/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the last walk of a project for its git directories (git-dir-find.h) found, kept so that
 * the next run reads again only the directories that changed. Each directory is known by its
 * identity (device, inode) and its change time (st_ctime, to the nanosecond): a command can set
 * a directory's mtime back (utimensat), not its ctime, which any change of its entries (a file
 * or directory made, removed, renamed, a .git made a symlink) moves on. A directory whose ctime
 * is within RACY_SECONDS of the walk that read it is read again next time ("racy git": it may
 * have changed again within the timestamps' granularity, keeping its ctime). Only the names
 * and kinds of entries are kept: what a .git file says is read again on every run (a change of
 * a file's content does not touch its directory).
 *
 * One file per user and project, in a directory of the user's that no sandbox reaches
 * (/run/user/UID/scudo, broker-paths.h), written whole and renamed into place. A file that is
 * missing, not the user's own, writable by others, of another version, for another project or
 * corrupt in any way is not used: the walk reads every directory, and writes a new one. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "plan/git-dir-find.h"
#include "util/macro.h"

#define GIT_DIR_CACHE_VERSION 1U
/* Directories changed this close to the walk are not trusted to be unchanged next time: more
 * than any timestamp granularity of the filesystems a project lives on (FAT's 2 s) and the
 * coarse clock's lag. */
#define GIT_DIR_CACHE_RACY_SECONDS 2
/* The largest file read: 64 bytes a directory and more for GIT_DIR_FIND_MAX_DIRS of them. */
#define GIT_DIR_CACHE_MAX_SIZE (128U << 20)

/* One directory as the walk saw it, followed by the names of its subdirectories, each
 * NUL-ended (names_len bytes, then padding to 8). */
typedef struct GitDirRecord {
        uint64_t dev, ino;
        int64_t ctime_sec;
        uint32_t ctime_nsec;
        uint8_t kind;           /* 0: no git directory; else GitDirKind + 1 */
        uint8_t racy;           /* changed within RACY_SECONDS of the walk: read it again */
        uint16_t reserved;
        uint32_t names_len;
        uint32_t n_names;
} GitDirRecord;

typedef struct GitDirCache GitDirCache;

/* The cache of `root` (absolute) in `dir`: 0 and *ret, or -ENOENT (none), -EPERM (not the
 * user's, or open to others), -EBADMSG (corrupt, another version, another project), -ENOMEM. */
int git_dir_cache_load(const char *dir, const char *root, GitDirCache **ret);
/* The bytes of a cache file (data: malloc'd, 8-aligned, taken over whatever happens) for
 * `root`, each field and record checked; the checksum too unless !verify (only for the fuzz
 * target, which cannot make one). 0 and *ret, -EBADMSG or -ENOMEM. */
int git_dir_cache_parse(const char *root, char *data, size_t size, bool verify, GitDirCache **ret);
GitDirCache *git_dir_cache_free(GitDirCache *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(GitDirCache *, git_dir_cache_free);
size_t git_dir_cache_count(const GitDirCache *c);

/* The record of the directory whose stat is `st`, when it is known and unchanged (same device,
 * inode and ctime, not racy); NULL otherwise. */
const GitDirRecord *git_dir_cache_lookup(const GitDirCache *c, const struct stat *st);
static inline const char *git_dir_record_names(const GitDirRecord *r) {
        return (const char *) (r + 1);
}

/* The records of a new walk, in memory until saved. */
typedef struct GitDirCacheWriter {
        char *buf;
        size_t used, size, n;
        struct timespec start;  /* when the walk began: what counts as racy */
} GitDirCacheWriter;

/* Starts a writer (the walk's start time taken now). */
void git_dir_cache_writer_init(GitDirCacheWriter *w);
void git_dir_cache_writer_done(GitDirCacheWriter *w);
/* Appends the directory `st` with its kind (0, or GitDirKind + 1) and its subdirectories'
 * names (n of them, NUL-ended, len bytes). 0 or -ENOMEM. */
int git_dir_cache_add(GitDirCacheWriter *w, const struct stat *st, uint8_t kind, const char *names,
                      size_t len, size_t n);
/* Appends a record as the old cache had it (unchanged since). 0 or -ENOMEM. */
int git_dir_cache_add_record(GitDirCacheWriter *w, const GitDirRecord *r);
/* Writes the records as the cache of `root` in `dir` (made 0700 where missing, and refused
 * where it is not the user's own or open to others: -EPERM), atomically. 0 or -errno. */
int git_dir_cache_save(const char *dir, const char *root, GitDirCacheWriter *w);
