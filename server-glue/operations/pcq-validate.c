/* SPDX-License-Identifier: MIT */
/*
 * The query's list of counter specifications: ValidateCounters (opnum 7)
 * adds and removes _PERF_COUNTER_IDENTIFIER blocks the client sent, and
 * QueryCounterInfo (opnum 5) returns the list.  The request buffer is
 * untrusted: every field is read byte by byte from within its bounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcq-validate.h"
#include "pcq-buf.h"
#include "pcq-ns.h"
#include "pcq-query.h"
#include "pcq-reply.h"
#include "pcq-spec.h"

/* Offsets inside _PERF_COUNTER_IDENTIFIER. */
#define ID_STATUS       16u
#define ID_SIZE         20u
#define ID_COUNTER      24u
#define ID_INSTANCE     28u

/* QueryCounterInfo of a full query always fits what a client may ask for. */
_Static_assert((uint64_t) PCQ_QUERY_MAX_ITEMS *
               (PCQ_COUNTER_IDENTIFIER_SIZE + 2 * PCQ_MAX_NAME_UNITS) <= PV2_MAX_COUNTER_INFO_BYTES,
               "a query's QueryCounterInfo answer must fit the IDL's range");

static uint16_t rd16(const uint8_t *p)
{
        return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/*
 * Reads one identifier of size bytes (at least 40, inside the buffer) into
 * *ret; its name, if any, goes to scratch (PCQ_MAX_NAME_UNITS units).
 * Returns 0 or ERROR_INVALID_PARAMETER for a corrupt identifier.
 */
static uint32_t parse_identifier(const uint8_t *p, uint32_t size, uint16_t *scratch,
                                 struct pcq_item *ret)
{
        struct pcq_item it = {
                .guid.Data1 = rd32(p),
                .guid.Data2 = rd16(p + 4),
                .guid.Data3 = rd16(p + 6),
                .counter_id = rd32(p + ID_COUNTER),
                .instance_id = rd32(p + ID_INSTANCE),
        };
        size_t max, n = 0;

        memcpy(it.guid.Data4, p + 8, sizeof(it.guid.Data4));
        if (size % 8 != 0)
                return ERROR_INVALID_PARAMETER;
        if (size > PCQ_COUNTER_IDENTIFIER_SIZE) {
                max = (size - PCQ_COUNTER_IDENTIFIER_SIZE) / 2;
                if (max > PCQ_MAX_NAME_UNITS)
                        max = PCQ_MAX_NAME_UNITS;
                while (n < max && (scratch[n] = rd16(p + PCQ_COUNTER_IDENTIFIER_SIZE + 2 * n)))
                        n++;
                if (n == max)
                        return ERROR_INVALID_PARAMETER;         /* no NUL in reach */
                it.has_name = true;
                it.name = scratch;
                it.name_len = (uint32_t) n;
        }
        *ret = it;
        return ERROR_SUCCESS;
}

/* One ValidateCounters call's state. */
struct validate_call {
        struct ns *ns;
        struct pcq_query *q;
        uint16_t *scratch;
        /* The last snapshot taken, reused while identifiers stay in its counterset. */
        const struct ns_counterset *snap_cs;
        struct ns_snapshot *snap;
};

/* ERROR_PATH_NOT_FOUND unless a live instance of cs matches the named item. */
static uint32_t check_live(struct validate_call *vc, const struct ns_counterset *cs,
                           const struct pcq_item *it)
{
        int r;

        if (vc->snap_cs != cs) {
                ns_snapshot_free(vc->snap);
                vc->snap = NULL;
                vc->snap_cs = NULL;
                r = ns_snapshot(vc->ns, cs, 0, &vc->snap);
                if (r < 0)
                        return pcq_win32_from_errno(r);
                vc->snap_cs = cs;
        }
        for (uint32_t i = 0; i < vc->snap->n_instances; i++)
                if (pcq_instance_matches(it, &vc->snap->instances[i]))
                        return ERROR_SUCCESS;
        return ERROR_PATH_NOT_FOUND;
}

/*
 * Tells cs's providers about an added or removed item with the buffer
 * Windows passes: PERF_COUNTER_IDENTITY, machine name, instance name.
 */
static void notify_identity(struct validate_call *vc, const struct ns_counterset *cs,
                            uint32_t code, const struct pcq_item *it)
{
        PERF_COUNTER_IDENTITY id = {
                .CounterSetGuid = it->guid,
                .CounterId = it->counter_id,
                .InstanceId = it->instance_id,
                .MachineOffset = sizeof(id),
        };
        size_t m_bytes = (vc->q->machine_len + 1) * sizeof(wchar_t);
        wchar_t *name = NULL;
        size_t name_len = 0;
        uint8_t *buf;

        if (pcq_utf16_to_wcs(it->name, it->has_name ? it->name_len : 0, &name, &name_len) < 0)
                return;
        id.NameOffset = (ULONG) (sizeof(id) + m_bytes);
        id.BufferSize = (ULONG) (id.NameOffset + (name_len + 1) * sizeof(wchar_t));
        buf = malloc(id.BufferSize);
        if (buf) {
                memcpy(buf, &id, sizeof(id));
                memcpy(buf + id.MachineOffset, vc->q->machine, m_bytes);
                memcpy(buf + id.NameOffset, name, (name_len + 1) * sizeof(wchar_t));
                (void) ns_notify(vc->ns, cs, code, buf, id.BufferSize);
        }
        free(buf);
        free(name);
}

static uint32_t add_one(struct validate_call *vc, const uint8_t *p, uint32_t size)
{
        const struct ns_counterset *cs;
        struct pcq_item it;
        uint32_t e;

        e = parse_identifier(p, size, vc->scratch, &it);
        if (e)
                return e;
        cs = ns_find(vc->ns, &it.guid);
        if (!cs)
                return ERROR_WMI_GUID_NOT_FOUND;
        if (it.counter_id != PERF_WILDCARD_COUNTER && pcq_counter_index(cs, it.counter_id) < 0)
                return ERROR_WMI_ITEMID_NOT_FOUND;
        if (pcq_cs_kind(cs) != PCQ_CS_MULTI) {
                it.has_name = false;
                it.name = NULL;
                it.name_len = 0;
        } else if (!it.has_name)
                return ERROR_INVALID_PARAMETER;
        else if (!pcq_item_wildcard_instance(&it)) {
                e = check_live(vc, cs, &it);
                if (e)
                        return e;
        }
        if (pcq_query_find(vc->q, &it) >= 0)
                return ERROR_ALREADY_EXISTS;
        if (pcq_query_append(vc->q, &it) < 0)
                return ERROR_OUTOFMEMORY;
        notify_identity(vc, cs, PERF_ADD_COUNTER, &it);
        return ERROR_SUCCESS;
}

static uint32_t remove_one(struct validate_call *vc, const uint8_t *p, uint32_t size)
{
        const struct ns_counterset *cs;
        struct pcq_item it;
        uint32_t e;
        long i;

        e = parse_identifier(p, size, vc->scratch, &it);
        if (e)
                return e;
        cs = ns_find(vc->ns, &it.guid);
        i = pcq_query_find(vc->q, &it);
        if (i < 0 && it.has_name) {
                /* Items of sets without instance names were stored unnamed;
                 * this also finds them once their counterset has gone. */
                it.has_name = false;
                i = pcq_query_find(vc->q, &it);
        }
        if (i < 0)
                return ERROR_INVALID_PARAMETER;
        if (cs)
                notify_identity(vc, cs, PERF_REMOVE_COUNTER, &vc->q->items[i]);
        pcq_query_remove(vc->q, (size_t) i);
        return ERROR_SUCCESS;
}

/* Whether the identifiers chain through the whole buffer. */
static bool chain_valid(const uint8_t *data, uint32_t in_size)
{
        uint32_t size;

        for (uint32_t off = 0; in_size - off >= PCQ_COUNTER_IDENTIFIER_SIZE; off += size) {
                size = rd32(data + off + ID_SIZE);
                if (size < PCQ_COUNTER_IDENTIFIER_SIZE || size > in_size - off)
                        return false;
        }
        return true;
}

uint32_t pcq_op_validate(struct ns *ns, struct pcq_query *q, uint8_t *data, uint32_t in_size,
                         bool add)
{
        struct validate_call vc = { .ns = ns, .q = q };
        uint32_t size, status;

        if (!data || in_size < PCQ_COUNTER_IDENTIFIER_SIZE || !chain_valid(data, in_size))
                return ERROR_INVALID_PARAMETER;
        vc.scratch = malloc(PCQ_MAX_NAME_UNITS * sizeof(uint16_t));
        if (!vc.scratch)
                return ERROR_OUTOFMEMORY;
        for (uint32_t off = 0; in_size - off >= PCQ_COUNTER_IDENTIFIER_SIZE; off += size) {
                size = rd32(data + off + ID_SIZE);
                status = add ? add_one(&vc, data + off, size) : remove_one(&vc, data + off, size);
                wr32(data + off + ID_STATUS, status);
        }
        ns_snapshot_free(vc.snap);
        free(vc.scratch);
        return ERROR_SUCCESS;
}

/* ---- opnum 5 ---- */

static void emit_counter_info(struct pcq_buf *b, const void *ctx)
{
        const struct pcq_query *q = ctx;

        for (size_t i = 0; i < q->n_items; i++) {
                const struct pcq_item *it = &q->items[i];
                size_t start = b->len;

                pcq_buf_guid(b, &it->guid);
                pcq_buf_u32(b, ERROR_SUCCESS);          /* Status */
                pcq_buf_u32(b, 0);                      /* Size, patched below */
                pcq_buf_u32(b, it->counter_id);
                pcq_buf_u32(b, it->instance_id);
                pcq_buf_u32(b, (uint32_t) i);           /* Index: the block's position */
                pcq_buf_u32(b, 0);                      /* Reserved */
                pcq_buf_utf16(b, it->name, it->has_name ? it->name_len : 0);
                pcq_buf_pad8(b);
                pcq_buf_patch_u32(b, start + ID_SIZE, (uint32_t) (b->len - start));
        }
}

uint32_t pcq_op_counter_info(const struct pcq_query *q, uint32_t in_size, struct pv2_out *out)
{
        return pcq_emit(emit_counter_info, q, in_size, PV2_MAX_COUNTER_INFO_BYTES, out);
}
