/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The wire format between scudo (unprivileged) and scudo-bpfd (privileged).
 *
 * The transport is a SOCK_SEQPACKET unix socket, so message boundaries are kept and each
 * message is read whole. Every message starts with BpfdHeader; its `size` must equal the
 * number of bytes received. All integers are in host byte order (both ends are on one
 * machine), except addresses and where noted. The layouts are fixed and padding-free; the
 * helper checks every field of every message and trusts nothing the client says.
 *
 * A session:
 *   client → OPEN      cgroup path, DNS mode, number of rules that will follow
 *   client → RULES     0..n messages, each with up to BPFD_RULES_PER_MESSAGE rules
 *   client → FILE_PREFIXES  at most one, before COMMIT, in a session with BPFD_OPEN_FILES:
 *                      where the plan changes the file system view, so that the kernel sends
 *                      only the failed calls that can be refusals (without it: every one)
 *   client → COMMIT    apply: the helper fills the maps, attaches, and answers
 *   helper → REPLY     error 0 (enforcing) or a negative errno and a reason
 *   helper → EVENT     refusals in this sandbox, for as long as the connection is open
 *   helper → FILE_EVENT  refused file accesses, when OPEN asked for them (BPFD_OPEN_FILES)
 *   helper → FILE_LOST   just before a FILE_EVENT whose `dropped` is not 0: which share
 *                      dropped them
 *   client → USAGE     once, when the run is over and before its cgroup goes: which allow
 *                      rules were reached
 *   helper → USAGE_REPLY  the answer (events sent before it come before it)
 *   client → WRITTEN   in a session with BPFD_OPEN_RECORD, when the command is over and before
 *                      its cgroup goes: where the sandbox wrote (any number of times)
 *   helper → WRITTEN_REPLY  the answer
 *
 * Any other order, a second OPEN or a second USAGE ends the connection with an error REPLY. */

#include <assert.h>
#include <stdint.h>

#define BPFD_MAGIC UINT32_C(0x44424353) /* "SCBD" in memory on little-endian */
#define BPFD_VERSION 1

#define BPFD_MESSAGE_MAX (64U * 1024U)
#define BPFD_CGROUP_PATH_MAX 512U
#define BPFD_RULES_MAX 100000U
#define BPFD_RULES_PER_MESSAGE 1024U
#define BPFD_NAME_MAX 253U              /* a DNS name in text form, without the final dot */
#define BPFD_REASON_MAX 256U

typedef enum BpfdMessageType {
        BPFD_MSG_OPEN = 1,
        BPFD_MSG_RULES = 2,
        BPFD_MSG_COMMIT = 3,
        BPFD_MSG_USAGE = 4,
        BPFD_MSG_WRITTEN = 5,
        BPFD_MSG_REPLY = 16,
        BPFD_MSG_EVENT = 17,
        BPFD_MSG_FILE_EVENT = 18,
        BPFD_MSG_USAGE_REPLY = 19,
        BPFD_MSG_WRITTEN_REPLY = 20,
        BPFD_MSG_FILE_PREFIXES = 32,
        BPFD_MSG_FILE_LOST = 33,
} BpfdMessageType;

typedef struct BpfdHeader {
        uint32_t magic;
        uint16_t version;
        uint16_t type;                  /* BpfdMessageType */
        uint32_t size;                  /* whole message, header included */
        uint32_t reserved;              /* 0 */
} BpfdHeader;
static_assert(sizeof(BpfdHeader) == 16, "BpfdHeader layout");

typedef enum BpfdDns {
        BPFD_DNS_FILTERED = 1,          /* port 53 goes to the helper's filtering proxy */
        BPFD_DNS_OPEN = 2,              /* port 53 to the system's resolvers is allowed as is */
} BpfdDns;

/* OPEN flags. Without BPFD_OPEN_NO_NETWORK the cgroup gets the network rules that follow
 * (possibly none: then nothing may be reached). With it, `dns` and `n_rules` must be 0 and no
 * network program is attached: the session is only for what the other flags ask. */
