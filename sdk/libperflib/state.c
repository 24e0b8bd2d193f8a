/* SPDX-License-Identifier: MIT */
/*
 * A provider's memory: private allocations through the allocator its
 * context named (PERF_MEM_ALLOC, else malloc), and segment heap by bump
 * allocation.  Every other part of the provider runtime allocates here.
 */
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "state.h"

void *pl_alloc(struct pl_provider *p, size_t n)
{
        if (n == 0)
                n = 1;
        return p->mem_alloc ? p->mem_alloc(n, p->mem_ctx) : malloc(n);
}

void *pl_alloc0(struct pl_provider *p, size_t n)
{
        void *m = pl_alloc(p, n);
        if (m)
                memset(m, 0, n);
        return m;
}

void pl_free(struct pl_provider *p, void *ptr)
{
        if (!ptr)
                return;
        if (p->mem_free)
                p->mem_free(ptr, p->mem_ctx);
        else
                free(ptr);
}

uint64_t pl_heap_take(struct pl_provider *p, uint64_t n)
{
        uint64_t off = p->heap_top;

        n = pl_align_up(n, PL_SEG_ALIGN);
        if (n > p->heap_hi - off)
                return 0;
        p->heap_top += n;
        __atomic_store_n(&p->hdr->heap_top, p->heap_top - p->heap_lo, __ATOMIC_RELEASE);
        return off;
}
