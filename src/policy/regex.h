/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The "re:" match patterns of profiles: POSIX extended regular expressions that must match the
 * whole of a command's basename.
 *
 * They are read here as POSIX (and glibc's regcomp) reads them in the "C" locale, written out
 * in PCRE2's syntax, and compiled and matched by PCRE2 inside budgets: the memory PCRE2 may
 * allocate, compiling and matching, and the steps a match may take. glibc's regcomp() has no
 * such limits: it writes every counted repetition out and works on sets of the nodes, so what
 * it allocates grows with the product of nested counts, its time can be exponential in one
 * count, and the Lua allocator's cap sees none of it.
 *
 * Refused besides what POSIX refuses: back-references (POSIX leaves them undefined in extended
 * expressions), a ')' that closes no '(' (glibc takes it as a character) and groups nested
 * deeper than REGEX_DEPTH_MAX. */

#include <stdbool.h>
#include <stddef.h>

#define REGEX_MAX 1024                  /* bytes of pattern */
#define REGEX_DEPTH_MAX 32              /* nested groups */
#define REGEX_MSG_SIZE 256

/* The PCRE2 pattern for the POSIX extended regular expression re (len bytes), anchored at both
 * ends, in ret (NUL-terminated); 0, or -EINVAL (not a pattern) or -E2BIG (over a limit above)
 * with ret_msg saying why. For the tests; regex_match() calls it. */
#define REGEX_PCRE2_MAX (REGEX_MAX * 8 + 16)
int regex_translate(const char *re, size_t len, char ret[static REGEX_PCRE2_MAX],
                    char ret_msg[static REGEX_MSG_SIZE]);

/* Whether the whole of s (slen bytes) matches re (len bytes): 1 or 0, or a negative errno with
 * ret_msg set: -EINVAL or -E2BIG when re is not a pattern or over a limit, -ENOMEM when the
 * compile or the match would need more memory than its budget, -ERANGE when the match would
 * take more steps than its budget. */
int regex_match(const char *re, size_t len, const char *s, size_t slen, char ret_msg[static REGEX_MSG_SIZE]);

/* regex_match(), without compiling anything where the answer is known without: ".*" matches
 * everything, and a string that lacks the literal start of re does not match. */
int regex_matches(const char *re, size_t len, const char *s, size_t slen,
                  char ret_msg[static REGEX_MSG_SIZE]);
