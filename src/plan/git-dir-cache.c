/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The cache of the project walk for git directories (git-dir-cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/git-dir-cache.h"
#include "util/file-util.h"
#include "util/path-util.h"

#define MAGIC "SCUDOGDC"

/* The file: this header, the project's path (root_len bytes, padded to 8), the records. */
typedef struct Header {
        char magic[8];
        uint32_t version;
        uint32_t root_len;
        uint64_t n_records;
        uint64_t size;          /* of the whole file */
        uint64_t checksum;      /* of what follows the header */
} Header;

struct GitDirCache {
        char *data;
        size_t size, n, mask;
        const GitDirRecord **table;     /* open addressing by (dev, ino) */
};

static size_t pad8(size_t n) {
        return (n + 7) & ~(size_t) 7;
}

/* Against a file cut short or changed by chance, not by intent (only the user's own writes it). */
#define CHECKSUM_START 0xcbf29ce484222325ULL
static uint64_t checksum(uint64_t h, const char *p, size_t n) {
        for (size_t i = 0; i + 8 <= n; i += 8) {
                uint64_t x;
                memcpy(&x, p + i, 8);
                h = (h ^ x) * 0x100000001b3ULL;
                h ^= h >> 29;
        }
        return h;
}

static uint64_t hash_key(uint64_t dev, uint64_t ino) {
        uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL;
        return h ^ (h >> 31);
}

/* The file's name: the project's path hashed (FNV-1a); the path itself is in the file. */
static char *cache_path(const char *dir, const char *root) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *c = root; *c; c++)
                h = (h ^ (unsigned char) *c) * 0x100000001b3ULL;
        char name[32];
        snprintf(name, sizeof(name), "%016llx", (unsigned long long) h);
        return path_join(dir, name);
}

/* Whether what fstat() says of a directory or file of the cache makes it the user's alone. */
static bool owned_and_closed(const struct stat *st) {
        return st->st_uid == getuid() && (st->st_mode & 022) == 0;
}

/* The records after the header and path: each within the file, names NUL-ended; indexed. */
static int index_records(GitDirCache *c, size_t at, uint64_t n) {
        if (n > c->size / sizeof(GitDirRecord))
                return -EBADMSG;
        size_t slots = 16;
        while (slots < 2 * n)
                slots *= 2;
        c->table = calloc(slots, sizeof(*c->table));
        if (!c->table)
                return -ENOMEM;
        c->mask = slots - 1;
        for (uint64_t i = 0; i < n; i++) {
                if (c->size - at < sizeof(GitDirRecord))
                        return -EBADMSG;
                const GitDirRecord *r = (const GitDirRecord *) (c->data + at);
                size_t len = r->names_len;
                if (r->kind > GIT_DIR_BARE + 1 || len > c->size - at - sizeof(GitDirRecord) ||
                    (len > 0 && git_dir_record_names(r)[len - 1] != 0))
                        return -EBADMSG;
                size_t names = 0;
                for (size_t k = 0; k < len; k += strlen(git_dir_record_names(r) + k) + 1)
                        names++;
                if (names != r->n_names)
                        return -EBADMSG;
                at += sizeof(GitDirRecord) + pad8(len);
                if (at > c->size)
                        return -EBADMSG;
                size_t s = hash_key(r->dev, r->ino) & c->mask;
                while (c->table[s])
                        s = (s + 1) & c->mask;
                c->table[s] = r;
        }
        c->n = n;
        return at == c->size ? 0 : -EBADMSG;
}

int git_dir_cache_load(const char *dir, const char *root, GitDirCache **ret) {
        *ret = NULL;
        _cleanup_free_ char *path = cache_path(dir, root);
        if (!path)
                return -ENOMEM;
        struct stat st;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || !owned_and_closed(&st))
                return -EPERM;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ELOOP ? -EPERM : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || !owned_and_closed(&st) || st.st_nlink != 1)
                return -EPERM;
        char *data = NULL;
        size_t size = 0;
        int r = read_regular_fd(fd, GIT_DIR_CACHE_MAX_SIZE, &data, &size);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        return git_dir_cache_parse(root, data, size, true, ret);
}

