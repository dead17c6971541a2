/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "config.h"
#include "policy/trust.h"
#include "shim/shim-watch.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | \
                    IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
/* A burst of changes (an editor's write, rename and chmod) is one change. */
#define SETTLE_MSEC 20

struct ShimWatch {
        int inotify_fd, stop_fd;
        char **dirs;
        pthread_t thread;
        void (*changed)(void *userdata);
        void *userdata;
};

static int watched_dirs(char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        _cleanup_free_ char *xdg = NULL, *user = NULL, *trust = NULL;
        if (!l)
                return -ENOMEM;
        const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (x && path_is_absolute(x))
                xdg = strdup(x);
        else if (home && path_is_absolute(home))
                xdg = path_join(home, ".config");
        if (strv_extend(&l, SCUDO_SYSCONFDIR) < 0 || strv_extend(&l, SCUDO_SYSCONFDIR "/config.d") < 0)
                return -ENOMEM;
        if (xdg) {
                user = path_join(xdg, "scudo");
                _cleanup_free_ char *d = user ? path_join(user, "config.d") : NULL;
                if (!d || strv_extend(&l, xdg) < 0 || strv_extend(&l, user) < 0 || strv_extend(&l, d) < 0)
                        return -ENOMEM;
        }
        if (trust_store_path(&trust) >= 0) {
                char *slash = strrchr(trust, '/');
                if (slash && slash != trust) {
                        *slash = 0;
                        if (strv_extend(&l, trust) < 0)
                                return -ENOMEM;
                }
        }
        /* /etc itself, the home directory and ~/.local: /etc/scudo, ~/.config or
         * ~/.local/state made later */
        if (strv_extend(&l, "/etc") < 0)
                return -ENOMEM;
        if (home && path_is_absolute(home)) {
                _cleanup_free_ char *local = path_join(home, ".local");
                _cleanup_free_ char *state = local ? path_join(local, "state") : NULL;
                if (!state || strv_extend(&l, home) < 0 || strv_extend(&l, local) < 0 ||
                    strv_extend(&l, state) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static void add_watches(ShimWatch *w) {
        STRV_FOREACH(d, w->dirs)
                (void) inotify_add_watch(w->inotify_fd, *d, WATCH_MASK);
}

/* Whether an event in a watched parent (~/.config, /etc) concerns scudo's configuration at all:
 * other programs write there all the time. */
static bool relevant(const struct inotify_event *ev) {
        if (ev->len == 0)
                return true;
        const char *n = ev->name;
        size_t l = strlen(n);
        return streq(n, "scudo") || streq(n, "config.d") || streq(n, "trusted") || streq(n, ".config") ||
               streq(n, ".local") || streq(n, "state") ||
               (l > 5 && streq(n + l - 5, ".toml")) || (l > 4 && streq(n + l - 4, ".lua"));
}

static void *watch_thread(void *userdata) {
        ShimWatch *w = userdata;
        char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

        for (;;) {
                struct pollfd p[2] = {{.fd = w->inotify_fd, .events = POLLIN},
                                      {.fd = w->stop_fd, .events = POLLIN}};
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[1].revents)
                        break;
                bool any = false;
                /* drain, then wait for the burst to settle and drain again */
                for (int round = 0; round < 2; round++) {
                        ssize_t n;
                        while ((n = read(w->inotify_fd, buf, sizeof(buf))) > 0)
                                for (char *e = buf; e < buf + n; ) {
                                        const struct inotify_event *ev = (const struct inotify_event *) e;
                                        any = any || relevant(ev);
                                        e += sizeof(*ev) + ev->len;
                                }
                        if (round == 0)
                                (void) poll(NULL, 0, SETTLE_MSEC);
                }
                if (!any)
                        continue;
                add_watches(w);
                w->changed(w->userdata);
        }
        return NULL;
}

int shim_watch_start(void (*changed)(void *userdata), void *userdata, ShimWatch **ret) {
        ShimWatch *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->changed = changed;
        w->userdata = userdata;
        w->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        w->stop_fd = eventfd(0, EFD_CLOEXEC);
        int r = w->inotify_fd < 0 || w->stop_fd < 0 ? negative_errno() : watched_dirs(&w->dirs);
        if (r >= 0) {
                add_watches(w);
                r = -pthread_create(&w->thread, NULL, watch_thread, w);
        }
        if (r < 0) {
                safe_close(w->inotify_fd);
                safe_close(w->stop_fd);
                strv_free(w->dirs);
                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

void shim_watch_stop(ShimWatch *w) {
        if (!w)
                return;
        uint64_t one = 1;
        (void) !write(w->stop_fd, &one, sizeof(one));
        pthread_join(w->thread, NULL);
        safe_close(w->inotify_fd);
        safe_close(w->stop_fd);
        strv_free(w->dirs);
        free(w);
}
