/* SPDX-License-Identifier: MIT */
/*
 * Kerberos as a DCE/RPC security mechanism (dcerpc-krb5.h).
 *
 * MIT's (libgssapi_krb5, through GSS-API): tickets and keytabs, the AP
 * exchange in DCE style, the keys, RFC 4121's wrap and MIC tokens and
 * their crypto, sequence numbers and replay detection.
 *
 * Ours: driving that exchange through dcerpc-sec.h's table; a protected
 * fragment laid out as GSS buffers, as MS-KILE 3.4.5.4.1 (GSS_WrapEx)
 * and Samba's gensec_gssapi do it: the stub and its pad as DATA, sealed
 * in place, the header and sec_trailer as SIGN_ONLY when headers are
 * signed, the token in the HEADER buffer that becomes auth_value, no
 * TRAILER or PADDING buffer (DCE style rotates the trailer into the
 * header, and the extra count's pad goes into the header too); the
 * signature sizes fixed once per context; AES only; GSS statuses as
 * -errno.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include "dcerpc-krb5.h"

/* What we ask for, as Samba's DCE/RPC client does by default. */
#define KERBEROS_WANT (GSS_C_DCE_STYLE | GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG | \
                   GSS_C_SEQUENCE_FLAG | GSS_C_REPLAY_FLAG)
/*
 * What an established context must have, whoever asked: without sequence
 * detection a replayed PDU would pass.  Confidentiality only at
 * PKT_PRIVACY: a client binding at PKT_INTEGRITY does not ask for it.
 */
#define KERBEROS_NEED (GSS_C_INTEG_FLAG | GSS_C_SEQUENCE_FLAG)

/*
 * A wrap token's size, asked once for this much data: in DCE style MIT
 * always pads with a whole block (RFC 4121's extra count, 16), as Windows
 * expects, so the size does not depend on the data (76 bytes with
 * aes256-cts-hmac-sha1-96: header 16, confounder 16, pad 16, encrypted
 * header copy 16, checksum 12).
 */
#define KERBEROS_ALIGNED_DATA 16u
/* Room to copy a wrap token: 76 to 88 bytes with AES. */
#define KERBEROS_SIG_MAX 128u

struct kerberos_sec {
        gss_cred_id_t cred;
        gss_name_t target;              /* initiators only */
        gss_ctx_id_t gss;
        bool initiator, established, dead;
        char *peer;                     /* acceptors, once established */
        size_t wrap_size, mic_size;     /* once established */
};

static gss_OID_desc *kerberos_oid(void)
{
        return (gss_OID_desc *)gss_mech_krb5;
}

/*
 * A step's failure as dcerpc-sec.h asks: a token that is not one is
 * malformed, anything else refuses the peer (a ticket for a key we do not
 * hold, a server that fails mutual authentication, an expired ticket).
 */
static int step_errno(OM_uint32 maj, OM_uint32 min)
{
        if (min == ENOMEM)
                return -ENOMEM;
        if (GSS_ROUTINE_ERROR(maj) == GSS_S_DEFECTIVE_TOKEN)
                return -EBADMSG;
        return -EACCES;
}

/* A protected PDU or a MIC that fails: anything but a clean COMPLETE,
 * since replays and gaps come back as supplementary bits beside it. */
static int check_errno(OM_uint32 maj, OM_uint32 min)
{
        if (GSS_ERROR(maj) && min == ENOMEM)
                return -ENOMEM;
        return maj == GSS_S_COMPLETE ? 0 : -EKEYREJECTED;
}

/* Moves a GSS buffer into a malloc'd one, the caller's; releases it either way. */
static int take_buffer(gss_buffer_desc *b, uint8_t **ret, size_t *ret_len)
{
        OM_uint32 min;
        uint8_t *p = NULL;

        if (b->length) {
                p = malloc(b->length);
                if (!p) {
                        gss_release_buffer(&min, b);
                        return -ENOMEM;
                }
                memcpy(p, b->value, b->length);
        }
        *ret = p;
        *ret_len = b->length;
        gss_release_buffer(&min, b);
        return 0;
}

/* GSS_C_INQ_SSPI_SESSION_KEY's second buffer: this OID's contents, then
 * the key's enctype as one more arc (MIT's GSS_KRB5_SESSION_KEY_ENCTYPE_OID). */
static const uint8_t enctype_oid[] = { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x04 };

