/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Unit tests for the property table (src/plan/unit-properties.c), its number parsers
 * (src/util/parse-util.c) and the plan → unit mapping of paths (src/unit/unit-build.c), checked
 * by reading the built D-Bus message back. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plan/plan.h"
#include "tap.h"
#include "plan/unit-properties.h"
#include "unit/properties.h"
#include "unit/unit-build.h"
#include "util/macro.h"
#include "util/parse-util.h"
#include "util/strv.h"

static void test_check(void) {
        static const struct { const char *name, *value; int expect; } cases[] = {
                { "MemoryMax", "4G", 0 },
                { "MemoryMax", "50%", 0 },
                { "MemoryMax", "infinity", 0 },
                { "MemoryMax", "4X", -EINVAL },
                { "MemoryMax", "-1", -EINVAL },
                { "CPUQuota", "200%", 0 },
                { "CPUQuota", "200", -EINVAL },
                { "IOWeight", "50", 0 },
                { "IOWeight", "0", -EINVAL },
                { "TasksMax", "512", 0 },
                { "PrivateTmp", "true", 0 },
                { "PrivateTmp", "maybe", -EINVAL },
                { "PrivateUsers", "yes", 0 },
                { "PrivateUsers", "no", -EINVAL },
                { "ProtectControlGroups", "false", -EINVAL },
                { "NoNewPrivileges", "0", -EINVAL },
                { "ProtectSystem", "strict", 0 },
                { "ProtectSystem", "stricter", -EINVAL },
                { "SystemCallFilter", "~@mount @swap", 0 },
                { "SystemCallFilter", "~@mount;rm -rf", -EINVAL },
                { "RestrictAddressFamilies", "AF_UNIX AF_INET", 0 },
                { "RestrictAddressFamilies", "~AF_PACKET", 0 },
                { "RestrictAddressFamilies", "none", -EINVAL },
                { "RestrictAddressFamilies", "AF_INTE", -EINVAL },
                { "SystemCallFilter", "~@mountt", -EINVAL },
                { "SystemCallFilter", "~nosuchcall", -EINVAL },
                { "SystemCallFilter", "~ptrace:EPERM", 0 },
                { "SystemCallFilter", "@system-service", 0 },
                { "SystemCallArchitectures", "native", 0 },
                { "SystemCallArchitectures", "nativ", -EINVAL },
                { "CapabilityBoundingSet", "", 0 },
                { "CapabilityBoundingSet", "CAP_NET_RAW", 0 },
                { "CapabilityBoundingSet", "CAP_BOGUS", -EINVAL },
                { "SystemCallErrorNumber", "EPERM", 0 },
                { "SystemCallErrorNumber", "ENOTANERRNO", -EINVAL },
                { "KillSignal", "SIGINT", 0 },
                { "RuntimeMaxSec", "5min", 0 },
                { "UMask", "0077", 0 },
                { "UMask", "999", -EINVAL },
                { "Nice", "-21", -EINVAL },
                { "ExecStart", "/bin/sh", -ENOENT },
                { "BindPaths", "/", -ENOENT },
                { "User", "root", -ENOENT },
                { "Description", "line\nbreak", -EINVAL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *err = NULL;
                int r = unit_property_check(cases[i].name, cases[i].value, &err);
                TAP_CHECK(r == cases[i].expect, "%s=%s gives %d (got %d: %s)", cases[i].name, cases[i].value,
                          cases[i].expect, r, err ? err : "");
                TAP_CHECK((r == 0) == (err == NULL), "%s=%s: a message exactly when refused", cases[i].name,
                          cases[i].value);
                free(err);
        }
}

/* The number parsers behind the table (src/util/parse-util.c): what each accepts, what it gives,
 * and that what does not fit in 64 bits is refused rather than wrapped. */
#define BAD UINT64_C(0xbad)
typedef int (*parse_u64_fn)(const char *s, uint64_t *ret);
typedef struct { const char *s; int r; uint64_t v; } U64Case;
static void check_u64_cases(const char *fn_name, parse_u64_fn fn, const U64Case *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                uint64_t v = BAD;
                int r = fn(cases[i].s, &v);
                TAP_CHECK(r == cases[i].r && v == (cases[i].r == 0 ? cases[i].v : BAD),
                          "%s(\"%s\") gives %d, %" PRIu64 " (got %d, %" PRIu64 ")", fn_name, cases[i].s,
                          cases[i].r, cases[i].r == 0 ? cases[i].v : BAD, r, v);
        }
}
#define CHECK_U64_CASES(fn, cases) check_u64_cases(#fn, fn, cases, ELEMENTSOF(cases))

