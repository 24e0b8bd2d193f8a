/* SPDX-License-Identifier: MIT */
/*
 * A provider that ends without PerfStopProvider would leave its socket in
 * the runtime directory until perflibd notices nobody listens and reclaims
 * it.  Most programs end by exit() or by SIGTERM (systemd's stop, kill's
 * default) or SIGINT (Ctrl-C), so we remove the sockets then ourselves.
 *
 * The signal handler may run at any moment on any thread, so the table it
 * reads is fixed: slots of atomic state and a path copied in before the slot
 * is published.  We take only the signals the application left at SIG_DFL,
 * at the first provider's start; an application that installs its own
 * handler afterwards owns the signal (its exit() still reaches our atexit
 * hook).  After removing, the handler restores SIG_DFL and raises the
 * signal again, so the process ends exactly as it would have, with the same
 * wait status.  A forked child inherits the table but not the sockets: every
 * slot records the pid that made it.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leftover.h"

/* More than any process runs: perflibd with every plugin of the tree runs 10. */
#define N_SLOTS 64

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };

struct slot {
        atomic_int state;
        pid_t pid;
        char path[PATH_MAX];
};

static struct slot slots[N_SLOTS];
static const int signals[] = { SIGTERM, SIGINT, SIGHUP };

static void remove_ours(void)
{
        pid_t self = getpid();

        for (unsigned i = 0; i < N_SLOTS; i++)
                if (atomic_load_explicit(&slots[i].state, memory_order_acquire) == SLOT_READY &&
                    slots[i].pid == self)
                        (void) unlink(slots[i].path);
}

static void on_signal(int sig)
{
        int saved = errno;

        remove_ours();
        /* SA_RESETHAND has restored SIG_DFL: end the way the signal would have. */
        (void) raise(sig);
        errno = saved;
}

static void hook_signal(int sig)
{
        struct sigaction old, sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };

        if (sigaction(sig, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
                return;
        sigemptyset(&sa.sa_mask);
        (void) sigaction(sig, &sa, NULL);
}

static void install(void)
{
        for (unsigned i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
                hook_signal(signals[i]);
        (void) atexit(remove_ours);
}

int pl_leftover_remember(const char *path)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        size_t len = strlen(path);

        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        pthread_once(&once, install);
        for (int i = 0; i < N_SLOTS; i++) {
                int expected = SLOT_FREE;

                if (!atomic_compare_exchange_strong(&slots[i].state, &expected, SLOT_FILLING))
                        continue;
                memcpy(slots[i].path, path, len + 1);
                slots[i].pid = getpid();
                atomic_store_explicit(&slots[i].state, SLOT_READY, memory_order_release);
                return i;
        }
        return -ENOSPC;
}

void pl_leftover_forget(int slot)
{
        if (slot < 0 || slot >= N_SLOTS)
                return;
        atomic_store_explicit(&slots[slot].state, SLOT_FREE, memory_order_release);
}
