/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A run of characters shorter than this is never taken for a random token by its entropy
 * alone; a longer one is when its entropy is at least this share of what a random string of
 * its length has (measured in tests/unit/test-secret-value.c). */
#define SECRET_RANDOM_MIN_LENGTH 24
#define SECRET_RANDOM_ENTROPY_RATIO 0.85

/* Whether the n bytes at s hold something that is a credential whatever it is called, by its
 * structure: a field named as a secret (password=, -Dx.passphrase=, ;Pwd=...;, "token": "...",
 * AccountKey=), a URL with a password, a user:password pair, a PEM private key, a JWT, a netrc
 * line, a base64 value that decodes to one of these, a long random token; and a token of a
 * well-known format (GitHub, GitLab, Slack, OpenAI, AWS key ids, Vault, ...). Returns
 * the kind as a phrase for messages ("a GitHub token"), or NULL. Never returns any part of
 * the value itself. The one home of this rule: the environment (policy, build.lua through
 * scudo.text) and git's configuration (plan/git-config-filter.c) both ask it. */
const char *secret_value_kind(const char *s, size_t n);

/* Whether the n bytes at name are the name of a field that holds a secret, whatever its case
 * and its '_', '-', '.': one that ends with password, passwd, pwd, passphrase, secret, token,
 * apikey, accountkey, sig, auth, credential(s), ... (`javax.net.ssl.keyStorePassword`,
 * `github-oauth`, `_authToken`). */
bool secret_field_name(const char *name, size_t n);
