/* SPDX-License-Identifier: MIT */
/*
 * pcq-reply.c: putting an lpData reply into memory (pcq-reply.h): the
 * pdwRtnSize rule of every operation that returns a buffer, and the reply
 * buffers of a session, paid from the query memory while lent out.
 */
#include <errno.h>
#include <stdlib.h>

#include "pcq-reply.h"

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

void pcq_reuse_trim(struct pcq_reuse *reuse)
{
        if (!reuse->busy) {
                free(reuse->data);
                reuse->data = NULL;
                reuse->cap = 0;
        }
        if (reuse->n_paid == 0) {
                free(reuse->paid);
                reuse->paid = NULL;
                reuse->paid_cap = 0;
        }
}

/* quiet: a refusal refuses nothing yet (a smaller buffer is tried next). */
static int pay(struct pcq_reuse *reuse, size_t bytes, bool quiet)
{
        if (!reuse->ns)
                return 0;
        return quiet ? ns_mem_try(reuse->ns, bytes) : ns_mem_take(reuse->ns, bytes);
}

static void give(struct pcq_reuse *reuse, size_t bytes)
{
        if (reuse->ns)
                ns_mem_give(reuse->ns, bytes);
}

/* Remembers data as lent out, paid bytes; -ENOMEM without room to. */
static int paid_add(struct pcq_reuse *reuse, uint8_t *data, size_t bytes)
{
        if (reuse->n_paid == reuse->paid_cap) {
                size_t cap = reuse->paid_cap ? 2 * reuse->paid_cap : 4;
                struct pcq_paid *v = reallocarray(reuse->paid, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                reuse->paid = v;
                reuse->paid_cap = cap;
        }
        reuse->paid[reuse->n_paid++] = (struct pcq_paid){ data, bytes };
        return 0;
}

/* The lent buffer reuse's own needs to grow to cap bytes: nothing in it to keep. */
static uint8_t *reuse_grow(struct pcq_reuse *reuse, size_t cap)
{
        free(reuse->data);
        reuse->data = malloc(cap);
        reuse->cap = reuse->data ? cap : 0;
        return reuse->data;
}

/*
 * cap bytes for a reply, paid first (quiet: see pay): reuse's buffer when
 * it is free, else an allocation of its own; NULL when refused or out of
 * memory.
 */
static uint8_t *reply_get(struct pcq_reuse *reuse, size_t cap, bool quiet)
{
        size_t bytes = !reuse || reuse->busy || reuse->cap < cap ? cap : reuse->cap;
        uint8_t *data = NULL;

        if (!reuse)
                return malloc(cap);
        if (pay(reuse, bytes, quiet) < 0)
                return NULL;
        if (!reuse->busy) {
                data = reuse->cap < cap ? reuse_grow(reuse, cap) : reuse->data;
                reuse->busy = data != NULL;
        } else if ((data = malloc(cap)) && paid_add(reuse, data, bytes) < 0) {
                free(data);
                data = NULL;
        }
        if (!data)
                give(reuse, bytes);
        return data;
}

void pcq_reply_put(struct pcq_reuse *reuse, uint8_t *data)
{
        if (!reuse || !data) {
                free(data);
                return;
        }
        if (data == reuse->data) {
                give(reuse, reuse->cap);
                reuse->busy = false;
                /* A large one would be held between calls, unpaid. */
                if (reuse->cap > PCQ_REPLY_KEEP_BYTES) {
                        free(reuse->data);
                        reuse->data = NULL;
                        reuse->cap = 0;
                }
                return;
        }
        for (size_t i = 0; i < reuse->n_paid; i++)
                if (reuse->paid[i].data == data) {
                        give(reuse, reuse->paid[i].bytes);
                        reuse->paid[i] = reuse->paid[--reuse->n_paid];
                        break;
                }
        free(data);
}

void pcq_reply_adopt(struct pcq_reuse *reuse, uint8_t *data, size_t size)
{
        if (paid_add(reuse, data, size) < 0)
                give(reuse, size);
}

size_t pcq_reply_lent(const struct pcq_reuse *reuse)
{
        size_t n = reuse->busy ? reuse->cap : 0;

        for (size_t i = 0; i < reuse->n_paid; i++)
                n += reuse->paid[i].bytes;
        return n;
}

/* emit_once: the buffer was too small, or could not be had; nothing was kept. */
#define EMIT_AGAIN UINT32_MAX

/* One writing pass into cap bytes (the size measured: !guess): a Win32 code, or EMIT_AGAIN. */
static uint32_t emit_once(pcq_emit_fn fn, const void *ctx, size_t cap, bool guess,
                          uint32_t in_size, struct pcq_reuse *reuse, struct pv2_out *out)
{
        uint8_t *data = reply_get(reuse, cap, guess);
        struct pcq_buf b;

        if (!data)
                return EMIT_AGAIN;
        pcq_buf_write(&b, data, cap);
        fn(&b, ctx);
        if (b.overflow) {
                pcq_reply_put(reuse, data);
                return EMIT_AGAIN;
        }
        out->rtn_size = (uint32_t) b.len;
        if (b.len > in_size || b.len == 0) {
                pcq_reply_put(reuse, data);
                return b.len > in_size ? ERROR_NOT_ENOUGH_MEMORY : ERROR_SUCCESS;
        }
        out->data = data;   /* lent to the stubs until release_out */
        out->out_size = (uint32_t) b.len;
        return ERROR_SUCCESS;
}

uint32_t pcq_emit_hinted(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                         size_t *hint, struct pcq_reuse *reuse, struct pv2_out *out)
{
        size_t cap = *hint + *hint / 8 + 256;
        struct pcq_buf b;
        uint32_t e;

        if (*hint > 0 && (e = emit_once(fn, ctx, cap < limit ? cap : limit, true, in_size,
                                        reuse, out)) != EMIT_AGAIN) {
                *hint = out->rtn_size;
                return e;
        }
        pcq_buf_measure(&b, limit);
        fn(&b, ctx);
        if (b.overflow)
                return ERROR_OUTOFMEMORY;
        *hint = b.len;
        if (b.len > in_size) {
                out->rtn_size = (uint32_t) b.len;
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        if (b.len == 0)
                return ERROR_SUCCESS;
        /* Measured, it fits: only a refusal, or a serializer that did not
         * repeat itself, leaves it without a buffer now. */
        e = emit_once(fn, ctx, b.len, false, in_size, reuse, out);
        return e == EMIT_AGAIN ? ERROR_OUTOFMEMORY : e;
}
