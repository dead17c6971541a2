/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include <stdbool.h>

/* Reading whole files (configuration, policies, the trust store), and writing them. */

#include <stddef.h>

/* Reads the regular file open at fd, of at most max bytes, into a malloc'd buffer with a NUL
 * after its contents (which may hold NULs of their own: *ret_size says how long they are).
 * The size fstat() announces is read in one read() as a rule, and a read that returns all of it
 * and less than asked (the buffer has room for one byte more) is taken for the end of the file,
 * without another read() to return 0; a file that grew since is read on, up to max + 1 bytes.
 * Returns 0, -EISDIR for a directory, -EBADFD for anything else that is not a regular file (a
 * FIFO or device, which could block or never end), -EFBIG for more than max bytes, -ENOMEM,
 * or what fstat() or read() failed with. The fd stays open. */
int read_regular_fd(int fd, size_t max, char **ret, size_t *ret_size);

/* read_regular_fd() of path, opened with O_NONBLOCK (opening a FIFO does not wait for a
 * writer) and O_NOCTTY (a terminal does not become ours); open()'s errors as they are. */
int read_regular_file(const char *path, size_t max, char **ret, size_t *ret_size);

/* Whether the directory open at fd (any open mode but O_PATH) holds no entry but . and ..; a
 * directory that cannot be read counts as not empty. fd stays open. */
bool dir_fd_is_empty(int fd);

/* The n bytes at p, all of them, to fd (a write cut short goes on; EINTR is retried): 0, or
 * -errno (-EIO when write() wrote nothing). */
int fd_write_all(int fd, const void *p, size_t n);

/* One part of a file file_replace() writes. */
typedef struct FilePart {
        const void *data;
        size_t size;
} FilePart;

/* Writes the parts, one after the other, to a new file beside path (path.XXXXXX, mode 0600,
 * made with mkostemp) and renames it over path: a reader finds the old file or the new one,
 * whole, never a part of either. With `sync` the data is on disk before the rename (the trust
 * store; a cache, whose loss costs only time, need not wait). 0 or -errno; on failure the
 * temporary file is gone and path is as it was. */
int file_replace(const char *path, const FilePart *parts, size_t n_parts, bool sync);

/* Closed standard streams would be handed on as whatever the next open() returns (or make the
 * unit fail to start): each of fds 0, 1 and 2 that is closed gets /dev/null. */
void fd_ensure_std(void);
