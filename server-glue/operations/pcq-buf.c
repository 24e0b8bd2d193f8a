/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcq-buf.h"
#include "pcq-utf.h"


void pcq_buf_measure(struct pcq_buf *b, size_t limit)
{
        *b = (struct pcq_buf){ .limit = limit };
}

void pcq_buf_write(struct pcq_buf *b, uint8_t *data, size_t size)
{
        *b = (struct pcq_buf){ .data = data, .limit = size };
}

void pcq_buf_guid(struct pcq_buf *b, const GUID *g)
{
        uint8_t *p;

        pcq_buf_u32(b, g->Data1);
        pcq_buf_u16(b, g->Data2);
        pcq_buf_u16(b, g->Data3);
        p = pcq_buf_grab(b, sizeof(g->Data4));
        if (p)
                memcpy(p, g->Data4, sizeof(g->Data4));
}


/* The next code point of s, U+FFFD for an invalid sequence. */
static size_t utf8_next(const unsigned char *s, uint32_t *ret)
{
        size_t n = pcq_utf8_next(s, ret);

        if (*ret == PCQ_UTF_INVALID)
                *ret = PCQ_UTF_REPLACEMENT;
        return n;
}

static void put_units(struct pcq_buf *b, const uint16_t *u, size_t n)
{
        for (size_t i = 0; i < n; i++)
                pcq_buf_u16(b, u[i]);
}

void pcq_buf_utf8(struct pcq_buf *b, const char *s)
{
        const unsigned char *p = (const unsigned char *) (s ? s : "");
        uint16_t u[2];
        uint32_t c;

        while (*p && !b->overflow) {
                p += utf8_next(p, &c);
                put_units(b, u, pcq_utf16_encode(c, u));
        }
        pcq_buf_u16(b, 0);
}

/*
 * Writes w as UTF-16LE into p (2 * n + 2 bytes) when every character is one
 * unit needing no replacement, the common case for instance names; false,
 * with p partly written, as soon as one is not.
 */
static bool wcs_put_plain(uint8_t *p, const wchar_t *w, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                uint32_t c = (uint32_t) w[i];
                uint16_t le;

                if (c - 1u >= 0xD7FFu)
                        return false;
                le = htole16((uint16_t) c);
                memcpy(p + 2 * i, &le, 2);
        }
        memset(p + 2 * n, 0, 2);
        return true;
}

void pcq_buf_wcs(struct pcq_buf *b, const wchar_t *w, size_t n)
{
        size_t start = b->len;
        uint16_t u[2];

        if (!b->data) {
                /* Measuring: only the length matters. */
                pcq_buf_zero(b, 2 * (pcq_wcs_utf16_len(w, n) + 1));
                return;
        }
        /* Writing: one pass for a plain name, claimed whole. */
        if (n < SIZE_MAX / 2 - 1) {
                uint8_t *p = pcq_buf_grab(b, 2 * n + 2);

                if (!p || wcs_put_plain(p, w, n))
                        return;
                b->len = start;
        }
        for (size_t i = 0; i < n && !b->overflow; i++)
                put_units(b, u, pcq_utf16_encode((uint32_t) w[i], u));
        pcq_buf_u16(b, 0);
}

void pcq_buf_utf16(struct pcq_buf *b, const uint16_t *u, size_t n)
{
        put_units(b, u, n);
        pcq_buf_u16(b, 0);
}

size_t pcq_utf8_utf16_len(const char *s)
{
        const unsigned char *p = (const unsigned char *) (s ? s : "");
        size_t n = 0;
        uint32_t c;

        while (*p) {
                p += utf8_next(p, &c);
                n += c >= 0x10000 ? 2 : 1;
        }
        return n;
}

size_t pcq_wcs_utf16_len(const wchar_t *w, size_t n)
{
        size_t units = n;

        /* What pcq_utf16_encode makes: two units above the BMP, one otherwise. */
        for (size_t i = 0; i < n; i++)
                units += (uint32_t) w[i] - 0x10000u <= 0xFFFFFu;
        return units;
}

bool pcq_utf16_eq_le(const uint16_t *u, size_t un, const uint8_t *le, size_t le_size)
{
        /* The units, the NUL, and nothing but padding after it. */
        if (un >= le_size / 2 || le[2 * un] != 0 || le[2 * un + 1] != 0)
                return false;
        for (size_t i = 0; i < un; i++)
                if (le[2 * i] != (uint8_t) u[i] || le[2 * i + 1] != (uint8_t) (u[i] >> 8))
                        return false;
        return true;
}

bool pcq_utf16_eq_wcs(const uint16_t *u, size_t un, const wchar_t *w, size_t wn)
{
        size_t k = 0;
        uint16_t e[2];

        for (size_t i = 0; i < wn; i++) {
                size_t m = pcq_utf16_encode((uint32_t) w[i], e);

                if (m > un - k || memcmp(u + k, e, m * sizeof(uint16_t)) != 0)
                        return false;
                k += m;
        }
        return k == un;
}

int pcq_utf16_to_wcs(const uint16_t *u, size_t n, wchar_t **ret, size_t *ret_len)
{
        wchar_t *w = malloc((n + 1) * sizeof(wchar_t));
        size_t k = 0;

        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                uint32_t c = u[i];

                if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n &&
                    u[i + 1] >= 0xDC00 && u[i + 1] <= 0xDFFF) {
                        c = 0x10000 + ((c - 0xD800) << 10) + (u[i + 1] - 0xDC00u);
                        i++;
                } else if (c >= 0xD800 && c <= 0xDFFF)
                        c = PCQ_UTF_REPLACEMENT;
                w[k++] = (wchar_t) c;
        }
        w[k] = L'\0';
        *ret = w;
        if (ret_len)
                *ret_len = k;
        return 0;
}

int pcq_utf16z_to_wcs(const uint16_t *z, size_t max, wchar_t **ret, size_t *ret_len)
{
        size_t n = 0;

        while (z && n < max && z[n])
                n++;
        return pcq_utf16_to_wcs(z, n, ret, ret_len);
}
