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
 * every method.
 */
#ifndef PERFLIBD_PCQ_CORE_H
#define PERFLIBD_PCQ_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "ns.h"
#include "perflibv2.h"

struct pcq_session {
        struct ns *ns;                  /* borrowed; outlives the session */
        bool allowed;                   /* peer authorised (credentials checked by the transport) */
};

extern const struct pv2_handlers pcq_core_handlers;

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