/* The last arc of b, an OID's contents under enctype_oid; -1 when it is not one. */
static long enctype_arc(const gss_buffer_desc *b)
{
        const uint8_t *p = b->value;
        size_t n = sizeof(enctype_oid);
        long v = 0;

        if (b->length <= n || b->length > n + 4 || memcmp(p, enctype_oid, n) != 0)
                return -1;
        for (size_t i = n; i < b->length; i++) {
                v = v << 7 | (p[i] & 0x7f);
                if (!(p[i] & 0x80) != (i + 1 == b->length))
                        return -1;
        }
        return v;
}

/*
 * The session key's enctype must be AES (RFC 3962, RFC 8009): RFC 4121
 * tokens, which the sizes below and SPNEGO's mechListMIC rule assume.
 */
static int check_enctype(gss_ctx_id_t gss)
{
        gss_buffer_set_t set = GSS_C_NO_BUFFER_SET;
        OM_uint32 maj, min;
        long e = -1;

        maj = gss_inquire_sec_context_by_oid(&min, gss, GSS_C_INQ_SSPI_SESSION_KEY, &set);
        if (GSS_ERROR(maj))
                return min == ENOMEM ? -ENOMEM : -EACCES;
        if (set && set->count >= 2)
                e = enctype_arc(&set->elements[1]);
        gss_release_buffer_set(&min, &set);
        return e >= ENCTYPE_AES128_CTS_HMAC_SHA1_96 && e <= ENCTYPE_AES256_CTS_HMAC_SHA384_192 ?
               0 : -EACCES;
}

/* The signatures' sizes, once: a MIC, and a wrap token when the context can seal. */
static int fix_sizes(struct kerberos_sec *k, bool conf_flag)
{
        gss_iov_buffer_desc wrap[2] = {
                { .type = GSS_IOV_BUFFER_TYPE_HEADER },
                { .type = GSS_IOV_BUFFER_TYPE_DATA, .buffer.length = KERBEROS_ALIGNED_DATA },
        };
        gss_iov_buffer_desc mic[2] = {
                { .type = GSS_IOV_BUFFER_TYPE_DATA },
                { .type = GSS_IOV_BUFFER_TYPE_MIC_TOKEN },
        };
        OM_uint32 maj, min;
        int conf = 0;

        maj = gss_get_mic_iov_length(&min, k->gss, GSS_C_QOP_DEFAULT, mic, 2);
        if (GSS_ERROR(maj) || mic[1].buffer.length == 0)
                return -EACCES;
        k->mic_size = mic[1].buffer.length;
        if (!conf_flag)
                return 0;
        maj = gss_wrap_iov_length(&min, k->gss, 1, GSS_C_QOP_DEFAULT, &conf, wrap, 2);
        if (GSS_ERROR(maj) || !conf || wrap[0].buffer.length == 0 ||
            wrap[0].buffer.length > KERBEROS_SIG_MAX)
                return -EACCES;
        k->wrap_size = wrap[0].buffer.length;
        return 0;
}

/* A name as gss_display_name writes it, malloc'd; NULL when it cannot. */
static char *display(gss_name_t name)
{
        gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
        OM_uint32 maj, min;
        char *s = NULL;

        maj = gss_display_name(&min, name, &text, NULL);
        if (!GSS_ERROR(maj) && text.length > 0 && !memchr(text.value, '\0', text.length))
                s = strndup(text.value, text.length);
        gss_release_buffer(&min, &text);
        return s;
}

/*
 * The initiator's principal, "user@REALM", or just "user" when REALM is
 * our own service principal's: as Windows names its own domain's users,
 * so that an account "user" covers its owner's NTLM and Kerberos logons,
 * while a principal of another realm keeps the realm in its name.
 */
static int fetch_peer(struct kerberos_sec *k)
{
        gss_name_t src = GSS_C_NO_NAME, targ = GSS_C_NO_NAME;
        char *ours = NULL;
        OM_uint32 maj, min;

        maj = gss_inquire_context(&min, k->gss, &src, &targ, NULL, NULL, NULL, NULL, NULL);
        if (!GSS_ERROR(maj)) {
                k->peer = display(src);
                ours = display(targ);
        }
        gss_release_name(&min, &src);
        gss_release_name(&min, &targ);
        if (k->peer && ours) {
                const char *at = strrchr(k->peer, '@'), *realm = strrchr(ours, '@');

                if (at && realm && at != k->peer && strcmp(at, realm) == 0)
                        k->peer[at - k->peer] = '\0';
        }
        free(ours);
        return k->peer ? 0 : GSS_ERROR(maj) ? -EACCES : -ENOMEM;
}

