/* SPDX-License-Identifier: MIT */
/*
 * The eight PerflibV2 operations of MS-PCQ 3.1.4.1, over the namespace
 * (ns.h), independent of any transport.  This file checks the session and
 * dispatches, and holds what the operations share; see pcq-internal.h for
 * where each operation lives.
 *
 * Where MS-PCQ leaves room, these are the readings taken (Windows' own
 * behaviour where it is documented, in its perflib.h or the API pages):
 *
 *  1. Sizes: _PERF_COUNTERSET_REG_INFO 32, _PERF_COUNTER_REG_INFO 48,
 *     _PERF_COUNTER_IDENTIFIER 40, _PERF_DATA_HEADER 48 (SYSTEMTIME is
 *     16 bytes; Figure 5 spends a 32-bit row on each of its eight WORDs).
 *  2. pdwRtnSize rule: when dwInSize is too small, ERROR_NOT_ENOUGH_MEMORY
 *     with pdwOutSize 0 and pdwRtnSize the size needed (opnum 0: in GUIDs,
 *     and pdwRtnSize is the total on success too).  A result larger than
 *     the IDL lets dwInSize be is ERROR_OUTOFMEMORY with both sizes 0: no
 *     client could ever fetch it, and a truncated buffer is never sent.
 *  3. Strings are UTF-16LE and NUL-terminated; what cannot be encoded
 *     (bad UTF-8, surrogates or values above U+10FFFF in wchar_t, an
 *     embedded NUL) becomes U+FFFD.  A lone string (request codes 3, 4, 7,
 *     9) is exactly its bytes, unpadded.  In a string block (codes 5, 6,
 *     10) the strings follow each other unpadded as in Figure 2, the block
 *     is zero-padded to 8 and dwSize counts the padding.  dwOffset is from
 *     the end of the _STRING_COUNTER_HEADER array, as MS-PCQ 2.2.4.4 says
 *     (Windows' perflib.h counts from the block start in its local API).
 *  4. RequestLCID: the namespace holds one language, the manifests'
 *     strings, served as English.  Codes 3-6 accept 0 (default) and 0x409;
 *     any other LCID gets ERROR_RESOURCE_LANG_NOT_FOUND (1815), the code
 *     Windows' resource loader gives for a language it has no strings in,
 *     which is MS-PCQ's "language not installed" case.  Codes 1, 7-10
 *     ignore RequestLCID.  Checks run code, counterset, then LCID or
 *     counter id.  Code 8 for a counterset whose provider GUID is unknown
 *     (all zero) is ERROR_WMI_GUID_NOT_FOUND, per the return table.
 *  5. Counterset kinds.  Single-instance (type 0): identifiers name no
 *     instance (a name sent is ignored), the one live instance is used;
 *     none is ERROR_WMI_INSTANCE_NOT_FOUND, more than one is
 *     ERROR_WMI_INVALID_REGINFO (MS-PCQ's own example of that code).
 *     Global aggregates (4, 12: no "multiple" flag, but one instance per
 *     provider): names ignored, every instance returned, because the client
 *     aggregates across all of them.  Multiple-instance kinds: a name is
 *     required (Windows' perflib.h), "*" being the wildcard.
 *  6. Instances match by exact name (code unit by code unit, no case
 *     folding; "*" is the only wildcard) and by InstanceId unless it is
 *     0xFFFFFFFF, which Windows' perflib.h defines as "any id".
 *  7. EnumerateCounterSetInstances sends PERF_ENUMERATE_INSTANCES first;
 *     no live instance is ERROR_WMI_INSTANCE_NOT_FOUND.
 *  8. ValidateCounters: dwInSize below 40, or an identifier whose Size is
 *     below 40 or runs past the buffer (the chain cannot be followed), fails
 *     the whole call with ERROR_INVALID_PARAMETER and changes nothing.
 *     Fewer than 40 trailing bytes are ignored.  Per identifier, in this
 *     order: ERROR_INVALID_PARAMETER when corrupt (Size not a multiple of
 *     8, a name with no NUL inside Size or of 2048 units or more, no name
 *     for a multiple-instance set), ERROR_WMI_GUID_NOT_FOUND,
 *     ERROR_WMI_ITEMID_NOT_FOUND, ERROR_PATH_NOT_FOUND (a named instance
 *     with no live match when added: MS-PCQ's table), ERROR_ALREADY_EXISTS,
 *     ERROR_OUTOFMEMORY (allocation, or the query's bound of
 *     PCQ_QUERY_MAX_ITEMS).  Removing what the query does not hold is
 *     ERROR_INVALID_PARAMETER, whatever the counterset.
 *  9. PERF_ADD_COUNTER / PERF_REMOVE_COUNTER go to the counterset's
 *     providers once per identifier, with the buffer Windows builds: a
 *     PERF_COUNTER_IDENTITY (host layout: providers are local programs)
 *     followed by the machine name and the instance name as NUL-terminated
 *     wchar_t strings (PCWSTR is wchar_t on Linux), offsets from the start
 *     of the identity, BufferSize the total; L"" for an unnamed item.  A
 *     provider's answer does not change Status (ns_notify reports none).
 * 10. QueryCounterInfo returns every identifier with a name (L"" for
 *     unnamed ones, MS-PCQ 3.1.4.1.5), Status 0, Index its position.
 * 11. QueryCounterData: one block per identifier, in Index order.  Counter
 *     wildcard and instance "*" choose the block type; a named instance
 *     takes the first match in the snapshot.  "*" with no live instance is
 *     a PERF_MULTIPLE_INSTANCES block with dwInstances 0.  PERF_ERROR_RETURN
 *     statuses: ERROR_WMI_GUID_NOT_FOUND (counterset gone),
 *     ERROR_WMI_ITEMID_NOT_FOUND (counter gone), ERROR_WMI_INSTANCE_NOT_FOUND
 *     (named or single instance not live), ERROR_WMI_INVALID_REGINFO
 *     (snapshot does not fit the counterset), or the snapshot's failure.
 *     Names are resolved again on every call.
 * 12. Values: a counter of size 0 has dwDataSize 0, 1 to 4 bytes are sent
 *     as 4, larger as 8.  _PERF_COUNTER_DATA.dwSize and
 *     _PERF_MULTI_COUNTERS.dwSize include the zero padding that puts the
 *     next structure on 8 bytes (Windows' perflib.h says so for the first;
 *     the second follows from every structure starting on 8).
 * 13. Per call and counterset: PERF_COLLECT_START, one
 *     ns_snapshot(NS_SNAPSHOT_COLLECT), PERF_COLLECT_END; every block of that
 *     counterset is cut from that one snapshot.  The clocks are read once,
 *     after collecting: PerfTimeStamp is CLOCK_MONOTONIC in ns with
 *     PerfFreq 1000000000; PerfTime100NSec and SystemTime (UTC) come from
 *     one CLOCK_REALTIME reading.
 * 14. szMachine is only passed on to providers (NUL-terminated wchar_t,
 *     L"" when absent, cut at PCQ_MAX_NAME_UNITS), never interpreted.
 * 15. A session that is not allowed gets ERROR_ACCESS_DENIED and nothing
 *     else happens; close_query then keeps the query (3.1.4.1.8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcq-internal.h"

enum pcq_cs_kind pcq_cs_kind(const struct ns_counterset *cs)
{
        if (cs->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE)
                return PCQ_CS_MULTI;
        if (cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE)
                return PCQ_CS_SINGLE;
        return PCQ_CS_GLOBAL;
}

long pcq_counter_index(const struct ns_counterset *cs, uint32_t id)
{
        for (uint32_t i = 0; i < cs->n_counters; i++)
                if (cs->counters[i].id == id)
                        return (long) i;
        return -1;
}

bool pcq_instance_matches(const struct pcq_item *it, const struct ns_instance *inst)
{
        if (!it->has_name)
                return true;
        if (it->instance_id != PCQ_ANY_INSTANCE_ID && it->instance_id != inst->id)
                return false;
        if (pcq_item_wildcard_instance(it))
                return true;
        if (inst->name16)
                return pcq_utf16_eq_le(it->name, it->name_len, inst->name16, inst->name16_size);
        return pcq_utf16_eq_wcs(it->name, it->name_len, inst->name,
                                inst->name ? inst->name_len : 0);
}

uint32_t pcq_win32_from_errno(int r)
{
        switch (r) {
        case -ENOMEM:
                return ERROR_OUTOFMEMORY;
        case -ETIMEDOUT:
                return ERROR_TIMEOUT;
        case -ENOENT:
                return ERROR_WMI_GUID_NOT_FOUND;
        default:
                return ERROR_GEN_FAILURE;
        }
}

uint32_t pcq_emit(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                  struct pv2_out *out)
{
        struct pcq_buf b;
        uint8_t *data;
        size_t need;

        pcq_buf_measure(&b, limit);
        fn(&b, ctx);
        if (b.overflow)
                return ERROR_OUTOFMEMORY;
        need = b.len;
        if (need > in_size) {
                out->rtn_size = (uint32_t) need;
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        if (need == 0)
                return ERROR_SUCCESS;
        data = malloc(need);
        if (!data)
                return ERROR_OUTOFMEMORY;
        pcq_buf_write(&b, data, need);
        fn(&b, ctx);
        if (b.overflow || b.len != need) {
                /* A serializer that did not repeat itself: a bug, never sent. */
                free(data);
                return ERROR_GEN_FAILURE;
        }
        out->data = data;   /* ownership passes to the stubs */
        out->out_size = out->rtn_size = (uint32_t) need;
        return ERROR_SUCCESS;
}

