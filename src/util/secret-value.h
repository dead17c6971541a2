/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

#include <stddef.h>

/* Whether the n bytes at s hold something that is a credential whatever it is called: a URL
 * with a password in it, a token of a well-known format (GitHub, GitLab, Slack, OpenAI,
 * Anthropic, AWS key ids, JWTs, ...), a PEM private key, an Authorization header. Returns
 * the kind as a phrase for messages ("a GitHub token"), or NULL. Never returns any part of
 * the value itself. The one home of this rule: the environment (policy, build.lua through
 * scudo.text) and git's configuration (plan/git-config-filter.c) both ask it. */
const char *secret_value_kind(const char *s, size_t n);
