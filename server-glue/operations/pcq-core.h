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
 * listed at the top of pcq-core.c.
 */
#ifndef PERFLIBD_PCQ_CORE_H
#define PERFLIBD_PCQ_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "ns.h"
#include "perflibv2.h"

/*
 * The buffer QueryCounterData replies are written into, kept from one call
 * to the next (a client polls the same query again and again) and lent to
 * the transport until the reply was sent (release_out).  Owned by the
 * session: pcq_session_trim frees it.
 */
struct pcq_reuse {
        uint8_t *data;
        size_t cap;
        size_t used;                    /* by the last reply written into it */
        bool busy;                      /* lent out: the next reply gets its own */
        unsigned small;                 /* replies in a row that used under a quarter of it */
};

struct pcq_session {
        struct ns *ns;                  /* borrowed; outlives the session */
        bool allowed;                   /* peer authorised (credentials checked by the transport) */
        struct pcq_reuse reply;         /* zeroed by the transport */
};

/*
 * Frees what the session keeps between calls (the reply buffer, unless it
 * is lent out): for a client gone idle, and before the session goes.
 */
void pcq_session_trim(struct pcq_session *s);

extern const struct pv2_handlers pcq_core_handlers;

/* Win32 codes the core returns that perflib.h does not define. */
#ifndef ERROR_RESOURCE_LANG_NOT_FOUND
#define ERROR_RESOURCE_LANG_NOT_FOUND   1815UL
#endif
#ifndef ERROR_WMI_INVALID_REGINFO
#define ERROR_WMI_INVALID_REGINFO       4211UL  /* 0x1073 */
#endif

/* The locale the namespace's strings are in (en-US), besides 0 (the default). */
#define PCQ_LCID_ENGLISH 0x0409u

/* Request codes of QueryCounterSetRegistrationInfo (section 3.1.4.1.2). */
enum pcq_request_code {
        PCQ_REQ_COUNTERSET_INFO = 1,
        PCQ_REQ_COUNTER_INFO = 2,
        PCQ_REQ_COUNTERSET_NAME = 3,
        PCQ_REQ_COUNTERSET_HELP = 4,
        PCQ_REQ_COUNTER_NAMES = 5,
        PCQ_REQ_COUNTER_HELP = 6,
        PCQ_REQ_PROVIDER_NAME = 7,
        PCQ_REQ_PROVIDER_GUID = 8,
        PCQ_REQ_COUNTERSET_ENGLISH_NAME = 9,
        PCQ_REQ_COUNTER_ENGLISH_NAMES = 10,
};

#endif /* PERFLIBD_PCQ_CORE_H */
