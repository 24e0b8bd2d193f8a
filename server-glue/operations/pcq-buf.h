/* SPDX-License-Identifier: MIT */
/*
 * pcq-buf.h: the byte builder behind every MS-PCQ buffer the core returns,
 * and the string conversions those buffers need.  Internal to perflibd.
 *
 * A builder runs in one of two modes with the same calls: measuring (no
 * memory, only the length is counted) and writing (into a buffer of exactly
 * the measured size).  Each serializer therefore has one code path for
 * "how big" and "what bytes", and the two cannot disagree.  Every field is
 * written little-endian byte by byte, whatever the host; padding is zero.
 *
 * Neither mode can overflow: a write past the limit (the IDL's bound when
 * measuring, the allocation when writing) writes nothing and sets overflow,
 * after which the builder ignores every further call.
 */
#ifndef PERFLIBD_PCQ_BUF_H
#define PERFLIBD_PCQ_BUF_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "perflib.h"

struct pcq_buf {
        uint8_t *data;          /* NULL while measuring; not owned */
        size_t len;             /* bytes put so far */
        size_t limit;           /* never grows past this */
        bool overflow;
};

static inline size_t pcq_align8(size_t v)
{
        return (v + 7) & ~(size_t) 7;
}

/* A measuring builder that reports overflow beyond limit bytes. */
void pcq_buf_measure(struct pcq_buf *b, size_t limit);
/* A writing builder over data[0..size), which the caller owns. */
void pcq_buf_write(struct pcq_buf *b, uint8_t *data, size_t size);

/*
 * Claims the next n bytes: a pointer to them when writing, NULL when
 * measuring or once the limit was crossed (then nothing more is counted).
 * Inline, with the writers below: QueryCounterData of 1,000 instances makes
 * tens of thousands of these calls.
 */
static inline uint8_t *pcq_buf_grab(struct pcq_buf *b, size_t n)
{
        uint8_t *p;

        if (b->overflow || n > b->limit - b->len) {
                b->overflow = true;
                return NULL;
        }
        p = b->data ? b->data + b->len : NULL;
        b->len += n;
        return p;
}

/* The low n (0 to 8) bytes of v, little-endian. */
static inline void pcq_buf_uint(struct pcq_buf *b, uint64_t v, size_t n)
{
        uint8_t *p = pcq_buf_grab(b, n);
        uint64_t le = htole64(v);

        if (!p)
                return;
        /* Constant sizes, so the copies compile to single stores. */
        if (n == 8)
                memcpy(p, &le, 8);
        else if (n == 4)
                memcpy(p, &le, 4);
        else if (n == 2)
                memcpy(p, &le, 2);
        else
                memcpy(p, &le, n < 8 ? n : 8);
}

static inline void pcq_buf_u16(struct pcq_buf *b, uint16_t v)
{
        pcq_buf_uint(b, v, 2);
}

static inline void pcq_buf_u32(struct pcq_buf *b, uint32_t v)
{
        pcq_buf_uint(b, v, 4);
}

static inline void pcq_buf_u64(struct pcq_buf *b, uint64_t v)
{
        pcq_buf_uint(b, v, 8);
}

static inline void pcq_buf_zero(struct pcq_buf *b, size_t n)
{
        uint8_t *p = pcq_buf_grab(b, n);

        if (!p)
                return;
        /* Mostly padding of a few bytes: no call for those. */
        if (n <= 8)
                for (size_t i = 0; i < n; i++)
                        p[i] = 0;
        else
                memset(p, 0, n);
}

/* Zero bytes up to the next multiple of 8 of the length. */
static inline void pcq_buf_pad8(struct pcq_buf *b)
{
        pcq_buf_zero(b, pcq_align8(b->len) - b->len);
}

/* A GUID as MS-DTYP lays it out: Data1, Data2, Data3 little-endian, Data4 as is. */
void pcq_buf_guid(struct pcq_buf *b, const GUID *g);
/* Overwrites 4 bytes put earlier at offset off (no-op while measuring). */
static inline void pcq_buf_patch_u32(struct pcq_buf *b, size_t off, uint32_t v)
{
        uint32_t le = htole32(v);

        if (!b->data || b->overflow || off > b->len || b->len - off < 4)
                return;
        memcpy(b->data + off, &le, 4);
}

/*
 * NUL-terminated UTF-16LE strings from the three encodings the core meets:
 * UTF-8 (the namespace's names), wchar_t/UTF-32 (instance names) and UTF-16
 * code units (names the client sent).  Invalid input (bad UTF-8, a
 * surrogate or a value above U+10FFFF in UTF-32, a NUL inside a counted
 * string) becomes U+FFFD, so what goes on the wire is always well formed
 * and always as long as pcq_*_utf16_len says.  A NULL UTF-8 string is
 * taken as "".
 */
void pcq_buf_utf8(struct pcq_buf *b, const char *s);
void pcq_buf_wcs(struct pcq_buf *b, const wchar_t *w, size_t n);
void pcq_buf_utf16(struct pcq_buf *b, const uint16_t *u, size_t n);

/* Code units (without the NUL) that the writers above produce. */
size_t pcq_utf8_utf16_len(const char *s);
size_t pcq_wcs_utf16_len(const wchar_t *w, size_t n);

/* Encodes one code point as UTF-16: pcq-utf.h. */
#include "pcq-utf.h"

/*
 * u[0..un) (host order, no NUL) equals the UTF-16LE string le, which is
 * NUL-terminated and zero-padded to le_size bytes.
 */
bool pcq_utf16_eq_le(const uint16_t *u, size_t un, const uint8_t *le, size_t le_size);

/* u[0..un) equals w[0..wn) once w is encoded as the writers encode it. */
bool pcq_utf16_eq_wcs(const uint16_t *u, size_t un, const wchar_t *w, size_t wn);

/*
 * UTF-16 code units to a NUL-terminated wchar_t string (pairs joined,
 * unpaired surrogates U+FFFD).  *ret owned by the caller (free).  0 or
 * -ENOMEM.
 */
int pcq_utf16_to_wcs(const uint16_t *u, size_t n, wchar_t **ret, size_t *ret_len);

/*
 * The same for a NUL-terminated string of at most max units (the rest is
 * cut off); NULL gives L"".
 */
int pcq_utf16z_to_wcs(const uint16_t *z, size_t max, wchar_t **ret, size_t *ret_len);

#endif /* PERFLIBD_PCQ_BUF_H */
