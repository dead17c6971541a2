/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bpfd/file-report.h"
#include "bpfd/protocol-parse.h"
#include "util/macro.h"

/* The hash of the next component of a canonical path at *p, empty and "." ones skipped, and
 * *p moved past it; false at the end. */
static bool next_component(const char **p, uint64_t *ret) {
        const char *s = *p;

        for (;;) {
                uint64_t c = FILE_HASH_COMPONENT;
                size_t n = 0;

                while (*s == '/')
                        s++;
                if (!*s) {
                        *p = s;
                        return false;
                }
                for (; *s && *s != '/'; s++, n++)
                        c = file_hash_byte(c, (unsigned char) *s);
                if (n == 1 && s[-1] == '.')
                        continue;
                *p = s;
                *ret = c;
                return true;
        }
}

/* The hash the program computes of a canonical absolute path (scudo-files.h). */
uint64_t file_prefix_hash(const char *path) {
        uint64_t h = FILE_HASH_ROOT, c;

        for (const char *p = path; next_component(&p, &c);)
                h = file_hash_chain(h, c);
        return h;
}

#if HAVE_FILES_SKEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scudo-files.skel.h"

/* The programs on the time stamps' trace points that place a path with "/" in the write
 * record (scudo-files.bpf.c). Without them (before Linux 6.13) such a path makes the record
 * incomplete: the check then walks everything. */
#define STAMPS 3

static struct bpf_program *stamp_program(struct scudo_files *skel, size_t i) {
        struct bpf_program *progs[STAMPS] = {
                skel->progs.scudo_stamp_set, skel->progs.scudo_stamp_skip, skel->progs.scudo_stamp_xchg,
        };

        return progs[i];
}

static int open_and_load(const struct stat *pidns, bool stamps, struct scudo_files **ret) {
        struct scudo_files *skel = scudo_files__open();
        int k;

        if (!skel)
                return negative_errno();
        if (pidns) {
                skel->rodata->pidns_dev = (uint64_t) pidns->st_dev;
                skel->rodata->pidns_ino = (uint64_t) pidns->st_ino;
        }
        for (size_t i = 0; !stamps && i < STAMPS; i++)
                (void) bpf_program__set_autoload(stamp_program(skel, i), false);
        k = scudo_files__load(skel);
        if (k < 0) {
                scudo_files__destroy(skel);
                return k;
        }
        *ret = skel;
        return 0;
}

/* The kernel's "not supported" (ENOTSUPP), which is no errno of user space. */
#define ENOTSUPP_KERNEL 524

/* The prefix keys one watch stored, so that they go without a walk over the whole map. */
typedef struct FileWatch {
        struct FileWatch *next;
        uint64_t sid;
        uint32_t n_keys;
        struct file_prefix_key keys[];
} FileWatch;

struct FileReporter {
        struct scudo_files *skel;
        struct ring_buffer *rb;
        struct bpf_link *link;          /* while n_watched > 0 */
        struct bpf_link *stamps[STAMPS]; /* the same, those that attached */
        bool with_stamps;               /* they loaded */
        unsigned n_watched;
        FileWatch *watches;             /* those with prefixes */
        uint16_t bit_users[FILE_WATCH_BITS];    /* watches of each bit of watched_bits */
        FileEventCallback cb;
        void *userdata;
};

static void detach_stamps(FileReporter *f) {
        for (size_t i = 0; i < STAMPS; i++)
                f->stamps[i] = (bpf_link__destroy(f->stamps[i]), NULL);
}

/* One that does not attach leaves its calls with "/" unplaced: `unknown`, never less. */
static void attach_stamps(FileReporter *f) {
        for (size_t i = 0; f->with_stamps && i < STAMPS; i++)
                f->stamps[i] = bpf_program__attach(stamp_program(f->skel, i));
}

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
        bool have_ns;
        int k;

        f = calloc(1, sizeof(FileReporter));
        if (!f)
                return -ENOMEM;
        f->cb = cb;
        f->userdata = userdata;
        have_ns = stat("/proc/self/ns/pid", &st) >= 0;
        f->with_stamps = true;
        k = open_and_load(have_ns ? &st : NULL, true, &f->skel);
        if (k < 0) {
                f->with_stamps = false;
                k = open_and_load(have_ns ? &st : NULL, false, &f->skel);
        }
        if (k < 0)
                return k;
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
        while (f->watches) {
                FileWatch *w = f->watches;

                f->watches = w->next;
                free(w);
        }
        bpf_link__destroy(f->link);
        detach_stamps(f);
        ring_buffer__free(f->rb);
        scudo_files__destroy(f->skel);
        free(f);
        return NULL;
}

