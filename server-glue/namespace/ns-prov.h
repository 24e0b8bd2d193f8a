/* SPDX-License-Identifier: MIT */
/*
 * ns-prov.h: a provider found in the runtime directory (struct ns_prov):
 * its segment reader and the lock that keeps the reader to one thread, the
 * quiet period after it timed out, the storage of its instance-name cache,
 * and the waiting on it (ns_io_begin, ns_io_end).  ns-prov.c keeps the list of
 * them in struct ns.  Above this: the name cache (ns-names.h) fills the
 * slots, the catalog (ns-catalog.h) reads the segments.
 *
 * struct ns_name and struct ns_reader are here, not in ns-names.h, because
 * they are the provider's memory (ns_prov_free releases them): so nothing
 * here depends on the files above.
 *
 * ns_io_begin, ns_io_end and ns_mono_ns are static inline: they run on every
 * snapshot of every provider, and were inlined when all was one file.
 */
#ifndef PERFLIBD_NS_PROV_H
#define PERFLIBD_NS_PROV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <wchar.h>

#include "ns-internal.h"
#include "reader.h"

/*
 * An instance's name as snapshots hand it out, UTF-32 and UTF-16LE, kept
 * per directory slot while the slot holds the same instance: (block_off,
 * seq) names one instance over the provider's life, and its name never
 * changes, so an instance seen before costs no read, check or conversion
 * of its name.  Never changed once made: a snapshot points into it.
 */
struct ns_name {
        uint64_t block_off;
        uint32_t seq;
        uint32_t name_len;              /* characters, without the NUL */
        uint32_t u16_size;              /* bytes of u16: units, NUL, zero padding to 8 */
        uint8_t *u16;                   /* in the same allocation, 8-aligned */
        uint64_t parked;                /* the provider's epoch when it was replaced */
        struct ns_name *next;           /* on the parked list */
        wchar_t name[];                 /* NUL-terminated */
};

/*
 * A snapshot naming instances of one provider, from the moment it starts
 * naming until it is freed: epoch is the provider's epoch, advanced by
 * every snapshot as it starts.  Readers are listed oldest first.
 */
struct ns_reader {
        uint64_t epoch;
        struct ns_reader *prev, *next;
};

struct ns_prov {
        char *path;                     /* its collect service socket */
        pthread_mutex_t lock;           /* serialises the use of r (a reader is single-threaded) */
        struct pl_reader *r;
        uint64_t mapped;                /* bytes of its segment, counted in ns->mapped */
        int n_csets;                    /* counterset count at the last build */
        bool has_desc;                  /* its self-description was seen */
        bool callback;                  /* it has a ControlCallback */
        uint64_t quiet_until;           /* CLOCK_MONOTONIC ns: it timed out; skip it until then */
        pid_t pid;                      /* SO_PEERCRED; 0: not visible, never checked */
        uint64_t state_at;              /* CLOCK_MONOTONIC ns of the last look at its state */
        bool stopped;                   /* it was stopped (SIGSTOP, a tracer) then */
        uid_t owner;                    /* SO_PEERCRED: the user it runs as; ours for a host */
        bool has_owner;                 /* false: unknown, so it publishes nothing */
        bool host;                      /* a plugin host of this server (its child) */

        /* Refusals reported already (ns-owner.c), so each is reported once. */
        GUID *reported;
        size_t n_reported;
        bool reports_muted;             /* too many to remember: no more */

        /*
         * Names by directory slot.  A replaced name may still be pointed at
         * by a snapshot that started before it was replaced: it is parked,
         * stamped with the epoch, and freed once every reader still live
         * started after that epoch.  Both lists are in epoch order (oldest
         * first), so each is trimmed from its head: the parked list holds
         * only what was replaced since the oldest live snapshot began, however
         * snapshots of several clients overlap.  name_lock guards all of
         * it and is never held across a wait on the provider.
         */
        pthread_mutex_t name_lock;
        struct ns_name **names;
        uint32_t n_names;
        uint64_t epoch;
        struct ns_name *parked, **parked_tail;
        size_t n_parked;
        struct ns_reader *readers, *readers_tail;
};

