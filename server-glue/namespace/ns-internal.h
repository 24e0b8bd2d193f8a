/* SPDX-License-Identifier: MIT */
/*
 * ns-internal.h: struct ns, the one struct every file of the namespace
 * shares.  It is the handle ns-live.h hands out, and each part keeps its
 * state in it and takes the whole handle: ns-prov.c the provider list
 * (provs, and pending for those still to add), ns-catalog.c the
 * counterset list (entries, built from provs and installed),
 * ns-snapshot.c the snapshots shared and the memory queries hold, ns.c the
 * rest; dirty is set by whichever part sees a change and cleared by the
 * rebuild, and the waiters are counted by ns_io_begin and ns_io_end
 * (ns-prov.h) for ns.c.  Splitting it would change every signature for no
 * reader's benefit.
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
        uint64_t dir_stamp;             /* pl_scan_stamp's sum at the last scan */
        bool dirty;                     /* rebuild the counterset list at the next refresh */

        /* What is mapped, against its caps (ns-map.c). */
        uint64_t max_segment, max_mapped, mapped;
        struct ns_refused *refused;     /* providers refused for their size, logged once */
        size_t n_refused;
        size_t n_unopened;              /* kept out of the last scan by a shortage */
        uint64_t retry_at;              /* CLOCK_MONOTONIC ns: scan again then, 0 = no need */
        ns_log_fn log;
        void *log_userdata;

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