/* The ancestors of a watch's prefixes (the root among them) that are no prefix themselves go
 * in the map too, marked FILE_PREFIX_INTERIOR: then a path the program does not find there has
 * no prefix below it, and its walk can end (file_watch.tree). At most this many a watch; a
 * watch with more has none of them stored, and the program walks each path whole. */
#define FILE_INTERIOR_MAX 1024U

/* One watch's prefixes as the map takes them: the keys each once, in one batch. */
typedef struct PrefixBatch {
        uint64_t sid;
        uint32_t n;
        uint32_t n_interior;
        bool tree;
        struct file_prefix_key keys[BPFD_FILE_PREFIXES_MAX + FILE_INTERIOR_MAX];
        struct file_prefix values[BPFD_FILE_PREFIXES_MAX + FILE_INTERIOR_MAX];
} PrefixBatch;

static int batch_find(const PrefixBatch *b, uint64_t hash) {
        for (uint32_t i = 0; i < b->n; i++)
                if (b->keys[i].hash == hash)
                        return (int) i;
        return -1;
}

/* Two prefixes of one hash (the same path twice, or a collision) can both be candidates; a
 * prefix whose path was an ancestor of one before is no longer interior. */
static int batch_add_prefix(PrefixBatch *b, uint64_t hash, struct file_prefix v) {
        int i = batch_find(b, hash);

        if (i >= 0) {
                if (b->values[i].flags & FILE_PREFIX_INTERIOR) {
                        b->values[i] = v;
                        b->n_interior--;
                        return 0;
                }
                b->values[i].self |= v.self;
                b->values[i].below |= v.below;
                b->values[i].flags |= v.flags;
                return 0;
        }
        if (b->n >= ELEMENTSOF(b->keys))
                return -E2BIG;
        b->keys[b->n] = (struct file_prefix_key) { .sid = b->sid, .hash = hash };
        b->values[b->n] = v;
        b->n++;
        return 0;
}

static void batch_add_interior(PrefixBatch *b, uint64_t hash) {
        if (!b->tree || batch_find(b, hash) >= 0)
                return;
        if (b->n_interior >= FILE_INTERIOR_MAX || b->n >= ELEMENTSOF(b->keys)) {
                b->tree = false;
                return;
        }
        b->keys[b->n] = (struct file_prefix_key) { .sid = b->sid, .hash = hash };
        b->values[b->n] = (struct file_prefix) { .flags = FILE_PREFIX_INTERIOR };
        b->n++;
        b->n_interior++;
}

static int collect_prefix(const BpfdFilePrefix *p, void *userdata) {
        PrefixBatch *b = userdata;
        struct file_prefix v = { .self = p->self, .below = p->below, .flags = p->flags };
        char path[sizeof(p->path) + 1];
        uint64_t h = FILE_HASH_ROOT, component;

        memcpy(path, p->path, sizeof(p->path));
        path[sizeof(p->path)] = 0;
        /* each ancestor on the way, as file_prefix_hash() chains them */
        for (const char *c = path; next_component(&c, &component);) {
                batch_add_interior(b, h);
                h = file_hash_chain(h, component);
        }
        return batch_add_prefix(b, h, v);
}

static void delete_keys(int fd, const struct file_prefix_key *keys, uint32_t n) {
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        uint32_t done = n;

        if (n == 0)
                return;
        /* the batch stops at a key that is not there; the rest then go one by one */
        if (bpf_map_delete_batch(fd, keys, &done, &opts) >= 0)
                return;
        for (uint32_t i = done < n ? done : 0; i < n; i++)
                (void) bpf_map_delete_elem(fd, &keys[i]);
}

/* One system call for all of them: the watch is set up while scudo waits. */
static int store_keys(int fd, const PrefixBatch *b) {
        LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
        uint32_t done = b->n;
        int k;

        k = bpf_map_update_batch(fd, b->keys, b->values, &done, &opts);
        if (k >= 0)
                return 0;
        if (k != -EINVAL && k != -EOPNOTSUPP && k != -ENOTSUPP_KERNEL) {
                delete_keys(fd, b->keys, b->n);
                return k;
        }
        /* a kernel without batches (before 5.6) */
        for (uint32_t i = 0; i < b->n; i++)
                if (bpf_map_update_elem(fd, &b->keys[i], &b->values[i], BPF_ANY) < 0) {
                        k = negative_errno();
                        delete_keys(fd, b->keys, i);
                        return k;
                }
        return 0;
}

