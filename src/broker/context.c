/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "broker/context.h"
#include "util/file-util.h"
#include "util/sandbox-unit.h"
#include "util/strv.h"

static const char access_letter[_PATH_ACCESS_MAX] = {
        [PATH_ACCESS_WRITE] = 'W',
        [PATH_ACCESS_READ] = 'R',
        [PATH_ACCESS_HIDE] = 'H',
        [PATH_ACCESS_DENY] = 'D',
};

static int put(FILE *f, char kind, const char *s) {
        if (fputc(kind, f) == EOF || fputs(s, f) == EOF || fputc(0, f) == EOF)
                return -EIO;
        return 0;
}

int broker_context_write(const char *unit, const Plan *plan, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = memfd_create("scudo-broker-context", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return negative_errno();
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0)
                return negative_errno();
        FILE *f = fdopen(dup_fd, "w");
        if (!f) {
                r = negative_errno();
                safe_close(dup_fd);
                return r;
        }
        r = put(f, 'U', unit);
        STRV_FOREACH(n, plan->delegate)
                if (r >= 0)
                        r = put(f, 'N', *n);
        for (size_t i = 0; i < plan->n_paths && r >= 0; i++)
                r = put(f, access_letter[plan->paths[i].access], plan->paths[i].path);
        if (fclose(f) != 0 && r >= 0)
                r = -EIO;
        if (r < 0)
                return r;
        /* Read-only from now on, for every scudo that gets it. */
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void broker_context_done(BrokerContext *c) {
        free(c->unit);
        strv_free(c->delegated);
        for (size_t i = 0; i < c->n_paths; i++)
                free(c->paths[i].path);
        free(c->paths);
        *c = (BrokerContext) {};
}

static PathAccess access_of(char c) {
        for (PathAccess a = 0; a < _PATH_ACCESS_MAX; a++)
                if (access_letter[a] == c)
                        return a;
        return _PATH_ACCESS_INVALID;
}

int broker_context_read(int fd, BrokerContext *ret) {
        _cleanup_free_ char *text = NULL;
        BrokerContext c = {};
        size_t size;
        int r;

        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        r = read_regular_fd(fd, BROKER_CONTEXT_SIZE_MAX, &text, &size);
        if (r < 0)
                return r;
        if (size == 0 || text[size - 1] != 0)
                return -EBADMSG;
        for (const char *p = text, *end = text + size; p < end; p += strlen(p) + 1) {
                char kind = *p;
                const char *s = p + (kind ? 1 : 0);

                if (kind == 'U') {
                        if (c.unit || !sandbox_unit_name_is_valid(s, strlen(s)) || !(c.unit = strdup(s)))
                                r = -EBADMSG;
                } else if (kind == 'N')
                        r = strv_extend(&c.delegated, s);
                else if (access_of(kind) >= 0 && s[0] == '/') {
                        PlanPath *n = reallocarray(c.paths, c.n_paths + 1, sizeof(PlanPath));
                        if (!n)
                                r = -ENOMEM;
                        else {
                                c.paths = n;
                                c.paths[c.n_paths] = (PlanPath){ .access = access_of(kind),
                                                                 .path = strdup(s),
                                                                 .origin = (char *) "" };
                                if (c.paths[c.n_paths].path)
                                        c.n_paths++;
                                else
                                        r = -ENOMEM;
                        }
                } else
                        r = -EBADMSG;
                if (r < 0) {
                        broker_context_done(&c);
                        return r == -ENOMEM ? r : -EBADMSG;
                }
        }
        if (!c.unit) {
                broker_context_done(&c);
                return -EBADMSG;
        }
        c.delegation = (DelegationContext) {
                .caller_unit = c.unit,
                .delegated = c.delegated,
                .caller_paths = c.paths,
                .n_caller_paths = c.n_paths,
        };
        *ret = c;
        return 0;
}
