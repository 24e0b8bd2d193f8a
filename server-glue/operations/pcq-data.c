/* SPDX-License-Identifier: MIT */
/*
 * QueryCounterData (opnum 6): collects every counterset the query names
 * once, resolves each counter specification against that one snapshot, and
 * lays out the _PERF_DATA_HEADER and one _PERF_COUNTER_HEADER block per
 * specification (MS-PCQ 3.1.4.1.6).  A reply too big for the client's
 * buffer is kept on the query for the call that follows (pcq-query.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcq-data.h"
#include "pcq-buf.h"
#include "pcq-ns.h"
#include "pcq-query.h"
#include "pcq-reply.h"
#include "pcq-spec.h"

/* One counterset's data for this call. */
struct sample {
        const struct ns_counterset *cs;
        struct ns_snapshot *snap;       /* owned; NULL when status is set */
        uint32_t status;
};

/* How one specification's block comes out. */
struct plan {
        uint32_t status;                /* not 0: a PERF_ERROR_RETURN block */
        uint32_t type;                  /* PerfCounterDataType */
        const struct pcq_item *item;
        const struct ns_counterset *cs;
        const struct ns_snapshot *snap;
        long counter;                   /* index in cs->counters, -1 for all */
        const struct ns_instance *inst; /* for the one-instance block types */
};

struct data_call {
        const struct pcq_query *q;
        struct sample *samples;         /* at most one per item */
        size_t n_samples;
        struct plan *plans;             /* one per item */
        struct pcq_clocks clk;
};

/* The sample of cs, collected the first time cs is asked for. */
static struct sample *sample_of(struct ns *ns, struct data_call *dc,
                                const struct ns_counterset *cs)
{
        struct sample *s;
        int r;

        for (size_t i = 0; i < dc->n_samples; i++)
                if (dc->samples[i].cs == cs)
                        return &dc->samples[i];
        s = &dc->samples[dc->n_samples++];
        s->cs = cs;
        /* Shared with the requests for cs that arrived meanwhile: see ns.h. */
        r = ns_collect(ns, cs, dc->q->machine, dc->q->machine_len, &s->snap);
        if (r < 0) {
                s->snap = NULL;
                s->status = pcq_win32_from_errno(r);
        } else if (s->snap->n_counters != cs->n_counters) {
                s->status = ERROR_WMI_INVALID_REGINFO;
        }
        return s;
}

/* The instance a one-instance block reports, or a PERF_ERROR_RETURN status. */
static uint32_t pick_instance(struct plan *p, enum pcq_cs_kind kind)
{
        const struct ns_snapshot *snap = p->snap;

        if (kind == PCQ_CS_SINGLE) {
                if (snap->n_instances > 1)
                        return ERROR_WMI_INVALID_REGINFO;
                p->inst = snap->n_instances ? &snap->instances[0] : NULL;
        } else {
                for (uint32_t i = 0; i < snap->n_instances && !p->inst; i++)
                        if (pcq_instance_matches(p->item, &snap->instances[i]))
                                p->inst = &snap->instances[i];
        }
        return p->inst ? ERROR_SUCCESS : ERROR_WMI_INSTANCE_NOT_FOUND;
}

static void resolve(struct ns *ns, struct data_call *dc, struct plan *p,
                    const struct pcq_item *it)
{
        const struct ns_counterset *cs = ns_find(ns, &it->guid);
        const struct sample *s;
        enum pcq_cs_kind kind;
        bool all_instances;

        p->item = it;
        if (!cs) {
                p->status = ERROR_WMI_GUID_NOT_FOUND;
                return;
        }
        s = sample_of(ns, dc, cs);
        p->cs = cs;
        p->snap = s->snap;
        p->status = s->status;
        p->counter = -1;
        if (!p->status && it->counter_id != PERF_WILDCARD_COUNTER) {
                p->counter = pcq_counter_index(cs, it->counter_id);
                if (p->counter < 0)
                        p->status = ERROR_WMI_ITEMID_NOT_FOUND;
        }
        if (p->status)
                return;
        kind = pcq_cs_kind(cs);
        all_instances = kind == PCQ_CS_GLOBAL ||
                        (kind == PCQ_CS_MULTI && (!it->has_name || pcq_item_wildcard_instance(it)));
        if (all_instances) {
                p->type = p->counter < 0 ? PERF_COUNTERSET : PERF_MULTIPLE_INSTANCES;
                return;
        }
        p->type = p->counter < 0 ? PERF_MULTIPLE_COUNTERS : PERF_SINGLE_COUNTER;
        p->status = pick_instance(p, kind);
}

