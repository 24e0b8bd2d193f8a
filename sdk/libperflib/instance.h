/* SPDX-License-Identifier: MIT */
/*
 * instance.c: instance blocks in the segment.  Finding the block of an
 * instance pointer, which instance.c and the update path both do: inline,
 * as it runs on every counter update.  Hidden.
 */
#ifndef PL_INSTANCE_H
#define PL_INSTANCE_H

#include <stdint.h>

#include "perflib.h"
#include "segment.h"
#include "state.h"

/*
 * The block of an instance pointer the API handed out; NULL when it cannot
 * be one.  Bounded by the constant heap end so the update path reads nothing
 * that changes.
 */
static inline struct pl_seg_instance *pl_instance_block(struct pl_provider *p,
                                                        PPERF_COUNTERSET_INSTANCE inst)
{
        uintptr_t a = (uintptr_t) inst, b = (uintptr_t) p->base;

        if (a < b + p->heap_lo + sizeof(struct pl_seg_instance) || a >= b + p->heap_hi ||
            (a - b) % PL_SEG_ALIGN != 0)
                return NULL;
        return (struct pl_seg_instance *) inst - 1;
}

#endif /* PL_INSTANCE_H */