/* Past this, a reply buffer is not kept for replies of under a quarter of it. */
#define REUSE_KEEP_BYTES        (1024 * 1024)
#define REUSE_SMALL_CALLS       8

static void reuse_free(struct pcq_reuse *reuse)
{
        free(reuse->data);
        *reuse = (struct pcq_reuse){ 0 };
}

/* cap bytes for a reply: reuse's buffer when it is free, else an allocation of its own. */
static uint8_t *reply_get(struct pcq_reuse *reuse, size_t cap)
{
        if (!reuse || reuse->busy)
                return malloc(cap);
        if (reuse->cap < cap) {
                /* Nothing in it to keep: no realloc copy. */
                free(reuse->data);
                reuse->data = malloc(cap);
                reuse->cap = reuse->data ? cap : 0;
                if (!reuse->data)
                        return NULL;
        }
        reuse->busy = true;
        return reuse->data;
}

/*
 * Takes back a buffer from reply_get, used bytes of it written; a big one
 * that replies have used little of for a while goes.
 */
static void reply_put(struct pcq_reuse *reuse, uint8_t *data, size_t used)
{
        if (!reuse || !data || data != reuse->data) {
                free(data);
                return;
        }
        reuse->busy = false;
        reuse->small = used < reuse->cap / 4 ? reuse->small + 1 : 0;
        if (reuse->cap > REUSE_KEEP_BYTES && reuse->small >= REUSE_SMALL_CALLS)
                reuse_free(reuse);
}

