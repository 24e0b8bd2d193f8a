/* SPDX-License-Identifier: MIT */
/*
 * pcq-reply.c: putting an lpData reply into memory (pcq-reply.h): the
 * pdwRtnSize rule of every operation that returns a buffer, and the reply
 * buffer a session keeps for QueryCounterData between calls.
 */
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

/* Past this, a reply buffer is not kept for replies of under a quarter of it. */
#define REUSE_KEEP_BYTES        (1024 * 1024)
#define REUSE_SMALL_CALLS       8

void pcq_reuse_free(struct pcq_reuse *reuse)
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
void pcq_reply_put(struct pcq_reuse *reuse, uint8_t *data, size_t used)
{
        if (!reuse || !data || data != reuse->data) {
                free(data);
                return;
        }
        reuse->busy = false;
        reuse->small = used < reuse->cap / 4 ? reuse->small + 1 : 0;
        if (reuse->cap > REUSE_KEEP_BYTES && reuse->small >= REUSE_SMALL_CALLS)
                pcq_reuse_free(reuse);
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
                pcq_reply_put(reuse, data, cap);
                return false;
        }
        out->rtn_size = (uint32_t) b.len;
        if (b.len > in_size || b.len == 0) {
                pcq_reply_put(reuse, data, b.len);
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