#define BPFD_OPEN_FILES         (1U << 0)       /* report refused file accesses in the cgroup */
#define BPFD_OPEN_NO_NETWORK    (1U << 1)
#define BPFD_OPEN_RECORD        (1U << 2)       /* with FILES: record where the cgroup writes */
#define BPFD_OPEN_FLAGS_ALL     (BPFD_OPEN_FILES | BPFD_OPEN_NO_NETWORK | BPFD_OPEN_RECORD)

typedef struct BpfdOpen {
        BpfdHeader header;
        uint32_t dns;                   /* BpfdDns; 0 with BPFD_OPEN_NO_NETWORK */
        uint32_t flags;                 /* BPFD_OPEN_* */
        uint32_t n_rules;               /* rules in the RULES messages that follow */
        uint32_t path_len;              /* strlen(path), < BPFD_CGROUP_PATH_MAX */
        char path[BPFD_CGROUP_PATH_MAX];/* NUL-terminated, NUL-padded cgroup path */
} BpfdOpen;
static_assert(sizeof(BpfdOpen) == 16 + 16 + 512, "BpfdOpen layout");

typedef enum BpfdAction {
        BPFD_ACTION_ALLOW = 1,
        BPFD_ACTION_DENY = 2,
} BpfdAction;

typedef enum BpfdRuleKind {
        BPFD_RULE_ADDRESS = 1,          /* addr/prefixlen, in the 128-bit space (IPv4 v4-mapped) */
        BPFD_RULE_HOST = 2,             /* exactly the name */
        BPFD_RULE_DOMAIN = 3,           /* any name below the name ("*.name") */
} BpfdRuleKind;

typedef struct BpfdRule {
        uint8_t action;                 /* BpfdAction */
        uint8_t kind;                   /* BpfdRuleKind */
        uint8_t prefixlen;              /* ADDRESS: 0..128; bits past it must be 0. Else 0 */
        uint8_t flags;                  /* 0 */
        uint16_t port;                  /* 0 = any port */
        uint16_t name_len;              /* HOST/DOMAIN: strlen(name); else 0 */
        uint32_t name_offset;           /* HOST/DOMAIN: offset in the message's name area */
        uint32_t reserved;              /* 0 */
        uint8_t addr[16];               /* ADDRESS: network order; else all 0 */
} BpfdRule;
static_assert(sizeof(BpfdRule) == 32, "BpfdRule layout");

/* Followed by n_rules BpfdRule, then names_size bytes of NUL-terminated lower-case names. */
typedef struct BpfdRules {
        BpfdHeader header;
        uint32_t n_rules;
        uint32_t names_size;
} BpfdRules;
static_assert(sizeof(BpfdRules) == 24, "BpfdRules layout");

typedef struct BpfdReply {
        BpfdHeader header;
        int32_t error;                  /* 0 or a negative errno */
        uint32_t proxy4;                /* the sandbox's DNS proxy (IPv4, network order) or 0 */
        /* NUL-terminated. With an error, why. On success, empty, or what was asked for but
         * cannot be given and is no restriction (file reports on a kernel without the
         * tracepoint, or another architecture): the client says so and goes on. */
        char reason[BPFD_REASON_MAX];
} BpfdReply;
static_assert(sizeof(BpfdReply) == 16 + 8 + 256, "BpfdReply layout");

typedef enum BpfdEventKind {
        BPFD_EVENT_CONNECT = 1,         /* connect() refused */
        BPFD_EVENT_SENDMSG = 2,         /* a datagram to a refused address */
        BPFD_EVENT_SOCKET = 3,          /* a socket kind other than TCP/UDP refused */
        BPFD_EVENT_DNS = 4,             /* a name refused by the DNS filter */
        BPFD_EVENT_LOST = 5,            /* `count` events were dropped (rate limit or overflow) */
        BPFD_EVENT_INBOUND = 6,         /* a connection or datagram from the network refused */
} BpfdEventKind;

