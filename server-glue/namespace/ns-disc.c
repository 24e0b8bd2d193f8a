/* SPDX-License-Identifier: MIT */
/*
 * ns-disc.c: the discovery thread (ns-disc.h).  Connecting to a provider
 * waits for its HELLO up to the collect bound, so a socket that accepts
 * and never answers would cost every request that scanned it that long.
 * Two threads do all such waiting with the namespace lock let go of: the
 * scanner opens the sockets a scan found new, one at a time and the newest
 * first (a provider just announced is the one a request is likely waiting
 * for), owners taking turns (fair_order), and the retrier those that failed before and are pending
 * (ns-prov.c), with backoff, so that a hung socket retried never stands
 * between a request and the scan it asked for.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "ns-disc.h"
#include "ns-log.h"
#include "ns-map.h"
#include "ns-prov.h"

/* A socket found by a scan and neither a provider nor pending then. */
struct ns_fresh {
        char *path;
        struct timespec mtime;          /* of the socket: when it was bound */
        uid_t owner;                    /* of the socket file */
        size_t rank;                    /* among its owner's, newest 0 (fair_order) */
};

struct fresh_list {
        struct ns_fresh *v;
        size_t n;
};

static void fresh_list_free(struct fresh_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].path);
        free(l->v);
        l->v = NULL;
        l->n = 0;
}

/* pl_scan's callback: one more socket someone listens on.  Out of memory, the rest wait. */
static int fresh_add(const char *path, void *userdata)
{
        struct fresh_list *l = userdata;
        struct ns_fresh *v = realloc(l->v, (l->n + 1) * sizeof(*v));
        struct stat st;

        if (!v)
                return -ENOMEM;
        l->v = v;
        v[l->n].path = strdup(path);
        if (!v[l->n].path)
                return -ENOMEM;
        if (lstat(path, &st) == 0) {
                v[l->n].mtime = st.st_mtim;
                v[l->n].owner = st.st_uid;
        } else {
                v[l->n].mtime = (struct timespec){ 0 };
                v[l->n].owner = (uid_t) -1;
        }
        l->n++;
        return 0;
}