static void test_parse_u64(void) {
        static const U64Case cases[] = {
                { "0", 0, 0 }, { "42", 0, 42 }, { "007", 0, 7 },
                { "18446744073709551615", 0, UINT64_MAX },
                { "18446744073709551616", -EINVAL, 0 },         /* one past the top */
                { "99999999999999999999999", -EINVAL, 0 },
                { "", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "+1", -EINVAL, 0 }, { " 1", -EINVAL, 0 },
                { "1 ", -EINVAL, 0 }, { "1x", -EINVAL, 0 }, { "0x10", -EINVAL, 0 },
                { "infinity", -EINVAL, 0 },
        };
        CHECK_U64_CASES(parse_u64, cases);

        uint64_t v = BAD;
        const char *rest = NULL;
        TAP_CHECK(parse_u64_prefix("512M", &v, &rest) == 0 && v == 512 && rest && streq(rest, "M"),
                  "parse_u64_prefix stops at the suffix");
        TAP_CHECK(parse_u64_prefix("M", &v, &rest) == -EINVAL, "parse_u64_prefix wants a digit first");
        TAP_CHECK(parse_u64_prefix("18446744073709551616k", &v, &rest) == -EINVAL,
                  "parse_u64_prefix refuses what does not fit before the suffix");
}

static void test_parse_i64(void) {
        static const struct { const char *s; int r; int64_t v; } cases[] = {
                { "0", 0, 0 }, { "-20", 0, -20 }, { "+19", 0, 19 }, { " 5", 0, 5 },
                { "9223372036854775807", 0, INT64_MAX }, { "-9223372036854775808", 0, INT64_MIN },
                { "9223372036854775808", -EINVAL, 0 }, { "-9223372036854775809", -EINVAL, 0 },
                { "", -EINVAL, 0 }, { "-", -EINVAL, 0 }, { "5 ", -EINVAL, 0 }, { "1e3", -EINVAL, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t v = 0xbad;
                int r = parse_i64(cases[i].s, &v);
                TAP_CHECK(r == cases[i].r && v == (cases[i].r == 0 ? cases[i].v : 0xbad),
                          "parse_i64(\"%s\") gives %d, %" PRId64 " (got %d, %" PRId64 ")", cases[i].s,
                          cases[i].r, cases[i].v, r, v);
        }
}

static void test_parse_percent(void) {
        static const U64Case cases[] = {
                { "0%", 0, 0 }, { "50%", 0, 50 }, { "100000%", 0, 100000 },
                { "18446744073709551615%", 0, UINT64_MAX },
                { "18446744073709551616%", -EINVAL, 0 },
                { "%", -EINVAL, 0 }, { "50", -EINVAL, 0 }, { "50%%", -EINVAL, 0 }, { "50 %", -EINVAL, 0 },
                { "-5%", -EINVAL, 0 }, { " 5%", -EINVAL, 0 }, { "5.5%", -EINVAL, 0 }, { "", -EINVAL, 0 },
        };
        CHECK_U64_CASES(parse_percent, cases);
}

static void test_parse_size(void) {
        static const U64Case cases[] = {
                { "0", 0, 0 }, { "1024", 0, 1024 }, { "1K", 0, 1024 }, { "1k", 0, 1024 },
                { "512M", 0, UINT64_C(512) << 20 }, { "4G", 0, UINT64_C(4) << 30 },
                { "4GiB", 0, UINT64_C(4) << 30 }, { "4gib", 0, UINT64_C(4) << 30 },
                { "4GB", 0, UINT64_C(4) << 30 }, { "4Gi", 0, UINT64_C(4) << 30 },
                { "2T", 0, UINT64_C(2) << 40 }, { "infinity", 0, UINT64_MAX },
                { "16777215T", 0, UINT64_C(16777215) << 40 },
                { "16777216T", -EINVAL, 0 },                    /* 2^64 bytes */
                { "17179869184G", -EINVAL, 0 },
                { "18446744073709551616", -EINVAL, 0 },
                { "4X", -EINVAL, 0 }, { "4B", -EINVAL, 0 }, { "4iB", -EINVAL, 0 }, { "4GBi", -EINVAL, 0 },
                { "4G ", -EINVAL, 0 }, { "4 G", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "G", -EINVAL, 0 },
                { "", -EINVAL, 0 }, { "Infinity", -EINVAL, 0 }, { "50%", -EINVAL, 0 },
        };
        CHECK_U64_CASES(parse_size, cases);
}

static void test_parse_usec(void) {
        static const U64Case cases[] = {
                { "30", 0, 30000000 }, { "30s", 0, 30000000 }, { "1sec", 0, 1000000 },
                { "100ms", 0, 100000 }, { "250us", 0, 250 }, { "3m", 0, 180000000 },
                { "5min", 0, 300000000 }, { "2h", 0, UINT64_C(7200000000) }, { "0", 0, 0 },
                { "infinity", 0, UINT64_MAX },
                { "18446744073709551615us", 0, UINT64_MAX },
                { "18446744073709551616us", -EINVAL, 0 },
                { "18446744073709s", 0, UINT64_C(18446744073709000000) },
                { "18446744073710s", -EINVAL, 0 },              /* 2^64 us is 18446744073709.551616 s */
                { "5124095576h", 0, UINT64_C(18446744073600000000) },
                { "5124095577h", -EINVAL, 0 },
                { "5S", -EINVAL, 0 }, { "5 s", -EINVAL, 0 }, { "5d", -EINVAL, 0 }, { "5mins", -EINVAL, 0 },
                { "s", -EINVAL, 0 }, { "-5s", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "1.5s", -EINVAL, 0 },
        };
        CHECK_U64_CASES(parse_usec, cases);
}

/* The controller each resource property needs (run/run-status.c refuses a run without it). */
static void test_controller(void) {
        static const struct { const char *name, *controller; } cases[] = {
                { "MemoryMax", "memory" }, { "MemoryHigh", "memory" }, { "MemoryLow", "memory" },
                { "MemorySwapMax", "memory" }, { "TasksMax", "pids" }, { "CPUQuota", "cpu" },
                { "CPUWeight", "cpu" }, { "IOWeight", "io" },
                { "LimitNOFILE", NULL }, { "Nice", NULL }, { "PrivateTmp", NULL }, { "RuntimeMaxSec", NULL },
                { "MemoryMaxx", NULL }, { "memorymax", NULL }, { "", NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *c = unit_property_controller(cases[i].name);
                TAP_CHECK(streq_ptr(c, cases[i].controller), "%s needs the controller %s (got %s)",
                          cases[i].name, cases[i].controller ?: "(none)", c ?: "(none)");
        }
}

static void test_suggest(void) {
        char *err = NULL;
        TAP_CHECK(unit_property_check("MemroyMax", "1G", &err) == -ENOENT, "typo refused");
        TAP_CHECK(err && strstr(err, "did you mean 'MemoryMax'"), "typo gets a suggestion: %s",
                  err ? err : "");
        free(err);
        TAP_CHECK(unit_property_suggest("Zzzzzzzzzzzzzzzzz") == NULL, "nothing close, no suggestion");
}

/* Reads the a(sv) array back and returns the names in order, joined by spaces. */
static char *read_names(sd_bus_message *m, char **ret_binds) {
        char *names = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&names, &len);
        char *binds = NULL;
        size_t blen = 0;
        FILE *bf = open_memstream(&binds, &blen);
        sd_bus_message_enter_container(m, 'a', "(sv)");
        while (sd_bus_message_enter_container(m, 'r', "sv") > 0) {
                const char *name, *contents;
                char type;
                sd_bus_message_read(m, "s", &name);
                fprintf(f, "%s ", name);
                sd_bus_message_peek_type(m, &type, &contents);
                if (strcmp(name, "BindPaths") == 0 || strcmp(name, "BindReadOnlyPaths") == 0) {
                        const char *src, *dst;
                        int ign;
                        uint64_t flags;
                        sd_bus_message_enter_container(m, 'v', "a(ssbt)");
                        sd_bus_message_enter_container(m, 'a', "(ssbt)");
                        while (sd_bus_message_read(m, "(ssbt)", &src, &dst, &ign, &flags) > 0)
                                fprintf(bf, "%s:%s:%s ", name, src, dst);
                        sd_bus_message_exit_container(m);
                        sd_bus_message_exit_container(m);
                } else if (strcmp(name, "InaccessiblePaths") == 0) {
                        char **l = NULL;
                        sd_bus_message_enter_container(m, 'v', "as");
                        sd_bus_message_read_strv(m, &l);
                        for (char **s = l; s && *s; s++)
                                fprintf(bf, "Inaccessible:%s ", *s);
                        for (char **s = l; s && *s; s++)
                                free(*s);
                        free(l);
                        sd_bus_message_exit_container(m);
                } else if (strcmp(name, "TemporaryFileSystem") == 0) {
                        const char *p, *o;
                        sd_bus_message_enter_container(m, 'v', "a(ss)");
                        sd_bus_message_enter_container(m, 'a', "(ss)");
                        while (sd_bus_message_read(m, "(ss)", &p, &o) > 0)
                                fprintf(bf, "Tmpfs:%s ", p);
                        sd_bus_message_exit_container(m);
                        sd_bus_message_exit_container(m);
                } else
                        sd_bus_message_skip(m, "v");
                sd_bus_message_exit_container(m);
        }
        sd_bus_message_exit_container(m);
        fclose(f);
        fclose(bf);
        *ret_binds = binds;
        return names;
}

/* Reads the next (sv) entry of variant "as" or "(bas)" as NAME=WORD WORD..., "~" first for a
 * (bas) whose flag is false (a deny-list): the text a profile wrote. */
static int read_words_entry(sd_bus_message *m, const char *sig, char *buf, size_t size) {
        const char *name = NULL;
        int allow = 1, r, n;
        char **l = NULL;
        bool pair = streq(sig, "(bas)");

        r = sd_bus_message_enter_container(m, 'r', "sv");
        if (r > 0)
                r = sd_bus_message_read(m, "s", &name);
        if (r > 0)
                r = sd_bus_message_enter_container(m, 'v', sig);
        if (r > 0 && pair)
                r = sd_bus_message_enter_container(m, 'r', "bas");
        if (r > 0 && pair)
                r = sd_bus_message_read(m, "b", &allow);
        if (r > 0)
                r = sd_bus_message_read_strv(m, &l);
        for (int i = 0; r > 0 && i < (pair ? 3 : 2); i++)
                r = sd_bus_message_exit_container(m);
        if (r <= 0) {
                strv_free(l);
                return r < 0 ? r : -EBADMSG;
        }
        n = snprintf(buf, size, "%s=%s", name, allow ? "" : "~");
        STRV_FOREACH(w, l)
                if (n >= 0 && (size_t) n < size)
                        n += snprintf(buf + n, size - (size_t) n, "%s%s", w == l ? "" : " ", *w);
        strv_free(l);
        return 0;
}

/* What the table writes (one append, or several inside the (sv) frame) and what the unit
 * builder writes in the same frame (unit/properties.h) reads back as what was written. */
static void test_append_read_back(void) {
        sd_bus *bus = NULL;
        sd_bus_message *m = NULL;
        int fds[2];
        TAP_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
        TAP_CHECK(sd_bus_new(&bus) >= 0 && sd_bus_set_fd(bus, fds[0], fds[0]) >= 0 && sd_bus_start(bus) >= 0,
                  "bus object for messages");
        TAP_CHECK(sd_bus_message_new_method_call(bus, &m, "a.b", "/", "a.b", "M") >= 0, "message");

        int r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = unit_property_append(m, "MemoryMax", "4G");
        if (r >= 0)
                r = unit_property_append(m, "SystemCallFilter", "~@mount @swap");
        if (r >= 0)
                r = unit_property_append(m, "SystemCallArchitectures", "native x86");
        if (r >= 0)
                r = unit_property_open(m, "Environment", "as");
        if (r >= 0)
                r = sd_bus_message_append_strv(m, (char *[]) { (char *) "A=1", (char *) "B=2", NULL });
        if (r >= 0)
                r = unit_property_close(m);
        if (r >= 0)
                r = unit_property_append(m, "TimeoutStopSec", "5s");
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_seal(m, 1, 0);
        if (r >= 0)
                r = sd_bus_message_rewind(m, true);
        TAP_CHECK(r >= 0, "entries written and sealed (%d)", r);

        const char *name = "";
        uint64_t t = 0;
        char buf[128] = "";
        TAP_CHECK(sd_bus_message_enter_container(m, 'a', "(sv)") > 0, "the array reads back");
        r = sd_bus_message_read(m, "(sv)", &name, "t", &t);
        TAP_CHECK(r > 0 && streq(name, "MemoryMax") && t == UINT64_C(4) << 30,
                  "MemoryMax=4G reads back as MemoryMax, t %" PRIu64, t);
        r = read_words_entry(m, "(bas)", buf, sizeof(buf));
        TAP_CHECK(r == 0 && streq(buf, "SystemCallFilter=~@mount @swap"), "a (bas) entry reads back (%s)",
                  buf);
        r = read_words_entry(m, "as", buf, sizeof(buf));
        TAP_CHECK(r == 0 && streq(buf, "SystemCallArchitectures=native x86"), "an as entry reads back (%s)",
                  buf);
        r = read_words_entry(m, "as", buf, sizeof(buf));
        TAP_CHECK(r == 0 && streq(buf, "Environment=A=1 B=2"), "the builder's frame reads back (%s)", buf);
        r = sd_bus_message_read(m, "(sv)", &name, "t", &t);
        TAP_CHECK(r > 0 && streq(name, "TimeoutStopUSec") && t == 5000000,
                  "TimeoutStopSec=5s reads back as TimeoutStopUSec, t %" PRIu64, t);
        TAP_CHECK(sd_bus_message_exit_container(m) > 0, "nothing else in the array");

        sd_bus_message_unref(m);
        sd_bus_close_unref(bus);
        close(fds[1]);
}

static void test_unit_paths(void) {
        sd_bus *bus = NULL;
        sd_bus_message *m = NULL;
        Plan *p = plan_new();

        int fds[2];
        /* Messages need a bus in a started state; a socketpair nobody answers is enough. */
        TAP_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
        TAP_CHECK(sd_bus_new(&bus) >= 0 && sd_bus_set_fd(bus, fds[0], fds[0]) >= 0 && sd_bus_start(bus) >= 0,
                  "bus object for messages");
        TAP_CHECK(sd_bus_message_new_method_call(bus, &m, "a.b", "/", "a.b", "M") >= 0, "message");
        /* /tmp exists (dir), /etc/hostname exists (not a dir), /nonexistent does not. A
         * hardened plan (plan-harden.h) is translated as it is: one entry per path, and nothing
         * added (what scudo adds is in the plan already). */
        plan_add_path(p, PATH_ACCESS_HIDE, "/tmp", "t");
        plan_add_path(p, PATH_ACCESS_READ, "/etc", "t");
        plan_add_path(p, PATH_ACCESS_HIDE, "/etc/hostname", "t");
        plan_add_path(p, PATH_ACCESS_HIDE, "/nonexistent-scudo", "t");
        plan_add_path(p, PATH_ACCESS_DENY, "/var/secret", "t");
        plan_add_path(p, PATH_ACCESS_WRITE, "/var/tmp", "t");
        plan_add_path(p, PATH_ACCESS_READ, "/run/user/1000/bus", "scudo");
        p->paths[p->n_paths - 1].source = PATH_SOURCE_BUS_PROXY;
        UnitContext ctx = { .runtime_dir = "/run/user/1000", .bus_proxy_socket = "/dev/null" };

        sd_bus_message_open_container(m, 'a', "(sv)");
        TAP_CHECK(unit_append_paths(m, p, &ctx, NULL) == -EINVAL, "a plan that was not hardened is refused");
        p->hardened = true;
        TAP_CHECK(unit_append_paths(m, p, &ctx, NULL) >= 0, "paths appended");
        sd_bus_message_close_container(m);
        sd_bus_message_seal(m, 1, 0);
        sd_bus_message_rewind(m, true);

        char *binds = NULL;
        char *names = read_names(m, &binds);
        TAP_CHECK(strstr(binds, "Tmpfs:/tmp ") != NULL, "hide of a directory is a tmpfs (%s)", binds);
        TAP_CHECK(strstr(binds, "BindPaths:/var/tmp:/var/tmp ") != NULL, "write is a bind");
        TAP_CHECK(strstr(binds, "BindReadOnlyPaths:/etc:/etc ") != NULL, "read is a read-only bind");
        TAP_CHECK(strstr(binds, "BindReadOnlyPaths:/dev/null:/etc/hostname ") != NULL,
                  "hide of a file is an empty read-only file");
        TAP_CHECK(strstr(binds, "nonexistent") == NULL, "hiding a missing path adds nothing");
        TAP_CHECK(strstr(binds, "Inaccessible:-/var/secret ") != NULL, "deny is inaccessible, optional");
        TAP_CHECK(strstr(binds, "BindReadOnlyPaths:/dev/null:/run/user/1000/bus ") != NULL,
                  "the bus proxy's socket is bound where the plan says");
        TAP_CHECK(strstr(binds, "/run/user/1000/systemd") == NULL && strstr(binds, "docker") == NULL,
                  "nothing is added to the plan's mounts");
        free(names);
        free(binds);
        sd_bus_message_unref(m);
        sd_bus_close_unref(bus);
        close(fds[1]);
        plan_free(p);
}

static void test_unset_environment(void) {
        Plan *p = plan_new();
        char **unset = NULL;
        char *manager[] = { (char *) "PATH=/usr/bin", (char *) "GITHUB_TOKEN=x", (char *) "SSH_AUTH_SOCK=/s",
                            (char *) "LANG=C", NULL };
        plan_setenv(p, "PATH", "/bin");
        plan_setenv(p, "LANG", "C.UTF-8");
        strv_extend(&p->unset_environment, "DBUS_SESSION_BUS_ADDRESS");
        TAP_CHECK(unit_unset_environment(p, manager, NULL, &unset) == 0, "unset list built");
        TAP_CHECK(strv_contains(unset, "DBUS_SESSION_BUS_ADDRESS"), "the plan's own unset names stay");
        TAP_CHECK(strv_contains(unset, "GITHUB_TOKEN") && strv_contains(unset, "SSH_AUTH_SOCK"),
                  "manager variables the plan does not set are unset");
        TAP_CHECK(!strv_contains(unset, "PATH") && !strv_contains(unset, "LANG"),
                  "variables the plan sets are not unset (Environment= gives them the caller's value)");
        strv_free(unset);
        plan_free(p);
}

/* What scudo sets on every unit is what explain shows, and each of it is a value the table
 * accepts (a profile repeating it is not refused). The writer writes one (sv) per entry. */
static int count_open(void *userdata, char type, const char *contents) {
        if (type == 'r')
                (*(int *) userdata)++;
        return 0;
}
static int ok_close(void *userdata) {
        return 0;
}
static int ok_appendv(void *userdata, const char *types, va_list ap) {
        return 0;
}

static void test_fixed_properties(void) {
        size_t n = 0;
        for (const char *const *f = unit_fixed_properties; *f; f++, n++) {
                char name[64];
                const char *eq = strchr(*f, '=');
                TAP_CHECK(eq && (size_t) (eq - *f) < sizeof(name), "fixed property %s is NAME=VALUE", *f);
                if (!eq)
                        continue;
                (void) snprintf(name, sizeof(name), "%.*s", (int) (eq - *f), *f);
                TAP_CHECK(unit_property_check(name, eq + 1, NULL) == 0,
                          "fixed %s is a value a profile may repeat", *f);
        }
        int written = 0;
        const PropertyWriter w = {
                .open = count_open, .close = ok_close, .appendv = ok_appendv, .userdata = &written
        };
        TAP_CHECK(unit_fixed_properties_write(&w) == 0 && (size_t) written == n,
                  "the writer writes each fixed property (%d of %zu)", written, n);
}

int main(void) {
        test_fixed_properties();
        test_unset_environment();
        test_parse_u64();
        test_parse_i64();
        test_parse_percent();
        test_parse_size();
        test_parse_usec();
        test_check();
        test_controller();
        test_suggest();
        test_unit_paths();
        test_append_read_back();
        return tap_done();
}
