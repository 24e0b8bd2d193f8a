/* SPDX-License-Identifier: MIT */
#include "pcq-utf.h"

size_t pcq_utf8_next(const unsigned char *s, uint32_t *ret)
{
        static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        size_t len;
        uint32_t c;

        if (s[0] < 0x80) {
                *ret = s[0];
                return 1;
        }
        if ((s[0] & 0xE0) == 0xC0)
                len = 2, c = s[0] & 0x1Fu;
        else if ((s[0] & 0xF0) == 0xE0)
                len = 3, c = s[0] & 0x0Fu;
        else if ((s[0] & 0xF8) == 0xF0)
                len = 4, c = s[0] & 0x07u;
        else
                goto bad;
        /* A NUL is not a continuation byte, so this never reads past it. */
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        goto bad;
                c = (c << 6) | (s[i] & 0x3Fu);
        }
        if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
                goto bad;
        *ret = c;
        return len;
bad:
        *ret = PCQ_UTF_INVALID;
        return 1;
}

size_t pcq_utf16_encode(uint32_t c, uint16_t out[2])
{
        if (c == 0 || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
                c = PCQ_UTF_REPLACEMENT;
        if (c < 0x10000) {
                out[0] = (uint16_t) c;
                return 1;
        }
        c -= 0x10000;
        out[0] = (uint16_t) (0xD800 | (c >> 10));
        out[1] = (uint16_t) (0xDC00 | (c & 0x3FF));
        return 2;
}

