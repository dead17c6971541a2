/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Values as systemd's unit files write them: booleans, and numbers plain, with a size or time
 * suffix, or as a percentage. Each returns 0 (parse_boolean: its value), or -EINVAL for text that
 * is malformed or out of range (and then leaves *ret alone). */

#include <stdint.h>

/* A boolean as systemd writes it: yes/no, y/n, true/false, t/f, on/off, 1/0, in any case; 1
 * or 0, or -EINVAL. */
int parse_boolean(const char *s);

/* The decimal digits at the start of s: at least one, no sign, no space, at most UINT64_MAX.
 * *ret_rest points past them, at whatever suffix follows. */
int parse_u64_prefix(const char *s, uint64_t *ret, const char **ret_rest);

/* Decimal digits and nothing else. */
int parse_u64(const char *s, uint64_t *ret);

/* A signed decimal number as strtoll() reads it (leading space and a sign allowed), with
 * nothing after it. */
int parse_i64(const char *s, int64_t *ret);

/* "N%", N as parse_u64() reads it; *ret is N. */
int parse_percent(const char *s, uint64_t *ret);

/* Bytes: "1024", "512M", "4G", "4GiB", "1tb" (K, M, G, T are binary multiples, either case,
 * optionally followed by i and then B); "infinity" is UINT64_MAX. */
int parse_size(const char *s, uint64_t *ret);

/* Microseconds: "30s", "5min", "100ms", "250us", "2h", "1sec", "3m", plain seconds ("30");
 * "infinity" is UINT64_MAX. */
int parse_usec(const char *s, uint64_t *ret);
