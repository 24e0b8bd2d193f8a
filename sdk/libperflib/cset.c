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

/* A counter's place in the data block. */
struct place {
        uint32_t width;         /* bytes of the value, from the type */
        uint32_t room;          /* bytes the counter takes */
        uint32_t offset;
};

/*
 * The value's width comes from the size bits of the type, as every Windows
 * reader takes it (PerfSetCounterRefValue's documentation: "depending on the
 * counter type, the pointer must reference a 4-byte or 8-byte unsigned
 * integer").  Size is the room the template gives the counter: real
 * templates pass more than the width (Service Fabric sizeof(LONGLONG) for a
 * 32-bit raw count), so it may exceed the width but not fall short of it.
 * A by-reference counter holds only the copied value here, so its Size
 * (sizeof(LPVOID) from ctrpp -legacy, sizeof(PERF_COUNTER_INFO) from Wine's
 * test) is not looked at.
 */
static bool place_counter(const PERF_COUNTER_INFO *ci, struct place *ret_pl)
{
        bool by_ref = ci->Attrib & PERF_ATTRIB_BY_REFERENCE;
        uint32_t w;

        switch (ci->Type & PERF_SIZE_VARIABLE_LEN) {
        case PERF_SIZE_DWORD:
                w = 4;
                break;
        case PERF_SIZE_LARGE:
                w = 8;
                break;
        case PERF_SIZE_ZERO:
                w = 0;
                break;
        default:
                if (ci->Size == 0 || ci->Size > MAX_TEXT_SIZE)
                        return false;
                w = ci->Size;
        }
        if (by_ref ? w != 4 && w != 8 : ci->Size < w)
                return false;
        *ret_pl = (struct place) { .width = w, .room = by_ref ? w : ci->Size };
        return true;
}

static bool valid_counter(const PERF_COUNTER_INFO *ci, struct place *ret_pl)
{
        return ci->CounterId != PERF_WILDCARD_COUNTER && place_counter(ci, ret_pl) &&
               !(ci->Attrib & ~KNOWN_ATTRIBS) && ci->Scale >= -10 && ci->Scale <= 10;
}

/* A power of two, as pl_align_up needs: a 3-byte text counter is aligned to 2, not 3. */
static uint32_t natural_align(uint32_t size)
{
        return size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
}

/*
 * Windows' slot: its user-mode runtime gives every 4- and 8-byte counter
 * one 8-byte slot, in template order (Wine's conformance test, run on
 * Windows, finds the second value 8 bytes after the first and the name at
 * 32 + 8 x NumCounters), so code that writes Instance + 1 + 8i itself works
 * on both.  A 4-byte value sits in the slot's low half, where a ULONG store
 * to the slot's address puts it.  Text counters take their own room.
 */
static uint32_t slot_size(const struct place *pl)
{
        if (pl->width != 4 && pl->width != 8)
                return pl->room;
        return pl->room > 8 ? (uint32_t) pl_align_up(pl->room, 8) : 8;
}

static uint32_t slot_align(const struct place *pl)
{
        return pl->width == 4 || pl->width == 8 ? 8 : natural_align(pl->room);
}

/* Our layout: template order, a slot each. */
static uint64_t layout_own(struct place *pl, uint32_t n)
{
        uint64_t end = 0;

        for (uint32_t i = 0; i < n && end <= PL_SEG_MAX_DATA_SIZE; i++) {
                uint64_t off = pl_align_up(end, slot_align(&pl[i]));
                pl[i].offset = (uint32_t) off;
                end = off + slot_size(&pl[i]);
        }
        return end;
}

/* The template's offsets, when every value is aligned to its width and no two counters overlap. */
static bool layout_given(const PERF_COUNTER_INFO *ci, struct place *pl, uint32_t n,
                         uint64_t *ret_end)
{
        uint64_t end = 0;

        for (uint32_t i = 0; i < n; i++) {
                uint64_t off = ci[i].Offset;
                if (off % natural_align(pl[i].width) != 0)
                        return false;
                for (uint32_t j = 0; j < i && pl[i].room; j++)
                        if (pl[j].room && off < (uint64_t) pl[j].offset + pl[j].room &&
                            pl[j].offset < off + pl[i].room)
                                return false;
                pl[i].offset = (uint32_t) off;
                if (off + pl[i].room > end)
                        end = off + pl[i].room;
        }
        *ret_end = end;
        return true;
}

/*
 * Windows ignores an Offset it cannot use (Wine's test passes 0xdeadbeef and
 * gets the counters laid out one after the other): all offsets 0 (Windows
 * ctrpp's user-mode output), misaligned, overlapping or out of bounds, the
 * counters get our layout.  Otherwise the template's offsets stand, so that
 * a provider writing its own data struct finds its members where it put
 * them.  Returns the data size (a multiple of 8), or 0 when the counters do
 * not fit in an instance.
 */
static uint32_t layout(const PERF_COUNTER_INFO *ci, struct place *pl, uint32_t n)
{
        bool all_zero = true;
        uint64_t end = 0;

        for (uint32_t i = 0; i < n; i++)
                all_zero = all_zero && ci[i].Offset == 0;
        if (all_zero || !layout_given(ci, pl, n, &end) || end > PL_SEG_MAX_DATA_SIZE)
                end = layout_own(pl, n);
        if (end > PL_SEG_MAX_DATA_SIZE)
                return 0;
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
        struct place *pl = pl_alloc(p, sizeof(*pl) * c->num_counters);
        ULONG err = ERROR_INVALID_PARAMETER;

        if (!pl)
                return ERROR_OUTOFMEMORY;
        for (uint32_t i = 0; i < c->num_counters; i++)
                if (!valid_counter(&ci[i], &pl[i]))
                        goto out;
        c->data_size = layout(ci, pl, c->num_counters);
        if (c->data_size == 0)
                goto out;
        for (uint32_t i = 0; i < c->num_counters; i++) {
                struct pl_counter *k = &c->counters[i];
                k->id = ci[i].CounterId;
                k->size = pl[i].width;
                k->offset = (uint32_t) sizeof(PERF_COUNTERSET_INSTANCE) + pl[i].offset;
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
        pl_free(p, pl);
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
                        .size = c->counters[i].size,
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
        /* ProviderGuid is not checked: Windows accepts another provider's (Wine's test). */
        if (!valid_instance_type(t->InstanceType))
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