/*
 * A socket whose provider could not be added when it was found (it did not
 * answer in time, its segment was refused, no descriptor was left): tried
 * again at later refreshes, next_try on, waiting backoff longer each time,
 * until it is added or its socket is gone.  Kept by ns-prov.c in struct ns.
 */
struct ns_pending {
        char *path;
        uint64_t next_try;              /* CLOCK_MONOTONIC ns */
        uint64_t backoff;               /* ns, timings.retry_min doubling to retry_max */
};

/* Frees a list of names linked by next, such as ns_names_unpark returns. */
void ns_names_free(struct ns_name *n);
/* Closes p's reader and frees it with its names (NULL is fine). */
void ns_prov_free(struct ns_prov *p);
/* pl_scan's callback (userdata the ns): adds the provider at path once. */
int ns_prov_add(const char *path, void *userdata);
void ns_provs_reap(struct ns *ns);
void ns_provs_check(struct ns *ns);
/* Tries again the pending provider due first, if one is due: one per call. */
void ns_provs_retry(struct ns *ns);
void ns_pending_free(struct ns *ns);

/*
 * After pl_scan of the runtime directory returned k, having removed
 * reclaimed sockets of dead providers: says so (once per scan, at info),
 * arms the retry of a scan short of descriptors (ns_map_short), and
 * returns k unless that or a missing directory made it 0.
 */
int ns_scan_done(struct ns *ns, int k, unsigned reclaimed);

/*
 * For the discovery thread (ns-disc.c).  Whether path is a provider
 * already or pending: not new to a scan.  The pending provider to try
 * first: its path (the list's) when due at now, else NULL; *ret_next is
 * when it is due (0: none pending).  Adds the provider at path unless it
 * is one already, letting go of ns->lock (held) while it waits on it.
 */
bool ns_prov_known(const struct ns *ns, const char *path);
const char *ns_pending_due(const struct ns *ns, uint64_t now, uint64_t *ret_next);
int ns_prov_add_unlocked(struct ns *ns, const char *path);

/*
 * Whether p's values must not be served now: it missed the collect bound
 * within NS_QUIET_NS, or it is stopped.  Looks at /proc/PID/stat at most
 * every ns->timings.state_check (a read, never a wait), so it costs a clock read
 * per provider per snapshot.  Under the namespace lock.
 */
bool ns_prov_unresponsive(const struct ns *ns, struct ns_prov *p, uint64_t now);

/*
 * p missed the collect bound: it is not asked again for NS_QUIET_NS, and
 * whoever ns_set_missed named is told.  Under the namespace lock.
 */
void ns_prov_missed(struct ns *ns, struct ns_prov *p);

/*
 * Around everything that may wait on a provider (up to the collect bound):
 * the namespace lock is let go meanwhile, so that queries of other
 * providers go on, and the provider's own lock keeps its reader to one
 * thread.  Entries and providers stay put: nothing frees them while
 * waiters is not 0.
 */
static inline void ns_io_begin(struct ns *ns, struct ns_prov *p)
{
        if (ns->threaded) {
                ns->waiters++;
                pthread_mutex_unlock(&ns->lock);
        }
        pthread_mutex_lock(&p->lock);
}

static inline void ns_io_end(struct ns *ns, struct ns_prov *p)
{
        pthread_mutex_unlock(&p->lock);
        if (ns->threaded) {
                pthread_mutex_lock(&ns->lock);
                if (--ns->waiters == 0)
                        pthread_cond_broadcast(&ns->idle);
        }
}

static inline uint64_t ns_mono_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/*
 * A provider that did not answer within the collect bound (a callback, or
 * the dereferencing of its reference counters) is not asked again for a
 * second: a ValidateCounters of many identifiers, or clients polling fast,
 * must not wait the bound over and over on one hung provider.  Meanwhile
 * its instances are left out of every snapshot: its last values would be
 * stale, and served as fresh.
 */
#define NS_QUIET_NS UINT64_C(1000000000)

/*
 * Retrying a provider that could not be added (ns_timings): by default
 * first after 100 ms, then doubling to 2 s, so that one that answers late
 * is served within 2 s of answering, and a socket that never answers costs
 * one collect bound per 2 s at most.  The state of a provider is looked at
 * every 10 ms at most.
 */

#endif /* PERFLIBD_NS_PROV_H */
