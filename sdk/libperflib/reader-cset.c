/* SPDX-License-Identifier: MIT */
/*
 * Counterset descriptors on the reader's side: each validated once, copied,
 * and cached in the reader, since a published descriptor never changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader-cset.h"
#include "reader-open.h"
#include "reader.h"

int pl_reader_counterset_count(struct pl_reader *r)
{
        uint32_t n;
        int ret;

        if (!r)
                return -EINVAL;
        ret = load_cset_count(r, &n);
        return ret < 0 ? ret : (int) n;
}

static bool counter_numeric(uint32_t type)
{
        uint32_t s = type & PERF_SIZE_VARIABLE_LEN;

        return s != PERF_SIZE_ZERO && s != PERF_SIZE_VARIABLE_LEN;
}

static bool counter_ok(const struct pl_seg_counter *c, uint32_t data_size, uint32_t num_refs)
{
        if ((uint64_t) c->offset + c->size > data_size)
                return false;
        if (counter_numeric(c->type) &&
            ((c->size != 4 && c->size != 8) || c->offset % c->size != 0))
                return false;
        return c->ref_index == PL_SEG_NO_REF || c->ref_index < num_refs;
}

static bool cset_head_ok(const struct pl_seg_counterset *d, uint32_t index)
{
        return d->num_counters > 0 && d->num_counters <= PL_SEG_MAX_COUNTERS &&
               d->data_size % PL_SEG_ALIGN == 0 && d->data_size <= PL_SEG_MAX_DATA_SIZE &&
               d->num_refs <= d->num_counters && d->index == index;
}

/* Every counter in bounds, and exactly num_refs of them by reference. */
static bool counters_ok(const struct pl_seg_counter *cs, const struct pl_seg_counterset *d)
{
        uint32_t refs = 0;

        for (uint32_t i = 0; i < d->num_counters; i++) {
                if (!counter_ok(&cs[i], d->data_size, d->num_refs))
                        return false;
                refs += cs[i].ref_index != PL_SEG_NO_REF;
        }
        return refs == d->num_refs;
}

/* Copies and validates the descriptor at off; the copy is what gets checked. */
static int cset_load(const struct pl_reader *r, uint64_t off, uint32_t index,
                     struct pl_counterset **ret)
{
        struct pl_seg_counterset d;
        struct pl_counterset *c;
        size_t bytes;

        if (!heap_ok(r, off, sizeof(d)))
                return -EBADMSG;
        memcpy(&d, r->base + off, sizeof(d));
        bytes = (size_t) d.num_counters * sizeof(struct pl_seg_counter);
        if (!cset_head_ok(&d, index) || !heap_ok(r, off, sizeof(d) + (uint64_t) bytes))
                return -EBADMSG;
        c = malloc(sizeof(*c) + bytes);
        if (!c)
                return -ENOMEM;
        c->counters = (struct pl_seg_counter *) (c + 1);
        memcpy(c->counters, r->base + off + sizeof(d), bytes);
        if (!counters_ok(c->counters, &d)) {
                free(c);
                return -EBADMSG;
        }
        memcpy(&c->guid, d.guid, sizeof(GUID));
        c->index = index;
        c->instance_type = d.instance_type;
        c->num_counters = d.num_counters;
        c->data_size = d.data_size;
        c->num_refs = d.num_refs;
        *ret = c;
        return 0;
}

static int cache_grow(struct pl_reader *r, uint32_t index)
{
        uint32_t n = r->n_csets ? r->n_csets : 8;

        while (n <= index)
                n *= 2;
        struct pl_counterset **a = realloc(r->csets, sizeof(*a) * n);
        if (!a)
                return -ENOMEM;
        memset(a + r->n_csets, 0, sizeof(*a) * (n - r->n_csets));
        r->csets = a;
        r->n_csets = n;
        return 0;
}

int pl_reader_cset_get(struct pl_reader *r, uint32_t index, const struct pl_counterset **ret)
{
        int k;

        if (index < r->n_csets && r->csets[index]) {
                *ret = r->csets[index];
                return 0;
        }
        if (index >= r->n_csets && (k = cache_grow(r, index)) < 0)
                return k;
        const uint64_t *table = (const uint64_t *) (r->base + r->cset_table_off);
        uint64_t off = __atomic_load_n(&table[index], __ATOMIC_ACQUIRE);
        k = cset_load(r, off, index, &r->csets[index]);
        if (k < 0)
                return k;
        *ret = r->csets[index];
        return 0;
}

int pl_reader_counterset(struct pl_reader *r, uint32_t index, const struct pl_counterset **ret)
{
        uint32_t n;
        int k;

        if (!r || !ret)
                return -EINVAL;
        k = load_cset_count(r, &n);
        if (k < 0)
                return k;
        if (index >= n)
                return -ENOENT;
        return pl_reader_cset_get(r, index, ret);
}

int pl_reader_find_counterset(struct pl_reader *r, const GUID *guid,
                              const struct pl_counterset **ret)
{
        const struct pl_counterset *c;
        uint32_t n;
        int k;

        if (!r || !guid || !ret)
                return -EINVAL;
        k = load_cset_count(r, &n);
        if (k < 0)
                return k;
        for (uint32_t i = 0; i < n; i++) {
                /* A broken counterset cannot be the one asked for; look on. */
                if (pl_reader_cset_get(r, i, &c) == 0 &&
                    memcmp(&c->guid, guid, sizeof(GUID)) == 0) {
                        *ret = c;
                        return 0;
                }
        }
        return -ENOENT;
}