static int mtime_cmp(const struct timespec *x, const struct timespec *y)
{
        if (x->tv_sec != y->tv_sec)
                return x->tv_sec < y->tv_sec ? -1 : 1;
        return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* By owner, each owner's newest first. */
static int by_owner_newest(const void *a, const void *b)
{
        const struct ns_fresh *x = a, *y = b;

        if (x->owner != y->owner)
                return x->owner < y->owner ? -1 : 1;
        return mtime_cmp(&y->mtime, &x->mtime);
}

/* The order sockets are tried in, reversed: the last is tried first. */
static int by_try_order(const void *a, const void *b)
{
        const struct ns_fresh *x = a, *y = b;

        if (x->rank != y->rank)
                return x->rank > y->rank ? -1 : 1;
        return mtime_cmp(&y->mtime, &x->mtime);
}

/*
 * The order the scanner tries new sockets in: each owner's newest first,
 * owners taking turns, the one whose newest has waited longest first.  So
 * a user who keeps making sockets that never answer, each newer than
 * anyone's, delays another user's new provider by one try at most, rather
 * than for as long as the planting goes on.
 */
static void fair_order(struct fresh_list *l)
{
        qsort(l->v, l->n, sizeof(*l->v), by_owner_newest);
        for (size_t i = 0; i < l->n; i++) {
                bool same = i > 0 && l->v[i - 1].owner == l->v[i].owner;

                l->v[i].rank = same ? l->v[i - 1].rank + 1 : 0;
        }
        qsort(l->v, l->n, sizeof(*l->v), by_try_order);
}

/* Replaces ns->fresh with what l holds that is new, in fair_order; consumes l. */
static void fresh_keep(struct ns *ns, struct fresh_list *l)
{
        struct fresh_list old = { ns->fresh, ns->n_fresh };
        size_t j = 0;

        for (size_t i = 0; i < l->n; i++) {
                if (ns_prov_known(ns, l->v[i].path))
                        free(l->v[i].path);
                else
                        l->v[j++] = l->v[i];
        }
        fresh_list_free(&old);
        ns->fresh = l->v;
        ns->n_fresh = j;
}

/*
 * Reads the runtime directory without the lock: pl_scan probes every
 * socket (a non-blocking connect) and there may be thousands.  A scan
 * asked for in the middle of a pass starts over with what is new then.
 * One that failed keeps the sockets found before and not tried yet; one
 * short of descriptors is due again a second later.  It also removes the
 * sockets of dead providers (pl_scan), which is all a sweep asks of it.
 */
static void disc_scan(struct ns *ns)
{
        struct fresh_list l = { NULL, 0 };
        unsigned reclaimed = 0;
        int k;

        ns->rescan = ns->sweep = false;
        ns->disc_scanned = ns->disc_want;
        pthread_mutex_unlock(&ns->lock);
        k = pl_scan(ns->runtime_dir, fresh_add, &l, &reclaimed);
        /* qsort's array must not be NULL, even empty. */
        if (k >= 0 && l.n > 1)
                fair_order(&l);
        pthread_mutex_lock(&ns->lock);
        if (k >= 0 || k == -ENOENT)
                fresh_keep(ns, &l);
        else
                fresh_list_free(&l);
        k = ns_scan_done(ns, k, reclaimed);
        if (k < 0)
                ns_log(ns, LOG_WARNING, "scanning %s: %s", ns->runtime_dir, strerror(-k));
}

/* Opens the next socket in fair_order; the retrier learns of it if it became pending. */
static void disc_try_newest(struct ns *ns)
{
        char *path = ns->fresh[--ns->n_fresh].path;

        (void) ns_prov_add_unlocked(ns, path);
        free(path);
        pthread_cond_signal(&ns->retry_kick);
}

static void disc_pass_end(struct ns *ns)
{
        ns->disc_done = ns->disc_scanned;
        pthread_cond_broadcast(&ns->disc_pass);
}

static struct timespec mono_at(uint64_t ns_time)
{
        return (struct timespec){ .tv_sec = (time_t) (ns_time / 1000000000),
                                  .tv_nsec = (long) (ns_time % 1000000000) };
}

/* Until cond is signalled, or until at (CLOCK_MONOTONIC ns; 0: no deadline). */
static void disc_sleep(struct ns *ns, pthread_cond_t *cond, uint64_t at)
{
        struct timespec ts = mono_at(at);

        if (at == 0)
                pthread_cond_wait(cond, &ns->lock);
        else
                (void) pthread_cond_timedwait(cond, &ns->lock, &ts);
}

/* The scanner's next step: a scan asked for, a new socket, the end of a pass. */
static void disc_step(struct ns *ns)
{
        if (ns_map_retry_take(ns) || ns->rescan || ns->sweep)
                disc_scan(ns);
        else if (ns->n_fresh > 0)
                disc_try_newest(ns);
        else if (ns->disc_done != ns->disc_scanned)
                disc_pass_end(ns);
        else
                disc_sleep(ns, &ns->disc_kick, ns_map_retry_at(ns));
}

/* A thread's life: its steps, under the lock (each lets go of it to wait), until told to stop. */
static void *run_steps(struct ns *ns, void (*step)(struct ns *ns))
{
        pthread_mutex_lock(&ns->lock);
        while (!ns->disc_stop)
                step(ns);
        pthread_mutex_unlock(&ns->lock);
        return NULL;
}

static void *disc_main(void *userdata)
{
        return run_steps(userdata, disc_step);
}

/* The retrier's next step: the pending provider due first, or sleep until one is due. */
static void retry_step(struct ns *ns)
{
        uint64_t next;
        const char *due = ns_pending_due(ns, ns_mono_ns(), &next);
        char *copy;

        if (!due) {
                disc_sleep(ns, &ns->retry_kick, next);
                return;
        }
        /* The lock is let go of while it waits: the pending list may move meanwhile. */
        copy = strdup(due);
        if (copy)
                (void) ns_prov_add_unlocked(ns, copy);
        free(copy);
        /* A shortage or a dead provider met here wants a scan the sleeping scanner knows not of. */
        if (ns_map_retry_at(ns) != 0 || ns->sweep)
                pthread_cond_signal(&ns->disc_kick);
}

static void *retry_main(void *userdata)
{
        return run_steps(userdata, retry_step);
}

static void conds_init(struct ns *ns)
{
        pthread_condattr_t attr;

        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&ns->disc_kick, &attr);
        pthread_cond_init(&ns->disc_pass, &attr);
        pthread_cond_init(&ns->retry_kick, &attr);
        pthread_condattr_destroy(&attr);
}