/* A context GSS calls complete is ours only with what DCE/RPC needs. */
static int establish(struct kerberos_sec *k, OM_uint32 flags)
{
        int r;

        if ((flags & KERBEROS_NEED) != KERBEROS_NEED || !(flags & GSS_C_DCE_STYLE))
                return -EACCES;
        r = check_enctype(k->gss);
        if (r >= 0)
                r = fix_sizes(k, flags & GSS_C_CONF_FLAG);
        if (r >= 0 && !k->initiator)
                r = fetch_peer(k);
        if (r >= 0)
                k->established = true;
        return r;
}

/* One call of GSS's loop, either side; *ret_flags only once complete. */
static OM_uint32 kerberos_gss_step(struct kerberos_sec *k, gss_buffer_desc *in,
                                   gss_buffer_desc *out, OM_uint32 *ret_flags,
                                   OM_uint32 *ret_min)
{
        if (k->initiator)
                return gss_init_sec_context(ret_min, k->cred, &k->gss, k->target, kerberos_oid(),
                                            KERBEROS_WANT, 0, GSS_C_NO_CHANNEL_BINDINGS,
                                            in->length ? in : GSS_C_NO_BUFFER, NULL, out,
                                            ret_flags, NULL);
        return gss_accept_sec_context(ret_min, &k->gss, k->cred, in, GSS_C_NO_CHANNEL_BINDINGS,
                                      NULL, NULL, out, ret_flags, NULL, NULL);
}

/*
 * DCE style (dcerpc-krb5.h): the initiator starts without a token and
 * ends with one; the acceptor always takes one, and ends without.
 */
static int kerberos_step(void *ctx, const uint8_t *in, size_t in_len, uint8_t **ret_out,
                         size_t *ret_out_len)
{
        struct kerberos_sec *k = ctx;
        gss_buffer_desc input = { .length = in ? in_len : 0, .value = (void *)in };
        gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
        bool first = k->gss == GSS_C_NO_CONTEXT;
        OM_uint32 maj, min = 0, flags = 0;
        int r;

        if (k->established || k->dead)
                return -EPROTO;
        if (k->initiator ? first != (input.length == 0) : input.length == 0) {
                k->dead = true;
                return -EPROTO;
        }
        maj = kerberos_gss_step(k, &input, &output, &flags, &min);
        if (GSS_ERROR(maj) && k->initiator && first && min != ENOMEM)
                r = -ENOKEY;    /* nothing was sent yet: no ticket for the service */
        else if (GSS_ERROR(maj))
                r = step_errno(maj, min);
        else if (maj == GSS_S_CONTINUE_NEEDED)
                r = output.length ? DCERPC_SEC_CONTINUE : -EPROTO;
        else
                r = establish(k, flags);
        if (r < 0)
                gss_release_buffer(&min, &output);
        else if (take_buffer(&output, ret_out, ret_out_len) < 0)
                r = -ENOMEM;
        if (r < 0)
                k->dead = true;
        return r;
}

static const char *kerberos_peer(void *ctx)
{
        struct kerberos_sec *k = ctx;

        return k->established ? k->peer : NULL;
}

static int kerberos_get_mic(void *ctx, const uint8_t *data, size_t len, uint8_t **ret_mic,
                            size_t *ret_mic_len)
{
        struct kerberos_sec *k = ctx;
        gss_buffer_desc in = { .length = len, .value = (void *)data };
        gss_buffer_desc mic = GSS_C_EMPTY_BUFFER;
        OM_uint32 maj, min;

        if (!k->established)
                return -EPROTO;
        maj = gss_get_mic(&min, k->gss, GSS_C_QOP_DEFAULT, &in, &mic);
        if (GSS_ERROR(maj))
                return min == ENOMEM ? -ENOMEM : -EIO;
        return take_buffer(&mic, ret_mic, ret_mic_len);
}

static int kerberos_verify_mic(void *ctx, const uint8_t *data, size_t len, const uint8_t *mic,
                               size_t mic_len)
{
        struct kerberos_sec *k = ctx;
        gss_buffer_desc in = { .length = len, .value = (void *)data };
        gss_buffer_desc token = { .length = mic_len, .value = (void *)mic };
        OM_uint32 maj, min = 0;

        if (!k->established)
                return -EPROTO;
        maj = gss_verify_mic(&min, k->gss, &in, &token, NULL);
        return check_errno(maj, min);
}

