/* SPDX-License-Identifier: MIT */
/*
 * NTLM as a DCE/RPC security mechanism (dcerpc-ntlm.h): the adapter
 * between dcerpc-auth.c's per-fragment driver and ntlm.c's session.
 */
#include <errno.h>

#include "dcerpc-ntlm.h"
#include "ntlm.h"

static size_t ntlm_mech_sig_size(void *ctx)
{
        (void) ctx;
        return NTLM_SIG_SIZE;
}

/* No seal range: PKT_INTEGRITY, the signed range only. */
static int ntlm_mech_sign_seal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                               size_t seal_len, uint8_t *ret_sig)
{
        if (!ctx)
                return -EINVAL;
        if (seal_len == 0)
                return ntlm_sign(ctx, sign, sign_len, ret_sig);
        return ntlm_seal_pdu(ctx, sign, sign_len, seal, seal_len, ret_sig);
}

static int ntlm_mech_check_unseal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                                  size_t seal_len, const uint8_t *sig, size_t sig_len)
{
        int r;

        if (!ctx)
                return -EINVAL;
        if (seal_len == 0)
                r = ntlm_verify(ctx, sign, sign_len, sig, sig_len);
        else
                r = ntlm_unseal_pdu(ctx, sign, sign_len, seal, seal_len, sig, sig_len);
        /* What dcerpc-auth.h calls a bad signature or a replay. */
        return r == -EBADMSG ? -EKEYREJECTED : r;
}

const struct dcerpc_auth_mech dcerpc_ntlm_mech = {
        .sig_size = ntlm_mech_sig_size,
        .sign_seal = ntlm_mech_sign_seal,
        .check_unseal = ntlm_mech_check_unseal,
};
