/* SPDX-License-Identifier: MIT */
/*
 * Collection: copying the values of by-reference counters
 * (PerfSetCounterRefValue) into their slots in the segment, for the collect
 * service and for readers in the same process.
 */
#include "collect.h"
#include "cset.h"
#include "state.h"

void pl_provider_collect(struct pl_provider *p)
{
        pthread_mutex_lock(&p->lock);
        uint32_t high = __atomic_load_n(&p->hdr->dir_high, __ATOMIC_RELAXED);
        for (uint32_t slot = 0; slot < high && slot < p->cap_refs; slot++) {
                void **addrs = p->refs[slot];
                uint64_t e = p->dir[slot];
                if (!addrs || e == 0)
                        continue;
                struct pl_cset *c = p->csets[e >> PL_DIR_CSET_SHIFT];
                uint8_t *inst = p->base + (e & PL_DIR_OFFSET_MASK) + sizeof(struct pl_seg_instance);
                for (uint32_t k = 0; k < c->num_refs; k++) {
                        const struct pl_counter *ctr = &c->counters[c->ref_counters[k]];
                        if (!addrs[k])
                                continue;
                        /* The provider's own threads write these variables as they please:
                         * one untorn load of its width, as the update path does. */
                        if (ctr->size == 8)
                                __atomic_store_n((uint64_t *) (inst + ctr->offset),
                                                 __atomic_load_n((uint64_t *) addrs[k],
                                                                 __ATOMIC_RELAXED),
                                                 __ATOMIC_RELAXED);
                        else if (ctr->size == 4)
                                __atomic_store_n((uint32_t *) (inst + ctr->offset),
                                                 __atomic_load_n((uint32_t *) addrs[k],
                                                                 __ATOMIC_RELAXED),
                                                 __ATOMIC_RELAXED);
                }
        }
        pthread_mutex_unlock(&p->lock);
}
