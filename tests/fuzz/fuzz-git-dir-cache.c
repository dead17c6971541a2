/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* libFuzzer target for the reader of the project walk's cache (src/plan/git-dir-cache.c):
 * whatever the bytes, it takes them or refuses them without reading past them, and every
 * record it takes is within them with its names NUL-ended. The checksum is not checked (a
 * fuzzer cannot make one); when the first byte is odd the header is made right (magic,
 * version, size, the project's path) so that the records themselves are read. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/git-dir-cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROOT "/home/dev/proj"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        bool fix = data[0] & 1;
        data++;
        size--;
        size_t head = 40 + 16;  /* the header, then ROOT padded to 8 */
        size_t n = fix ? size + head : size;
        char *buf = malloc(n ? n : 1);
        if (!buf)
                return 0;
        if (fix) {
                uint32_t version = GIT_DIR_CACHE_VERSION, rl = sizeof(ROOT) - 1;
                uint64_t total = n, records = size / 48;
                memset(buf, 0, head);
                memcpy(buf, "SCUDOGDC", 8);
                memcpy(buf + 8, &version, 4);
                memcpy(buf + 12, &rl, 4);
                memcpy(buf + 16, &records, 8);
                memcpy(buf + 24, &total, 8);
                memcpy(buf + 40, ROOT, rl);
                memcpy(buf + head, data, size);
        } else
                memcpy(buf, data, size);
        GitDirCache *c = NULL;
        if (git_dir_cache_parse(ROOT, buf, n, false, &c) == 0) {
                struct stat st = {};
                for (size_t i = 0; i < 64; i++) {
                        st.st_ino = i;
                        const GitDirRecord *r = git_dir_cache_lookup(c, &st);
                        if (r && r->names_len && git_dir_record_names(r)[r->names_len - 1] != 0)
                                abort();
                }
                git_dir_cache_free(c);
        }
        return 0;
}
