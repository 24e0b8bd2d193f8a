/* SPDX-License-Identifier: MIT */
/*
 * Values only, into records the caller keeps from one call to the next
 * (perflibd's QueryCounterData): one counterset, one pass over the
 * directory, the checks of reader-snap.c without the names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "reader-conn.h"
#include "reader-cset.h"
#include "reader-open.h"
#include "reader.h"

/*
 * What every block of one counterset must show, worked out once per call
 * rather than per instance.  all8: every counter an aligned 8-byte slot
 * (the common layout), read without looking at each counter's size.
 */
struct rec_shape {
        const struct pl_counterset *c;
        uint64_t guid[2];
        uint32_t name_off;              /* InstanceNameOffset every block has */
        uint32_t n;                     /* counters */
        bool all8;
};

static void rec_shape_init(struct rec_shape *sh, const struct pl_counterset *c)
{
        *sh = (struct rec_shape) { .c = c, .n = c->num_counters, .all8 = true,
                                   .name_off = (uint32_t) sizeof(PERF_COUNTERSET_INSTANCE) +
                                               c->data_size };
        memcpy(sh->guid, &c->guid, sizeof(sh->guid));
        for (uint32_t i = 0; i < c->num_counters; i++)
                sh->all8 &= c->counters[i].size == 8 && c->counters[i].offset % 8 == 0;
}

/* inst_head_ok, with what depends on the counterset alone taken from sh. */
static inline bool rec_head_ok(const struct rec_shape *sh, const PERF_COUNTERSET_INSTANCE *ci)
{
        uint64_t g[2];

        memcpy(g, &ci->CounterSetGuid, sizeof(g));
        if (((g[0] ^ sh->guid[0]) | (g[1] ^ sh->guid[1])) != 0)
                return false;
        if (ci->InstanceNameOffset != sh->name_off || ci->InstanceNameSize < sizeof(wchar_t) ||
            ci->InstanceNameSize % sizeof(wchar_t) != 0 ||
            ci->InstanceNameSize > PL_SEG_MAX_NAME_BYTES)
                return false;
        return ci->dwSize == sh->name_off + pl_align_up(ci->InstanceNameSize, PL_SEG_ALIGN);
}

static inline void rec_values(const struct rec_shape *sh, const uint8_t *data, uint64_t *out)
{
        const struct pl_seg_counter *cs = sh->c->counters;

        if (sh->all8) {
                /* n >= 1 (cset_head_ok); a plain loop, nothing to unroll for one or two. */
                uint32_t i = 0;

                do
                        out[i] = __atomic_load_n((const uint64_t *) (data + cs[i].offset),
                                                 __ATOMIC_RELAXED);
                while (++i < sh->n);
                return;
        }
        for (uint32_t i = 0; i < sh->n; i++)
                out[i] = load_value(data, &cs[i]);
}

/*
 * One block read under its seq lock straight into rec: the checks of
 * inst_copy, without the name, the intermediate instance or its copy.
 */
static inline bool rec_read(const struct pl_reader *r, const struct rec_shape *sh,
                            uint64_t off, uint32_t slot, struct pl_value_rec *rec)
{
        const struct pl_seg_instance *si = (const struct pl_seg_instance *) (r->base + off);
        const uint8_t *ci_base = r->base + off + sizeof(*si);
        PERF_COUNTERSET_INSTANCE ci;
        uint32_t seq;

        if (!heap_ok(r, off, INSTANCE_HDR_SIZE + (uint64_t) sh->c->data_size))
                return false;
        seq = __atomic_load_n(&si->seq, __ATOMIC_ACQUIRE);
        if (seq & 1)
                return false;
        if (__atomic_load_n(&si->dir_slot, __ATOMIC_RELAXED) != slot)
                return false;
        __builtin_memcpy(&ci, ci_base, sizeof(ci));
        if (!rec_head_ok(sh, &ci) || !heap_ok(r, off, sizeof(*si) + (uint64_t) ci.dwSize))
                return false;
        rec_values(sh, ci_base + sizeof(ci), rec->values);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&si->seq, __ATOMIC_RELAXED) != seq)
                return false;
        rec->dir_slot = slot;
        rec->seq = seq;
        rec->block_off = off;
        rec->instance_id = ci.InstanceId;
        rec->num_values = sh->n;
        return true;
}

