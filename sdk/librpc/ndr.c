/* SPDX-License-Identifier: MIT */
/*
 * NDR 2.0 primitives, little-endian, bounded: nothing is read past size and
 * every count from the wire is checked before it sizes anything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ndr.h"

/* No stub we build or accept comes near this; it keeps size arithmetic safe. */
#define NDR_MAX_STUB ((size_t)1 << 31)

void ndr_pull_init(struct ndr_pull *p, const void *data, size_t size)
{
        *p = (struct ndr_pull){ .data = data, .size = size };
}

void ndr_pull_fail(struct ndr_pull *p, int err)
{
        if (p->err == 0)
                p->err = err;
}

/* The next n bytes, or NULL (error set) when they are not all there. */
static const uint8_t *pull_take(struct ndr_pull *p, size_t n)
{
        if (p->err)
                return NULL;
        if (n > p->size - p->off) {
                ndr_pull_fail(p, -EBADMSG);
                return NULL;
        }
        /* No data at all (size 0) is a valid, empty stub: never offset NULL. */
        static const uint8_t empty[1];
        const uint8_t *b = p->data ? p->data + p->off : empty;

        p->off += n;
        return b;
}

void ndr_pull_align(struct ndr_pull *p, size_t n)
{
        size_t pad = (n - (p->off & (n - 1))) & (n - 1);

        (void)pull_take(p, pad);
}

uint8_t ndr_pull_u8(struct ndr_pull *p)
{
        const uint8_t *b = pull_take(p, 1);

        return b ? b[0] : 0;
}

uint16_t ndr_pull_u16(struct ndr_pull *p)
{
        ndr_pull_align(p, 2);
        const uint8_t *b = pull_take(p, 2);
        return b ? ndr_le16(b) : 0;
}

uint32_t ndr_pull_u32(struct ndr_pull *p)
{
        ndr_pull_align(p, 4);
        const uint8_t *b = pull_take(p, 4);
        return b ? ndr_le32(b) : 0;
}

const uint8_t *ndr_pull_bytes(struct ndr_pull *p, size_t n)
{
        return pull_take(p, n);
}

void ndr_pull_guid(struct ndr_pull *p, GUID *ret)
{
        GUID g;

        g.Data1 = ndr_pull_u32(p);
        g.Data2 = ndr_pull_u16(p);
        g.Data3 = ndr_pull_u16(p);
        const uint8_t *b = pull_take(p, 8);
        if (b)
                memcpy(g.Data4, b, 8);
        if (!p->err)
                *ret = g;
}

void ndr_pull_handle(struct ndr_pull *p, uint8_t ret[NDR_HANDLE_SIZE])
{
        ndr_pull_align(p, 4);
        const uint8_t *b = pull_take(p, NDR_HANDLE_SIZE);
        if (b)
                memcpy(ret, b, NDR_HANDLE_SIZE);
}

uint32_t ndr_pull_varying_header(struct ndr_pull *p, uint32_t want_max)
{
        uint32_t max = ndr_pull_u32(p);
        uint32_t offset = ndr_pull_u32(p);
        uint32_t actual = ndr_pull_u32(p);

        if (p->err)
                return 0;
        if (max != want_max || offset != 0 || actual > max) {
                ndr_pull_fail(p, -EBADMSG);
                return 0;
        }
        return actual;
}

void ndr_pull_wstring(struct ndr_pull *p, const uint8_t **ret, uint32_t *ret_units)
{
        uint32_t max = ndr_pull_u32(p);
        uint32_t offset = ndr_pull_u32(p);
        uint32_t actual = ndr_pull_u32(p);

        if (p->err)
                return;
        /* [string] counts the terminating NUL, so an empty string is 1 unit. */
        if (offset != 0 || actual == 0 || actual > max) {
                ndr_pull_fail(p, -EBADMSG);
                return;
        }
        const uint8_t *b = pull_take(p, (size_t)actual * 2);
        if (!b)
                return;
        if (ndr_le16(b + (size_t)(actual - 1) * 2) != 0) {
                ndr_pull_fail(p, -EBADMSG);
                return;
        }
        *ret = b;
        *ret_units = actual;
}

