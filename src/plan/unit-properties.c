/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <seccomp.h>
#include <sys/capability.h>

#include "plan/unit-properties.h"
#include "util/edit-distance.h"
#include "util/macro.h"
#include "util/parse-util.h"
#include "util/strv.h"

/* A converter checks `value` and, when m is not NULL, appends the property as one (sv)
 * entry. It returns 0, -EINVAL for a value it cannot accept, or a bus error. */
typedef int (*convert_fn)(const PropertyWriter *m, const char *name, const char *value);

typedef struct UnitProperty {
        const char *name;
        convert_fn convert;
        const char *expects;    /* shown in errors and in the dump */
        const char *controller; /* the cgroup controller without which it does nothing, or NULL */
} UnitProperty;

/* "50%" → parts per UINT32_MAX, as systemd's *Scale properties want them. */
static int parse_percent_scale(const char *s, uint32_t *ret) {
        uint64_t p;
        if (parse_percent(s, &p) < 0 || p > 100)
                return -EINVAL;
        *ret = (uint32_t) (((uint64_t) UINT32_MAX * p + 50) / 100);
        return 0;
}

/* The writer's operations, for the converters below. */
static int write_open(const PropertyWriter *m, char type, const char *contents) {
        return m->open(m->userdata, type, contents);
}

static int write_close(const PropertyWriter *m) {
        return m->close(m->userdata);
}

static int write_strv(const PropertyWriter *m, char **l) {
        return m->append_strv(m->userdata, l);
}

static int write_append(const PropertyWriter *m, const char *types, ...) {
        va_list ap;
        va_start(ap, types);
        int r = m->appendv(m->userdata, types, ap);
        va_end(ap);
        return r;
}

int unit_property_write_open(const PropertyWriter *m, const char *name, const char *sig) {
        int r = write_open(m, 'r', "sv");
        if (r >= 0)
                r = write_append(m, "s", name);
        if (r >= 0)
                r = write_open(m, 'v', sig);
        return r;
}

int unit_property_write_close(const PropertyWriter *m) {
        int r = write_close(m);         /* the variant */
        return r < 0 ? r : write_close(m);
}

static int append_sv(const PropertyWriter *m, const char *name, const char *sig, ...) {
        va_list ap;
        int r = unit_property_write_open(m, name, sig);
        if (r < 0)
                return r;
        va_start(ap, sig);
        r = m->appendv(m->userdata, sig, ap);
        va_end(ap);
        return r < 0 ? r : unit_property_write_close(m);
}

static int conv_bool(const PropertyWriter *m, const char *name, const char *value) {
        int b = parse_boolean(value);
        if (b < 0)
                return -EINVAL;
        return m ? append_sv(m, name, "b", b) : 0;
}

/* Properties scudo sets to "yes" on every unit: repeating them is fine, turning them off
 * would take the sandbox apart and is refused. */
static int conv_forced_yes(const PropertyWriter *m, const char *name, const char *value) {
        if (parse_boolean(value) != 1)
                return -EINVAL;
        return m ? append_sv(m, name, "b", 1) : 0;
}

/* A boolean of scudo's own, not systemd's (252 has none by that name): checked here, read off
 * the plan by the runner (plan_private_pids, plan.c), never sent to systemd. */
static int conv_scudo_bool(const PropertyWriter *m, const char *name, const char *value) {
        return parse_boolean(value) < 0 ? -EINVAL : 0;
}

static int conv_size(const PropertyWriter *m, const char *name, const char *value) {
        uint64_t v;
        uint32_t scale;
        if (parse_percent_scale(value, &scale) >= 0) {
                if (!m)
                        return 0;
                char scaled[64];
                (void) snprintf(scaled, sizeof(scaled), "%sScale", name);
                return append_sv(m, scaled, "u", scale);
        }
        if (parse_size(value, &v) < 0)
                return -EINVAL;
        return m ? append_sv(m, name, "t", v) : 0;
}

static int conv_tasks(const PropertyWriter *m, const char *name, const char *value) {
        return conv_size(m, name, value);
}

static int conv_u64(const PropertyWriter *m, const char *name, const char *value) {
        uint64_t v;
        if (streq(value, "infinity"))
                v = UINT64_MAX;
        else if (parse_u64(value, &v) < 0)
                return -EINVAL;
        return m ? append_sv(m, name, "t", v) : 0;
}

static int conv_weight(const PropertyWriter *m, const char *name, const char *value) {
        uint64_t v;
        if (parse_u64(value, &v) < 0 || v < 1 || v > 10000)
                return -EINVAL;
        return m ? append_sv(m, name, "t", v) : 0;
}

