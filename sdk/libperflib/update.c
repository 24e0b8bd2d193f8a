/* SPDX-License-Identifier: MIT */
/*
 * Counter updates: the hot path.  No lock and no system call: the counter
 * tables are immutable once published, and every value changes with one
 * relaxed atomic operation on an aligned slot, so concurrent increments are
 * all counted and readers never see a torn value.
 */
#include "cset.h"
#include "instance.h"
#include "state.h"

static inline const struct pl_counter *find_counter(const struct pl_cset *c, uint32_t id)
{
        for (uint32_t h = (id * 2654435761u) & c->id_mask;; h = (h + 1) & c->id_mask) {
                uint32_t e = c->id_table[h];
                if (e == 0)
                        return NULL;
                if (c->counters[e - 1].id == id)
                        return &c->counters[e - 1];
        }
}

/*
 * Resolves (instance, counter id) to the value's slot, checking that the
 * instance is one of this provider's live blocks and that the call's width
 * matches the counter.  by_ref selects PerfSetCounterRefValue's rule.
 */
static inline ULONG resolve(HANDLE h, PPERF_COUNTERSET_INSTANCE inst, ULONG id,
                            uint32_t width, bool by_ref, const struct pl_counter **ret_ctr)
{
        struct pl_provider *p = h;

        if (__builtin_expect(!p || !inst || p->magic != PL_PROVIDER_MAGIC, 0))
                return ERROR_INVALID_PARAMETER;
        const struct pl_seg_instance *si = pl_instance_block(p, inst);
        if (__builtin_expect(!si || (__atomic_load_n(&si->seq, __ATOMIC_RELAXED) & 1), 0))
                return ERROR_INVALID_PARAMETER;
        uint32_t cset = (uint32_t) (__atomic_load_n(&p->dir[si->dir_slot], __ATOMIC_RELAXED) >>
                                    PL_DIR_CSET_SHIFT);
        const struct pl_cset *c = __atomic_load_n(&p->csets[cset], __ATOMIC_ACQUIRE);
        const struct pl_counter *ctr = find_counter(c, id);
        if (__builtin_expect(!ctr, 0))
                return ERROR_NOT_FOUND;
        if (__builtin_expect((ctr->ref_index != PL_SEG_NO_REF) != by_ref, 0))
                return ERROR_INVALID_PARAMETER;
        if (__builtin_expect(width && ctr->size != width, 0))
                return ERROR_INVALID_PARAMETER;
        *ret_ctr = ctr;
        return ERROR_SUCCESS;
}

#define SLOT(inst, ctr, type) ((type *) ((uint8_t *) (inst) + (ctr)->offset))

ULONG PerfSetULongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
                               ULONG CounterId, ULONG Value)
{
        const struct pl_counter *ctr;
        ULONG err = resolve(Provider, Instance, CounterId, 4, false, &ctr);

        if (err == ERROR_SUCCESS)
                __atomic_store_n(SLOT(Instance, ctr, uint32_t), Value, __ATOMIC_RELAXED);
        return err;
}

ULONG PerfSetULongLongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
                                   ULONG CounterId, ULONGLONG Value)
{
        const struct pl_counter *ctr;
        ULONG err = resolve(Provider, Instance, CounterId, 8, false, &ctr);

        if (err == ERROR_SUCCESS)
                __atomic_store_n(SLOT(Instance, ctr, uint64_t), Value, __ATOMIC_RELAXED);
        return err;
}

ULONG PerfIncrementULongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
                                     ULONG CounterId, ULONG Value)
{
        const struct pl_counter *ctr;
        ULONG err = resolve(Provider, Instance, CounterId, 4, false, &ctr);

        if (err == ERROR_SUCCESS)
                __atomic_fetch_add(SLOT(Instance, ctr, uint32_t), Value, __ATOMIC_RELAXED);
        return err;
}

ULONG PerfIncrementULongLongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
                                         ULONG CounterId, ULONGLONG Value)
{
        const struct pl_counter *ctr;
        ULONG err = resolve(Provider, Instance, CounterId, 8, false, &ctr);

        if (err == ERROR_SUCCESS)
                __atomic_fetch_add(SLOT(Instance, ctr, uint64_t), Value, __ATOMIC_RELAXED);
        return err;
}

ULONG PerfDecrementULongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
                                     ULONG CounterId, ULONG Value)
{
        const struct pl_counter *ctr;
        ULONG err = resolve(Provider, Instance, CounterId, 4, false, &ctr);

        if (err == ERROR_SUCCESS)
                __atomic_fetch_sub(SLOT(Instance, ctr, uint32_t), Value, __ATOMIC_RELAXED);
        return err;
}

ULONG PerfDecrementULongLongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
                                         ULONG CounterId, ULONGLONG Value)
{
        const struct pl_counter *ctr;
        ULONG err = resolve(Provider, Instance, CounterId, 8, false, &ctr);

        if (err == ERROR_SUCCESS)
                __atomic_fetch_sub(SLOT(Instance, ctr, uint64_t), Value, __ATOMIC_RELAXED);
        return err;
}

/*
 * The address is kept in provider-private memory, never in the segment:
 * readers get the value, copied into the counter's slot on collection.
 */
ULONG PerfSetCounterRefValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
                             ULONG CounterId, PVOID Address)
{
        struct pl_provider *p = Provider;
        const struct pl_counter *ctr;
        ULONG err = resolve(Provider, Instance, CounterId, 0, true, &ctr);

        if (err != ERROR_SUCCESS)
                return err;
        uint32_t slot = ((struct pl_seg_instance *) Instance - 1)->dir_slot;
        pthread_mutex_lock(&p->lock);
        if (slot < p->cap_refs && p->refs[slot])
                p->refs[slot][ctr->ref_index] = Address;
        else
                err = ERROR_NOT_FOUND;
        pthread_mutex_unlock(&p->lock);
        return err;
}
