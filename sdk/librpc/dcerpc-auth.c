/* SPDX-License-Identifier: MIT */
/*
 * The DCE/RPC auth verifier and per-fragment protection (dcerpc-auth.h).
 * Nothing here knows a mechanism: keys, sealing and sequence numbers are
 * the mechanism's, behind struct dcerpc_auth_mech.
 */
#include <errno.h>
#include <string.h>

#include "dcerpc.h"
#include "dcerpc-auth.h"
#include "ndr.h"

/* Where the stub starts: after the call header, and a request's object uuid. */
static size_t stub_off(uint8_t ptype, uint8_t flags)
{
        switch (ptype) {
        case DCERPC_REQUEST:
                return DCERPC_CALL_HDR_SIZE + (flags & DCERPC_PFC_OBJECT_UUID ? 16u : 0u);
        case DCERPC_RESPONSE:
                return DCERPC_CALL_HDR_SIZE;
        case DCERPC_FAULT:
                return DCERPC_FAULT_SIZE;
        default:
                return DCERPC_HDR_SIZE;
        }
}

int dcerpc_auth_parse(const uint8_t *pdu, size_t len, struct dcerpc_auth_view *ret)
{
        struct dcerpc_hdr h;
        int r;

        if (len < DCERPC_HDR_SIZE)
                return -EBADMSG;
        r = dcerpc_parse_hdr(pdu, &h);
        if (r < 0)
                return r;
        size_t body = stub_off(h.ptype, h.flags);
        if (h.frag_len > len || h.frag_len < body)
                return -EBADMSG;
        struct dcerpc_auth_view v = {
                .ptype = h.ptype, .flags = h.flags, .frag_len = h.frag_len, .call_id = h.call_id,
                .stub_off = body, .stub_len = h.frag_len - body,
                .trailer_off = h.frag_len, .auth_off = h.frag_len,
        };
        if (h.auth_len == 0) {
                *ret = v;
                return 0;
        }
        if (h.frag_len - body < DCERPC_AUTH_TRAILER_SIZE ||
            h.auth_len > h.frag_len - body - DCERPC_AUTH_TRAILER_SIZE)
                return -EBADMSG;
        v.trailer_off = h.frag_len - h.auth_len - DCERPC_AUTH_TRAILER_SIZE;
        const uint8_t *t = pdu + v.trailer_off;
        /* The pad bytes themselves may hold anything: only their count matters. */
        if (v.trailer_off % 4 || t[2] > DCERPC_AUTH_PAD_MAX || t[2] > v.trailer_off - body)
                return -EBADMSG;
        v.pad_len = t[2];
        v.stub_len = v.trailer_off - body - v.pad_len;
        v.auth_off = v.trailer_off + DCERPC_AUTH_TRAILER_SIZE;
        v.auth_len = h.auth_len;
        v.auth_type = t[0];
        v.auth_level = t[1];
        v.auth_context_id = ndr_le32(t + 4);
        *ret = v;
        return 0;
}

/*
 * Appends pad zero bytes, the sec_trailer and room for an auth_value of
 * auth_len bytes to the fragment at (*out)[frag_off, *out_len), which must
 * end there, and sets its frag_length and auth_length.
 */
static int put_trailer(uint8_t **out, size_t *out_len, size_t frag_off, size_t pad,
                       uint8_t type, uint8_t level, uint32_t context_id, size_t auth_len)
{
        size_t frag_len = *out_len - frag_off;
        size_t add = pad + DCERPC_AUTH_TRAILER_SIZE + auth_len;
        uint8_t *at;
        int r;

        if (auth_len > UINT16_MAX || frag_len > UINT16_MAX ||
            add > UINT16_MAX - frag_len)
                return -EMSGSIZE;
        r = dcerpc_grow(out, out_len, add, &at);
        if (r < 0)
                return r;
        memset(at, 0, pad);
        at += pad;
        at[0] = type;
        at[1] = level;
        at[2] = (uint8_t)pad;
        at[3] = 0;
        ndr_put_le32(at + 4, context_id);
        ndr_put_le16(*out + frag_off + 8, (uint16_t)(frag_len + add));
        ndr_put_le16(*out + frag_off + 10, (uint16_t)auth_len);
        return 0;
}

/*
 * With header signing, or a mechanism that always signs the whole PDU
 * (NTLM with extended session security: Windows, Samba and impacket all
 * sign it so, flag or no flag), all but the auth_value; else the stub and
 * its pad, the bytes sealed (the pad is part of the body the mechanism
 * sees, whatever it holds).
 */
