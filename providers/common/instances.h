/* SPDX-License-Identifier: MIT */
/*
 * instances.h: the instances of one counterset of a provider that follows
 * something the kernel lists (CPUs, disks, interfaces, processes): each
 * collection gets the instances it sees, creating the new ones, and sweeps
 * away the ones it did not see.  Internal to providers/.
 */
#ifndef PV_INSTANCES_H
#define PV_INSTANCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perflib.h"

struct pv_inst {
        uint32_t id;
        bool seen;
        char *name;                     /* UTF-8, owned */
        PPERF_COUNTERSET_INSTANCE inst; /* the provider's, until deleted */
};

/* Kept sorted by (id, name), so that a lookup is a binary search. */
struct pv_instset {
        HANDLE provider;
        GUID cset;
        struct pv_inst *v;
        size_t n, cap;
};

/* The set starts empty; provider and cset must outlive it. */
void pv_instset_init(struct pv_instset *s, HANDLE provider, const GUID *cset);

/*
 * The instance (name, id), created when it is not there yet, and marked
 * seen.  0, or -ENOMEM / -EINVAL (PerfCreateInstance failed: its Win32
 * error is logged by the caller through GetLastError()).
 */
int pv_instset_get(struct pv_instset *s, const char *name, uint32_t id,
                   PPERF_COUNTERSET_INSTANCE *ret);

/* Deletes the instances not got since the last sweep; returns how many. */
size_t pv_instset_sweep(struct pv_instset *s);

/* Deletes every instance and frees the set; accepts NULL. */
void pv_instset_done(struct pv_instset *s);

/*
 * Sets the counters of inst from values[], indexed by counter id (ids must
 * be below n_values), each with its width from the counterset template.
 */
void pv_set_values(HANDLE provider, PPERF_COUNTERSET_INSTANCE inst,
                   const PERF_COUNTERSET_INFO *tmpl, const uint64_t *values, size_t n_values);

/*
 * For single-instance countersets: creates their one instance (named "",
 * id 0) right after CounterInitialize; on failure stops the provider with
 * cleanup (the generated CounterCleanup) and returns the Win32 error.
 */
ULONG pv_single_instance(HANDLE provider, const GUID *cset, void (*cleanup)(void),
                         PPERF_COUNTERSET_INSTANCE *ret);

#endif /* PV_INSTANCES_H */
