/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The host and port a git remote URL reaches, as git reads the URL: ssh://, git+ssh://,
 * ssh+git://, git://, http://, https:// and the scp-like [user@]host:path (also
 * [host:port]:path and [v6-address]:path). Pure logic, for the network rule of git's remote
 * commands (plan-git-remote.h). An ssh config Host alias is taken for the host name it is. */

#include <stddef.h>

/* The longest host name (or address) taken. */
#define GIT_REMOTE_HOST_MAX 253

/* Writes "host:port" ("[v6]:port" for an IPv6 address) into rule[size]. Returns 0; -ENOENT
 * for a URL that reaches no host (a local path, file://, a remote helper's "X::..."); -EPROTO
 * for another transport (ftp://, a helper's "X://"); -EINVAL for one that cannot be read;
 * -ENOBUFS when the rule does not fit. */
int git_remote_url_rule(const char *url, char *rule, size_t size);