static void signed_range(const struct dcerpc_auth *a, size_t stub, size_t trailer,
                         size_t *ret_off, size_t *ret_len)
{
        bool whole = a->header_sign ||
                     (a->mech->sign_whole_pdu && a->mech->sign_whole_pdu(a->ctx));

        *ret_off = whole ? 0 : stub;
        *ret_len = whole ? trailer + DCERPC_AUTH_TRAILER_SIZE : trailer - stub;
}

static bool is_call(uint8_t ptype)
{
        return ptype == DCERPC_REQUEST || ptype == DCERPC_RESPONSE;
}

/* Checks a fragment of a call about to get a verifier: its view, in *ret. */
static int check_call(const struct dcerpc_auth *a, const uint8_t *f, size_t len,
                      struct dcerpc_auth_view *ret)
{
        if (a->auth_level < DCERPC_AUTH_LEVEL_INTEGRITY || a->auth_level > DCERPC_AUTH_LEVEL_PRIVACY ||
            dcerpc_auth_parse(f, len, ret) < 0 || ret->frag_len != len || !is_call(ret->ptype))
                return -EINVAL;
        return 0;
}

int dcerpc_auth_frame(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                      size_t frag_off)
{
        struct dcerpc_auth_view v;

        if (frag_off > *out_len || check_call(a, *out + frag_off, *out_len - frag_off, &v) < 0 ||
            v.auth_len)
                return -EINVAL;
        size_t pad = (DCERPC_AUTH_SEND_ALIGN - v.stub_len % DCERPC_AUTH_SEND_ALIGN) %
                     DCERPC_AUTH_SEND_ALIGN;
        size_t sig = a->mech->sig_size(a->ctx);
        if (sig == 0)
                return -EINVAL;
        return put_trailer(out, out_len, frag_off, pad, a->auth_type, a->auth_level,
                           a->context_id, sig);
}

int dcerpc_auth_seal(const struct dcerpc_auth *a, uint8_t *f, size_t len)
{
        struct dcerpc_auth_view v;
        size_t sign_off, sign_len, seal_len, trailer;

        if (check_call(a, f, len, &v) < 0 || v.auth_len != a->mech->sig_size(a->ctx))
                return -EINVAL;
        trailer = v.trailer_off;
        seal_len = a->auth_level == DCERPC_AUTH_LEVEL_PRIVACY ? trailer - v.stub_off : 0;
        signed_range(a, v.stub_off, trailer, &sign_off, &sign_len);
        return a->mech->sign_seal(a->ctx, f + sign_off, sign_len, f + v.stub_off, seal_len,
                                  f + v.auth_off);
}

int dcerpc_auth_protect(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                        size_t frag_off)
{
        size_t old_len = *out_len;
        int r = dcerpc_auth_frame(a, out, out_len, frag_off);

        if (r < 0)
                return r;
        r = dcerpc_auth_seal(a, *out + frag_off, *out_len - frag_off);
        if (r < 0) {
                uint8_t *f = *out + frag_off;

                ndr_put_le16(f + 8, (uint16_t)(old_len - frag_off));
                ndr_put_le16(f + 10, 0);
                *out_len = old_len;
        }
        return r;
}

/*
 * The loop of both: each fragment framed, then sealed at once, or (with
 * framed) its offset handed to framed, to be sealed by the caller later.
 */
static int append_call(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                       const struct dcerpc_call_id *id, const uint8_t *stub, size_t stub_len,
                       uint16_t max_frag, int (*framed)(void *userdata, size_t frag_off),
                       void *userdata)
{
        size_t sig = a->mech->sig_size(a->ctx), start = *out_len, off = 0;
        int r;

        if (sig > UINT16_MAX)
                return -EINVAL;
        size_t over = DCERPC_CALL_HDR_SIZE + DCERPC_AUTH_TRAILER_SIZE + sig;
        if (max_frag < over + DCERPC_AUTH_SEND_ALIGN)
                return -EINVAL;
        size_t per = (max_frag - over) & ~(size_t)(DCERPC_AUTH_SEND_ALIGN - 1);
        do {
                size_t n = stub_len - off < per ? stub_len - off : per;
                size_t frag_off = *out_len, left = stub_len - off;

                r = dcerpc_append_call(out, out_len, id->ptype, id->call_id, id->ctx_id,
                                       id->opnum, stub ? stub + off : NULL, n, UINT16_MAX);
                if (r < 0)
                        goto fail;
                /* One fragment of the call, not a call of its own. */
                uint8_t *f = *out + frag_off;
                f[3] = (uint8_t)((off == 0 ? DCERPC_PFC_FIRST_FRAG : 0) |
                                 (n == left ? DCERPC_PFC_LAST_FRAG : 0));
                ndr_put_le32(f + 16, left > UINT32_MAX ? UINT32_MAX : (uint32_t)left);
                if (framed) {
                        r = dcerpc_auth_frame(a, out, out_len, frag_off);
                        if (r == 0)
                                r = framed(userdata, frag_off);
                } else
                        r = dcerpc_auth_protect(a, out, out_len, frag_off);
                if (r < 0)
                        goto fail;
                off += n;
        } while (off < stub_len);
        return 0;
fail:
        *out_len = start;
        return r;
}