/* Room for n records of v->stride bytes; the records already there are kept. */
static int values_reserve(struct pl_values *v, size_t n)
{
        size_t need, cap;
        uint8_t *a;

        if (n > SIZE_MAX / v->stride)
                return -ENOMEM;
        need = n * v->stride;
        if (need <= v->cap)
                return 0;
        cap = v->cap ? v->cap : 4096;
        while (cap < need)
                cap *= 2;
        a = realloc(v->recs, cap);
        if (!a)
                return -ENOMEM;
        v->recs = a;
        v->cap = cap;
        return 0;
}

/*
 * Every slot up to dir_high holding an instance of c: a record is claimed
 * for each used slot of the counterset before it is read, so a block that
 * fails a check costs only the slot, left unused.
 */
static int values_scan(struct pl_reader *r, const struct pl_counterset *c, struct pl_values *v)
{
        const uint64_t *dir = (const uint64_t *) (r->base + r->dir_off);
        struct rec_shape sh;
        uint8_t *at, *end;
        uint32_t high;
        int k;

        k = load_dir_high(r, &high);
        if (k < 0)
                return k;
        rec_shape_init(&sh, c);
        /* A buffer from the first call on: no arithmetic on a NULL one below. */
        if (!v->recs && (k = values_reserve(v, 1)) < 0)
                return k;
        at = v->recs;
        end = v->recs + v->cap / v->stride * v->stride;
        for (uint32_t slot = 0; slot < high; slot++) {
                uint64_t e = __atomic_load_n(&dir[slot], __ATOMIC_ACQUIRE);

                if (e == 0 || (uint32_t) (e >> PL_DIR_CSET_SHIFT) != c->index)
                        continue;
                if (at == end) {
                        size_t n = (size_t) (at - v->recs) / v->stride;

                        k = values_reserve(v, n + 1);
                        if (k < 0)
                                return k;
                        at = v->recs + n * v->stride;
                        end = v->recs + v->cap / v->stride * v->stride;
                }
                if (rec_read(r, &sh, e & PL_DIR_OFFSET_MASK, slot, (struct pl_value_rec *) at))
                        at += v->stride;
        }
        v->n_instances = (uint32_t) ((size_t) (at - v->recs) / v->stride);
        return 0;
}

int pl_reader_values(struct pl_reader *r, uint32_t cset_index, unsigned flags,
                     struct pl_values *v)
{
        const struct pl_counterset *c;
        uint32_t n_csets;
        int k;

        if (!r || !v || (flags & ~PL_SNAPSHOT_COLLECT))
                return -EINVAL;
        v->n_instances = 0;
        v->refs_stale = false;
        k = load_cset_count(r, &n_csets);
        if (k < 0)
                return k;
        if (cset_index >= n_csets)
                return -ENOENT;
        k = pl_reader_cset_get(r, cset_index, &c);
        if (k < 0)
                return k;
        v->num_values = c->num_counters;
        v->stride = sizeof(struct pl_value_rec) + (size_t) c->num_counters * sizeof(uint64_t);
        if ((flags & PL_SNAPSHOT_COLLECT) && c->num_refs > 0)
                v->refs_stale = !pl_reader_collect(r);
        v->generation = __atomic_load_n(&hdr(r)->generation, __ATOMIC_ACQUIRE);
        k = values_scan(r, c, v);
        if (k < 0)
                v->n_instances = 0;
        return k;
}

void pl_reader_values_done(struct pl_values *v)
{
        if (!v)
                return;
        free(v->recs);
        v->recs = NULL;
        v->cap = 0;
        v->n_instances = 0;
}

int pl_reader_rec_name(struct pl_reader *r, uint32_t cset_index, const struct pl_value_rec *rec,
                       wchar_t *buf, uint32_t *ret_len)
{
        struct pl_instance in;

        if (!rec)
                return -EINVAL;
        in = (struct pl_instance) { .cset_index = cset_index, .instance_id = rec->instance_id,
                                    .dir_slot = rec->dir_slot, .seq = rec->seq,
                                    .block_off = rec->block_off };
        return pl_reader_instance_name(r, &in, buf, ret_len);
}
