/* SPDX-License-Identifier: MIT */
/*
 * The toy mechanism of toy-mech.h: "sealing" XORs the stub, the
 * "signature" is a sequence number and a keyed FNV-1a sum, which any one
 * changed byte changes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "toy-mech.h"

static uint32_t toy_sum(const struct toy *t, uint32_t seq, const uint8_t *b, size_t n)
{
        uint32_t h = 2166136261u ^ t->key ^ seq * 16777619u;

        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 16777619u;
        return h;
}

/* Never 0, so every sealed byte differs from its plaintext. */
static void toy_xor(const struct toy *t, uint8_t *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                b[i] ^= (uint8_t)(0x80 | (t->key + i));
}

static void put_le32(uint8_t *b, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t le32(const uint8_t *b)
{
        return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static size_t toy_sig_size(void *ctx)
{
        (void)ctx;
        return TOY_SIG;
}

static int toy_sign_seal(void *ctx, const uint8_t *sign, size_t sign_len,
                         uint8_t *seal, size_t seal_len, uint8_t *ret_sig)
{
        struct toy *t = ctx;

        if (t->fail)
                return -EIO;
        put_le32(ret_sig, t->send_seq);
        put_le32(ret_sig + 4, toy_sum(t, t->send_seq, sign, sign_len));
        toy_xor(t, seal, seal_len);
        t->send_seq++;
        return 0;
}

static int toy_check_unseal(void *ctx, const uint8_t *sign, size_t sign_len,
                            uint8_t *seal, size_t seal_len, const uint8_t *sig, size_t sig_len)
{
        struct toy *t = ctx;

        toy_xor(t, seal, seal_len);
        if (sig_len != TOY_SIG || le32(sig) != t->recv_seq ||
            le32(sig + 4) != toy_sum(t, t->recv_seq, sign, sign_len))
                return -EKEYREJECTED;
        t->recv_seq++;
        return 0;
}

const struct dcerpc_auth_mech toy_mech = {
        .sig_size = toy_sig_size,
        .sign_seal = toy_sign_seal,
        .check_unseal = toy_check_unseal,
};