/* One writing pass into cap bytes; false (nothing kept) when they were too few. */
static bool emit_once(pcq_emit_fn fn, const void *ctx, size_t cap, uint32_t in_size,
                      struct pcq_reuse *reuse, struct pv2_out *out, uint32_t *ret)
{
        uint8_t *data = reply_get(reuse, cap);
        struct pcq_buf b;

        if (!data)
                return false;
        pcq_buf_write(&b, data, cap);
        fn(&b, ctx);
        if (b.overflow) {
                reply_put(reuse, data, cap);
                return false;
        }
        out->rtn_size = (uint32_t) b.len;
        if (b.len > in_size || b.len == 0) {
                reply_put(reuse, data, b.len);
                *ret = b.len > in_size ? ERROR_NOT_ENOUGH_MEMORY : ERROR_SUCCESS;
                return true;
        }
        out->data = data;   /* lent to the stubs until release_out, or theirs (free) */
        out->out_size = (uint32_t) b.len;
        if (reuse && data == reuse->data)
                reuse->used = b.len;
        *ret = ERROR_SUCCESS;
        return true;
}

uint32_t pcq_emit_hinted(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                         size_t *hint, struct pcq_reuse *reuse, struct pv2_out *out)
{
        size_t cap = *hint + *hint / 8 + 256;
        uint32_t e;

        if (*hint > 0 && emit_once(fn, ctx, cap < limit ? cap : limit, in_size, reuse, out, &e)) {
                *hint = out->rtn_size;
                return e;
        }
        e = pcq_emit(fn, ctx, in_size, limit, out);
        if (e == ERROR_SUCCESS || e == ERROR_NOT_ENOUGH_MEMORY)
                *hint = out->rtn_size;
        return e;
}

void pcq_emit_instance(struct pcq_buf *b, const struct ns_instance *inst)
{
        size_t len = inst->name ? inst->name_len : 0;
        size_t start = b->len;

        if (inst->name16) {
                pcq_emit_instance16(b, inst);
                return;
        }
        /* Size is what the block came to: patched, so the name is read once. */
        pcq_buf_u32(b, 0);
        pcq_buf_u32(b, inst->id);
        pcq_buf_wcs(b, inst->name, len);
        pcq_buf_pad8(b);
        pcq_buf_patch_u32(b, start, (uint32_t) (b->len - start));
}

