/* SPDX-License-Identifier: MIT */
/*
 * pcq-reply.h: how an operation's lpData buffer is made: a serializer run
 * over a pcq_buf, measured or written, under the pdwRtnSize rule; and the
 * buffer a session keeps for QueryCounterData replies.  Knows nothing of
 * the namespace or of sessions.
 */
#ifndef PERFLIBD_PCQ_REPLY_H
#define PERFLIBD_PCQ_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcq-buf.h"
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

/* Frees reuse's buffer and forgets it; the caller knows it is not lent out. */
void pcq_reuse_free(struct pcq_reuse *reuse);

/*
 * Takes back a reply buffer (out->data of pcq_emit_hinted) that the
 * transport is done with, used bytes of it written: reuse's own is free
 * again, any other is freed.  reuse may be NULL.
 */
void pcq_reply_put(struct pcq_reuse *reuse, uint8_t *data, size_t used);

/*
 * A serializer: puts one whole lpData buffer into b.  pcq_emit runs it
 * twice, measuring then writing, so it must put the same bytes both times
 * and must not fail.
 */
typedef void (*pcq_emit_fn)(struct pcq_buf *b, const void *ctx);

/*
 * The pdwRtnSize rule: measures what fn puts; more than limit (the IDL's
 * bound on dwInSize, so no client could ever receive it) is
 * ERROR_OUTOFMEMORY; more than in_size is ERROR_NOT_ENOUGH_MEMORY with
 * rtn_size the size needed and out_size 0; otherwise out gets the bytes.
 */
uint32_t pcq_emit(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                  struct pv2_out *out);

/*
 * pcq_emit for a buffer that is usually about as big as last time (a query
 * read again and again): writes straight into an allocation of *hint bytes
 * and some slack, one pass instead of two, and falls back to pcq_emit when
 * that is too small.  *hint becomes the size needed this time.  With reuse
 * (not NULL), out->data is reuse's buffer whenever it is not lent out.
 */
uint32_t pcq_emit_hinted(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                         size_t *hint, struct pcq_reuse *reuse, struct pv2_out *out);

#endif /* PERFLIBD_PCQ_REPLY_H */
