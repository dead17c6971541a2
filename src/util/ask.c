/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <unistd.h>

#include "ask.h"
#include "macro.h"

int ask_yes_no(int in_fd, FILE *out, const char *question) {
        char answer[16];
        size_t n = 0;

        fprintf(out, "%s [y/N] ", question);
        fflush(out);
        for (;;) {
                char c;
                ssize_t k = read(in_fd, &c, 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0 || c == '\n')
                        break;
                if (n < sizeof(answer) - 1)
                        answer[n++] = c;
        }
        answer[n] = 0;
        return streq(answer, "y") || streq(answer, "Y") || streq(answer, "yes");
}
