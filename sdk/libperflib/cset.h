/* SPDX-License-Identifier: MIT */
/*
 * cset.c: a provider's countersets as PerfSetCounterSetInfo registered
 * them, in the form instances, updates and collection use: immutable once
 * published in p->csets.  Hidden.
 */
#ifndef PL_CSET_H
#define PL_CSET_H

#include <stdint.h>

#include "perflib.h"

struct pl_provider;

/* A counter as the update path needs it. */
struct pl_counter {
        uint32_t id;
        uint32_t size;          /* 0 (no data), 4, 8, or a text length */
        uint32_t offset;        /* from the PERF_COUNTERSET_INSTANCE, not the data */
        uint32_t ref_index;     /* PL_SEG_NO_REF unless by reference */
};

struct pl_cset {
        GUID guid;
        uint32_t index;
        uint32_t instance_type;
        uint32_t num_counters;
        uint32_t num_refs;
        uint32_t data_size;
        uint32_t live;                  /* live instances */
        struct pl_counter *counters;
        uint32_t *ref_counters;         /* counter index of each by-reference counter */
        uint32_t id_mask;
        uint32_t *id_table;             /* counter index + 1, 0 = empty; keyed by id */
};

void pl_cset_free(struct pl_provider *p, struct pl_cset *c);

#endif /* PL_CSET_H */