static void conds_destroy(struct ns *ns)
{
        pthread_cond_destroy(&ns->disc_kick);
        pthread_cond_destroy(&ns->disc_pass);
        pthread_cond_destroy(&ns->retry_kick);
}

/* Tells both threads to stop and joins those that run. */
static void threads_stop(struct ns *ns, bool scanner, bool retrier)
{
        pthread_mutex_lock(&ns->lock);
        ns->disc_stop = true;
        pthread_cond_signal(&ns->disc_kick);
        pthread_cond_signal(&ns->retry_kick);
        pthread_cond_broadcast(&ns->disc_pass);
        pthread_mutex_unlock(&ns->lock);
        if (scanner)
                pthread_join(ns->disc_thread, NULL);
        if (retrier)
                pthread_join(ns->retry_thread, NULL);
}

int ns_start_discovery(struct ns *ns)
{
        int r;

        if (ns->disc_running)
                return 0;
        conds_init(ns);
        ns->disc_stop = false;
        r = pthread_create(&ns->disc_thread, NULL, disc_main, ns);
        if (r == 0) {
                r = pthread_create(&ns->retry_thread, NULL, retry_main, ns);
                if (r != 0)
                        threads_stop(ns, true, false);
        }
        if (r != 0) {
                conds_destroy(ns);
                return -r;
        }
        ns->disc_running = true;
        return 0;
}

bool ns_disc_running(const struct ns *ns)
{
        return ns->disc_running;
}

void ns_disc_poke(struct ns *ns)
{
        if (ns->disc_running)
                pthread_cond_signal(&ns->disc_kick);
}

void ns_disc_kick(struct ns *ns)
{
        ns->rescan = true;
        if (!ns->disc_running)
                return;
        ns->disc_want++;
        pthread_cond_signal(&ns->disc_kick);
}

/*
 * The requests that come while the scanner is still busy with the scan an
 * earlier one gave up waiting for (a socket that does not answer) share
 * that one's deadline: they are not held up 50 ms each.  Once that scan is
 * done, the next request waits afresh.
 */
void ns_disc_wait(struct ns *ns)
{
        struct timespec deadline;
        uint64_t want;

        ns_disc_kick(ns);
        want = ns->disc_want;
        if (ns->disc_done >= ns->disc_deadline_for) {
                ns->disc_deadline = ns_mono_ns() + ns->timings.scan_wait;
                ns->disc_deadline_for = want;
        }
        deadline = mono_at(ns->disc_deadline);
        while (ns->disc_done < want && !ns->disc_stop)
                if (pthread_cond_timedwait(&ns->disc_pass, &ns->lock, &deadline) == ETIMEDOUT)
                        break;
}

void ns_disc_stop(struct ns *ns)
{
        struct fresh_list l;

        if (!ns->disc_running)
                return;
        threads_stop(ns, true, true);
        ns->disc_running = false;
        l = (struct fresh_list){ ns->fresh, ns->n_fresh };
        fresh_list_free(&l);
        ns->fresh = NULL;
        ns->n_fresh = 0;
        conds_destroy(ns);
}