/* ---- the blocks ---- */

/* The bytes of a counter's raw value on the wire: 0, 4 or 8. */
static uint32_t value_bytes(const struct ns_counter *c)
{
        return c->size == 0 ? 0 : c->size <= 4 ? 4 : 8;
}

/* Bytes of one _PERF_COUNTER_DATA block: the structure, the value padded to 8. */
static uint32_t value_block_size(const struct ns_counter *c)
{
        return value_bytes(c) ? 16 : 8;
}

/*
 * Writes a _PERF_COUNTER_DATA block at p (value_block_size bytes, for a
 * 4-byte value the padding that ends it on 8 bytes zeroed); returns its end.
 */
static inline uint8_t *put_value(uint8_t *p, const struct ns_counter *c, uint64_t v)
{
        uint32_t n = value_bytes(c);
        uint32_t head[2] = { htole32(n), htole32(n ? 16 : 8) };
        uint64_t le = htole64(n == 4 ? (uint32_t) v : v);

        memcpy(p, head, 8);
        if (!n)
                return p + 8;
        memcpy(p + 8, &le, 8);
        return p + 16;
}

/* Bytes of the values of one instance, as emit_values puts them. */
static size_t values_size(const struct plan *p)
{
        size_t n = 0;

        if (p->counter >= 0)
                return value_block_size(&p->cs->counters[p->counter]);
        for (uint32_t i = 0; i < p->cs->n_counters; i++)
                n += value_block_size(&p->cs->counters[i]);
        return n;
}

/* The values of one instance at q (values_size bytes): one counter, or every counter. */
static inline void put_values(uint8_t *q, const struct plan *p, const struct ns_instance *inst)
{
        if (p->counter >= 0) {
                put_value(q, &p->cs->counters[p->counter], inst->values[p->counter]);
                return;
        }
        for (uint32_t i = 0; i < p->cs->n_counters; i++)
                q = put_value(q, &p->cs->counters[i], inst->values[i]);
}

static void emit_values(struct pcq_buf *b, const struct plan *p, const struct ns_instance *inst)
{
        uint8_t *q = pcq_buf_grab(b, values_size(p));

        if (q)
                put_values(q, p, inst);
}

/* _PERF_MULTI_COUNTERS and the counter id array, padded to 8. */
static void emit_counter_ids(struct pcq_buf *b, const struct ns_counterset *cs)
{
        pcq_buf_u32(b, (uint32_t) pcq_align8(8 + 4 * (size_t) cs->n_counters));
        pcq_buf_u32(b, cs->n_counters);
        for (uint32_t i = 0; i < cs->n_counters; i++)
                pcq_buf_u32(b, cs->counters[i].id);
        pcq_buf_pad8(b);
}

/* The instance block's head and name at q (8 + name16_size bytes); returns its end. */
static inline uint8_t *put_named(uint8_t *q, const struct ns_instance *inst)
{
        uint32_t head[2] = { htole32(8 + inst->name16_size), htole32(inst->id) };
        uint32_t size = inst->name16_size;

        memcpy(q, head, 8);
        /* name16_size is a non-zero multiple of 8, and names are short: 8 bytes at a time. */
        memcpy(q + 8, inst->name16, 8);
        for (uint32_t i = 8; i < size; i += 8)
                memcpy(q + 8 + i, inst->name16 + i, 8);
        return q + 8 + size;
}