typedef struct BpfdEvent {
        BpfdHeader header;
        uint32_t kind;                  /* BpfdEventKind */
        uint32_t pid;                   /* 0 when unknown (DNS through the proxy) */
        uint8_t addr[16];               /* CONNECT/SENDMSG/INBOUND: network order, IPv4 v4-mapped */
        uint16_t port;
        uint8_t protocol;               /* IPPROTO_* */
        uint8_t family;                 /* AF_INET/AF_INET6 of the socket */
        uint32_t sock_type;             /* SOCKET: SOCK_* */
        uint16_t qtype;                 /* DNS: the query type */
        uint16_t reserved;
        uint32_t count;                 /* LOST */
        char comm[16];                  /* NUL-terminated; may be empty */
        char name[BPFD_NAME_MAX + 3];   /* DNS: NUL-terminated name */
} BpfdEvent;
static_assert(sizeof(BpfdEvent) == 16 + 8 + 16 + 4 + 4 + 4 + 4 + 16 + 256, "BpfdEvent layout");

#define BPFD_FILE_PATH_MAX 512U

/* A refused file access (BPFD_OPEN_FILES), as the kernel saw it: scudo decides outside
 * whether it was the sandbox's doing and which plan entry did it (src/report/file-judge.c). */
typedef struct BpfdFileEvent {
        BpfdHeader header;
        uint32_t nr;                    /* the system call, by its x86-64 number */
        uint32_t flags;                 /* open flags, access mode or AT_* flags, by call */
        int32_t error;                  /* negative errno: ENOENT, EACCES, EPERM or EROFS */
        uint32_t pid;                   /* in the helper's pid namespace */
        int32_t dirfd;                  /* what a relative path is relative to (AT_FDCWD) */
        uint32_t dropped;               /* refusals of this sandbox not sent before this one */
        char comm[16];                  /* NUL-terminated */
        char path[BPFD_FILE_PATH_MAX];  /* NUL-terminated, as the process named it */
} BpfdFileEvent;
static_assert(sizeof(BpfdFileEvent) == 16 + 24 + 16 + 512, "BpfdFileEvent layout");

/* The answer to USAGE: which of the session's allow rules something in the sandbox used.
 * Bit i (reached[i / 8] & (1 << i % 8)) is rule i in the order the RULES messages sent them.
 * An address rule counts once a connection, datagram or incoming packet it covers was judged
 * by it (of several rules that cover an address, the most specific one); a name rule once an
 * answer for a name it covers came back to the sandbox, through the proxy or the fast path.
 * Deny rules and bits from n_rules on are always 0. With an error (the helper no longer knows
 * the sandbox), every bit is 0. */
typedef struct BpfdUsage {
        BpfdHeader header;
        int32_t error;                  /* 0 or a negative errno */
        uint32_t n_rules;               /* as in OPEN */
        uint8_t reached[BPFD_RULES_MAX / 8];
} BpfdUsage;
static_assert(BPFD_RULES_MAX % 8 == 0, "a bit for every rule");
static_assert(sizeof(BpfdUsage) == 16 + 8 + BPFD_RULES_MAX / 8, "BpfdUsage layout");
static_assert(sizeof(BpfdUsage) <= BPFD_MESSAGE_MAX, "BpfdUsage in one message");

/* Which failed calls can be refusals (FILE_PREFIXES), as masks of these errors. */
#define BPFD_FILE_ENOENT        (1U << 0)
#define BPFD_FILE_EACCES        (1U << 1)       /* EACCES and EPERM */
#define BPFD_FILE_EROFS         (1U << 2)
#define BPFD_FILE_WRITE_ERRORS  (BPFD_FILE_EACCES | BPFD_FILE_EROFS)
#define BPFD_FILE_ALL_ERRORS    (BPFD_FILE_ENOENT | BPFD_FILE_EACCES | BPFD_FILE_EROFS)

/* Prefix flags: a `.git` component below the prefix makes write errors candidates. */
#define BPFD_FILE_PREFIX_GIT    (1U << 0)

