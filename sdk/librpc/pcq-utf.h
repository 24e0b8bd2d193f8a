/* SPDX-License-Identifier: MIT */
/*
 * pcq-utf.h: UTF-8 in, UTF-16 out, for the strings PerflibV2 carries as
 * UTF-16LE.  One decoder for the client (which refuses bad input) and the
 * server core (which replaces it).  Internal to librpc, libpcq and perflibd.
 */
#ifndef PCQ_UTF_H
#define PCQ_UTF_H

#include <stddef.h>
#include <stdint.h>

#define PCQ_UTF_INVALID 0xFFFFFFFFu
#define PCQ_UTF_REPLACEMENT 0xFFFDu

/*
 * Decodes one UTF-8 sequence at s (NUL-terminated; never read past the
 * NUL), stores its code point in *ret and returns the bytes consumed.  An
 * invalid sequence (bad lead or continuation byte, overlong, a surrogate,
 * above U+10FFFF) stores PCQ_UTF_INVALID and consumes one byte.
 */
size_t pcq_utf8_next(const unsigned char *s, uint32_t *ret);

/*
 * Encodes one code point as UTF-16 (1 or 2 units in out), U+FFFD for a
 * surrogate, a NUL or anything above U+10FFFF.  Returns the unit count.
 */
size_t pcq_utf16_encode(uint32_t c, uint16_t out[2]);

#endif /* PCQ_UTF_H */