/*
 * One instance block and its values, claimed at once when the namespace
 * has the name ready as the client receives it (the instance-heavy queries
 * spend their time here).
 */
static void emit_one(struct pcq_buf *b, const struct plan *p, const struct ns_instance *inst,
                     size_t vsize)
{
        uint8_t *q;

        if (!inst->name16) {
                pcq_emit_instance(b, inst);
                emit_values(b, p, inst);
                return;
        }
        q = pcq_buf_grab(b, 8 + (size_t) inst->name16_size + vsize);
        if (q)
                put_values(put_named(q, inst), p, inst);
}

/*
 * One counter of every instance, the blocks at q: what the plan says
 * loaded once, since every store through q could alias it.
 */
static void put_all_one_counter(uint8_t *q, const struct plan *p)
{
        const struct ns_instance *inst = p->snap->instances;
        const struct ns_instance *end = inst + p->snap->n_instances;
        const struct ns_counter *c = &p->cs->counters[p->counter];
        size_t idx = (size_t) p->counter;
        uint32_t nb = value_bytes(c);
        uint32_t head[2] = { htole32(nb), htole32(nb ? 16 : 8) };

        for (; inst < end; inst++) {
                uint64_t v = inst->values[idx];
                uint64_t le = htole64(nb == 4 ? (uint32_t) v : v);

                q = put_named(q, inst);
                memcpy(q, head, 8);
                if (nb)
                        memcpy(q + 8, &le, 8);
                q += nb ? 16 : 8;
        }
}

/*
 * Every instance, each with its name ready as the client receives it (the
 * instance-heavy queries spend their time here): the blocks sized first
 * and claimed at once.  false, with nothing written, when some name is not
 * ready.
 */
static bool emit_every_named(struct pcq_buf *b, const struct plan *p, size_t vsize)
{
        const struct ns_snapshot *snap = p->snap;
        size_t total = 0;
        uint8_t *q;

        for (uint32_t i = 0; i < snap->n_instances; i++) {
                if (!snap->instances[i].name16)
                        return false;
                total += 8 + (size_t) snap->instances[i].name16_size + vsize;
        }
        q = pcq_buf_grab(b, total);
        if (!q)
                return true;
        if (p->counter >= 0) {
                put_all_one_counter(q, p);
                return true;
        }
        for (uint32_t i = 0; i < snap->n_instances; i++) {
                q = put_named(q, &snap->instances[i]);
                put_values(q, p, &snap->instances[i]);
                q += vsize;
        }
        return true;
}

/* _PERF_MULTI_INSTANCES and an instance block for every instance selected. */
static void emit_instances(struct pcq_buf *b, const struct plan *p)
{
        const struct pcq_item *it = p->item;
        bool every = !it->has_name ||
                     (it->instance_id == PCQ_ANY_INSTANCE_ID && pcq_item_wildcard_instance(it));
        size_t start = b->len, vsize = values_size(p);
        uint32_t n = 0;

        pcq_buf_u32(b, 0);                      /* dwTotalSize, patched below */
        pcq_buf_u32(b, 0);                      /* dwInstances, patched below */
        if (every && emit_every_named(b, p, vsize)) {
                pcq_buf_patch_u32(b, start, (uint32_t) (b->len - start));
                pcq_buf_patch_u32(b, start + 4, p->snap->n_instances);
                return;
        }
        for (uint32_t i = 0; i < p->snap->n_instances; i++) {
                const struct ns_instance *inst = &p->snap->instances[i];

                if (!every && !pcq_instance_matches(it, inst))
                        continue;
                emit_one(b, p, inst, vsize);
                n++;
        }
        pcq_buf_patch_u32(b, start, (uint32_t) (b->len - start));
        pcq_buf_patch_u32(b, start + 4, n);
}

