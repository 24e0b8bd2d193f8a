/* SPDX-License-Identifier: MIT */
/*
 * ndr.h: the NDR 2.0 primitives the PerflibV2 stubs need (C706 chapter 14),
 * little-endian only: the drep the PDU layer accepts is 0x10 (little-endian
 * integers, ASCII, IEEE floats), so a big-endian stream never reaches here.
 *
 * Alignment is relative to the start of the stub, which C706 puts on an
 * 8-byte boundary of the PDU.
 *
 * Both directions keep a sticky error: after the first failure every further
 * call is a no-op and the error is reported once at the end, which keeps the
 * per-opnum code a straight list of fields.
 */
#ifndef PCQ_NDR_H
#define PCQ_NDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perflib.h"

/* A context handle on the wire: attributes (u32) then a 16-byte uuid. */
#define NDR_HANDLE_SIZE 20

/* A received stub: borrowed bytes, never written. */
struct ndr_pull {
        const uint8_t *data;
        size_t size;
        size_t off;
        int err;                /* 0, or the first -errno */
};

void ndr_pull_init(struct ndr_pull *p, const void *data, size_t size);
void ndr_pull_align(struct ndr_pull *p, size_t n);
uint8_t ndr_pull_u8(struct ndr_pull *p);
uint16_t ndr_pull_u16(struct ndr_pull *p);
uint32_t ndr_pull_u32(struct ndr_pull *p);
/* n bytes in place; NULL (and the error set) if fewer remain. */
const uint8_t *ndr_pull_bytes(struct ndr_pull *p, size_t n);
void ndr_pull_guid(struct ndr_pull *p, GUID *ret);
void ndr_pull_handle(struct ndr_pull *p, uint8_t ret[NDR_HANDLE_SIZE]);
/*
 * A [string] wchar_t array (conformant varying): max_count, offset (must be
 * 0), actual_count (1..max_count), then actual_count UTF-16LE units, the
 * last one NUL.  *ret points into the stub; *ret_units counts the NUL.
 */
void ndr_pull_wstring(struct ndr_pull *p, const uint8_t **ret, uint32_t *ret_units);
/*
 * The header of a conformant varying array: checks max_count == want_max,
 * offset == 0 and actual_count <= max_count; returns actual_count.
 */
uint32_t ndr_pull_varying_header(struct ndr_pull *p, uint32_t want_max);
/* Marks the stream bad with err (the first error sticks). */
void ndr_pull_fail(struct ndr_pull *p, int err);

/* A stub being built: owns data (ndr_push_done frees it). */
struct ndr_push {
        uint8_t *data;
        size_t size;
        size_t cap;
        int err;
};

void ndr_push_init(struct ndr_push *p);
void ndr_push_done(struct ndr_push *p);
void ndr_push_align(struct ndr_push *p, size_t n);
void ndr_push_u8(struct ndr_push *p, uint8_t v);
void ndr_push_u16(struct ndr_push *p, uint16_t v);
void ndr_push_u32(struct ndr_push *p, uint32_t v);
void ndr_push_bytes(struct ndr_push *p, const void *data, size_t n);
void ndr_push_guid(struct ndr_push *p, const GUID *g);
void ndr_push_handle(struct ndr_push *p, const uint8_t h[NDR_HANDLE_SIZE]);
/* units UTF-16LE code units, the last of which must be NUL. */
void ndr_push_wstring(struct ndr_push *p, const uint8_t *units, uint32_t n_units);
/*
 * Makes room for cap bytes in all, so that a large stub of known size is not
 * grown by doubling (a 1 GiB lpData would otherwise reserve 2 GiB).
 */
void ndr_push_presize(struct ndr_push *p, size_t cap);
/* Reserves n bytes (zeroed) and returns where they start, NULL on error. */
uint8_t *ndr_push_reserve(struct ndr_push *p, size_t n);
/* The same, not zeroed: for bytes the caller writes at once (a recv). */
uint8_t *ndr_push_room(struct ndr_push *p, size_t n);

/* Little-endian helpers for the PDU layer. */
static inline uint16_t ndr_le16(const uint8_t *b)
{
        return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t ndr_le32(const uint8_t *b)
{
        return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
               (uint32_t)b[3] << 24;
}

static inline void ndr_put_le16(uint8_t *b, uint16_t v)
{
        b[0] = (uint8_t)v;
        b[1] = (uint8_t)(v >> 8);
}

static inline void ndr_put_le32(uint8_t *b, uint32_t v)
{
        b[0] = (uint8_t)v;
        b[1] = (uint8_t)(v >> 8);
        b[2] = (uint8_t)(v >> 16);
        b[3] = (uint8_t)(v >> 24);
}

#endif /* PCQ_NDR_H */
