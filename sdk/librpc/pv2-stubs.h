/* SPDX-License-Identifier: MIT */
/*
 * pv2-stubs.h: the server stubs of PerflibV2, between the PDU layer
 * (pv2-server.c) and the handlers: per-opnum unmarshalling of the request,
 * the call, marshalling of the response, and the connection's table of
 * context handles.
 */
#ifndef PCQ_PV2_STUBS_H
#define PCQ_PV2_STUBS_H

#include <stddef.h>
#include <stdint.h>

#include "ndr.h"
#include "perflibv2.h"

/* The most query handles one connection may hold open. */
#define PV2_MAX_QUERIES_PER_CONN PV2_MAX_QUERIES

struct pv2_stubs;

/* Owned by the caller (pv2_stubs_free).  0 or -ENOMEM. */
int pv2_stubs_new(const struct pv2_handlers *h, void *conn, struct pv2_stubs **ret);
/* Closes every query still open (handlers->close_query), then frees. */
void pv2_stubs_free(struct pv2_stubs *s);
size_t pv2_stubs_queries(const struct pv2_stubs *s);
/* Lowers the handle cap: 0, or -EINVAL outside [1, PV2_MAX_QUERIES_PER_CONN]. */
int pv2_stubs_set_max_queries(struct pv2_stubs *s, size_t n);
/* Gives a handler's out->data back (handlers->release_out, or free); accepts NULL. */
void pv2_stubs_release(struct pv2_stubs *s, uint8_t *data);

/*
 * The lpData of a response, left out of the stub so that it is copied only
 * once, into the PDUs: its bytes belong at offset at of the stub.  data is
 * owned (pv2_stubs_release); NULL with len 0 when there is none.
 */
struct pv2_lpdata {
        uint8_t *data;
        size_t len;
        size_t at;
};

/*
 * Runs one call.  On return 0 either *ret_fault is 0 and out holds the
 * response stub (with lp's bytes at lp->at, when lp is not NULL), or *ret_fault is the status to send in a fault PDU (the
 * handler may or may not have run: a fault is only decided before the
 * handler, except for an out-of-bounds result).  -ENOMEM when building the
 * response failed.
 */
int pv2_stubs_call(struct pv2_stubs *s, uint16_t opnum, const uint8_t *stub,
                   size_t stub_len, struct ndr_push *out, struct pv2_lpdata *lp,
                   uint32_t *ret_fault);

#endif /* PCQ_PV2_STUBS_H */