#define BPFD_FILE_PREFIXES_MAX 255U
#define BPFD_FILE_PREFIX_PATH_MAX 248U

/* One path where the plan changes the view. A failed call on an absolute path is a candidate
 * when its error is in `self` of the deepest prefix at or above the path (components compared
 * whole, "." skipped, ".." going back one). `below` is the union of `self`
 * (and of the write errors of a GIT prefix) of every prefix below this one: what a relative
 * path from a working directory here can reach. */
typedef struct BpfdFilePrefix {
        uint8_t self;                   /* BPFD_FILE_* */
        uint8_t below;                  /* BPFD_FILE_* */
        uint8_t flags;                  /* BPFD_FILE_PREFIX_* */
        uint8_t reserved;               /* 0 */
        uint32_t path_len;              /* strlen(path), 1 .. BPFD_FILE_PREFIX_PATH_MAX - 1 */
        char path[BPFD_FILE_PREFIX_PATH_MAX]; /* absolute, canonical, NUL-padded */
} BpfdFilePrefix;
static_assert(sizeof(BpfdFilePrefix) == 256, "BpfdFilePrefix layout");

/* Followed by n BpfdFilePrefix. The root "/" should be among them. */
typedef struct BpfdFilePrefixes {
        BpfdHeader header;
        uint32_t n;                     /* 1 .. BPFD_FILE_PREFIXES_MAX */
        uint32_t cwd_mask;              /* BPFD_FILE_*: candidates for a relative path from the
                                         * directory the command starts in */
} BpfdFilePrefixes;
static_assert(sizeof(BpfdFilePrefixes) == 24, "BpfdFilePrefixes layout");
static_assert(sizeof(BpfdFilePrefixes) + BPFD_FILE_PREFIXES_MAX * sizeof(BpfdFilePrefix) <= BPFD_MESSAGE_MAX,
              "BpfdFilePrefixes in one message");

/* Candidate refusals dropped before the FILE_EVENT that follows, by the share exceeded. */
typedef struct BpfdFileLost {
        BpfdHeader header;
        uint32_t sandbox;               /* this sandbox's share in the kernel */
        uint32_t ring;                  /* the ring buffer all sandboxes share was full */
        uint32_t helper;                /* this sandbox's share of the helper's sending */
        uint32_t reserved;
} BpfdFileLost;
static_assert(sizeof(BpfdFileLost) == 32, "BpfdFileLost layout");

/* The answer to WRITTEN: the directories in which something in the sandbox made, renamed,
 * linked or changed an entry or opened a file for writing, each with every directory above
 * it (bpf/scudo-files.h, the write record). Incomplete (BPFD_WRITTEN_INCOMPLETE) when a call
 * changed something the record cannot place, or the record was full: then it says nothing,
 * and the check must look everywhere. With an error (no record kept for this sandbox: a
 * helper without it, or the cgroup gone) `n` is 0. Followed by n BpfdDirId. */
#define BPFD_WRITTEN_MAX 4000U
#define BPFD_WRITTEN_INCOMPLETE (1U << 0)

typedef struct BpfdDirId {
        uint64_t dev;                   /* st_dev, as stat() gives it */
        uint64_t ino;
} BpfdDirId;
static_assert(sizeof(BpfdDirId) == 16, "BpfdDirId layout");

typedef struct BpfdWritten {
        BpfdHeader header;
        int32_t error;                  /* 0 or a negative errno */
        uint32_t flags;                 /* BPFD_WRITTEN_* */
        uint32_t n;                     /* 0 .. BPFD_WRITTEN_MAX */
        uint32_t reserved;              /* 0 */
} BpfdWritten;
static_assert(sizeof(BpfdWritten) == 32, "BpfdWritten layout");
static_assert(sizeof(BpfdWritten) + BPFD_WRITTEN_MAX * sizeof(BpfdDirId) <= BPFD_MESSAGE_MAX,
              "BpfdWritten in one message");
