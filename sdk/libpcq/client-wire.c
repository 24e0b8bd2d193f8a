/* SPDX-License-Identifier: MIT */
/*
 * The bytes of MS-PCQ's buffers as the client reads and writes them: GUIDs
 * in their wire order and UTF-16LE strings turned into UTF-8.  Below
 * everything else in libpcq; it calls nothing but libc.
 */
#include <stdlib.h>
#include <string.h>

#include "client-wire.h"

void cl_guid_read(const uint8_t *p, GUID *ret)
{
        ret->Data1 = cl_le32(p);
        ret->Data2 = cl_le16(p + 4);
        ret->Data3 = cl_le16(p + 6);
        memcpy(ret->Data4, p + 8, 8);
}

void cl_guid_write(uint8_t *p, const GUID *g)
{
        cl_put32(p, g->Data1);
        p[4] = (uint8_t) g->Data2;
        p[5] = (uint8_t) (g->Data2 >> 8);
        p[6] = (uint8_t) g->Data3;
        p[7] = (uint8_t) (g->Data3 >> 8);
        memcpy(p + 8, g->Data4, 8);
}

bool cl_guid_eq(const GUID *a, const GUID *b)
{
        return a->Data1 == b->Data1 && a->Data2 == b->Data2 && a->Data3 == b->Data3 &&
               !memcmp(a->Data4, b->Data4, 8);
}

static size_t put_utf8(char *o, uint32_t c)
{
        if (c < 0x80) {
                o[0] = (char) c;
                return 1;
        }
        if (c < 0x800) {
                o[0] = (char) (0xC0 | c >> 6);
                o[1] = (char) (0x80 | (c & 0x3F));
                return 2;
        }
        if (c < 0x10000) {
                o[0] = (char) (0xE0 | c >> 12);
                o[1] = (char) (0x80 | ((c >> 6) & 0x3F));
                o[2] = (char) (0x80 | (c & 0x3F));
                return 3;
        }
        o[0] = (char) (0xF0 | c >> 18);
        o[1] = (char) (0x80 | ((c >> 12) & 0x3F));
        o[2] = (char) (0x80 | ((c >> 6) & 0x3F));
        o[3] = (char) (0x80 | (c & 0x3F));
        return 4;
}

char *cl_utf16_to_utf8(const uint8_t *p, size_t max_units, bool *ret_terminated)
{
        size_t n = 0, o = 0;
        char *s;

        while (n < max_units && cl_le16(p + 2 * n))
                n++;
        if (ret_terminated)
                *ret_terminated = n < max_units;
        s = malloc(3 * n + 1);
        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                uint32_t c = cl_le16(p + 2 * i);

                if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n) {
                        uint32_t lo = cl_le16(p + 2 * (i + 1));

                        if (lo >= 0xDC00 && lo <= 0xDFFF) {
                                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                                i++;
                        }
                }
                if (c >= 0xD800 && c <= 0xDFFF)
                        c = 0xFFFD;
                o += put_utf8(s + o, c);
        }
        s[o] = '\0';
        return s;
}
