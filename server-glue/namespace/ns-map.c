/* SPDX-License-Identifier: MIT */
/*
 * ns-map.c: the caps on what the namespace maps (ns-map.h).  A provider
 * chooses its segment's size, so without them one user could make the
 * server map terabytes; the reader refuses an oversized segment from its
 * announced size, before mmap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "ns-log.h"
#include "ns-map.h"
#include "ns-prov.h"            /* ns_mono_ns */

/*
 * A scan short of descriptors is tried again this much later, not at every
 * request: each try connects to every provider not yet open.
 */
#define NS_RETRY_NS     UINT64_C(1000000000)

/* Beyond this many refused providers remembered, refusals are logged again (rate-limited). */
#define NS_REFUSED_MAX 4096

static bool refused_is(const struct ns_refused *f, const char *path, const struct stat *st)
{
        return f->dev == (uint64_t) st->st_dev && f->ino == (uint64_t) st->st_ino &&
               strcmp(f->path, path) == 0;
}

static struct ns_refused *refused_find(struct ns *ns, const char *path, const struct stat *st)
{
        for (size_t i = 0; i < ns->n_refused; i++)
                if (refused_is(&ns->refused[i], path, st))
                        return &ns->refused[i];
        return NULL;
}

static void refused_drop(struct ns *ns, size_t i)
{
        free(ns->refused[i].path);
        ns->refused[i] = ns->refused[--ns->n_refused];
}

/* Drops the providers that are gone (their socket removed or replaced). */
static void refused_prune(struct ns *ns)
{
        struct stat st;

        for (size_t i = ns->n_refused; i-- > 0;) {
                const struct ns_refused *f = &ns->refused[i];

                if (stat(f->path, &st) < 0 || !refused_is(f, f->path, &st))
                        refused_drop(ns, i);
        }
}

static int refused_add(struct ns *ns, const char *path, const struct stat *st, bool too_big)
{
        struct ns_refused *v;
        char *p;

        if (ns->n_refused >= NS_REFUSED_MAX)
                refused_prune(ns);
        if (ns->n_refused >= NS_REFUSED_MAX)
                return -ENOBUFS;
        v = realloc(ns->refused, (ns->n_refused + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        ns->refused = v;
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        v[ns->n_refused++] = (struct ns_refused){ p, (uint64_t) st->st_dev,
                                                  (uint64_t) st->st_ino, too_big };
        return 0;
}

void ns_map_free(struct ns *ns)
{
        while (ns->n_refused > 0)
                refused_drop(ns, ns->n_refused - 1);
        free(ns->refused);
        ns->refused = NULL;
}

/* What the next segment may be: 0 = nothing fits any more. */
static uint64_t map_room(const struct ns *ns, bool *ret_total)
{
        uint64_t used = ns->mapped + ns->reserved;
        uint64_t left = ns->max_mapped > used ? ns->max_mapped - used : 0;

        *ret_total = left < ns->max_segment;
        return *ret_total ? left : ns->max_segment;
}

static void refusal_log(struct ns *ns, const char *path, bool total, uint64_t room)
{
        if (total)
                ns_log(ns, LOG_WARNING, "provider %s not served: its segment is larger than the "
                       "%llu bytes left under the cap on all mapped segments (%llu bytes)",
                       path, (unsigned long long) room, (unsigned long long) ns->max_mapped);
        else
                ns_log(ns, LOG_WARNING, "provider %s not served: its segment is larger than "
                       "the cap of %llu bytes on one segment", path, (unsigned long long) room);
}

/* A provider at path was refused: logged the first time only. */
static void refused(struct ns *ns, const char *path, const struct stat *st, bool total,
                    uint64_t room)
{
        struct ns_refused *f = st ? refused_find(ns, path, st) : NULL;

        if (f) {
                f->too_big |= !total;
                return;
        }
        refusal_log(ns, path, total, room);
        if (st)
                (void) refused_add(ns, path, st, !total);
}

bool ns_map_shortage(int err)
{
        return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -ENOBUFS;
}

/*
 * Connects with ns->lock let go of when unlocked.  The discovery threads
 * may then open two providers at once: each holds its room as reserved
 * meanwhile, so that both together never map more than the cap.
 */
static int map_connect(struct ns *ns, const char *path, uint64_t room, bool unlocked,
                       struct pl_reader **ret_r)
{
        int k;

        if (room == 0)
                return -EFBIG;
        if (!unlocked)
                return pl_reader_open_max(path, room, ret_r);
        ns->reserved += room;
        pthread_mutex_unlock(&ns->lock);
        k = pl_reader_open_max(path, room, ret_r);
        pthread_mutex_lock(&ns->lock);
        ns->reserved -= room;
        return k;
}

int ns_map_open(struct ns *ns, const char *path, bool unlocked, struct pl_reader **ret_r,
                uint64_t *ret_size)
{
        struct stat st;
        const struct stat *sp = stat(path, &st) == 0 ? &st : NULL;
        const struct ns_refused *f = sp ? refused_find(ns, path, sp) : NULL;
        struct pl_reader *r;
        uint64_t room, size;
        bool total;
        int k;

        if (f && f->too_big)
                return -EFBIG;
        room = map_room(ns, &total);
        k = map_connect(ns, path, room, unlocked, &r);
        if (k == -EFBIG)
                refused(ns, path, sp, total, room);
        if (ns_map_shortage(k))
                ns_map_short(ns, "provider", path, k);
        if (k < 0)
                return k;
        /* Served now: refused again later (the total cap), it is logged again. */
        f = sp ? refused_find(ns, path, sp) : NULL;
        if (f)
                refused_drop(ns, (size_t) (f - ns->refused));
        (void) pl_reader_segment_size(r, &size);
        ns->mapped += size;
        *ret_r = r;
        *ret_size = size;
        return 0;
}

void ns_map_release(struct ns *ns, uint64_t size)
{
        ns->mapped -= size;
        /* A provider refused for the total may fit now: its socket did not change. */
        for (size_t i = 0; i < ns->n_refused; i++)
                if (!ns->refused[i].too_big)
                        ns->rescan = true;
}

/*
 * The state is the scan it arms, not a count per scan: a shortage met by
 * the retrying thread, or by the opening of what a scan found after that
 * scan ended, must still bring the scan that finds what it kept out.
 */
void ns_map_short(struct ns *ns, const char *what, const char *path, int err)
{
        if (ns->retry_at != 0)
                return;
        ns->retry_at = ns_mono_ns() + NS_RETRY_NS;
        ns_log(ns, LOG_WARNING, "%s %s could not be opened for want of descriptors or memory "
               "(%s): scanning again in a second", what, path, strerror(-err));
}

bool ns_map_retry_take(struct ns *ns)
{
        if (ns->retry_at == 0 || ns_mono_ns() < ns->retry_at)
                return false;
        ns->retry_at = 0;
        return true;
}

uint64_t ns_map_retry_at(const struct ns *ns)
{
        return ns->retry_at;
}
