/* SPDX-License-Identifier: MIT */
/*
 * client-wire.h: the byte level of MS-PCQ's buffers for the client-*.c
 * files of libpcq: structure sizes, little-endian loads and stores, GUIDs
 * and UTF-16LE strings (client-wire.c).  It needs nothing but pcq.h's
 * types; every symbol is hidden (-fvisibility=hidden, not in libpcq.sym),
 * and the cl_ prefix keeps the names apart from the public pcq_ API.
 */
#ifndef PCQ_CLIENT_WIRE_H
#define PCQ_CLIENT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcq.h"

/* MS-PCQ 2.2.4 structure sizes (the core's reading, pcq-core.c item 1). */
#define CL_REG_SET_SIZE         32u
#define CL_REG_COUNTER_SIZE     48u
#define CL_IDENT_SIZE           40u
#define CL_DATA_HEADER_SIZE     48u
#define CL_NO_ID                0xFFFFFFFFu

static inline uint16_t cl_le16(const uint8_t *p)
{
        return (uint16_t) (p[0] | p[1] << 8);
}

static inline uint32_t cl_le32(const uint8_t *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static inline uint64_t cl_le64(const uint8_t *p)
{
        return cl_le32(p) | (uint64_t) cl_le32(p + 4) << 32;
}

static inline void cl_put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/* A GUID as the wire has it: Data1-3 little-endian, Data4 as bytes. */
void cl_guid_read(const uint8_t *p, GUID *ret);
void cl_guid_write(uint8_t *p, const GUID *g);
bool cl_guid_eq(const GUID *a, const GUID *b);

/*
 * UTF-16LE units at p (at most max_units, stopping at a NUL) as a malloc'd
 * UTF-8 string, the caller's; unpaired surrogates become U+FFFD.  NULL on
 * allocation failure.  *ret_terminated says whether a NUL was found.
 */
char *cl_utf16_to_utf8(const uint8_t *p, size_t max_units, bool *ret_terminated);

#endif /* PCQ_CLIENT_WIRE_H */
