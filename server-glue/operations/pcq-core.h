/* SPDX-License-Identifier: MIT */
/*
 * pcq-core.h: the eight PerflibV2 operations of MS-PCQ section 3.1.4.1,
 * independent of any transport.  Each takes the C arguments of its IDL
 * method and produces the exact MS-PCQ buffer (section 2.2.4: little-endian,
 * structures on 8-byte boundaries, UTF-16LE strings) and Win32 code.
 *
 * pcq_core_handlers is the struct pv2_handlers the RPC stubs call; its conn
 * argument is a struct pcq_session * that the transport made for the
 * connection.  A session that is not allowed gets ERROR_ACCESS_DENIED from
 * every method (open_query then hands out no handle, so a session whose
 * allowed flag stays as the transport set it never holds a query that it
 * cannot close).
 *
 * Query handles: open_query allocates the query (owned by the stubs' handle
 * table from then on), close_query frees it.  For the lpData methods
 * out->data is malloc'd (owned by the stubs after return) and NULL whenever
 * out->out_size is 0.  The interpretations of MS-PCQ the core makes are
 * listed at the top of pcq-core.c.  The MS-PCQ constants its callers use
 * come with it (pcq-spec.h).
 */
#ifndef PERFLIBD_PCQ_CORE_H
#define PERFLIBD_PCQ_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "ns.h"
#include "pcq-reply.h"
#include "pcq-spec.h"
#include "perflibv2.h"

struct pcq_session {
        struct ns *ns;                  /* borrowed; outlives the session */
        bool allowed;                   /* peer authorised (credentials checked by the transport) */
        struct pcq_reuse reply;         /* zeroed by the transport */
        /*
         * Items one query of this session may hold (0: PCQ_QUERY_MAX_ITEMS,
         * also the ceiling); one more is refused with the per-identifier
         * Status ERROR_OUTOFMEMORY, MS-PCQ 3.1.4.1.7's code for an item the
         * server could not store.  Query handles are capped by the wire
         * (pv2_server_conn_set_max_queries).
         */
        size_t max_items;
        /*
         * The one query of the session that holds a sizing call's reply
         * (pcq-query.h), borrowed: keeping one per session rather than per
         * handle bounds what a client can leave the server holding by
         * opening many handles and never fetching their replies.
         */
        struct pcq_query *kept;
};

/* The ceiling of max_items (PCQ_QUERY_MAX_ITEMS), for the transport's checks. */
#define PCQ_SESSION_MAX_ITEMS 8192u


/*
 * Frees what the session keeps between calls (the reply buffer, unless it
 * is lent out): for a client gone idle, and before the session goes.
 */
void pcq_session_trim(struct pcq_session *s);

/*
 * Bytes of query memory the replies the session lent to the transport
 * hold: once they are sent, a transport that holds them until the next
 * request gives back those over PCQ_REPLY_KEEP_BYTES at once.
 */
size_t pcq_session_lent(const struct pcq_session *s);

extern const struct pv2_handlers pcq_core_handlers;

#endif /* PERFLIBD_PCQ_CORE_H */
