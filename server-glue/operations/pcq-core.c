/* SPDX-License-Identifier: MIT */
/*
 * The eight PerflibV2 operations of MS-PCQ 3.1.4.1, over the namespace
 * (ns.h), independent of any transport.  This file checks the session and
 * dispatches to the operations (pcq-browse.h, pcq-validate.h, pcq-data.h),
 * which share pcq-ns.h and pcq-reply.h.
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
 *     ERROR_OUTOFMEMORY (allocation, or the session's bound on items per
 *     query, max_items, at most PCQ_QUERY_MAX_ITEMS).  Removing what the
 *     query does not hold is ERROR_INVALID_PARAMETER, whatever the
 *     counterset.
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
 *     (snapshot does not fit the counterset), or the snapshot's failure;
 *     but a snapshot or reply the query memory cannot pay for (or memory
 *     runs out) fails the whole call with ERROR_OUTOFMEMORY, never a
 *     partial reply.  Names are resolved again on every call.
 * 12. Values: a counter of size 0 has dwDataSize 0, 1 to 4 bytes are sent
 *     as 4, larger as 8.  _PERF_COUNTER_DATA.dwSize and
 *     _PERF_MULTI_COUNTERS.dwSize include the zero padding that puts the
 *     next structure on 8 bytes (Windows' perflib.h says so for the first;
 *     the second follows from every structure starting on 8).
 * 13. Per call and counterset: one collection (ns_collect:
 *     PERF_COLLECT_START, a snapshot, PERF_COLLECT_END), shared with the
 *     calls for that counterset that arrived while another was under way
 *     and never one begun before the call arrived; every block of that
 *     counterset is cut from that one snapshot.  The clocks are read once,
 *     after collecting: PerfTimeStamp is CLOCK_MONOTONIC in ns with
 *     PerfFreq 1000000000; PerfTime100NSec and SystemTime (UTC) come from
 *     one CLOCK_REALTIME reading.  A call answered ERROR_NOT_ENOUGH_MEMORY
 *     keeps its reply on the handle; the next QueryCounterData on it
 *     within PCQ_KEPT_REPLY_NS whose buffer fits gets that reply, not a
 *     new sample (the size it was told is the size it gets); any other
 *     call on the handle drops it.  A provider that is stopped or missed
 *     the collect bound within the last second has its instances left out
 *     of the snapshot (the namespace's choice, ns.h), so its named
 *     instances are ERROR_WMI_INSTANCE_NOT_FOUND, never stale values.
 * 14. szMachine is only passed on to providers (NUL-terminated wchar_t,
 *     L"" when absent, cut at PCQ_MAX_NAME_UNITS), never interpreted; a
 *     shared collection carries the szMachine of the call that took it.
 * 15. A session that is not allowed gets ERROR_ACCESS_DENIED and nothing
 *     else happens; close_query then keeps the query (3.1.4.1.8).
 */
#include <stdlib.h>

#include "pcq-browse.h"
#include "pcq-buf.h"
#include "pcq-core.h"
#include "pcq-data.h"
#include "pcq-query.h"
#include "pcq-reply.h"
#include "pcq-validate.h"

_Static_assert(PCQ_SESSION_MAX_ITEMS == PCQ_QUERY_MAX_ITEMS, "one ceiling for items per query");

static struct pcq_session *session(void *conn, struct pv2_out *out)
{
        struct pcq_session *s = conn;

        if (out)
                *out = (struct pv2_out){ 0 };
        return s && s->allowed && s->ns ? s : NULL;
}

/* The session's reply buffers, paid from its namespace's query memory. */
static struct pcq_reuse *session_reply(struct pcq_session *s)
{
        s->reply.ns = s->ns;
        return &s->reply;
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
        e = pcq_op_enumerate_instances(s->ns, m, m_len, counterset, in_size, session_reply(s),
                                       out);
        free(m);
        return e;
}

static uint32_t h_open_query(void *conn, const uint16_t *machine, void **ret_query)
{
        struct pcq_session *s = session(conn, NULL);
        struct pcq_query *q;

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (!ret_query)
                return ERROR_INVALID_PARAMETER;
        if (pcq_query_new(machine, &q) < 0)
                return ERROR_OUTOFMEMORY;
        q->max_items = s->max_items;
        *ret_query = q;     /* owned by the stubs' handle table until close_query */
        return ERROR_SUCCESS;
}

static uint32_t h_close_query(void *conn, void *query)
{
        struct pcq_session *s = session(conn, NULL);

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (s->kept == query)
                s->kept = NULL;
        pcq_query_free(query);
        return ERROR_SUCCESS;
}

/* After a QueryCounterData on q: at most one query of s keeps a reply. */
static void session_kept(struct pcq_session *s, struct pcq_query *q)
{
        if (!q->kept) {
                if (s->kept == q)
                        s->kept = NULL;
                return;
        }
        if (s->kept && s->kept != q)
                pcq_query_forget(s->kept);
        s->kept = q;
}

static uint32_t h_query_counter_info(void *conn, void *query, uint32_t in_size,
                                     struct pv2_out *out)
{
        if (!session(conn, out))
                return ERROR_ACCESS_DENIED;
        if (!query)
                return ERROR_INVALID_HANDLE;
        pcq_query_forget(query);
        return pcq_op_counter_info(query, in_size, out);
}

static uint32_t h_query_counter_data(void *conn, void *query, uint32_t in_size,
                                     struct pv2_out *out)
{
        struct pcq_session *s = session(conn, out);
        uint32_t e;

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (!query)
                return ERROR_INVALID_HANDLE;
        e = pcq_op_counter_data(s->ns, query, in_size, session_reply(s), out);
        session_kept(s, query);
        return e;
}

/* The transport is done with an out->data: the reply buffer is free again. */
static void h_release_out(void *conn, uint8_t *data)
{
        struct pcq_session *s = conn;

        pcq_reply_put(s ? &s->reply : NULL, data);
}

void pcq_session_trim(struct pcq_session *s)
{
        if (s)
                pcq_reuse_trim(&s->reply);
}

size_t pcq_session_lent(const struct pcq_session *s)
{
        return pcq_reply_lent(&s->reply);
}

static uint32_t h_validate_counters(void *conn, void *query, uint8_t *data, uint32_t in_size,
                                    uint32_t add)
{
        struct pcq_session *s = session(conn, NULL);

        if (!s)
                return ERROR_ACCESS_DENIED;
        if (!query)
                return ERROR_INVALID_HANDLE;
        pcq_query_forget(query);
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
