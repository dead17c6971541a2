/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The key under which a name rule's pattern is stored for the DNS fast path, built exactly
 * as the BPF programs build the key of a name they read (scudo-net.h, struct net_name_key). */

#include <stdint.h>

#include "scudo-net.h"

/* `name`: text form, lower case, no final dot. -EINVAL when it is empty, has an empty or
 * over-long label, or does not fit a key (then its cgroup goes without the fast path). */
int net_name_key_make(uint64_t sid, const char *name, struct net_name_key *ret);