void ndr_push_init(struct ndr_push *p)
{
        *p = (struct ndr_push){ 0 };
}

void ndr_push_done(struct ndr_push *p)
{
        if (!p)
                return;
        free(p->data);
        *p = (struct ndr_push){ 0 };
}

void ndr_push_presize(struct ndr_push *p, size_t cap)
{
        if (p->err || cap <= p->cap)
                return;
        if (cap > NDR_MAX_STUB) {
                p->err = -E2BIG;
                return;
        }
        uint8_t *d = realloc(p->data, cap);
        if (!d) {
                p->err = -ENOMEM;
                return;
        }
        p->data = d;
        p->cap = cap;
}

uint8_t *ndr_push_room(struct ndr_push *p, size_t n)
{
        if (p->err)
                return NULL;
        if (n > NDR_MAX_STUB - p->size) {
                p->err = -E2BIG;
                return NULL;
        }
        if (p->size + n > p->cap || !p->data) {
                size_t cap = p->cap ? p->cap : 256;
                while (cap < p->size + n)
                        cap *= 2;
                uint8_t *d = realloc(p->data, cap);
                if (!d) {
                        p->err = -ENOMEM;
                        return NULL;
                }
                p->data = d;
                p->cap = cap;
        }
        uint8_t *b = p->data + p->size;
        p->size += n;
        return b;
}

uint8_t *ndr_push_reserve(struct ndr_push *p, size_t n)
{
        uint8_t *b = ndr_push_room(p, n);

        if (b)
                memset(b, 0, n);
        return b;
}

void ndr_push_align(struct ndr_push *p, size_t n)
{
        size_t pad = (n - (p->size & (n - 1))) & (n - 1);

        if (pad)
                (void)ndr_push_reserve(p, pad);
}

void ndr_push_u8(struct ndr_push *p, uint8_t v)
{
        uint8_t *b = ndr_push_reserve(p, 1);

        if (b)
                b[0] = v;
}

void ndr_push_u16(struct ndr_push *p, uint16_t v)
{
        ndr_push_align(p, 2);
        uint8_t *b = ndr_push_reserve(p, 2);
        if (b)
                ndr_put_le16(b, v);
}

void ndr_push_u32(struct ndr_push *p, uint32_t v)
{
        ndr_push_align(p, 4);
        uint8_t *b = ndr_push_reserve(p, 4);
        if (b)
                ndr_put_le32(b, v);
}

void ndr_push_bytes(struct ndr_push *p, const void *data, size_t n)
{
        /* Overwritten at once: zeroing first would touch every byte twice. */
        uint8_t *b = ndr_push_room(p, n);

        if (b && n)
                memcpy(b, data, n);
}

void ndr_push_guid(struct ndr_push *p, const GUID *g)
{
        ndr_push_u32(p, g->Data1);
        ndr_push_u16(p, g->Data2);
        ndr_push_u16(p, g->Data3);
        ndr_push_bytes(p, g->Data4, 8);
}

void ndr_push_handle(struct ndr_push *p, const uint8_t h[NDR_HANDLE_SIZE])
{
        ndr_push_align(p, 4);
        ndr_push_bytes(p, h, NDR_HANDLE_SIZE);
}

void ndr_push_wstring(struct ndr_push *p, const uint8_t *units, uint32_t n_units)
{
        if (n_units == 0 || ndr_le16(units + (size_t)(n_units - 1) * 2) != 0) {
                if (!p->err)
                        p->err = -EINVAL;
                return;
        }
        ndr_push_u32(p, n_units);
        ndr_push_u32(p, 0);
        ndr_push_u32(p, n_units);
        ndr_push_bytes(p, units, (size_t)n_units * 2);
}