static int add_prefixes(FileReporter *f, uint64_t sid, const void *prefixes, size_t size,
                        uint32_t *ret_cwd_mask, bool *ret_tree) {
        _cleanup_free_ PrefixBatch *b = NULL;
        FileWatch *w;
        int k;

        b = calloc(1, sizeof(PrefixBatch));
        if (!b)
                return -ENOMEM;
        b->sid = sid;
        b->tree = true;
        k = bpfd_parse_file_prefixes(prefixes, size, collect_prefix, b, ret_cwd_mask, NULL);
        if (k < 0)
                return k;
        /* interior entries stored from a watch past the limit only cost their room */
        *ret_tree = b->tree;
        w = malloc(sizeof(FileWatch) + b->n * sizeof(struct file_prefix_key));
        if (!w)
                return -ENOMEM;
        w->sid = sid;
        w->n_keys = b->n;
        memcpy(w->keys, b->keys, b->n * sizeof(struct file_prefix_key));
        k = store_keys(bpf_map__fd(f->skel->maps.prefixes), b);
        if (k < 0) {
                free(w);
                return k;
        }
        w->next = f->watches;
        f->watches = w;
        return 0;
}

static void forget_prefixes(FileReporter *f, uint64_t sid) {
        for (FileWatch **p = &f->watches; *p; p = &(*p)->next)
                if ((*p)->sid == sid) {
                        FileWatch *w = *p;

                        *p = w->next;
                        delete_keys(bpf_map__fd(f->skel->maps.prefixes), w->keys, w->n_keys);
                        free(w);
                        return;
                }
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

/* The program's filter bit of a watched cgroup: set before its watch goes in, cleared after
 * the last watch of the bit went (bit_users counts them; FILE_WATCH_MAX is far below 65536). */
static void watch_bit(FileReporter *f, uint64_t sid, bool on) {
        uint64_t b = sid % FILE_WATCH_BITS, mask = UINT64_C(1) << (b % 64);
        __u64 *word = &f->skel->bss->watched_bits[b / 64];

        if (on && f->bit_users[b]++ == 0)
                (void) __atomic_fetch_or(word, (__u64) mask, __ATOMIC_SEQ_CST);
        else if (!on && f->bit_users[b] > 0 && --f->bit_users[b] == 0)
                (void) __atomic_fetch_and(word, (__u64) ~mask, __ATOMIC_SEQ_CST);
}

int file_reporter_watch(FileReporter *f, uint64_t sid, const void *prefixes, size_t prefixes_size,
                        bool record) {
        struct file_watch w = { .record = record }, old;
        uint32_t cwd_mask = FILE_ALL_ERRORS;
        bool tree = false;
        int k;

        /* before the prefixes: those of the watch there already must stay as they are */
        if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.watched), &sid, &old) >= 0)
                return -EEXIST;
        if (prefixes) {
                k = add_prefixes(f, sid, prefixes, prefixes_size, &cwd_mask, &tree);
                if (k < 0)
                        return k;
                w.filter = 1;
                w.cwd_mask = (uint8_t) cwd_mask;
                w.tree = tree;
        }
        /* after its prefixes: the program never sees the watch without them */
        watch_bit(f, sid, true);
        if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.watched), &sid, &w, BPF_NOEXIST) < 0) {
                k = negative_errno();
                watch_bit(f, sid, false);
                forget_prefixes(f, sid);
                return k;
        }
        if (!f->link) {
                f->link = bpf_program__attach(f->skel->progs.scudo_file_exit);
                if (!f->link) {
                        k = negative_errno();
                        (void) bpf_map_delete_elem(bpf_map__fd(f->skel->maps.watched), &sid);
                        watch_bit(f, sid, false);
                        forget_prefixes(f, sid);
                        return k;
                }
                attach_stamps(f);
        }
        f->n_watched++;
        return 0;
}

void file_reporter_unwatch(FileReporter *f, uint64_t sid) {
        if (!f || bpf_map_delete_elem(bpf_map__fd(f->skel->maps.watched), &sid) < 0)
                return;
        watch_bit(f, sid, false);
        forget_prefixes(f, sid);
        forget_dirs(f, sid);
        if (f->n_watched > 0 && --f->n_watched == 0) {
                /* what is still in the ring buffer is of cgroups that are gone */
                (void) ring_buffer__consume(f->rb);
                f->link = (bpf_link__destroy(f->link), NULL);
                detach_stamps(f);
        }
}

int file_reporter_fd(FileReporter *f) {
        return ring_buffer__epoll_fd(f->rb);
}

int file_reporter_prefixes_fd(FileReporter *f) {
        return bpf_map__fd(f->skel->maps.prefixes);
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

int file_reporter_prefixes_fd(FileReporter *f) {
        return -EBADF;
}

int file_reporter_consume(FileReporter *f) {
        return 0;
}

#endif
