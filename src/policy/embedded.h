/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Files compiled into the binary by tools/embed-files.py: our Lua library (lua/scudo/NAME.lua,
 * named by module, loaded through package.preload) and the recommended configuration
 * (policies/NAME.toml, named by file). Each array ends with an entry whose name is NULL. */

#include <stddef.h>

typedef struct EmbeddedFile {
        const char *name;
        const char *data;
        size_t size;
        const char *bytecode;   /* the same compiled by luac at build time, or NULL */
        size_t bytecode_size;
} EmbeddedFile;

extern const EmbeddedFile embedded_lua_modules[];
extern const EmbeddedFile embedded_policies[];
/* The build-time Lua modules (lua/scudo/freeze.lua), linked into tools/policy-freeze alone. */
extern const EmbeddedFile embedded_freeze_modules[];
