/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bpfd/file-report.h"
#include "bpfd/protocol-parse.h"
#include "util/macro.h"

/* The hash the program computes of a canonical absolute path (scudo-files.h). */
uint64_t file_prefix_hash(const char *path) {
        uint64_t h = FILE_HASH_ROOT;

        for (const char *p = path; *p; ) {
                uint64_t c = FILE_HASH_COMPONENT;
                size_t n = 0;

                while (*p == '/')
                        p++;
                for (; *p && *p != '/'; p++, n++)
                        c = file_hash_byte(c, (unsigned char) *p);
                if (n == 0 || (n == 1 && p[-1] == '.'))
                        continue;
                h = file_hash_chain(h, c);
        }
        return h;
}

#if HAVE_FILES_SKEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scudo-files.skel.h"

struct FileReporter {
        struct scudo_files *skel;
        struct ring_buffer *rb;
        struct bpf_link *link;          /* while n_watched > 0 */
        unsigned n_watched;
        FileEventCallback cb;
        void *userdata;
};

static int on_sample(void *ctx, void *data, size_t size) {
        FileReporter *f = ctx;
        struct file_event e;

        if (size < sizeof(e))
                return 0;
        memcpy(&e, data, sizeof(e));
        e.path[sizeof(e.path) - 1] = 0;
        e.comm[sizeof(e.comm) - 1] = 0;
        return f->cb(&e, f->userdata);
}

int file_reporter_new(FileEventCallback cb, void *userdata, FileReporter **ret) {
        _cleanup_free_ FileReporter *f = NULL;
        struct stat st;
        int k;

        f = calloc(1, sizeof(FileReporter));
        if (!f)
                return -ENOMEM;
        f->cb = cb;
        f->userdata = userdata;
        f->skel = scudo_files__open();
        if (!f->skel)
                return negative_errno();
        if (stat("/proc/self/ns/pid", &st) >= 0) {
                f->skel->rodata->pidns_dev = (uint64_t) st.st_dev;
                f->skel->rodata->pidns_ino = (uint64_t) st.st_ino;
        }
        k = scudo_files__load(f->skel);
        if (k < 0) {
                scudo_files__destroy(f->skel);
                return k;
        }
        f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.file_events), on_sample, f, NULL);
        if (!f->rb) {
                k = negative_errno();
                scudo_files__destroy(f->skel);
                return k;
        }
        *ret = TAKE_PTR(f);
        return 0;
}

FileReporter *file_reporter_free(FileReporter *f) {
        if (!f)
                return NULL;
        bpf_link__destroy(f->link);
        ring_buffer__free(f->rb);
        scudo_files__destroy(f->skel);
        free(f);
        return NULL;
}

typedef struct PrefixAdd {
        int fd;
        uint64_t sid;
} PrefixAdd;

/* Two prefixes of one hash (the same path twice, or a collision) can both be candidates. */
static int add_prefix(const BpfdFilePrefix *p, void *userdata) {
        PrefixAdd *a = userdata;
        struct file_prefix_key k = { .sid = a->sid };
        struct file_prefix v = { .self = p->self, .below = p->below, .flags = p->flags }, old;
        char path[sizeof(p->path) + 1];

        memcpy(path, p->path, sizeof(p->path));
        path[sizeof(p->path)] = 0;
        k.hash = file_prefix_hash(path);
        if (bpf_map_lookup_elem(a->fd, &k, &old) >= 0) {
                v.self |= old.self;
                v.below |= old.below;
                v.flags |= old.flags;
        }
        if (bpf_map_update_elem(a->fd, &k, &v, BPF_ANY) < 0)
                return negative_errno();
        return 0;
}

static void forget_prefixes(FileReporter *f, uint64_t sid) {
        int fd = bpf_map__fd(f->skel->maps.prefixes);
        struct file_prefix_key k, next;
        bool first = true;

        /* deleting the key the walk stands on restarts it; so delete behind it */
        for (;;) {
                if (bpf_map_get_next_key(fd, first ? NULL : &k, &next) < 0)
                        break;
                if (!first && k.sid == sid)
                        (void) bpf_map_delete_elem(fd, &k);
                k = next;
                first = false;
        }
        if (!first && k.sid == sid)
                (void) bpf_map_delete_elem(fd, &k);
}

