/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo-bpfd's file refusal reporter keeps a watch's prefixes in the kernel's map
 * (src/bpfd/file-report.c): all of them stored at once, a path given twice merged into one
 * entry, the ancestors of each that are no prefix stored as interior entries, and on unwatch
 * exactly its own entries gone, another watch's left. Loads the program
 * and attaches it for a moment; skipped without the privileges to. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "bpfd/file-report.h"
#include "net/protocol.h"
#include "tap.h"

static int ignore(const struct file_event *e, void *userdata) {
        return 0;
}

/* A FILE_PREFIXES message of these paths, each with every error. */
static void *prefixes(const char *const *paths, size_t n, size_t *ret_size) {
        size_t size = sizeof(BpfdFilePrefixes) + n * sizeof(BpfdFilePrefix);
        BpfdFilePrefixes *m = calloc(1, size);
        BpfdFilePrefix *p = (BpfdFilePrefix *) (m + 1);

        if (!m)
                abort();
        *m = (BpfdFilePrefixes) {
                .header = { .magic = BPFD_MAGIC, .version = BPFD_VERSION, .type = BPFD_MSG_FILE_PREFIXES,
                            .size = (uint32_t) size },
                .n = (uint32_t) n,
                .cwd_mask = BPFD_FILE_ALL_ERRORS,
        };
        for (size_t i = 0; i < n; i++) {
                p[i].self = BPFD_FILE_ALL_ERRORS;
                p[i].path_len = (uint32_t) strlen(paths[i]);
                memcpy(p[i].path, paths[i], p[i].path_len);
        }
        *ret_size = size;
        return m;
}

/* The entries of `sid` in the prefixes map; with `path`, whether its entry is there (1/0). */
static int count(FileReporter *f, uint64_t sid, const char *path) {
        int fd = file_reporter_prefixes_fd(f);
        struct file_prefix_key k, next;
        int n = 0, found = 0;
        bool first = true;

        while (bpf_map_get_next_key(fd, first ? NULL : &k, &next) >= 0) {
                k = next;
                first = false;
                n += k.sid == sid;
                found |= path && k.sid == sid && k.hash == file_prefix_hash(path);
        }
        return path ? found : n;
}

/* Whether the entry of `path` is there as an interior one (1), as a prefix (0), or not (-1). */
static int interior(FileReporter *f, uint64_t sid, const char *path) {
        struct file_prefix_key k = { .sid = sid, .hash = file_prefix_hash(path) };
        struct file_prefix v;

        if (bpf_map_lookup_elem(file_reporter_prefixes_fd(f), &k, &v) < 0)
                return -1;
        return !!(v.flags & FILE_PREFIX_INTERIOR);
}

int main(void) {
        static const char *const a[] = { "/", "/home/dev/.ssh", "/etc", "/home/dev/.ssh", "/tmp", "/home" };
        static const char *const b[] = { "/", "/srv" };
        FileReporter *f = NULL;
        size_t sa, sb;
        void *ma = prefixes(a, 6, &sa), *mb = prefixes(b, 2, &sb);
        int k;

        k = file_reporter_new(ignore, NULL, &f);
        if (k < 0) {
                printf("1..0 # SKIP cannot load the file reporter here (%s)\n", strerror(-k));
                free(ma);
                free(mb);
                return 0;
        }
        TAP_CHECK(file_prefix_hash("/") == FILE_HASH_ROOT &&
                  file_prefix_hash("/a/./b") == file_prefix_hash("/a/b") &&
                  file_prefix_hash("//a//b/") == file_prefix_hash("/a/b"),
                  "a path's hash: empty and \".\" components skipped");
        TAP_CHECK(file_prefix_hash("/a/b") != file_prefix_hash("/a/c") &&
                  file_prefix_hash("/ab") != file_prefix_hash("/a/b") &&
                  file_prefix_hash("/a/..") != file_prefix_hash("/"),
                  "a path's hash: other components, other hashes (\"..\" is the program's to follow)");
        TAP_CHECK(file_reporter_watch(f, 1001, ma, sa, false) >= 0, "a watch with prefixes");
        TAP_CHECK(count(f, 1001, NULL) == 6, "its prefixes and /home/dev stored, a path given twice once");
        TAP_CHECK(count(f, 1001, "/home/dev/.ssh") == 1, "a prefix found by the program's hash");
        TAP_CHECK(interior(f, 1001, "/home/dev") == 1 && interior(f, 1001, "/home/dev/.ssh") == 0,
                  "an ancestor that is no prefix is an interior entry");
        TAP_CHECK(interior(f, 1001, "/home") == 0 && interior(f, 1001, "/") == 0,
                  "an ancestor given as a prefix too is a prefix, before it or after");
        TAP_CHECK(interior(f, 1001, "/home/dev/.ssh/x") == -1 && interior(f, 1001, "/usr") == -1,
                  "nothing below a prefix or beside it");
        TAP_CHECK(file_reporter_watch(f, 1002, mb, sb, false) >= 0, "a second watch");
        TAP_CHECK(file_reporter_watch(f, 1001, mb, sb, false) == -EEXIST,
                  "a cgroup watched already is refused");
        TAP_CHECK(count(f, 1001, NULL) == 6 && count(f, 1001, "/srv") == 0,
                  "the refused watch left the first one's prefixes as they were");
        file_reporter_unwatch(f, 1001);
        TAP_CHECK(count(f, 1001, NULL) == 0, "unwatched: its prefixes gone");
        TAP_CHECK(count(f, 1002, NULL) == 2, "the other watch's prefixes kept");
        file_reporter_unwatch(f, 1002);
        TAP_CHECK(count(f, 1002, NULL) == 0, "the last one's gone too");
        file_reporter_free(f);
        free(ma);
        free(mb);
        return tap_done();
}
