/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "path-util.h"
#include "scudo-programs.h"

char *scudo_program_beside_self(const char *name) {
        _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
        char *slash = self ? strrchr(self, '/') : NULL;
        if (!slash)
                return NULL;
        *slash = 0;
        char *c = path_join(self, name);
        if (c && access(c, X_OK) >= 0)
                return c;
        free(c);
        return NULL;
}

char *scudo_program_path(const char *name) {
        char *beside = scudo_program_beside_self(name);
        if (beside)
                return beside;
        _cleanup_free_ char *installed = path_join(SCUDO_LIBEXECDIR, name);
        if (installed && access(installed, X_OK) >= 0)
                return TAKE_PTR(installed);
        return NULL;
}

char *scudo_route_path(void) {
        return scudo_program_path(SCUDO_ROUTE_NAME) ?: realpath("/proc/self/exe", NULL);
}
