/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The trust store: which project files (.scudo.toml, .scudo.lua, and the hook files they name)
 * the user has accepted, each bound to its absolute path and the SHA-256 of its content, so
 * that an edited file is untrusted again.
 *
 * The store is a text file, one "SHA256 PATH" line per file, at
 * $XDG_STATE_HOME/scudo/trusted, or ~/.local/state/scudo/trusted when XDG_STATE_HOME is unset
 * or not absolute. It is replaced atomically (write to a temporary file, rename). */

#include <stdbool.h>
#include <stddef.h>

typedef struct TrustEntry {
        char *path;
        char *sha256;
} TrustEntry;

/* The store's location, from the environment (and the password database for $HOME). */
int trust_store_path(char **ret);

/* The hex SHA-256 of the file's content (regular files up to `max` bytes). */
int trust_hash_file(const char *path, size_t max, char **ret_sha256);

/* Loads all entries. A missing store is an empty one. */
int trust_load(const char *store, TrustEntry **ret, size_t *ret_n);
void trust_entries_free(TrustEntry *e, size_t n);

/* 1 if path is trusted with exactly this content hash, 0 if not. */
int trust_check(const char *store, const char *path, const char *sha256);

/* Adds or replaces the entry for path. */
int trust_add(const char *store, const char *path, const char *sha256);
/* Removes the entry for path: 1 if there was one, 0 if not. */
int trust_remove(const char *store, const char *path);