static int conv_usec(const PropertyWriter *m, const char *name, const char *value) {
        uint64_t v;
        if (parse_usec(value, &v) < 0)
                return -EINVAL;
        char usec_name[64];
        /* D-Bus names these with a USec suffix (TimeoutStopSec → TimeoutStopUSec). */
        size_t l = strlen(name);
        if (l > 3 && streq(name + l - 3, "Sec"))
                (void) snprintf(usec_name, sizeof(usec_name), "%.*sUSec", (int) (l - 3), name);
        else
                (void) snprintf(usec_name, sizeof(usec_name), "%s", name);
        return m ? append_sv(m, usec_name, "t", v) : 0;
}

static int conv_cpu_quota(const PropertyWriter *m, const char *name, const char *value) {
        uint64_t p;
        if (parse_percent(value, &p) < 0 || p == 0 || p > 100000)
                return -EINVAL;
        return m ? append_sv(m, "CPUQuotaPerSecUSec", "t", p * 10000) : 0;
}

static int conv_int_range(const PropertyWriter *m, const char *name, const char *value, int64_t lo,
                          int64_t hi) {
        int64_t v;
        if (parse_i64(value, &v) < 0 || v < lo || v > hi)
                return -EINVAL;
        return m ? append_sv(m, name, "i", (int32_t) v) : 0;
}

static int conv_nice(const PropertyWriter *m, const char *name, const char *value) {
        return conv_int_range(m, name, value, -20, 19);
}

static int conv_oom_score(const PropertyWriter *m, const char *name, const char *value) {
        return conv_int_range(m, name, value, -1000, 1000);
}

static int conv_umask(const PropertyWriter *m, const char *name, const char *value) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(value, &end, 8);
        if (!*value || *end || errno != 0 || v > 0777)
                return -EINVAL;
        return m ? append_sv(m, name, "u", (uint32_t) v) : 0;
}

static int string_in(const char *value, const char * const *choices) {
        for (; *choices; choices++)
                if (streq(value, *choices))
                        return 0;
        return -EINVAL;
}

#define DEFINE_CONV_ENUM(fn, ...)                                                       \
        static int fn(const PropertyWriter *m, const char *name, const char *value) {         \
                static const char * const choices[] = { __VA_ARGS__, NULL };            \
                if (string_in(value, choices) < 0)                                      \
                        return -EINVAL;                                                 \
                return m ? append_sv(m, name, "s", value) : 0;                          \
        }

DEFINE_CONV_ENUM(conv_protect_system, "yes", "no", "full", "strict", "true", "false");
DEFINE_CONV_ENUM(conv_protect_home, "yes", "no", "read-only", "tmpfs", "true", "false");
DEFINE_CONV_ENUM(conv_protect_proc, "noaccess", "invisible", "ptraceable", "default");
DEFINE_CONV_ENUM(conv_proc_subset, "all", "pid");
DEFINE_CONV_ENUM(conv_kill_mode, "control-group", "mixed", "process");
DEFINE_CONV_ENUM(conv_keyring_mode, "inherit", "private", "shared");

static int conv_description(const PropertyWriter *m, const char *name, const char *value) {
        for (const char *p = value; *p; p++)
                if ((unsigned char) *p < 0x20)
                        return -EINVAL;
        return m ? append_sv(m, name, "s", value) : 0;
}