int dcerpc_auth_append_call(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                            uint8_t ptype, uint32_t call_id, uint16_t ctx_id, uint16_t opnum,
                            const uint8_t *stub, size_t stub_len, uint16_t max_frag)
{
        struct dcerpc_call_id id = { ptype, ctx_id, opnum, call_id };

        return append_call(a, out, out_len, &id, stub, stub_len, max_frag, NULL, NULL);
}

int dcerpc_auth_append_framed(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                              const struct dcerpc_call_id *id, const uint8_t *stub,
                              size_t stub_len, uint16_t max_frag,
                              int (*framed)(void *userdata, size_t frag_off), void *userdata)
{
        if (!framed)
                return -EINVAL;
        return append_call(a, out, out_len, id, stub, stub_len, max_frag, framed, userdata);
}

int dcerpc_auth_verify(const struct dcerpc_auth *a, uint8_t *pdu, size_t len,
                       struct dcerpc_auth_view *ret)
{
        struct dcerpc_auth_view v;
        size_t sign_off, sign_len;
        int r = dcerpc_auth_parse(pdu, len, &v);

        if (r < 0)
                return r;
        if (v.frag_len != len || !(is_call(v.ptype) || v.ptype == DCERPC_FAULT))
                return -EBADMSG;
        if (v.auth_len == 0 || v.auth_level != a->auth_level)
                return -EACCES;
        if (v.auth_type != a->auth_type)
                return -EPROTO;
        if (v.auth_context_id != a->context_id)
                return -ESRCH;
        if (v.auth_len != a->mech->sig_size(a->ctx))
                return -EBADMSG;
        size_t seal_len = a->auth_level == DCERPC_AUTH_LEVEL_PRIVACY ? v.trailer_off - v.stub_off : 0;
        signed_range(a, v.stub_off, v.trailer_off, &sign_off, &sign_len);
        r = a->mech->check_unseal(a->ctx, pdu + sign_off, sign_len, pdu + v.stub_off, seal_len,
                                  pdu + v.auth_off, v.auth_len);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

int dcerpc_auth_append_token(uint8_t **out, size_t *out_len, size_t frag_off,
                             uint8_t auth_type, uint8_t auth_level, uint32_t context_id,
                             const uint8_t *token, size_t token_len)
{
        if (token_len == 0)
                return -EMSGSIZE;
        return dcerpc_auth_append_trailer(out, out_len, frag_off, auth_type, auth_level,
                                          context_id, token, token_len);
}

int dcerpc_auth_append_trailer(uint8_t **out, size_t *out_len, size_t frag_off,
                               uint8_t auth_type, uint8_t auth_level, uint32_t context_id,
                               const uint8_t *token, size_t token_len)
{
        if (frag_off > *out_len || *out_len - frag_off < DCERPC_HDR_SIZE)
                return -EINVAL;
        size_t pad = (4 - (*out_len - frag_off) % 4) % 4;
        int r = put_trailer(out, out_len, frag_off, pad, auth_type, auth_level, context_id,
                            token_len);
        if (r < 0)
                return r;
        if (token_len)
                memcpy(*out + *out_len - token_len, token, token_len);
        return 0;
}

uint8_t dcerpc_auth_ack_flags(uint8_t bind_flags, bool supported)
{
        return supported ? bind_flags & DCERPC_PFC_SUPPORT_HEADER_SIGN : 0;
}

bool dcerpc_auth_header_sign(uint8_t bind_flags, uint8_t ack_flags)
{
        return bind_flags & ack_flags & DCERPC_PFC_SUPPORT_HEADER_SIGN;
}