static void emit_block(struct pcq_buf *b, const struct plan *p)
{
        size_t start = b->len;
        uint32_t type = p->status ? PERF_ERROR_RETURN : p->type;

        pcq_buf_u32(b, p->status);
        pcq_buf_u32(b, type);
        pcq_buf_u32(b, 0);                      /* dwSize, patched below */
        pcq_buf_u32(b, 0);                      /* Reserved */
        switch (type) {
        case PERF_SINGLE_COUNTER:
                emit_values(b, p, p->inst);
                break;
        case PERF_MULTIPLE_COUNTERS:
                emit_counter_ids(b, p->cs);
                emit_values(b, p, p->inst);
                break;
        case PERF_MULTIPLE_INSTANCES:
                emit_instances(b, p);
                break;
        case PERF_COUNTERSET:
                emit_counter_ids(b, p->cs);
                emit_instances(b, p);
                break;
        }
        pcq_buf_patch_u32(b, start + 8, (uint32_t) (b->len - start));
}

static void emit_data(struct pcq_buf *b, const void *ctx)
{
        const struct data_call *dc = ctx;

        pcq_buf_u32(b, 0);                      /* dwTotalSize, patched below */
        pcq_buf_u32(b, (uint32_t) dc->q->n_items);
        pcq_buf_u64(b, dc->clk.perf_time);
        pcq_buf_u64(b, dc->clk.time_100ns);
        pcq_buf_u64(b, PCQ_PERF_FREQ);
        pcq_emit_systemtime(b, &dc->clk);
        for (size_t i = 0; i < dc->q->n_items; i++)
                emit_block(b, &dc->plans[i]);
        pcq_buf_patch_u32(b, 0, (uint32_t) b->len);
}

/*
 * A reply that did not fit (need bytes), written out and kept on q for the
 * call that follows with a buffer that size.  Nothing is kept when memory
 * or the query memory is short: that call collects again, as it would
 * have anyway.
 */
static void keep_reply(struct ns *ns, struct pcq_query *q, const struct data_call *dc,
                       uint32_t need)
{
        uint8_t *data;
        struct pcq_buf b;

        if (ns_mem_try(ns, need) < 0)
                return;
        data = malloc(need);
        if (data) {
                pcq_buf_write(&b, data, need);
                emit_data(&b, dc);
        }
        if (!data || b.overflow || b.len != need) {
                free(data);
                ns_mem_give(ns, need);
                return;
        }
        pcq_query_keep(q, ns, data, need);
}

uint32_t pcq_op_counter_data(struct ns *ns, struct pcq_query *q, uint32_t in_size,
                             struct pcq_reuse *reuse, struct pv2_out *out)
{
        struct data_call dc = { .q = q };
        uint32_t e = ERROR_OUTOFMEMORY;
        uint8_t *kept;
        uint32_t size;

        /* The call after a sizing call gets the sample the size was measured on. */
        if (pcq_query_take_kept(q, in_size, &kept, &size)) {
                pcq_reply_adopt(reuse, kept, size);
                out->data = kept;       /* lent to the stubs until release_out */
                out->out_size = out->rtn_size = size;
                q->data_size_hint = size;
                return ERROR_SUCCESS;
        }
        if (q->n_items > 0) {
                dc.samples = calloc(q->n_items, sizeof(*dc.samples));
                dc.plans = calloc(q->n_items, sizeof(*dc.plans));
                if (!dc.samples || !dc.plans)
                        goto done;
        }
        for (size_t i = 0; i < q->n_items; i++) {
                resolve(ns, &dc, &dc.plans[i], &q->items[i]);
                /* Refused, not answered in part: the query memory is spent. */
                if (dc.plans[i].status == ERROR_OUTOFMEMORY)
                        goto done;
        }
        pcq_clocks_read(&dc.clk);
        e = pcq_emit_hinted(emit_data, &dc, in_size, PV2_MAX_COUNTER_DATA_BYTES,
                            &q->data_size_hint, reuse, out);
        if (e == ERROR_NOT_ENOUGH_MEMORY)
                keep_reply(ns, q, &dc, out->rtn_size);
done:
        for (size_t i = 0; i < dc.n_samples; i++)
                ns_snapshot_free(dc.samples[i].snap);
        free(dc.samples);
        free(dc.plans);
        return e;
}