/* Splits on whitespace into a vector; a leading "~" is returned separately. */
static int split_words(const char *value, bool *ret_inverted, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        const char *p = value;
        bool inverted = false;

        while (isspace((unsigned char) *p))
                p++;
        if (*p == '~') {
                inverted = true;
                p++;
        }
        while (*p) {
                while (isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        break;
                const char *e = p;
                while (*e && !isspace((unsigned char) *e))
                        e++;
                _cleanup_free_ char *w = strndup(p, (size_t) (e - p));
                if (!w)
                        return -ENOMEM;
                int r = strv_push(&l, w);
                if (r < 0)
                        return r;
                w = NULL;
                p = e;
        }
        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        *ret_inverted = inverted;
        *ret = TAKE_PTR(l);
        return 0;
}

static bool word_is_identifier(const char *w, const char *extra) {
        if (!*w)
                return false;
        for (const char *p = w; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_' && !strchr(extra, *p))
                        return false;
        return true;
}

/* SystemCallFilter= and RestrictAddressFamilies= are (bas): allow-list flag and names. */
static int conv_bool_strv(const PropertyWriter *m, const char *name, const char *value, const char *extra) {
        _cleanup_strv_free_ char **l = NULL;
        bool inverted;
        int r = split_words(value, &inverted, &l);
        if (r < 0)
                return r;
        STRV_FOREACH(w, l)
                if (!word_is_identifier(*w, extra))
                        return -EINVAL;
        if (!m)
                return 0;
        r = unit_property_write_open(m, name, "(bas)");
        if (r >= 0)
                r = write_open(m, 'r', "bas");
        if (r >= 0)
                r = write_append(m, "b", !inverted);
        if (r >= 0)
                r = write_strv(m, l);
        if (r >= 0)
                r = write_close(m);
        return r < 0 ? r : unit_property_write_close(m);
}

static int errno_from_name(const char *s);
static int conv_strv(const PropertyWriter *m, const char *name, const char *value);

/* systemd 252 skips names it does not know with no more than a log line, which would leave
 * the sandbox weaker than the profile says; so every name is checked here first. */
static const char * const syscall_groups[] = {
        "@aio", "@basic-io", "@chown", "@clock", "@cpu-emulation", "@debug", "@file-system",
        "@io-event", "@ipc", "@keyring", "@memlock", "@module", "@mount", "@network-io",
        "@obsolete", "@pkey", "@privileged", "@process", "@raw-io", "@reboot", "@resources",
        "@sandbox", "@setuid", "@signal", "@swap", "@sync", "@system-service", "@timer",
        "@known", "@default", NULL,
};

static bool syscall_entry_is_valid(const char *w) {
        _cleanup_free_ char *n = strdup(w);
        if (!n)
                return false;
        char *colon = strchr(n, ':');   /* "name:ERRNO" */
        if (colon) {
                *colon = 0;
                if (errno_from_name(colon + 1) < 0 && !streq(colon + 1, "kill"))
                        return false;
        }
        if (n[0] == '@')
                return string_in(n, syscall_groups) >= 0;
        return seccomp_syscall_resolve_name(n) != __NR_SCMP_ERROR;
}

static const char * const address_families[] = {
        "AF_UNIX", "AF_LOCAL", "AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET", "AF_BLUETOOTH",
        "AF_ALG", "AF_CAN", "AF_VSOCK", "AF_XDP", "AF_KEY", "AF_TIPC", "AF_RDS", "AF_SMC",
        "AF_QIPCRTR", "AF_IEEE802154", "AF_NFC", "AF_APPLETALK", "AF_AX25", "AF_X25", "AF_IPX",
        "AF_DECnet", "AF_ROSE", "AF_NETROM", "AF_ATMPVC", "AF_ATMSVC", "AF_SNA", "AF_IRDA",
        "AF_PPPOX", "AF_WANPIPE", "AF_LLC", "AF_IB", "AF_MPLS", "AF_ISDN", "AF_PHONET", "AF_CAIF",
        "AF_RXRPC", "AF_IUCV", "AF_KCM", "AF_MCTP", "AF_BRIDGE", "AF_SECURITY", "AF_ECONET",
        "AF_ASH", "AF_NETBEUI", "AF_PPPOX", "AF_ROUTE", NULL,
};

/* Checks every word of a "[~]WORD..." value with `ok`. */
static int check_words(const char *value, bool (*ok)(const char *w)) {
        _cleanup_strv_free_ char **l = NULL;
        bool inverted;
        int r = split_words(value, &inverted, &l);
        if (r < 0)
                return r;
        STRV_FOREACH(w, l)
                if (!ok(*w))
                        return -EINVAL;
        return 0;
}

static bool address_family_is_valid(const char *w) {
        return string_in(w, address_families) >= 0;
}

static const char * const architectures[] = {
        "native", "x86", "x86-64", "x32", "arm", "arm64", "mips", "mips64", "mips-le", "mips64-le",
        "ppc", "ppc64", "ppc64-le", "s390", "s390x", "riscv64", "loongarch64", NULL,
};

static bool architecture_is_valid(const char *w) {
        return string_in(w, architectures) >= 0;
}

static int conv_syscall_filter(const PropertyWriter *m, const char *name, const char *value) {
        int r = check_words(value, syscall_entry_is_valid);
        return r < 0 ? r : conv_bool_strv(m, name, value, "@:-");
}

/* Not "none": an empty allow-list reaches systemd as "no restriction at all". */
static int conv_address_families(const PropertyWriter *m, const char *name, const char *value) {
        int r = check_words(value, address_family_is_valid);
        return r < 0 ? r : conv_bool_strv(m, name, value, "");
}

static int conv_architectures(const PropertyWriter *m, const char *name, const char *value) {
        int r = check_words(value, architecture_is_valid);
        return r < 0 ? r : conv_strv(m, name, value);
}

static int conv_strv(const PropertyWriter *m, const char *name, const char *value) {
        _cleanup_strv_free_ char **l = NULL;
        bool inverted;
        int r = split_words(value, &inverted, &l);
        if (r < 0)
                return r;
        if (inverted)
                return -EINVAL;
        STRV_FOREACH(w, l)
                if (!word_is_identifier(*w, "-"))
                        return -EINVAL;
        if (!m)
                return 0;
        r = unit_property_write_open(m, name, "as");
        if (r >= 0)
                r = write_strv(m, l);
        return r < 0 ? r : unit_property_write_close(m);
}

static int errno_from_name(const char *s) {
        for (int e = 1; e < 4096; e++) {
                const char *n = strerrorname_np(e);
                if (n && streq(n, s))
                        return e;
        }
        return -EINVAL;
}

static int conv_errno(const PropertyWriter *m, const char *name, const char *value) {
        int e = errno_from_name(value);
        if (e < 0) {
                int64_t v;
                if (parse_i64(value, &v) < 0 || v < 1 || v > 4095)
                        return -EINVAL;
                e = (int) v;
        }
        return m ? append_sv(m, name, "i", (int32_t) e) : 0;
}

static int conv_signal(const PropertyWriter *m, const char *name, const char *value) {
        const char *v = startswith(value, "SIG") ?: value;
        int sig = -1;
        for (int s = 1; s < NSIG; s++) {
                const char *n = sigabbrev_np(s);
                if (n && streq(n, v)) {
                        sig = s;
                        break;
                }
        }
        if (sig < 0) {
                int64_t n;
                if (parse_i64(value, &n) < 0 || n < 1 || n >= NSIG)
                        return -EINVAL;
                sig = (int) n;
        }
        return m ? append_sv(m, name, "i", (int32_t) sig) : 0;
}

static bool capability_is_valid(const char *w) {
        cap_value_t c;
        return cap_from_name(w, &c) >= 0;
}

/* The bounding set is always empty: a profile may name capabilities, which are checked, but
 * what is written is the empty set (systemd ORs a second non-empty assignment in; an empty
 * one empties the set). */
static int conv_caps(const PropertyWriter *m, const char *name, const char *value) {
        int r = check_words(value, capability_is_valid);
        if (r < 0 || !m)
                return r;
        return append_sv(m, name, "t", (uint64_t) 0);
}

static const UnitProperty properties[] = {
        /* resources */
        { "MemoryMax", conv_size, "a size (4G, 512M), a percentage or infinity", "memory" },
        { "MemoryHigh", conv_size, "a size (4G, 512M), a percentage or infinity", "memory" },
        { "MemoryLow", conv_size, "a size (4G, 512M), a percentage or infinity", "memory" },
        { "MemorySwapMax", conv_size, "a size (4G, 512M), a percentage or infinity", "memory" },
        { "TasksMax", conv_tasks, "a number, a percentage or infinity", "pids" },
        { "CPUQuota", conv_cpu_quota, "a percentage such as 200%", "cpu" },
        { "CPUWeight", conv_weight, "a number from 1 to 10000", "cpu" },
        { "IOWeight", conv_weight, "a number from 1 to 10000", "io" },
        { "LimitNOFILE", conv_u64, "a number or infinity" },
        { "LimitNPROC", conv_u64, "a number or infinity" },
        { "LimitCORE", conv_u64, "a number or infinity" },
        { "LimitFSIZE", conv_u64, "a number or infinity" },
        { "Nice", conv_nice, "a number from -20 to 19" },
        { "OOMScoreAdjust", conv_oom_score, "a number from -1000 to 1000" },
        { "RuntimeMaxSec", conv_usec, "a time span (30s, 5min) or infinity" },
        { "TimeoutStopSec", conv_usec, "a time span (30s, 5min) or infinity" },
        /* sandboxing */
        { "PrivateUsers", conv_forced_yes, "yes (always set by scudo)" },
        { "ProtectControlGroups", conv_forced_yes, "yes (always set by scudo)" },
        { "NoNewPrivileges", conv_forced_yes, "yes (always set by scudo)" },
        { "CapabilityBoundingSet", conv_caps, "capability names (the set is always empty)" },
        { "PrivateTmp", conv_bool, "a boolean" },
        { "PrivateDevices", conv_bool, "a boolean" },
        { "PrivatePIDs", conv_scudo_bool,
          "a boolean: a PID namespace and /proc of its own (scudo's; default yes)" },
        { "PrivateNetwork", conv_bool, "a boolean" },
        { "PrivateIPC", conv_bool, "a boolean" },
        { "PrivateMounts", conv_bool, "a boolean" },
        { "ProtectSystem", conv_protect_system, "yes, no, full or strict" },
        { "ProtectHome", conv_protect_home, "yes, no, read-only or tmpfs" },
        { "ProtectKernelTunables", conv_bool, "a boolean" },
        { "ProtectKernelModules", conv_bool, "a boolean" },
        { "ProtectKernelLogs", conv_bool, "a boolean" },
        { "ProtectClock", conv_bool, "a boolean" },
        { "ProtectHostname", conv_bool, "a boolean" },
        { "ProtectProc", conv_protect_proc, "noaccess, invisible, ptraceable or default" },
        { "ProcSubset", conv_proc_subset, "all or pid" },
        { "RestrictRealtime", conv_bool, "a boolean" },
        { "RestrictSUIDSGID", conv_bool, "a boolean" },
        { "LockPersonality", conv_bool, "a boolean" },
        { "MemoryDenyWriteExecute", conv_bool, "a boolean" },
        { "SystemCallFilter", conv_syscall_filter, "system call names or @groups, ~ to deny" },
        { "SystemCallErrorNumber", conv_errno, "an errno name such as EPERM" },
        { "SystemCallArchitectures", conv_architectures, "architecture names such as native" },
        { "RestrictAddressFamilies", conv_address_families,
          "address families such as AF_UNIX (none is not supported), ~ to deny" },
        { "UMask", conv_umask, "an octal mode such as 0077" },
        { "KeyringMode", conv_keyring_mode, "inherit, private or shared" },
        { "KillMode", conv_kill_mode, "control-group, mixed or process" },
        { "KillSignal", conv_signal, "a signal name such as SIGTERM" },
        { "SendSIGHUP", conv_bool, "a boolean" },
        { "Description", conv_description, "one line of text" },
};

static const UnitProperty *find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (streq(properties[i].name, name))
                        return &properties[i];
        return NULL;
}

const char *unit_property_suggest(const char *name) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX;
        for (size_t i = 0; i < ELEMENTSOF(properties); i++) {
                size_t d = edit_distance(name, strlen(name), properties[i].name, strlen(properties[i].name),
                                         true);
                if (d < best_d) {
                        best_d = d;
                        best = properties[i].name;
                }
        }
        return best_d <= MAX(2u, strlen(name) / 3) ? best : NULL;
}