int git_dir_cache_parse(const char *root, char *data, size_t size, bool verify, GitDirCache **ret) {
        *ret = NULL;
        _cleanup_(git_dir_cache_freep) GitDirCache *c = calloc(1, sizeof(GitDirCache));
        if (!c) {
                free(data);
                return -ENOMEM;
        }
        c->data = data;
        c->size = size;
        Header h;
        size_t rl = strlen(root);
        if (c->size < sizeof(h))
                return -EBADMSG;
        memcpy(&h, c->data, sizeof(h));
        if (memcmp(h.magic, MAGIC, 8) != 0 || h.version != GIT_DIR_CACHE_VERSION || h.size != c->size ||
            h.root_len != rl || c->size - sizeof(h) < pad8(rl) ||
            memcmp(c->data + sizeof(h), root, rl) != 0 ||
            (verify && checksum(CHECKSUM_START, c->data + sizeof(h), c->size - sizeof(h)) != h.checksum))
                return -EBADMSG;
        int r = index_records(c, sizeof(h) + pad8(rl), h.n_records);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

GitDirCache *git_dir_cache_free(GitDirCache *c) {
        if (c) {
                free(c->table);
                free(c->data);
                free(c);
        }
        return NULL;
}

size_t git_dir_cache_count(const GitDirCache *c) {
        return c ? c->n : 0;
}

const GitDirRecord *git_dir_cache_lookup(const GitDirCache *c, const struct stat *st) {
        if (!c || !c->table)
                return NULL;
        for (size_t s = hash_key(st->st_dev, st->st_ino) & c->mask; c->table[s]; s = (s + 1) & c->mask) {
                const GitDirRecord *r = c->table[s];
                if (r->dev != (uint64_t) st->st_dev || r->ino != (uint64_t) st->st_ino)
                        continue;
                if (r->racy || r->ctime_sec != (int64_t) st->st_ctim.tv_sec ||
                    r->ctime_nsec != (uint32_t) st->st_ctim.tv_nsec)
                        return NULL;
                return r;
        }
        return NULL;
}

void git_dir_cache_writer_init(GitDirCacheWriter *w) {
        *w = (GitDirCacheWriter) {};
        (void) clock_gettime(CLOCK_REALTIME, &w->start);
}

void git_dir_cache_writer_done(GitDirCacheWriter *w) {
        free(w->buf);
        *w = (GitDirCacheWriter) {};
}

static int append(GitDirCacheWriter *w, const GitDirRecord *r, const char *names) {
        size_t need = sizeof(*r) + pad8(r->names_len);
        if (need > w->size - w->used) {
                size_t n = MAX(2 * w->size, w->used + need + 4096);
                char *m = realloc(w->buf, n);
                if (!m)
                        return -ENOMEM;
                w->buf = m;
                w->size = n;
        }
        memcpy(w->buf + w->used, r, sizeof(*r));
        if (r->names_len)
                memcpy(w->buf + w->used + sizeof(*r), names, r->names_len);
        memset(w->buf + w->used + sizeof(*r) + r->names_len, 0, pad8(r->names_len) - r->names_len);
        w->used += need;
        w->n++;
        return 0;
}

int git_dir_cache_add(GitDirCacheWriter *w, const struct stat *st, uint8_t kind, const char *names,
                      size_t len, size_t n) {
        if (len > UINT32_MAX || n > UINT32_MAX)
                return -ENOMEM;
        /* changed at or after RACY_SECONDS before the walk began (or in the future) */
        bool racy = st->st_ctim.tv_sec >= w->start.tv_sec - GIT_DIR_CACHE_RACY_SECONDS;
        GitDirRecord r = {
                .dev = st->st_dev, .ino = st->st_ino,
                .ctime_sec = st->st_ctim.tv_sec, .ctime_nsec = (uint32_t) st->st_ctim.tv_nsec,
                .kind = kind, .racy = racy, .names_len = (uint32_t) len, .n_names = (uint32_t) n,
        };
        return append(w, &r, names);
}

int git_dir_cache_add_record(GitDirCacheWriter *w, const GitDirRecord *r) {
        return append(w, r, git_dir_record_names(r));
}

/* `dir` made where missing (its parent too: /run/user/UID/scudo), and the user's alone. */
static int cache_dir_ready(const char *dir) {
        _cleanup_free_ char *parent = strdup(dir);
        if (!parent)
                return -ENOMEM;
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
                *slash = 0;
                if (mkdir(parent, 0700) < 0 && errno != EEXIST)
                        return -errno;
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        struct stat st;
        if (lstat(dir, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) && owned_and_closed(&st) ? 0 : -EPERM;
}

int git_dir_cache_save(const char *dir, const char *root, GitDirCacheWriter *w) {
        size_t rl = strlen(root);
        int r = cache_dir_ready(dir);
        if (r < 0)
                return r;
        _cleanup_free_ char *path = cache_path(dir, root);
        if (!path)
                return -ENOMEM;
        char head[sizeof(Header) + PATH_MAX + 8] = {};
        if (rl > PATH_MAX)
                return -ENAMETOOLONG;
        Header h = { .version = GIT_DIR_CACHE_VERSION, .root_len = (uint32_t) rl, .n_records = w->n,
                     .size = sizeof(h) + pad8(rl) + w->used };
        memcpy(h.magic, MAGIC, 8);
        /* the checksum runs over the path (padded) and the records as they lie in the file */
        memcpy(head + sizeof(h), root, rl);
        h.checksum = checksum(checksum(CHECKSUM_START, head + sizeof(h), pad8(rl)), w->buf, w->used);
        memcpy(head, &h, sizeof(h));
        /* not synced: a cache lost to a crash costs one full walk */
        const FilePart parts[] = { { head, sizeof(h) + pad8(rl) }, { w->buf, w->used } };
        return file_replace(path, parts, ELEMENTSOF(parts), false);
}
