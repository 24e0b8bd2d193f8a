/* SPDX-License-Identifier: MIT */
/*
 * The browsing operations, which keep no state (MS-PCQ 3.1.1.5):
 * EnumerateCounterSet (opnum 0), QueryCounterSetRegistrationInfo (opnum 1)
 * and EnumerateCounterSetInstances (opnum 2).
 */
#include <stdlib.h>
#include <string.h>

#include "pcq-browse.h"
#include "pcq-buf.h"
#include "pcq-ns.h"
#include "pcq-reply.h"
#include "pcq-spec.h"

#define GUID_SIZE 16u

uint32_t pcq_op_enumerate_counterset(struct ns *ns, uint32_t in_size, struct pv2_out *out)
{
        static const GUID zero;
        size_t n = ns_count(ns);
        struct pcq_buf b;
        uint8_t *data;

        /* Counted in GUIDs; the stubs bound dwInSize far below this. */
        if (n > UINT32_MAX / GUID_SIZE)
                return ERROR_OUTOFMEMORY;
        out->rtn_size = (uint32_t) n;
        if (in_size < n)
                return ERROR_NOT_ENOUGH_MEMORY;
        if (n == 0)
                return ERROR_SUCCESS;
        data = malloc(n * GUID_SIZE);
        if (!data)
                return ERROR_OUTOFMEMORY;
        pcq_buf_write(&b, data, n * GUID_SIZE);
        for (size_t i = 0; i < n; i++) {
                const struct ns_counterset *cs = ns_at(ns, i);

                pcq_buf_guid(&b, cs ? &cs->guid : &zero);
        }
        out->data = data;
        out->out_size = (uint32_t) n;
        return ERROR_SUCCESS;
}

/* ---- opnum 1 ---- */

struct reg_request {
        const struct ns_counterset *cs;
        uint32_t code;
        const struct ns_counter *counter;       /* code 2 */
};

static void emit_counter_reg(struct pcq_buf *b, const struct ns_counter *c)
{
        pcq_buf_u32(b, c->id);
        pcq_buf_u32(b, c->type);
        pcq_buf_u64(b, c->attrib);
        pcq_buf_u32(b, c->detail_level);
        pcq_buf_u32(b, (uint32_t) c->default_scale);
        pcq_buf_u32(b, c->base_id);
        pcq_buf_u32(b, c->perf_time_id);
        pcq_buf_u32(b, c->perf_freq_id);
        pcq_buf_u32(b, c->multi_id);
        pcq_buf_u32(b, c->aggregate);
        pcq_buf_u32(b, 0);                      /* Reserved */
}

static void emit_counterset_reg(struct pcq_buf *b, const struct ns_counterset *cs)
{
        pcq_buf_guid(b, &cs->guid);
        pcq_buf_u32(b, 0);                      /* CounterSetType: unused, MUST be 0 */
        pcq_buf_u32(b, cs->detail_level);
        pcq_buf_u32(b, cs->n_counters);
        pcq_buf_u32(b, cs->instance_type);
        for (uint32_t i = 0; i < cs->n_counters; i++)
                emit_counter_reg(b, &cs->counters[i]);
}

/* _STRING_BUFFER_HEADER, the _STRING_COUNTER_HEADERs, the strings, padding. */
static void emit_counter_strings(struct pcq_buf *b, const struct ns_counterset *cs, bool help)
{
        size_t start = b->len, offset = 0;

        pcq_buf_u32(b, 0);                      /* dwSize, patched below */
        pcq_buf_u32(b, cs->n_counters);
        for (uint32_t i = 0; i < cs->n_counters; i++) {
                const struct ns_counter *c = &cs->counters[i];

                pcq_buf_u32(b, c->id);
                pcq_buf_u32(b, (uint32_t) offset);
                offset += 2 * (pcq_utf8_utf16_len(help ? c->description : c->name) + 1);
        }
        for (uint32_t i = 0; i < cs->n_counters; i++) {
                const struct ns_counter *c = &cs->counters[i];

                pcq_buf_utf8(b, help ? c->description : c->name);
        }
        pcq_buf_pad8(b);
        pcq_buf_patch_u32(b, start, (uint32_t) (b->len - start));
}