int unit_property_check(const char *name, const char *value, char **ret_error) {
        const UnitProperty *p = find(name);
        int r;

        if (!p) {
                const char *s = unit_property_suggest(name);
                if (ret_error) {
                        if (s)
                                r = asprintf(ret_error, "unknown unit property '%s' (did you mean '%s'?)",
                                             name, s);
                        else
                                r = asprintf(ret_error, "unknown or unsupported unit property '%s' "
                                             "(see 'scudo explain --list-properties')", name);
                        if (r < 0)
                                *ret_error = NULL;
                }
                return -ENOENT;
        }
        r = p->convert(NULL, name, value);
        if (r == -EINVAL && ret_error) {
                if (asprintf(ret_error, "bad value '%s' for unit property %s: expected %s",
                             value, name, p->expects) < 0)
                        *ret_error = NULL;
        }
        return r;
}

const char *unit_property_name_at(size_t i) {
        return i < ELEMENTSOF(properties) ? properties[i].name : NULL;
}

const char *unit_property_controller(const char *name) {
        const UnitProperty *p = find(name);
        return p ? p->controller : NULL;
}

int unit_property_write(const PropertyWriter *m, const char *name, const char *value) {
        const UnitProperty *p = find(name);
        if (!p)
                return -ENOENT;
        return p->convert(m, name, value);
}

/* The sandbox itself, on every unit, after whatever the profiles set. PrivateUsers=yes must
 * be explicit: without it the user manager silently skips every mount option.
 * ProtectControlGroups=yes keeps the command from moving itself out of its cgroup (and out of
 * its network rules). */
const char *const unit_fixed_properties[] = {
        "PrivateUsers=yes",
        "ProtectControlGroups=yes",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=",
        NULL,
};

int unit_fixed_properties_write(const PropertyWriter *w) {
        for (const char *const *f = unit_fixed_properties; *f; f++) {
                char name[64];
                const char *eq = strchr(*f, '=');
                (void) snprintf(name, sizeof(name), "%.*s", (int) (eq - *f), *f);
                int r = unit_property_write(w, name, eq + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

void unit_property_dump(FILE *f) {
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                fprintf(f, "%-24s %s\n", properties[i].name, properties[i].expects);
}
