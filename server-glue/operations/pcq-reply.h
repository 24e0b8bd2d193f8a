/* SPDX-License-Identifier: MIT */
/*
 * pcq-reply.h: how an operation's lpData buffer is made: a serializer run
 * over a pcq_buf, measured or written, under the pdwRtnSize rule; and the
 * buffers a session's replies are written into, paid from the
 * namespace's query memory (ns_mem_take) while they are lent out.  Knows
 * nothing of sessions, and of the namespace only that budget.
 */
#ifndef PERFLIBD_PCQ_REPLY_H
#define PERFLIBD_PCQ_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns.h"
#include "pcq-buf.h"
#include "perflibv2.h"

/* A reply buffer lent to the transport and the bytes it was paid. */
struct pcq_paid {
        uint8_t *data;
        size_t bytes;
};

/*
 * The buffers a session's QueryCounterData and EnumerateInstances replies
 * are written into, lent to the transport until the reply was sent
 * (release_out).  One of at most PCQ_REPLY_KEEP_BYTES is kept from one
 * call to the next (a client polls the same query again and again), and is
 * not paid for meanwhile; any larger one goes once sent, so that a
 * client of a huge counterset holds nothing between calls.  Owned by the
 * session: pcq_session_trim frees it.
 */
#define PCQ_REPLY_KEEP_BYTES    (1024 * 1024)
struct pcq_reuse {
        struct ns *ns;                  /* pays for them (borrowed); NULL: nobody */
        uint8_t *data;                  /* the one kept */
        size_t cap;
        bool busy;                      /* lent out (and paid): the next reply gets its own */
        struct pcq_paid *paid;          /* the others lent out */
        size_t n_paid, paid_cap;
};

/* Frees what reuse keeps and has not lent out. */
void pcq_reuse_trim(struct pcq_reuse *reuse);

/*
 * Takes back a reply buffer (out->data of pcq_emit_hinted, or one
 * pcq_reply_adopt took) that the transport is done with: what it was paid
 * is given back, reuse's own is free again (or goes, when large), any
 * other is freed.  reuse may be NULL.
 */
void pcq_reply_put(struct pcq_reuse *reuse, uint8_t *data);

/*
 * Lends data (size bytes, paid from reuse->ns already) as a reply: its
 * payment is given back when pcq_reply_put takes it back.  Without room to
 * remember that, it is given back now.
 */
void pcq_reply_adopt(struct pcq_reuse *reuse, uint8_t *data, size_t size);

/* Bytes paid for the reply buffers reuse has lent out. */
size_t pcq_reply_lent(const struct pcq_reuse *reuse);

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
 * pcq_emit into a buffer paid from reuse->ns's query memory, for a reply
 * usually about as big as last time (a query read again and again):
 * writes straight into *hint bytes and some slack, one pass instead of
 * two, and measures first when that is too small (or *hint is 0).  *hint
 * becomes the size needed this time.  out->data is reuse's buffer
 * whenever it is free.  ERROR_OUTOFMEMORY also when the query memory
 * cannot pay: the reply is refused, never cut.
 */
uint32_t pcq_emit_hinted(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                         size_t *hint, struct pcq_reuse *reuse, struct pv2_out *out);

#endif /* PERFLIBD_PCQ_REPLY_H */
