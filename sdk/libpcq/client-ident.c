/* SPDX-License-Identifier: MIT */
/*
 * Building the identifier list of ValidateCounters (pcq_ident_append):
 * _PERF_COUNTER_IDENTIFIER structures with their UTF-16LE instance names,
 * each padded to 8 bytes, within the IDL's range() limit.  The inverse
 * of pcq_ident_iter in client-iter.c; no connection involved.
 */
#include <stdlib.h>
#include <string.h>

#include "client-wire.h"
#include "pcq-utf.h"
#include "perflibv2.h"

/* UTF-16 units of s (NUL excluded), or SIZE_MAX if s is not UTF-8. */
static size_t utf16_units(const char *s)
{
        const unsigned char *p = (const unsigned char *) s;
        size_t n = 0;
        uint32_t cp;

        while (*p) {
                p += pcq_utf8_next(p, &cp);
                if (cp == PCQ_UTF_INVALID)
                        return SIZE_MAX;
                n += cp >= 0x10000 ? 2 : 1;
        }
        return n;
}

static void put_utf16(uint8_t *p, const char *s)
{
        const unsigned char *q = (const unsigned char *) s;
        uint16_t u[2];
        uint32_t cp;

        while (*q) {
                q += pcq_utf8_next(q, &cp);
                for (size_t i = 0, n = pcq_utf16_encode(cp, u); i < n; i++, p += 2) {
                        p[0] = (uint8_t) u[i];
                        p[1] = (uint8_t) (u[i] >> 8);
                }
        }
}

PCQ_API uint32_t pcq_ident_append(struct pcq_buf *b, const GUID *counterset,
                                  uint32_t counter_id, uint32_t instance_id,
                                  const char *instance)
{
        size_t units = instance ? utf16_units(instance) : 0, size;
        uint8_t *data, *p;

        if (!b || !counterset || units == SIZE_MAX || units > 0x10000)
                return PDH_INVALID_ARGUMENT;
        size = CL_IDENT_SIZE + (instance ? 2 * (units + 1) : 0);
        size = (size + 7) & ~(size_t) 7;
        if ((size_t) b->size + size > PV2_MAX_VALIDATE_BYTES)
                return PDH_INVALID_ARGUMENT;
        data = realloc(b->data, b->size + size);
        if (!data)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        p = data + b->size;
        memset(p, 0, size);
        cl_guid_write(p, counterset);
        cl_put32(p + 20, (uint32_t) size);
        cl_put32(p + 24, counter_id);
        cl_put32(p + 28, instance_id);
        if (instance)
                put_utf16(p + CL_IDENT_SIZE, instance);
        b->data = data;
        b->size += (uint32_t) size;
        return ERROR_SUCCESS;
}
