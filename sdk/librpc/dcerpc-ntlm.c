/* SPDX-License-Identifier: MIT */
/*
 * NTLM as a DCE/RPC security mechanism (dcerpc-ntlm.h): the adapter
 * between dcerpc-auth.c's per-fragment driver and ntlm.c's session.
 */
#include <errno.h>
#include <stdlib.h>

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

/* Windows, Samba and impacket all sign NTLM's whole PDU, flag or no flag. */
static bool ntlm_mech_whole(void *ctx)
{
        (void) ctx;
        return true;
}

const struct dcerpc_auth_mech dcerpc_ntlm_mech = {
        .sign_whole_pdu = ntlm_mech_whole,
        .sig_size = ntlm_mech_sig_size,
        .sign_seal = ntlm_mech_sign_seal,
        .check_unseal = ntlm_mech_check_unseal,
};

/* ---- NTLM as a security context being built (dcerpc-sec.h) ---- */

struct ntlm_sec {
        struct ntlm_server *server;     /* exactly one of the two, owned */
        struct ntlm_client *client;
};

static struct ntlm_session *ntlm_sec_session(struct ntlm_sec *n)
{
        return n->server ? ntlm_server_session(n->server) : ntlm_client_session(n->client);
}

static int ntlm_sec_step(void *ctx, const uint8_t *in, size_t in_len, uint8_t **ret_out,
                         size_t *ret_out_len)
{
        struct ntlm_sec *n = ctx;
        uint8_t *out = NULL;
        size_t out_len = 0;
        int r;

        if (n->server)
                r = ntlm_server_step(n->server, in, in_len, &out, &out_len);
        else
                r = ntlm_client_step(n->client, in, in_len, &out, &out_len);
        if (r < 0)
                return r;
        *ret_out = out;
        *ret_out_len = out ? out_len : 0;
        return ntlm_sec_session(n) ? DCERPC_SEC_DONE : DCERPC_SEC_CONTINUE;
}

static const char *ntlm_sec_peer(void *ctx)
{
        struct ntlm_sec *n = ctx;

        return n->server ? ntlm_server_user(n->server) : NULL;
}

static int ntlm_sec_get_mic(void *ctx, const uint8_t *data, size_t len, uint8_t **ret_mic,
                            size_t *ret_mic_len)
{
        struct ntlm_session *s = ntlm_sec_session(ctx);
        uint8_t *mic;
        int r;

        if (!s)
                return -EPROTO;
        mic = malloc(NTLM_SIG_SIZE);
        if (!mic)
                return -ENOMEM;
        r = ntlm_sign(s, data, len, mic);
        if (r < 0) {
                free(mic);
                return r;
        }
        *ret_mic = mic;
        *ret_mic_len = NTLM_SIG_SIZE;
        return 0;
}

static int ntlm_sec_verify_mic(void *ctx, const uint8_t *data, size_t len, const uint8_t *mic,
                               size_t mic_len)
{
        struct ntlm_session *s = ntlm_sec_session(ctx);
        int r;

        if (!s)
                return -EPROTO;
        r = ntlm_verify(s, data, len, mic, mic_len);
        return r == -EBADMSG ? -EKEYREJECTED : r;
}

static int ntlm_sec_mic_required(void *ctx)
{
        struct ntlm_sec *n = ctx;

        /* Our client always sends a MIC in its AUTHENTICATE. */
        return n->server ? ntlm_server_mic(n->server) : 1;
}

static void *ntlm_sec_mech_ctx(void *ctx)
{
        return ntlm_sec_session(ctx);
}

static void ntlm_sec_free(void *ctx)
{
        struct ntlm_sec *n = ctx;

        if (!n)
                return;
        ntlm_server_free(n->server);
        ntlm_client_free(n->client);
        free(n);
}

static const struct dcerpc_sec_ops ntlm_sec_ops = {
        .name = "NTLM",
        .step = ntlm_sec_step,
        .peer = ntlm_sec_peer,
        .get_mic = ntlm_sec_get_mic,
        .verify_mic = ntlm_sec_verify_mic,
        .mic_required = ntlm_sec_mic_required,
        .mech = &dcerpc_ntlm_mech,
        .mech_ctx = ntlm_sec_mech_ctx,
        .free = ntlm_sec_free,
};

int dcerpc_sec_ntlm_server(const char *target, ntlm_lookup_fn lookup, void *userdata,
                           struct dcerpc_sec *ret)
{
        return dcerpc_sec_ntlm_server_verify(target, lookup, userdata, NULL, NULL, ret);
}

int dcerpc_sec_ntlm_server_verify(const char *target, ntlm_lookup_fn lookup, void *userdata,
                                  ntlm_verify_fn verify, void *verify_userdata,
                                  struct dcerpc_sec *ret)
{
        struct ntlm_sec *n;
        int r;

        if (!ret)
                return -EINVAL;
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        r = ntlm_server_new(target, lookup, userdata, &n->server);
        if (r < 0) {
                free(n);
                return r;
        }
        ntlm_server_set_verify(n->server, verify, verify_userdata);
        *ret = (struct dcerpc_sec){ &ntlm_sec_ops, n };
        return 0;
}

int dcerpc_sec_ntlm_client(const char *user, const char *domain,
                           const uint8_t nt_hash[NTLM_HASH_SIZE], struct dcerpc_sec *ret)
{
        struct ntlm_sec *n;
        int r;

        if (!ret)
                return -EINVAL;
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        r = ntlm_client_new(user, domain, nt_hash, &n->client);
        if (r < 0) {
                free(n);
                return r;
        }
        *ret = (struct dcerpc_sec){ &ntlm_sec_ops, n };
        return 0;
}
