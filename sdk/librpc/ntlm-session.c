/* SPDX-License-Identifier: MIT */
/*
 * The established NTLM context (ntlm.h): MS-NLMP 3.4 with extended
 * session security and key exchange.  Each direction has its signing key,
 * its RC4 state (one stream for the data and the checksums, never reset)
 * and its sequence number.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/arcfour.h>
#include <nettle/hmac.h>
#include <nettle/md5.h>
#include <nettle/memops.h>

#include "ntlm.h"

struct ntlm_dir {
        uint8_t sign_key[16];
        struct arcfour_ctx seal;
        uint32_t seq;
};

struct ntlm_session {
        struct ntlm_dir out, in;
        /* A refused message desynchronised the RC4 stream: refuse all. */
        bool broken;
};

/* MS-NLMP 3.4.5.2 and 3.4.5.3: the constants' NULs are hashed too. */
void ntlm_direction_keys(const uint8_t exported_key[16], bool client_to_server,
                         uint8_t ret_sign[16], uint8_t ret_seal[16])
{
        static const char c2s_sign[] = "session key to client-to-server signing key magic constant";
        static const char s2c_sign[] = "session key to server-to-client signing key magic constant";
        static const char c2s_seal[] = "session key to client-to-server sealing key magic constant";
        static const char s2c_seal[] = "session key to server-to-client sealing key magic constant";
        const char *sign = client_to_server ? c2s_sign : s2c_sign;
        const char *seal = client_to_server ? c2s_seal : s2c_seal;
        struct md5_ctx md5;

        md5_init(&md5);
        md5_update(&md5, 16, exported_key);
        md5_update(&md5, strlen(sign) + 1, (const uint8_t *) sign);
        md5_digest(&md5, 16, ret_sign);
        md5_init(&md5);
        md5_update(&md5, 16, exported_key);
        md5_update(&md5, strlen(seal) + 1, (const uint8_t *) seal);
        md5_digest(&md5, 16, ret_seal);
}

static void dir_init(struct ntlm_dir *d, const uint8_t exported_key[16], bool c2s)
{
        uint8_t seal_key[16];

        ntlm_direction_keys(exported_key, c2s, d->sign_key, seal_key);
        arcfour_set_key(&d->seal, sizeof(seal_key), seal_key);
        d->seq = 0;
}

/* The caller owns *ret (ntlm_session_free). */
int ntlm_session_new(const uint8_t exported_key[16], bool client,
                     struct ntlm_session **ret)
{
        struct ntlm_session *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        dir_init(&s->out, exported_key, client);
        dir_init(&s->in, exported_key, !client);
        *ret = s;
        return 0;
}

void ntlm_session_free(struct ntlm_session *s)
{
        if (!s)
                return;
        /* Keys outlive nothing they protected. */
        memset(s, 0, sizeof(*s));
        free(s);
}

/*
 * MS-NLMP 3.4.4.2: version 1, the first 8 bytes of
 * HMAC_MD5(SignKey, SeqNum || data) run through the direction's RC4
 * stream (key exchange), and the sequence number.  Two halves, because
 * sealing encrypts the data between hashing it and encrypting the
 * checksum: the RC4 stream must see them in that order.
 */
static void mac_of(const struct ntlm_dir *d, const void *data, size_t len, uint8_t mac[16])
{
        const uint8_t seq[4] = { d->seq & 0xff, (d->seq >> 8) & 0xff,
                                 (d->seq >> 16) & 0xff, d->seq >> 24 };
        struct hmac_md5_ctx h;

        hmac_md5_set_key(&h, 16, d->sign_key);
        hmac_md5_update(&h, 4, seq);
        hmac_md5_update(&h, len, data);
        hmac_md5_digest(&h, 16, mac);
}

static void sig_finish(struct ntlm_dir *d, const uint8_t mac[16], uint8_t sig[NTLM_SIG_SIZE])
{
        sig[0] = 1;
        sig[1] = sig[2] = sig[3] = 0;
        arcfour_crypt(&d->seal, 8, sig + 4, mac);
        sig[12] = d->seq & 0xff;
        sig[13] = (d->seq >> 8) & 0xff;
        sig[14] = (d->seq >> 16) & 0xff;
        sig[15] = d->seq >> 24;
        d->seq++;
}

static int check_sig(struct ntlm_session *s, const void *data, size_t len,
                     const uint8_t *sig, size_t sig_len)
{
        uint8_t want[NTLM_SIG_SIZE], mac[16];

        if (sig_len != NTLM_SIG_SIZE) {
                s->broken = true;
                return -EBADMSG;
        }
        mac_of(&s->in, data, len, mac);
        sig_finish(&s->in, mac, want);
        if (!memeql_sec(want, sig, NTLM_SIG_SIZE)) {
                s->broken = true;
                return -EBADMSG;
        }
        return 0;
}

int ntlm_seal_pdu(struct ntlm_session *s, const void *sign, size_t sign_len,
                  void *seal, size_t seal_len, uint8_t ret_sig[NTLM_SIG_SIZE])
{
        uint8_t mac[16];

        if (!s || (!sign && sign_len) || (!seal && seal_len) || !ret_sig)
                return -EINVAL;
        if (s->broken)
                return -EBADMSG;
        /*
         * Hash before encrypting: seal may lie inside sign, whose
         * plaintext is what is signed.
         */
        mac_of(&s->out, sign, sign_len, mac);
        if (seal_len)
                arcfour_crypt(&s->out.seal, seal_len, seal, seal);
        sig_finish(&s->out, mac, ret_sig);
        return 0;
}

int ntlm_unseal_pdu(struct ntlm_session *s, const void *sign, size_t sign_len,
                    void *seal, size_t seal_len, const uint8_t *sig, size_t sig_len)
{
        if (!s || (!sign && sign_len) || (!seal && seal_len) || !sig)
                return -EINVAL;
        if (s->broken)
                return -EBADMSG;
        if (seal_len)
                arcfour_crypt(&s->in.seal, seal_len, seal, seal);
        return check_sig(s, sign, sign_len, sig, sig_len);
}

int ntlm_seal(struct ntlm_session *s, void *data, size_t len,
              uint8_t ret_sig[NTLM_SIG_SIZE])
{
        return ntlm_seal_pdu(s, data, len, data, len, ret_sig);
}

int ntlm_unseal(struct ntlm_session *s, void *data, size_t len,
                const uint8_t *sig, size_t sig_len)
{
        return ntlm_unseal_pdu(s, data, len, data, len, sig, sig_len);
}

/* Integrity only: what sealing does with nothing to encrypt. */
int ntlm_sign(struct ntlm_session *s, const void *data, size_t len,
              uint8_t ret_sig[NTLM_SIG_SIZE])
{
        return ntlm_seal_pdu(s, data, len, NULL, 0, ret_sig);
}

int ntlm_verify(struct ntlm_session *s, const void *data, size_t len,
                const uint8_t *sig, size_t sig_len)
{
        return ntlm_unseal_pdu(s, data, len, NULL, 0, sig, sig_len);
}
