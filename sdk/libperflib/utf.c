/* SPDX-License-Identifier: MIT */
/*
 * Strict UTF-8: decoding instance names (PerfCreateInstanceUtf8) and
 * checking the strings of self-descriptions, on both sides.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf.h"

/*
 * Decodes one strictly valid UTF-8 sequence of at most n (>= 1) bytes;
 * returns its length or -EILSEQ.
 */
static int utf8_decode(const unsigned char *s, size_t n, uint32_t *ret)
{
        static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        unsigned len;
        uint32_t c;

        if (s[0] < 0x80) {
                *ret = s[0];
                return 1;
        }
        if ((s[0] & 0xE0) == 0xC0) {
                len = 2;
                c = s[0] & 0x1F;
        } else if ((s[0] & 0xF0) == 0xE0) {
                len = 3;
                c = s[0] & 0x0F;
        } else if ((s[0] & 0xF8) == 0xF0) {
                len = 4;
                c = s[0] & 0x07;
        } else
                return -EILSEQ;
        if (len > n)
                return -EILSEQ;
        for (unsigned i = 1; i < len; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return -EILSEQ;
                c = (c << 6) | (s[i] & 0x3F);
        }
        if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
                return -EILSEQ;
        *ret = c;
        return (int) len;
}

int pl_utf8_to_wcs(const char *s, wchar_t **ret)
{
        size_t n = strlen(s), k = 0;
        wchar_t *w = malloc((n + 1) * sizeof(wchar_t));

        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < n;) {
                uint32_t c;
                int l = utf8_decode((const unsigned char *) s + i, n - i, &c);
                if (l < 0) {
                        free(w);
                        return l;
                }
                w[k++] = (wchar_t) c;
                i += (size_t) l;
        }
        w[k] = L'\0';
        *ret = w;
        return 0;
}

bool pl_utf8_valid(const char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                uint32_t c;
                int l = utf8_decode((const unsigned char *) s + i, n - i, &c);
                if (l < 0)
                        return false;
                i += (size_t) l;
        }
        return true;
}
