/* SPDX-License-Identifier: MIT */
/*
 * ns.c: the real namespace's lifetime, locking and refresh (ns-live.h),
 * tying its parts together: the provider list (ns-prov.c), the counterset
 * list built from it and from the installed descriptions (ns-catalog.c),
 * the providers' name caches (ns-names.c) and the snapshots that read
 * them (ns-snapshot.c).  ns_refresh is where both lists change (but for
 * the providers the discovery threads add, ns-disc.c), and it frees
 * nothing a request waiting on a provider holds (see waiters).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ns-catalog.h"
#include "ns-disc.h"
#include "ns-map.h"

int ns_new(const char *runtime_dir, struct ns **ret)
{
        struct ns *ns;

        if (!runtime_dir || !ret)
                return -EINVAL;
        ns = calloc(1, sizeof(*ns));
        if (!ns)
                return -ENOMEM;
        ns->runtime_dir = strdup(runtime_dir);
        if (!ns->runtime_dir) {
                free(ns);
                return -ENOMEM;
        }
        ns->rescan = ns->dirty = true;
        ns->max_segment = NS_MAX_SEGMENT_DEFAULT;
        ns->max_mapped = NS_MAX_MAPPED_DEFAULT;
        ns->max_per_user = NS_MAX_PER_USER_DEFAULT;
        ns->timings = NS_TIMINGS_DEFAULT;
        ns->server_uid = geteuid();
        pthread_mutex_init(&ns->lock, NULL);
        pthread_cond_init(&ns->idle, NULL);
        *ret = ns;
        return 0;
}

void ns_set_threaded(struct ns *ns)
{
        ns->threaded = true;
}

void ns_lock(struct ns *ns)
{
        pthread_mutex_lock(&ns->lock);
}

void ns_unlock(struct ns *ns)
{
        pthread_mutex_unlock(&ns->lock);
}

void ns_wait_idle(struct ns *ns)
{
        while (ns->waiters > 0)
                pthread_cond_wait(&ns->idle, &ns->lock);
}

void ns_free(struct ns *ns)
{
        if (!ns)
                return;
        ns_disc_stop(ns);
        /* What this thread kept of its snapshots goes with the namespace. */
        ns_thread_trim();
        ns_entries_free(ns);
        free(ns->claims);
        for (size_t i = 0; i < ns->n_provs; i++)
                ns_prov_free(ns->provs[i]);
        free(ns->provs);
        ns_pending_free(ns);
        ns_map_free(ns);
        free(ns->runtime_dir);
        pthread_cond_destroy(&ns->idle);
        pthread_mutex_destroy(&ns->lock);
        free(ns);
}

void ns_set_installed(struct ns *ns, const struct ctrpp_provider_desc *const *descs,
                      const uid_t *owners, size_t n)
{
        ns->installed = descs;
        ns->installed_owners = owners;
        ns->n_installed = n;
        ns->dirty = true;
}

void ns_set_map_limits(struct ns *ns, uint64_t max_segment, uint64_t max_mapped)
{
        ns->max_segment = max_segment;
        ns->max_mapped = max_mapped;
}

int ns_set_timings(struct ns *ns, const struct ns_timings *t)
{
        if (t->retry_min == 0 || t->retry_min > t->retry_max)
                return -EINVAL;
        ns->timings = *t;
        return 0;
}

void ns_set_max_per_user(struct ns *ns, size_t n)
{
        ns->max_per_user = n;
        ns->dirty = true;
}

void ns_runtime_changed(struct ns *ns)
{
        ns_disc_kick(ns);
}

/*
 * Whether the runtime directory may hold a provider not scanned yet.  The
 * server also learns this from inotify, but a request can be dispatched
 * before the event that announced its provider: one stat(2) per refresh
 * makes "announced before the request" mean "served by the request".  The
 * file system's clock is coarse (a tick), so a change within the last
 * 50 ms of the last one may not have moved the mtime: rescan then too.
 */
static bool runtime_dir_changed(struct ns *ns)
{
        struct pl_scan_stamp st;
        struct timespec now;
        int64_t age_ns;

        /* The users' directories below it too: pl_scan_stamp. */
        if (pl_scan_stamp(ns->runtime_dir, &st) < 0)
                return false;
        clock_gettime(CLOCK_REALTIME, &now);
        age_ns = (int64_t) (now.tv_sec - st.newest.tv_sec) * 1000000000 +
                 (now.tv_nsec - st.newest.tv_nsec);
        if (st.sum == ns->dir_stamp && age_ns > 50000000)
                return false;
        ns->dir_stamp = st.sum;
        return true;
}

/*
 * Notices what providers published and rebuilds the counterset list if
 * anything changed; not while a thread waits on a provider (ns_refresh).
 */
static int refresh_build(struct ns *ns)
{
        int ret;

        if (ns->waiters > 0)
                return 0;
        ns_provs_check(ns);
        if (!ns->dirty)
                return 0;
        ret = ns_rebuild(ns);
        /* The old list may point into readers just closed: never serve it. */
        if (ret < 0)
                ns_entries_free(ns);
        return ret;
}

/* Without the discovery thread: scans and opens here, under the lock. */
static int refresh_scan(struct ns *ns)
{
        bool retry = ns_map_retry_take(ns);
        unsigned reclaimed = 0;
        int ret;

        if (runtime_dir_changed(ns) || retry || ns->sweep)
                ns->rescan = true;
        if (ns->rescan) {
                ret = pl_scan(ns->runtime_dir, ns_prov_add, ns, &reclaimed);
                ret = ns_scan_done(ns, ret, reclaimed);
                if (ret < 0)
                        return ret;
                ns->rescan = ns->sweep = false;
        }
        ns_provs_retry(ns);
        return 0;
}

/*
 * With it: the list is brought up to date before the lock is let go of,
 * so that no other thread reads one the caller just made stale (new
 * installed descriptions), and again after with what the scan added.
 */
static int refresh_discover(struct ns *ns)
{
        int ret;

        if (!runtime_dir_changed(ns) && !ns->rescan)
                return 0;
        ret = refresh_build(ns);
        if (ret < 0)
                return ret;
        ns_disc_wait(ns);
        return 0;
}

int ns_refresh(struct ns *ns)
{
        int ret;

        if (!ns)
                return -EINVAL;
        /*
         * While some thread waits on a provider, only new providers are
         * added: reaping and rebuilding free what that thread holds, and
         * touch readers it may be using.  They happen at the next refresh
         * with nobody waiting, at most a collect bound later.
         */
        if (ns->waiters == 0)
                ns_provs_reap(ns);
        if (ns->sweep)
                ns_disc_poke(ns);
        ret = ns_disc_running(ns) ? refresh_discover(ns) : refresh_scan(ns);
        return ret < 0 ? ret : refresh_build(ns);
}