static void forget_dirs(FileReporter *f, uint64_t sid) {
        int fd = bpf_map__fd(f->skel->maps.file_dirs);
        struct file_dir_key k, next;
        bool first = true;

        /* as forget_prefixes() */
        for (;;) {
                if (bpf_map_get_next_key(fd, first ? NULL : &k, &next) < 0)
                        break;
                if (!first && k.sid == sid)
                        (void) bpf_map_delete_elem(fd, &k);
                k = next;
                first = false;
        }
        if (!first && k.sid == sid)
                (void) bpf_map_delete_elem(fd, &k);
}

int file_reporter_written(FileReporter *f, uint64_t sid, BpfdWritten *ret,
                          BpfdDirId dirs[static BPFD_WRITTEN_MAX]) {
        int fd = bpf_map__fd(f->skel->maps.file_dirs);
        struct file_dir_key k, next;
        struct file_watch w;
        bool first = true;

        if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.watched), &sid, &w) < 0 || !w.record)
                return -ENODATA;
        ret->flags = w.unknown > 0 ? BPFD_WRITTEN_INCOMPLETE : 0;
        ret->n = 0;
        for (;;) {
                if (bpf_map_get_next_key(fd, first ? NULL : &k, &next) < 0)
                        break;
                k = next;
                first = false;
                if (k.sid != sid)
                        continue;
                if (ret->n == BPFD_WRITTEN_MAX) {
                        ret->flags |= BPFD_WRITTEN_INCOMPLETE;
                        break;
                }
                /* the kernel's dev_t (major << 20 | minor) as stat() gives it */
                dirs[ret->n++] = (BpfdDirId) {
                        .dev = makedev((unsigned) (k.dev >> 20), (unsigned) (k.dev & 0xfffff)),
                        .ino = k.ino,
                };
        }
        if (ret->flags & BPFD_WRITTEN_INCOMPLETE)
                ret->n = 0;
        return 0;
}

int file_reporter_watch(FileReporter *f, uint64_t sid, const void *prefixes, size_t prefixes_size,
                        bool record) {
        struct file_watch w = { .record = record };
        uint32_t cwd_mask = FILE_ALL_ERRORS;
        int k;

        if (prefixes) {
                PrefixAdd a = { .fd = bpf_map__fd(f->skel->maps.prefixes), .sid = sid };

                k = bpfd_parse_file_prefixes(prefixes, prefixes_size, add_prefix, &a, &cwd_mask, NULL);
                if (k < 0) {
                        forget_prefixes(f, sid);
                        return k;
                }
                w.filter = 1;
                w.cwd_mask = (uint8_t) cwd_mask;
        }
        if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.watched), &sid, &w, BPF_NOEXIST) < 0) {
                k = negative_errno();
                if (prefixes)
                        forget_prefixes(f, sid);
                return k;
        }
        if (!f->link) {
                f->link = bpf_program__attach(f->skel->progs.scudo_file_exit);
                if (!f->link) {
                        k = negative_errno();
                        (void) bpf_map_delete_elem(bpf_map__fd(f->skel->maps.watched), &sid);
                        forget_prefixes(f, sid);
                        return k;
                }
        }
        f->n_watched++;
        return 0;
}

void file_reporter_unwatch(FileReporter *f, uint64_t sid) {
        if (!f || bpf_map_delete_elem(bpf_map__fd(f->skel->maps.watched), &sid) < 0)
                return;
        forget_prefixes(f, sid);
        forget_dirs(f, sid);
        if (f->n_watched > 0 && --f->n_watched == 0) {
                /* what is still in the ring buffer is of cgroups that are gone */
                (void) ring_buffer__consume(f->rb);
                f->link = (bpf_link__destroy(f->link), NULL);
        }
}

int file_reporter_fd(FileReporter *f) {
        return ring_buffer__epoll_fd(f->rb);
}

int file_reporter_consume(FileReporter *f) {
        int k = ring_buffer__consume(f->rb);

        return k < 0 ? k : 0;
}

#else

int file_reporter_new(FileEventCallback cb, void *userdata, FileReporter **ret) {
        return -EOPNOTSUPP;
}

FileReporter *file_reporter_free(FileReporter *f) {
        return NULL;
}

int file_reporter_watch(FileReporter *f, uint64_t sid, const void *prefixes, size_t prefixes_size,
                        bool record) {
        return -EOPNOTSUPP;
}

int file_reporter_written(FileReporter *f, uint64_t sid, BpfdWritten *ret,
                          BpfdDirId dirs[static BPFD_WRITTEN_MAX]) {
        return -ENODATA;
}

void file_reporter_unwatch(FileReporter *f, uint64_t sid) {
}

int file_reporter_fd(FileReporter *f) {
        return -EBADF;
}

int file_reporter_consume(FileReporter *f) {
        return 0;
}

#endif