/* RFC 4121 tokens (AES only, checked in establish): "new" SPNEGO, MIC required. */
static int kerberos_mic_required(void *ctx)
{
        struct kerberos_sec *k = ctx;

        return k->established;
}

static void *kerberos_mech_ctx(void *ctx)
{
        struct kerberos_sec *k = ctx;

        return k->established ? k : NULL;
}

static void kerberos_free(void *ctx)
{
        struct kerberos_sec *k = ctx;
        OM_uint32 min;

        if (!k)
                return;
        if (k->gss != GSS_C_NO_CONTEXT)
                gss_delete_sec_context(&min, &k->gss, GSS_C_NO_BUFFER);
        gss_release_cred(&min, &k->cred);
        gss_release_name(&min, &k->target);
        free(k->peer);
        free(k);
}

/* ---- PKT_PRIVACY: wrap tokens ---- */

static size_t wrap_sig_size(void *ctx)
{
        struct kerberos_sec *k = ctx;

        return k ? k->wrap_size : 0;
}

/*
 * The four buffers of a protected fragment: the token, the signed bytes
 * before the sealed ones and after them (with header signing: the
 * headers, and the sec_trailer; else none), and the sealed ones between.
 * -EINVAL when the sealed bytes do not lie within the signed ones.
 */
static int wrap_layout(const uint8_t *sign, size_t sign_len, uint8_t *seal, size_t seal_len,
                       uint8_t *token, size_t token_len, gss_iov_buffer_desc iov[4])
{
        uintptr_t s = (uintptr_t)sign, d = (uintptr_t)seal;

        if (d < s || seal_len > sign_len || d - s > sign_len - seal_len)
                return -EINVAL;
        size_t pre = d - s, post = sign_len - seal_len - pre;
        OM_uint32 sign_only = GSS_IOV_BUFFER_TYPE_SIGN_ONLY, empty = GSS_IOV_BUFFER_TYPE_EMPTY;

        iov[0] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_HEADER, { token_len, token } };
        iov[1] = (gss_iov_buffer_desc){ pre ? sign_only : empty, { pre, (void *)sign } };
        iov[2] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_DATA, { seal_len, seal } };
        iov[3] = (gss_iov_buffer_desc){ post ? sign_only : empty, { post, seal + seal_len } };
        return 0;
}

/* Seals even an empty stub: at PKT_PRIVACY every fragment carries a wrap token. */
static int wrap_sign_seal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                          size_t seal_len, uint8_t *ret_sig)
{
        struct kerberos_sec *k = ctx;
        gss_iov_buffer_desc iov[4];
        OM_uint32 maj, min = 0;
        int conf = 0;

        if (!k || !k->established ||
            wrap_layout(sign, sign_len, seal, seal_len, ret_sig, k->wrap_size, iov) < 0)
                return -EINVAL;
        if (k->wrap_size == 0)
                return -EACCES;         /* a context without confidentiality */
        maj = gss_wrap_iov(&min, k->gss, 1, GSS_C_QOP_DEFAULT, &conf, iov, 4);
        if (GSS_ERROR(maj))
                return min == ENOMEM ? -ENOMEM : -EIO;
        /* The token must be the size announced in auth_length. */
        if (!conf || iov[0].buffer.length != k->wrap_size)
                return -EIO;
        return 0;
}

static int wrap_check_unseal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                             size_t seal_len, const uint8_t *sig, size_t sig_len)
{
        struct kerberos_sec *k = ctx;
        uint8_t token[KERBEROS_SIG_MAX];
        gss_iov_buffer_desc iov[4];
        OM_uint32 maj, min = 0;
        int conf = 0, r;

        if (!k || !k->established)
                return -EINVAL;
        if (k->wrap_size == 0)
                return -EACCES;         /* a context without confidentiality */
        if (sig_len != k->wrap_size)
                return -EKEYREJECTED;
        /* GSS may rotate the token in place (DCE style's RRC): a copy, not the PDU's. */
        memcpy(token, sig, sig_len);
        if (wrap_layout(sign, sign_len, seal, seal_len, token, sig_len, iov) < 0)
                return -EINVAL;
        maj = gss_unwrap_iov(&min, k->gss, &conf, NULL, iov, 4);
        r = check_errno(maj, min);
        return r == 0 && !conf ? -EKEYREJECTED : r;
}

