/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* The instruction and time budgets (lua-engine.h): the count hook, and the SIGALRM watchdog
 * that forces it at the deadline. */

#include <lauxlib.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "policy/lua-engine-internal.h"

/* How long a C function may keep running past the deadline before the watchdog gives up. */
#define WATCHDOG_GRACE_USEC 1000000ULL

/* The engine whose watchdog is armed; there is at most one, since it is one process timer. */
static LuaEngine *watchdog_engine;

static const char *trip_message(Trip t) {
        switch (t) {
        case TRIP_INSTRUCTIONS:
                return "instruction budget exhausted";
        case TRIP_DEADLINE:
                return "deadline exceeded";
        default:
                return "budget exhausted";
        }
}

void engine_hook(lua_State *L, lua_Debug *ar) {
        LuaEngine *e = lua_engine_from(L);

        if (e->trip == TRIP_NONE) {
                e->instructions += HOOK_STEP;
                if (e->watchdog_fired || (e->now.deadline > 0 && now_usec() > e->now.deadline))
                        e->trip = TRIP_DEADLINE;
                else if (e->instructions > e->now.instructions)
                        e->trip = TRIP_INSTRUCTIONS;
                else
                        return;
                /* From now on fire on every instruction: whatever catches the error below
                 * gets the same error again at its next instruction. */
                lua_sethook(L, engine_hook, LUA_MASKCOUNT, 1);
        }
        lua_pushstring(L, trip_message(e->trip));       /* stack: message */
        lua_error(L);
}

/* The watchdog is one process timer, armed once per engine. Every call into Lua and every
 * user-code budget moves the deadline; setting the timer again for each move, and stopping it
 * between calls, was most of a resolve's system calls for it. So the timer is only ever moved
 * earlier: a deadline that moves later leaves it where it is, and when it fires early, the
 * handler sets it again for the deadline then in force (or for nothing, between calls). */
static uint64_t load_u64(const uint64_t *p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store_u64(uint64_t *p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Sets the timer to fire at `due` (absolute). Async-signal-safe: timer_settime is. */
static void watchdog_set(LuaEngine *e, uint64_t due, uint64_t now) {
        uint64_t usec = due > now ? due - now : 0;
        struct itimerspec its = {
                .it_value.tv_sec = (time_t) (usec / 1000000ULL),
                .it_value.tv_nsec = (long) (usec % 1000000ULL) * 1000L,
        };
        if (usec == 0)
                its.it_value.tv_nsec = 1;       /* already due: fire at once */
        store_u64(&e->timer_due, due);
        (void) timer_settime(e->timer, 0, &its, NULL);
}

static void watchdog_handler(int sig) {
        LuaEngine *e = watchdog_engine;

        if (!e)
                return;
        uint64_t deadline = load_u64(&e->watch_deadline);
        uint64_t now = now_usec();
        if (e->depth == 0 || deadline == 0 || (!e->watchdog_fired && now < deadline)) {
                /* Between calls, or early for the deadline in force: set for that one. */
                if (e->depth > 0 && deadline > 0)
                        watchdog_set(e, deadline, now);
                else
                        store_u64(&e->timer_due, 0);
                return;
        }
        if (!e->watchdog_fired) {
                /* Force the hook: it runs at the next VM instruction and raises. */
                e->watchdog_fired = 1;
                lua_sethook(e->L, engine_hook, LUA_MASKCOUNT, 1);
                watchdog_set(e, now + WATCHDOG_GRACE_USEC, now);
                return;
        }
        /* Still inside a C function (a pathological pattern match, say) a second after the
         * deadline. Nothing has been started yet; give up without running anything. */
        static const char msg[] = "scudo: policy evaluation did not finish before its deadline, "
                                  "giving up without running anything\n";
        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(125);
}

/* Moves the timer only when the deadline came before it. */
void watchdog_update(LuaEngine *e) {
        if (!e->watchdog_armed)
                return;
        uint64_t deadline = e->now.deadline;
        store_u64(&e->watch_deadline, deadline);
        if (deadline == 0 || e->watchdog_fired)
                return;
        uint64_t due = load_u64(&e->timer_due);
        if (due == 0 || due > deadline)
                watchdog_set(e, deadline, now_usec());
}

static int watchdog_arm(LuaEngine *e) {
        if (!e->limits.watchdog || watchdog_engine)
                return 0;

        struct sigevent sev = {
                .sigev_notify = SIGEV_SIGNAL,
                .sigev_signo = SIGALRM,
        };
        if (timer_create(CLOCK_MONOTONIC, &sev, &e->timer) < 0)
                return negative_errno();

        /* SA_RESTART: a timer that fires early (see above) must not fail a system call. What
         * a signal cannot end, a C function stuck past the deadline, the grace period does. */
        struct sigaction sa = { .sa_handler = watchdog_handler, .sa_flags = SA_RESTART };
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGALRM, &sa, &e->old_action);
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, SIGALRM);
        if (sigprocmask(SIG_UNBLOCK, &m, &e->old_mask) == 0)
                e->restore_mask = sigismember(&e->old_mask, SIGALRM) == 1;

        e->timer_due = 0;
        watchdog_engine = e;
        e->watchdog_armed = true;
        watchdog_update(e);
        return 0;
}

void watchdog_disarm(LuaEngine *e) {
        if (!e->watchdog_armed)
                return;
        (void) timer_delete(e->timer);
        if (e->restore_mask)
                (void) sigprocmask(SIG_SETMASK, &e->old_mask, NULL);
        (void) sigaction(SIGALRM, &e->old_action, NULL);
        watchdog_engine = NULL;
        e->watchdog_armed = false;
}

/* Starts or ends the outermost protected call: the global budget runs from here. */
void engine_enter(LuaEngine *e) {
        if (e->depth++ > 0)
                return;
        e->trip = TRIP_NONE;
        e->watchdog_fired = 0;
        e->instructions = 0;
        e->global.deadline = e->limits.usec_max > 0 ? now_usec() + e->limits.usec_max : 0;
        e->now = e->global;
        lua_sethook(e->L, NULL, 0, 0);
        /* The timer and the handler stay for the engine's life: a resolve makes several
         * calls, and setting them up again for each was a dozen system calls. */
        if (e->watchdog_armed)
                watchdog_update(e);
        else
                (void) watchdog_arm(e);
}

Trip engine_leave(LuaEngine *e) {
        Trip trip = e->trip;
        if (--e->depth > 0)
                return trip;
        e->trip = TRIP_NONE;
        e->watchdog_fired = 0;
        e->global.deadline = 0;
        e->now = e->global;
        watchdog_update(e);     /* no deadline: a timer still set fires for nothing */
        lua_sethook(e->L, NULL, 0, 0);
        return trip;
}
