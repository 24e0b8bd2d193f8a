/* SPDX-License-Identifier: MIT */
/*
 * ns-internal.h: struct ns, the one struct every file of the namespace
 * shares.  It is the handle ns-live.h hands out, and each part keeps its
 * state in it and takes the whole handle: ns-prov.c the provider list
 * (provs, and pending for those still to add), ns-catalog.c the
 * counterset list (entries, built from provs and installed), ns-disc.c
 * its threads and the sockets they found, ns-snapshot.c the snapshots
 * shared and the memory queries hold, ns.c the rest; dirty is set by
 * whichever part sees a change and cleared by the rebuild, and the
 * waiters are counted by ns_io_begin and ns_io_end (ns-prov.h) for ns.c.
 * Splitting it would change every signature for no reader's benefit.
 */
#ifndef PERFLIBD_NS_INTERNAL_H
#define PERFLIBD_NS_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ns-live.h"

struct ns_prov;
struct ns_pending;
struct ns_entry;
struct ns_refused;
struct ns_claim;
struct ns_fresh;
struct ns_share;

struct ns {
        char *runtime_dir;
        const struct ctrpp_provider_desc *const *installed;
        size_t n_installed;
        const uid_t *installed_owners;  /* parallel to installed; NULL: all root's */
        struct ns_prov **provs;
        size_t n_provs;
        struct ns_pending *pending;     /* found but not added yet (ns-prov.c) */
        size_t n_pending;
        struct ns_entry *entries;
        size_t n_entries;
        bool rescan;                    /* scan the runtime directory at the next refresh */
        bool sweep;                     /* a provider died: scan to remove its socket, unwaited */
        uint64_t dir_stamp;             /* pl_scan_stamp's sum at the last scan */
        bool dirty;                     /* rebuild the counterset list at the next refresh */
        struct ns_timings timings;      /* ns_set_timings */

        /* What is mapped, against its caps (ns-map.c). */
        uint64_t max_segment, max_mapped, mapped;
        uint64_t reserved;              /* room held by opens in progress off the lock */
        struct ns_refused *refused;     /* providers refused for their size, logged once */
        size_t n_refused;
        uint64_t retry_at;              /* CLOCK_MONOTONIC ns: a shortage met, scan again then */
        ns_log_fn log;
        void *log_userdata;
        ns_missed_fn missed;            /* ns_set_missed */
        void *missed_userdata;

        /*
         * Who may publish what (ns-owner.c): the self-described GUIDs owned
         * at the last rebuild, sorted by GUID; the cap on them per user
         * (not for root or server_uid); and where refusals are reported.
         */
        struct ns_claim *claims;
        size_t n_claims;
        size_t max_per_user;
        uid_t server_uid;

        /*
         * Threads (ns_set_threaded): the caller holds lock around every use
         * of the namespace; a wait on one provider (ns_snapshot, ns_notify)
         * lets go of it and counts itself in waiters, and nothing that frees
         * providers or entries runs while waiters is not 0.
         */
        bool threaded;
        pthread_mutex_t lock;
        pthread_cond_t idle;            /* waiters went back to 0 */
        unsigned waiters;

        /*
         * Discovery off the request path (ns-disc.c, ns_start_discovery):
         * one thread scans and opens new providers, another retries the
         * pending ones, each under lock except while it reads the directory
         * or waits on a provider.  A refresh that wants a scan bumps
         * disc_want; disc_done is the last disc_want whose scan and new
         * providers the scanning thread has been through.
         */
        bool disc_running, disc_stop;
        pthread_t disc_thread, retry_thread;
        pthread_cond_t disc_kick;       /* to the scanner: a scan is wanted, or stop */
        pthread_cond_t disc_pass;       /* from it: disc_done moved */
        pthread_cond_t retry_kick;      /* to the retrier: the pending list grew, or stop */
        uint64_t disc_want, disc_scanned, disc_done;
        uint64_t disc_deadline;         /* CLOCK_MONOTONIC ns: waits for the scan ... */
        uint64_t disc_deadline_for;     /* ... that disc_want was then end at the latest */
        struct ns_fresh *fresh;         /* found by the last scan and not tried yet, oldest first */
        size_t n_fresh;

        /*
         * Snapshots (ns-snapshot.c): one share per counterset and kind
         * being taken or held, for concurrent requests to share; ticket
         * orders requests and snapshots as they begin (under lock); and
         * what queries hold, against query_memory (0: no cap).
         */
        struct ns_share *shares;
        uint64_t ticket;
        size_t query_memory;
        size_t query_used;              /* atomic */
};

#endif /* PERFLIBD_NS_INTERNAL_H */