static void emit_registration(struct pcq_buf *b, const void *ctx)
{
        const struct reg_request *rq = ctx;
        const struct ns_counterset *cs = rq->cs;

        switch (rq->code) {
        case PCQ_REQ_COUNTERSET_INFO:
                emit_counterset_reg(b, cs);
                break;
        case PCQ_REQ_COUNTER_INFO:
                emit_counter_reg(b, rq->counter);
                break;
        case PCQ_REQ_COUNTERSET_NAME:
        case PCQ_REQ_COUNTERSET_ENGLISH_NAME:
                pcq_buf_utf8(b, cs->name);
                break;
        case PCQ_REQ_COUNTERSET_HELP:
                pcq_buf_utf8(b, cs->description);
                break;
        case PCQ_REQ_COUNTER_NAMES:
        case PCQ_REQ_COUNTER_ENGLISH_NAMES:
                emit_counter_strings(b, cs, false);
                break;
        case PCQ_REQ_COUNTER_HELP:
                emit_counter_strings(b, cs, true);
                break;
        case PCQ_REQ_PROVIDER_NAME:
                pcq_buf_utf8(b, cs->provider_name);
                break;
        case PCQ_REQ_PROVIDER_GUID:
                pcq_buf_guid(b, &cs->provider_guid);
                break;
        }
}

static bool localized(uint32_t code)
{
        return code >= PCQ_REQ_COUNTERSET_NAME && code <= PCQ_REQ_COUNTER_HELP;
}

uint32_t pcq_op_registration_info(struct ns *ns, const GUID *guid, uint32_t code,
                                  uint32_t lcid, uint32_t in_size, struct pv2_out *out)
{
        static const GUID zero;
        struct reg_request rq = { .code = code };
        long i;

        if (code < PCQ_REQ_COUNTERSET_INFO || code > PCQ_REQ_COUNTER_ENGLISH_NAMES)
                return ERROR_INVALID_PARAMETER;
        rq.cs = ns_find(ns, guid);
        if (!rq.cs)
                return ERROR_WMI_GUID_NOT_FOUND;
        if (localized(code) && lcid != 0 && lcid != PCQ_LCID_ENGLISH)
                return ERROR_RESOURCE_LANG_NOT_FOUND;
        if (code == PCQ_REQ_COUNTER_INFO) {
                /* RequestLCID carries the counter id for this code. */
                i = pcq_counter_index(rq.cs, lcid);
                if (i < 0)
                        return ERROR_WMI_ITEMID_NOT_FOUND;
                rq.counter = &rq.cs->counters[i];
        }
        if (code == PCQ_REQ_PROVIDER_GUID && !memcmp(&rq.cs->provider_guid, &zero, sizeof(zero)))
                return ERROR_WMI_GUID_NOT_FOUND;
        return pcq_emit(emit_registration, &rq, in_size, PV2_MAX_REG_INFO_BYTES, out);
}

/* ---- opnum 2 ---- */

static void emit_instances(struct pcq_buf *b, const void *ctx)
{
        const struct ns_snapshot *snap = ctx;

        for (uint32_t i = 0; i < snap->n_instances; i++)
                pcq_emit_instance(b, &snap->instances[i]);
}

uint32_t pcq_op_enumerate_instances(struct ns *ns, const wchar_t *machine, size_t machine_len,
                                    const GUID *guid, uint32_t in_size,
                                    struct pcq_reuse *reuse, struct pv2_out *out)
{
        const struct ns_counterset *cs = ns_find(ns, guid);
        struct ns_snapshot *snap = NULL;
        size_t hint = 0;
        uint32_t e;
        int r;

        if (!cs)
                return ERROR_WMI_GUID_NOT_FOUND;
        pcq_notify_machine(ns, cs, PERF_ENUMERATE_INSTANCES, machine, machine_len);
        r = ns_snapshot(ns, cs, 0, &snap);
        if (r < 0)
                return pcq_win32_from_errno(r);
        if (snap->n_instances == 0)
                e = ERROR_WMI_INSTANCE_NOT_FOUND;
        else if (pcq_cs_kind(cs) == PCQ_CS_SINGLE && snap->n_instances > 1)
                e = ERROR_WMI_INVALID_REGINFO;
        else
                e = pcq_emit_hinted(emit_instances, snap, in_size, PV2_MAX_INSTANCES_BYTES,
                                    &hint, reuse, out);
        ns_snapshot_free(snap);
        return e;
}
