/* SPDX-License-Identifier: MIT */
/*
 * The NT hash (ntlm.h): what an account file keeps and what NTLM starts
 * from.  MD4 from Nettle.
 */
#include <errno.h>
#include <string.h>

#include <nettle/md4.h>

#include "ntlm.h"
#include "pcq-utf.h"

int ntlm_nt_hash(const char *password, uint8_t ret[NTLM_HASH_SIZE])
{
        /* Two UTF-16 units at most per byte of UTF-8 consumed. */
        uint8_t utf16[NTLM_PASSWORD_MAX * 4];
        const unsigned char *s = (const unsigned char *) password;
        struct md4_ctx md4;
        size_t n = 0;

        if (!password || !ret || strlen(password) > NTLM_PASSWORD_MAX)
                return -EINVAL;
        while (*s) {
                uint16_t u[2];
                uint32_t c;
                size_t k;

                s += pcq_utf8_next(s, &c);
                if (c == PCQ_UTF_INVALID)
                        return -EINVAL;
                k = pcq_utf16_encode(c, u);
                for (size_t i = 0; i < k; i++) {
                        utf16[n++] = (uint8_t) (u[i] & 0xff);
                        utf16[n++] = (uint8_t) (u[i] >> 8);
                }
        }
        md4_init(&md4);
        md4_update(&md4, n, utf16);
        md4_digest(&md4, NTLM_HASH_SIZE, ret);
        return 0;
}