void pcq_notify_machine(struct ns *ns, const struct ns_counterset *cs, uint32_t code,
                        const wchar_t *machine, size_t machine_len)
{
        static const wchar_t none[] = L"";

        if (!machine) {
                machine = none;
                machine_len = 0;
        }
        /* Providers that do not answer are the namespace's concern; the
         * request goes on either way, as on Windows. */
        (void) ns_notify(ns, cs, code, machine, (uint32_t) ((machine_len + 1) * sizeof(wchar_t)));
}

/* ---- the handlers the stubs call ---- */

static struct pcq_session *session(void *conn, struct pv2_out *out)
{
        struct pcq_session *s = conn;

        if (out)
                *out = (struct pv2_out){ 0 };
        return s && s->allowed && s->ns ? s : NULL;
}

static uint32_t h_enumerate_counterset(void *conn, const uint16_t *machine, uint32_t in_size,
                                       struct pv2_out *out)
{
        struct pcq_session *s = session(conn, out);

        return s ? pcq_op_enumerate_counterset(s->ns, in_size, out) : ERROR_ACCESS_DENIED;
}

static uint32_t h_query_registration_info(void *conn, const uint16_t *machine,
                                          const GUID *counterset, uint32_t request_code,
                                          uint32_t request_lcid, uint32_t in_size,
                                          struct pv2_out *out)
{
        struct pcq_session *s = session(conn, out);

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (!counterset)
                return ERROR_INVALID_PARAMETER;
        return pcq_op_registration_info(s->ns, counterset, request_code, request_lcid, in_size,
                                        out);
}

static uint32_t h_enumerate_instances(void *conn, const uint16_t *machine,
                                      const GUID *counterset, uint32_t in_size,
                                      struct pv2_out *out)
{
        struct pcq_session *s = session(conn, out);
        wchar_t *m = NULL;
        size_t m_len = 0;
        uint32_t e;

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (!counterset)
                return ERROR_INVALID_PARAMETER;
        if (pcq_utf16z_to_wcs(machine, PCQ_MAX_NAME_UNITS, &m, &m_len) < 0)
                return ERROR_OUTOFMEMORY;
        e = pcq_op_enumerate_instances(s->ns, m, m_len, counterset, in_size, out);
        free(m);
        return e;
}

static uint32_t h_open_query(void *conn, const uint16_t *machine, void **ret_query)
{
        struct pcq_query *q;

        if (!session(conn, NULL))
                return ERROR_ACCESS_DENIED;
        if (!ret_query)
                return ERROR_INVALID_PARAMETER;
        if (pcq_query_new(machine, &q) < 0)
                return ERROR_OUTOFMEMORY;
        *ret_query = q;     /* owned by the stubs' handle table until close_query */
        return ERROR_SUCCESS;
}

static uint32_t h_close_query(void *conn, void *query)
{
        if (!session(conn, NULL))
                return ERROR_ACCESS_DENIED;
        pcq_query_free(query);
        return ERROR_SUCCESS;
}

static uint32_t h_query_counter_info(void *conn, void *query, uint32_t in_size,
                                     struct pv2_out *out)
{
        if (!session(conn, out))
                return ERROR_ACCESS_DENIED;
        if (!query)
                return ERROR_INVALID_HANDLE;
        return pcq_op_counter_info(query, in_size, out);
}

static uint32_t h_query_counter_data(void *conn, void *query, uint32_t in_size,
                                     struct pv2_out *out)
{
        struct pcq_session *s = session(conn, out);

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (!query)
                return ERROR_INVALID_HANDLE;
        return pcq_op_counter_data(s->ns, query, in_size, &s->reply, out);
}

/* The transport is done with an out->data: the reply buffer is free again. */
static void h_release_out(void *conn, uint8_t *data)
{
        struct pcq_session *s = conn;

        reply_put(s ? &s->reply : NULL, data, s ? s->reply.used : 0);
}

void pcq_session_trim(struct pcq_session *s)
{
        if (s && !s->reply.busy)
                reuse_free(&s->reply);
}

static uint32_t h_validate_counters(void *conn, void *query, uint8_t *data, uint32_t in_size,
                                    uint32_t add)
{
        struct pcq_session *s = session(conn, NULL);

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (!query)
                return ERROR_INVALID_HANDLE;
        return pcq_op_validate(s->ns, query, data, in_size, add != 0);
}

const struct pv2_handlers pcq_core_handlers = {
        .enumerate_counterset = h_enumerate_counterset,
        .query_registration_info = h_query_registration_info,
        .enumerate_instances = h_enumerate_instances,
        .open_query = h_open_query,
        .close_query = h_close_query,
        .query_counter_info = h_query_counter_info,
        .query_counter_data = h_query_counter_data,
        .validate_counters = h_validate_counters,
        .release_out = h_release_out,
};