static const struct dcerpc_auth_mech kerberos_privacy_mech = {
        .sig_size = wrap_sig_size,
        .sign_seal = wrap_sign_seal,
        .check_unseal = wrap_check_unseal,
};

/* ---- PKT_INTEGRITY: MICs over the signed bytes ---- */

static size_t mic_sig_size(void *ctx)
{
        struct kerberos_sec *k = ctx;

        return k ? k->mic_size : 0;
}

static int mic_sign_seal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                         size_t seal_len, uint8_t *ret_sig)
{
        struct kerberos_sec *k = ctx;
        uint8_t *mic;
        size_t mic_len;
        int r;

        if (!k || seal_len)
                return -EINVAL;
        r = kerberos_get_mic(k, sign, sign_len, &mic, &mic_len);
        if (r < 0)
                return r;
        if (mic_len == k->mic_size)
                memcpy(ret_sig, mic, mic_len);
        free(mic);
        return mic_len == k->mic_size ? 0 : -EIO;
}

static int mic_check_unseal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                            size_t seal_len, const uint8_t *sig, size_t sig_len)
{
        if (!ctx || seal_len)
                return -EINVAL;
        return kerberos_verify_mic(ctx, sign, sign_len, sig, sig_len);
}

const struct dcerpc_auth_mech dcerpc_krb5_integrity_mech = {
        .sig_size = mic_sig_size,
        .sign_seal = mic_sign_seal,
        .check_unseal = mic_check_unseal,
};

/* ---- construction ---- */

static const struct dcerpc_sec_ops kerberos_ops = {
        .name = "Kerberos",
        .step = kerberos_step,
        .peer = kerberos_peer,
        .get_mic = kerberos_get_mic,
        .verify_mic = kerberos_verify_mic,
        .mic_required = kerberos_mic_required,
        .mech = &kerberos_privacy_mech,
        .mech_ctx = kerberos_mech_ctx,
        .free = kerberos_free,
};

/* Credentials that could not be had: nothing to start from, or no memory. */
static int cred_errno(OM_uint32 maj, OM_uint32 min)
{
        if (min == ENOMEM)
                return -ENOMEM;
        switch (GSS_ROUTINE_ERROR(maj)) {
        case GSS_S_BAD_NAME:
        case GSS_S_BAD_NAMETYPE:
                return -EINVAL;
        default:
                return -ENOKEY;
        }
}

/* Hands k over to *ret, or frees it on failure r. */
static int kerberos_finish(struct kerberos_sec *k, int r, struct dcerpc_sec *ret)
{
        if (r < 0) {
                kerberos_free(k);
                return r;
        }
        *ret = (struct dcerpc_sec){ .ops = &kerberos_ops, .ctx = k };
        return 0;
}

int dcerpc_sec_krb5_acceptor(const char *keytab, struct dcerpc_sec *ret)
{
        gss_key_value_element_desc kt = { .key = "keytab", .value = keytab };
        gss_key_value_set_desc store = { .count = 1, .elements = &kt };
        gss_OID_set_desc mechs = { .count = 1, .elements = kerberos_oid() };
        struct kerberos_sec *k = calloc(1, sizeof(*k));
        OM_uint32 maj, min = 0;

        if (!k)
                return -ENOMEM;
        maj = gss_acquire_cred_from(&min, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_ACCEPT,
                                    keytab ? &store : GSS_C_NO_CRED_STORE, &k->cred, NULL, NULL);
        return kerberos_finish(k, GSS_ERROR(maj) ? cred_errno(maj, min) : 0, ret);
}

int dcerpc_sec_krb5_initiator(const char *target, struct dcerpc_sec *ret)
{
        gss_buffer_desc name = { .length = target ? strlen(target) : 0, .value = (void *)target };
        gss_OID_set_desc mechs = { .count = 1, .elements = kerberos_oid() };
        struct kerberos_sec *k;
        OM_uint32 maj, min = 0;

        if (name.length == 0)
                return -EINVAL;
        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        k->initiator = true;
        maj = gss_import_name(&min, &name, GSS_C_NT_HOSTBASED_SERVICE, &k->target);
        if (!GSS_ERROR(maj))
                maj = gss_acquire_cred(&min, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs,
                                       GSS_C_INITIATE, &k->cred, NULL, NULL);
        return kerberos_finish(k, GSS_ERROR(maj) ? cred_errno(maj, min) : 0, ret);
}
