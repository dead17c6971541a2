/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* What the broker hands each request's scudo (src/broker/context.c): written sealed, read back
 * whole, anything else refused; and the links that route delegated commands to scudo
 * (src/broker/route.c): one per usable name, nothing else in their directory. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/context.h"
#include "broker/route.h"
#include "plan/plan-delegate.h"
#include "tap.h"
#include "util/strv.h"

#define UNIT "scudo-0123456789abcdef.service"

static void test_round_trip(void) {
        PlanPath paths[] = {
                { .path = (char *) "/home/u/p", .access = PATH_ACCESS_WRITE },
                { .path = (char *) "/home/u/p/ro", .access = PATH_ACCESS_READ },
                { .path = (char *) "/home/u", .access = PATH_ACCESS_HIDE },
                { .path = (char *) "/home/u/.ssh", .access = PATH_ACCESS_DENY },
        };
        char *delegate[] = { (char *) "npm", (char *) "pip", NULL };
        Plan plan = { .paths = paths, .n_paths = 4, .delegate = delegate };
        BrokerContext c = {};
        int fd = -1;

        TAP_CHECK(broker_context_write(UNIT, &plan, &fd) == 0, "the context is written");
        int seals = fcntl(fd, F_GET_SEALS);
        TAP_CHECK(seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SEAL),
                  "and sealed against change");
        TAP_CHECK(write(fd, "x", 1) < 0, "a write to it fails");
        TAP_CHECK(broker_context_read(fd, &c) == 0, "it is read back");
        TAP_STREQ(c.delegation.caller_unit, UNIT, "the caller's unit");
        TAP_CHECK(strv_length(c.delegation.delegated) == 2 && streq(c.delegation.delegated[1], "pip"),
                  "the profiles it delegates");
        TAP_CHECK(c.delegation.n_caller_paths == 4 && c.paths[1].access == PATH_ACCESS_READ &&
                  streq(c.paths[3].path, "/home/u/.ssh") && c.paths[3].access == PATH_ACCESS_DENY,
                  "its plan's entries, each with its access");
        TAP_CHECK(delegation_caller_can_write(&c.delegation, "/home/u/p/src") &&
                  !delegation_caller_can_write(&c.delegation, "/home/u/p/ro/x") &&
                  !delegation_caller_can_write(&c.delegation, "/home/u/other"),
                  "what was read back answers what the caller can write");
        broker_context_done(&c);
        close(fd);
}

static int context_of(const char *bytes, size_t size) {
        BrokerContext c = {};
        int fd = memfd_create("t", MFD_CLOEXEC);
        if (fd < 0 || write(fd, bytes, size) != (ssize_t) size)
                return -EIO;
        int r = broker_context_read(fd, &c);
        broker_context_done(&c);
        close(fd);
        return r;
}

static void test_refused(void) {
        static const char ok[] = "U" UNIT "\0Nnpm\0W/home/u/p";
        TAP_CHECK(context_of(ok, sizeof(ok)) == 0, "a well-formed context is accepted");
        TAP_CHECK(context_of(ok, sizeof(ok) - 1) == -EBADMSG, "one not NUL-terminated is refused");
        TAP_CHECK(context_of("", 0) == -EBADMSG, "an empty one is refused");
        static const char nounit[] = "Nnpm\0W/home/u/p";
        TAP_CHECK(context_of(nounit, sizeof(nounit)) == -EBADMSG, "one without the unit is refused");
        static const char two[] = "U" UNIT "\0U" UNIT;
        TAP_CHECK(context_of(two, sizeof(two)) == -EBADMSG, "one with two units is refused");
        static const char badunit[] = "Uscudo-x.service";
        TAP_CHECK(context_of(badunit, sizeof(badunit)) == -EBADMSG,
                  "a name that is no sandbox's unit is refused");
        static const char relative[] = "U" UNIT "\0Whome/u";
        TAP_CHECK(context_of(relative, sizeof(relative)) == -EBADMSG, "a relative path is refused");
        static const char kind[] = "U" UNIT "\0X/home";
        TAP_CHECK(context_of(kind, sizeof(kind)) == -EBADMSG, "an unknown kind of record is refused");
}

static void test_route(void) {
        char base[] = "/tmp/test-broker-route-XXXXXX", dir[256], link[512], target[PATH_MAX];
        char *commands[] = { (char *) "npm", (char *) "..", (char *) "a/b", (char *) "", (char *) "npx",
                             (char *) "npm", NULL };
        struct stat st;

        if (!mkdtemp(base)) {
                TAP_CHECK(false, "a temporary directory");
                return;
        }
        (void) snprintf(dir, sizeof(dir), "%s/bin", base);
        char *map[] = { (char *) "/usr/lib/node_modules/npm/bin/npm-cli.js", (char *) "npm",
                        (char *) "/usr/lib/node_modules/npm/bin/npx-cli.js", (char *) "npx", NULL };
        char *name = NULL;
        TAP_CHECK(broker_route_links(dir, commands, "/usr/bin/scudo", map) == 2,
                  "a link for each usable name, once");
        TAP_CHECK(broker_route_lookup(dir, "/usr/lib/node_modules/npm/bin/npx-cli.js", &name) == 0 &&
                  streq(name, "npx"), "an executable scudo takes the place of names its command");
        free(name);
        TAP_CHECK(broker_route_lookup(dir, "/usr/bin/node", &name) == -ENOENT, "any other names none");
        (void) snprintf(link, sizeof(link), "%s/npx", dir);
        ssize_t k = readlink(link, target, sizeof(target) - 1);
        TAP_CHECK(k > 0 && (target[k] = 0, streq(target, "/usr/bin/scudo")), "each leads to scudo");
        TAP_CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0500, "the directory is read-only");
        (void) snprintf(link, sizeof(link), "%s/keep", base);
        TAP_CHECK(symlink("x", link) == 0, "a link beside it");
        broker_route_remove(dir);
        TAP_CHECK(lstat(dir, &st) < 0, "removed whole");
        TAP_CHECK(lstat(link, &st) == 0, "and nothing beside it");
        (void) unlink(link);
        (void) rmdir(base);
}

int main(void) {
        test_round_trip();
        test_refused();
        test_route();
        return tap_done();
}
