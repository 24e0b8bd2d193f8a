/* SPDX-License-Identifier: MIT */
/*
 * PerfSetCounterSetInfo: validating a template, laying out its counter data,
 * and publishing its descriptor in the segment.
 */
#include <errno.h>
#include <string.h>

#include "align.h"
#include "cset.h"
#include "state.h"

#define MAX_TEXT_SIZE 65536u
#define KNOWN_ATTRIBS UINT64_C(0x1F)

static bool valid_instance_type(ULONG t)
{
        switch (t) {
        case PERF_COUNTERSET_SINGLE_INSTANCE:
        case PERF_COUNTERSET_MULTI_INSTANCES:
        case PERF_COUNTERSET_SINGLE_AGGREGATE:
        case PERF_COUNTERSET_MULTI_AGGREGATE:
        case PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY:
        case PERF_COUNTERSET_INSTANCE_AGGREGATE:
                return true;
        default:
                return false;
        }
}

/* The size a counter's value must have, from the size bits of its type. */
static bool valid_size(const PERF_COUNTER_INFO *ci)
{
        switch (ci->Type & PERF_SIZE_VARIABLE_LEN) {
        case PERF_SIZE_DWORD:
                return ci->Size == 4;
        case PERF_SIZE_LARGE:
                return ci->Size == 8;
        case PERF_SIZE_ZERO:
                return ci->Size == 0;
        default:
                return ci->Size > 0 && ci->Size <= MAX_TEXT_SIZE &&
                       !(ci->Attrib & PERF_ATTRIB_BY_REFERENCE);
        }
}

static bool valid_counter(const PERF_COUNTER_INFO *ci)
{
        return ci->CounterId != PERF_WILDCARD_COUNTER && valid_size(ci) &&
               !(ci->Attrib & ~KNOWN_ATTRIBS) && ci->Scale >= -10 && ci->Scale <= 10;
}

static uint32_t natural_align(uint32_t size)
{
        return size >= 8 ? 8 : size == 0 ? 1 : size;
}

/*
 * All offsets 0 (Windows ctrpp's user-mode output): lay the counters out in
 * order, each aligned to its size, i.e. as a C struct of them.  Otherwise the
 * template's offsets stand and must be aligned and must not overlap.
 * Returns the data size (a multiple of 8), or 0 for an invalid layout.
 */
static uint32_t layout(const PERF_COUNTER_INFO *ci, uint32_t n, uint32_t *offsets)
{
        bool all_zero = true;
        uint64_t end = 0;

        for (uint32_t i = 0; i < n; i++)
                all_zero = all_zero && ci[i].Offset == 0;
        for (uint32_t i = 0; i < n; i++) {
                uint32_t a = natural_align(ci[i].Size);
                uint64_t off = all_zero ? pl_align_up(end, a) : ci[i].Offset;
                if (off % a != 0)
                        return 0;
                for (uint32_t j = 0; !all_zero && j < i; j++)
                        if (off < (uint64_t) offsets[j] + ci[j].Size &&
                            offsets[j] < off + ci[i].Size && ci[i].Size && ci[j].Size)
                                return 0;
                offsets[i] = (uint32_t) off;
                if (off + ci[i].Size > end)
                        end = off + ci[i].Size;
                if (end > PL_SEG_MAX_DATA_SIZE)
                        return 0;
        }
        end = pl_align_up(end, PL_SEG_ALIGN);
        return end == 0 ? PL_SEG_ALIGN : (uint32_t) end;
}

static int id_table_insert(struct pl_cset *c, uint32_t id, uint32_t index)
{
        for (uint32_t h = (id * 2654435761u) & c->id_mask;; h = (h + 1) & c->id_mask) {
                uint32_t e = c->id_table[h];
                if (e == 0) {
                        c->id_table[h] = index + 1;
                        return 0;
                }
                if (c->counters[e - 1].id == id)
                        return -EEXIST;
        }
}

void pl_cset_free(struct pl_provider *p, struct pl_cset *c)
{
        if (!c)
                return;
        pl_free(p, c->counters);
        pl_free(p, c->ref_counters);
        pl_free(p, c->id_table);
        pl_free(p, c);
}

static struct pl_cset *cset_new(struct pl_provider *p, const PERF_COUNTERSET_INFO *t)
{
        struct pl_cset *c = pl_alloc0(p, sizeof(*c));
        uint32_t cap = 4;

        if (!c)
                return NULL;
        while (cap < 2 * t->NumCounters)
                cap <<= 1;
        c->guid = t->CounterSetGuid;
        c->instance_type = t->InstanceType;
        c->num_counters = t->NumCounters;
        c->id_mask = cap - 1;
        c->counters = pl_alloc0(p, sizeof(*c->counters) * t->NumCounters);
        c->ref_counters = pl_alloc0(p, sizeof(*c->ref_counters) * t->NumCounters);
        c->id_table = pl_alloc0(p, sizeof(*c->id_table) * cap);
        if (!c->counters || !c->ref_counters || !c->id_table) {
                pl_cset_free(p, c);
                return NULL;
        }
        return c;
}

/* Fills the private counter table; ERROR_INVALID_PARAMETER on any bad counter. */
static ULONG cset_fill(struct pl_provider *p, struct pl_cset *c, const PERF_COUNTER_INFO *ci)
{
        uint32_t *offsets = pl_alloc(p, sizeof(uint32_t) * c->num_counters);
        ULONG err = ERROR_INVALID_PARAMETER;

        if (!offsets)
                return ERROR_OUTOFMEMORY;
        for (uint32_t i = 0; i < c->num_counters; i++)
                if (!valid_counter(&ci[i]))
                        goto out;
        c->data_size = layout(ci, c->num_counters, offsets);
        if (c->data_size == 0)
                goto out;
        for (uint32_t i = 0; i < c->num_counters; i++) {
                struct pl_counter *k = &c->counters[i];
                k->id = ci[i].CounterId;
                k->size = ci[i].Size;
                k->offset = (uint32_t) sizeof(PERF_COUNTERSET_INSTANCE) + offsets[i];
                k->ref_index = PL_SEG_NO_REF;
                if (ci[i].Attrib & PERF_ATTRIB_BY_REFERENCE) {
                        k->ref_index = c->num_refs;
                        c->ref_counters[c->num_refs++] = i;
                }
                if (id_table_insert(c, k->id, i) < 0)
                        goto out;
        }
        err = ERROR_SUCCESS;
out:
        pl_free(p, offsets);
        return err;
}

static ULONG cset_publish(struct pl_provider *p, struct pl_cset *c, const PERF_COUNTER_INFO *ci)
{
        uint64_t size = sizeof(struct pl_seg_counterset) +
                        (uint64_t) c->num_counters * sizeof(struct pl_seg_counter);
        uint64_t off = pl_heap_take(p, size);

        if (off == 0)
                return ERROR_OUTOFMEMORY;
        struct pl_seg_counterset *d = (struct pl_seg_counterset *) (p->base + off);
        memcpy(d->guid, &c->guid, 16);
        d->instance_type = c->instance_type;
        d->num_counters = c->num_counters;
        d->data_size = c->data_size;
        d->num_refs = c->num_refs;
        d->index = c->index;
        struct pl_seg_counter *sc = (struct pl_seg_counter *) (d + 1);
        for (uint32_t i = 0; i < c->num_counters; i++) {
                sc[i] = (struct pl_seg_counter) {
                        .id = ci[i].CounterId,
                        .type = ci[i].Type,
                        .attrib = ci[i].Attrib,
                        .size = ci[i].Size,
                        .detail_level = ci[i].DetailLevel,
                        .scale = ci[i].Scale,
                        .offset = c->counters[i].offset - (uint32_t) sizeof(PERF_COUNTERSET_INSTANCE),
                        .ref_index = c->counters[i].ref_index,
                };
        }
        __atomic_store_n(&p->cset_table[c->index], off, __ATOMIC_RELEASE);
        __atomic_store_n(&p->hdr->cset_count, c->index + 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&p->hdr->generation, 1, __ATOMIC_RELEASE);
        return ERROR_SUCCESS;
}

static ULONG check_template(struct pl_provider *p, const PERF_COUNTERSET_INFO *t, ULONG size)
{
        if (size < sizeof(*t))
                return ERROR_INVALID_PARAMETER;
        if (t->NumCounters == 0 || t->NumCounters > PL_SEG_MAX_COUNTERS ||
            size < sizeof(*t) + (uint64_t) t->NumCounters * sizeof(PERF_COUNTER_INFO))
                return ERROR_INVALID_PARAMETER;
        if (memcmp(&t->ProviderGuid, &p->guid, sizeof(GUID)) != 0 ||
            !valid_instance_type(t->InstanceType))
                return ERROR_INVALID_PARAMETER;
        for (uint32_t i = 0; i < p->n_csets; i++)
                if (memcmp(&p->csets[i]->guid, &t->CounterSetGuid, sizeof(GUID)) == 0)
                        return ERROR_ALREADY_EXISTS;
        if (p->n_csets >= PL_SEG_MAX_COUNTERSETS)
                return ERROR_OUTOFMEMORY;
        return ERROR_SUCCESS;
}

static ULONG set_info_locked(struct pl_provider *p, const PERF_COUNTERSET_INFO *t, ULONG size)
{
        const PERF_COUNTER_INFO *ci = (const PERF_COUNTER_INFO *) (t + 1);
        struct pl_cset *c;
        ULONG err;

        err = check_template(p, t, size);
        if (err != ERROR_SUCCESS)
                return err;
        c = cset_new(p, t);
        if (!c)
                return ERROR_OUTOFMEMORY;
        c->index = p->n_csets;
        err = cset_fill(p, c, ci);
        if (err == ERROR_SUCCESS)
                err = cset_publish(p, c, ci);
        if (err != ERROR_SUCCESS) {
                pl_cset_free(p, c);
                return err;
        }
        /* The update path reads csets[] without the lock: publish last. */
        __atomic_store_n(&p->csets[c->index], c, __ATOMIC_RELEASE);
        p->n_csets++;
        return ERROR_SUCCESS;
}

ULONG PerfSetCounterSetInfo(HANDLE ProviderHandle, PPERF_COUNTERSET_INFO Template,
                            ULONG TemplateSize)
{
        struct pl_provider *p = ProviderHandle;
        ULONG err;

        if (!p || p->magic != PL_PROVIDER_MAGIC || !Template)
                return ERROR_INVALID_PARAMETER;
        pthread_mutex_lock(&p->lock);
        err = set_info_locked(p, Template, TemplateSize);
        pthread_mutex_unlock(&p->lock);
        return err;
}
