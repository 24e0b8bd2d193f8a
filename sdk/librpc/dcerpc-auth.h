/* SPDX-License-Identifier: MIT */
/*
 * dcerpc-auth.h: the security layer of connection-oriented DCE/RPC, apart
 * from any mechanism: the auth verifier (sec_trailer and auth_value, C706
 * 13.2.6.1, MS-RPCE 2.2.2.11) of a PDU, parsed as hostile input and built,
 * and the per-fragment protection of requests and responses at
 * PKT_INTEGRITY and PKT_PRIVACY (MS-RPCE 3.3.1.5.2), with or without header
 * signing (PFC_SUPPORT_HEADER_SIGN).  A mechanism (NTLM, Kerberos) plugs in
 * through struct dcerpc_auth_mech and keeps its keys and sequence numbers.
 *
 * Layout of a protected fragment:
 *   header | call header | stub | auth pad | sec_trailer (8) | auth_value
 * auth_length is the length of auth_value; the pad makes stub + pad a
 * multiple of 16 on what we send (as Windows does), while what we receive
 * only needs the sec_trailer 4-byte aligned, as C706 asks, and a pad of at
 * most 15 bytes, whatever they hold.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PCQ_DCERPC_AUTH_H
#define PCQ_DCERPC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* auth_type (MS-RPCE 2.2.1.1.7) */
#define DCERPC_AUTH_TYPE_NONE           0
#define DCERPC_AUTH_TYPE_SPNEGO         9       /* RPC_C_AUTHN_GSS_NEGOTIATE */
#define DCERPC_AUTH_TYPE_NTLM           10      /* RPC_C_AUTHN_WINNT */
#define DCERPC_AUTH_TYPE_KRB5           16      /* RPC_C_AUTHN_GSS_KERBEROS */

/* auth_level (MS-RPCE 2.2.1.1.8) */
#define DCERPC_AUTH_LEVEL_NONE          1
#define DCERPC_AUTH_LEVEL_CONNECT       2
#define DCERPC_AUTH_LEVEL_CALL          3
#define DCERPC_AUTH_LEVEL_PKT           4
#define DCERPC_AUTH_LEVEL_INTEGRITY     5
#define DCERPC_AUTH_LEVEL_PRIVACY       6

/* In bind, bind_ack and alter_context only: elsewhere 0x04 is PENDING_CANCEL. */
#define DCERPC_PFC_SUPPORT_HEADER_SIGN  0x04

#define DCERPC_AUTH_TRAILER_SIZE        8u
#define DCERPC_AUTH_PAD_MAX             15u
#define DCERPC_AUTH_SEND_ALIGN          16u     /* stub + pad, on what we send */

/*
 * Where the parts of a fragment lie, as offsets from its first byte (no
 * copies).  Without a verifier (auth_len 0) the stub runs to frag_len, and
 * trailer_off and auth_off equal frag_len.  For bind, alter_context, their
 * answers and auth3, "stub" is the PDU's own body after the common header.
 */
struct dcerpc_auth_view {
        uint8_t ptype, flags;
        uint16_t frag_len;
        uint32_t call_id;
        size_t stub_off, stub_len;
        size_t pad_len;                 /* auth_pad_length: between stub and trailer */
        size_t trailer_off;
        size_t auth_off, auth_len;      /* auth_value */
        uint8_t auth_type, auth_level;
        uint32_t auth_context_id;
};

/*
 * Parses the fragment starting at pdu, of frag_len bytes (at most len).
 * -EPROTONOSUPPORT for a version other than 5.0, -EBADMSG for anything
 * that does not add up: a fragment longer than len, shorter than its
 * headers, auth_length leaving no room for the trailer, a trailer not
 * 4-byte aligned, a pad longer than 15 or than the stub before it.
 */
int dcerpc_auth_parse(const uint8_t *pdu, size_t len, struct dcerpc_auth_view *ret);

/*
 * A security mechanism.  ctx is the mechanism's own state (keys, one
 * sequence number per direction), owned by whoever set it up.
 *
 * sign_seal: signs the signed bytes as they are in plaintext, then, when
 * seal_len is not 0, seals the seal bytes in place (they lie within the
 * signed ones when headers are signed, and are the signed ones otherwise),
 * and writes sig_size(ctx) bytes of signature at ret_sig.  It moves its
 * sending sequence number on, and fails only before changing anything.
 *
 * check_unseal: the reverse; unseals the seal bytes in place first, then
 * checks the signature over the signed bytes, as plaintext, and the
 * receiving sequence number, which moves on only on success.  A signature
 * that does not match, a replayed or reordered PDU: -EKEYREJECTED.
 */
struct dcerpc_auth_mech {
        /*
         * Whether it signs header and trailer too, header signing
         * negotiated or not (NTLM); NULL: only when negotiated.
         */
        bool (*sign_whole_pdu)(void *ctx);
        size_t (*sig_size)(void *ctx);
        int (*sign_seal)(void *ctx, const uint8_t *sign, size_t sign_len,
                         uint8_t *seal, size_t seal_len, uint8_t *ret_sig);
        int (*check_unseal)(void *ctx, const uint8_t *sign, size_t sign_len,
                            uint8_t *seal, size_t seal_len, const uint8_t *sig, size_t sig_len);
};

/* One authenticated association's protection, once its context is built. */
struct dcerpc_auth {
        const struct dcerpc_auth_mech *mech;
        void *ctx;                      /* borrowed: the mechanism's state */
        uint8_t auth_type;
        uint8_t auth_level;             /* INTEGRITY or PRIVACY: exactly this, both ways */
        uint32_t context_id;
        bool header_sign;               /* negotiated: sign header and trailer too */
};

/*
 * The fragment at (*out)[frag_off, *out_len), a request or response built
 * without a verifier, gets one: the stub padded to 16 bytes, the trailer,
 * the stub sealed at PKT_PRIVACY, the signature; frag_length and
 * auth_length follow.  *out (the caller's) grows.  -EINVAL for a fragment
 * that is not one or a level below PKT_INTEGRITY, -EMSGSIZE when it would
 * pass 65535 bytes, -ENOMEM, or the mechanism's error; on failure *out_len
 * is as it was.
 */
int dcerpc_auth_protect(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                        size_t frag_off);

/*
 * dcerpc_auth_protect in two steps, for a sender that seals later (and
 * elsewhere: outside a lock) what it built: dcerpc_auth_frame adds the pad,
 * the trailer and room for the signature, as dcerpc_auth_protect, and
 * dcerpc_auth_seal then seals and signs the framed fragment f of len bytes
 * in place.  Fragments must be sealed in the order they are sent: the
 * mechanism's sequence numbers follow the seals.
 */
int dcerpc_auth_frame(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                      size_t frag_off);
int dcerpc_auth_seal(const struct dcerpc_auth *a, uint8_t *f, size_t len);

/*
 * As dcerpc_append_call, every fragment protected, each leaving room under
 * max_frag for pad, trailer and signature.  On failure *out_len is as it was
 * but the mechanism's sequence may have moved on: the association is done.
 */
int dcerpc_auth_append_call(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                            uint8_t ptype, uint32_t call_id, uint16_t ctx_id, uint16_t opnum,
                            const uint8_t *stub, size_t stub_len, uint16_t max_frag);

/*
 * As dcerpc_auth_append_call, every fragment framed (dcerpc_auth_frame)
 * but not sealed: framed(userdata, its offset in *out) is called for each,
 * in order, and the caller seals them later with dcerpc_auth_seal.  A
 * negative return of framed stops it.
 */
struct dcerpc_call_id {
        uint8_t ptype;
        uint16_t ctx_id, opnum;
        uint32_t call_id;
};
int dcerpc_auth_append_framed(const struct dcerpc_auth *a, uint8_t **out, size_t *out_len,
                              const struct dcerpc_call_id *id, const uint8_t *stub,
                              size_t stub_len, uint16_t max_frag,
                              int (*framed)(void *userdata, size_t frag_off), void *userdata);

/*
 * Checks and unseals one received fragment of exactly len bytes in place,
 * and returns its view (the stub now plaintext).  Distinct refusals:
 * -EBADMSG malformed (as dcerpc_auth_parse; also an auth_value that is not
 * the signature's size), -EACCES no verifier or a level other than a's,
 * -EPROTO another auth_type, -ESRCH another auth_context_id, and the
 * mechanism's -EKEYREJECTED for a bad signature or a replay.
 */
int dcerpc_auth_verify(const struct dcerpc_auth *a, uint8_t *pdu, size_t len,
                       struct dcerpc_auth_view *ret);

/*
 * Appends a verifier carrying a mechanism's token (bind, alter_context,
 * their answers, auth3) to the fragment at (*out)[frag_off, *out_len):
 * the body padded to 4 bytes, the trailer, the token.  -EMSGSIZE past
 * 65535 bytes or for an empty token, -ENOMEM; *out_len unchanged then.
 */
int dcerpc_auth_append_token(uint8_t **out, size_t *out_len, size_t frag_off,
                             uint8_t auth_type, uint8_t auth_level, uint32_t context_id,
                             const uint8_t *token, size_t token_len);

/*
 * The same, the token possibly empty: a trailer with auth_length 0, as
 * Windows and Samba end an alter_context_resp whose mechanism had nothing
 * left to say (NTLM's AUTHENTICATE needs no answer).
 */
int dcerpc_auth_append_trailer(uint8_t **out, size_t *out_len, size_t frag_off,
                               uint8_t auth_type, uint8_t auth_level, uint32_t context_id,
                               const uint8_t *token, size_t token_len);

/*
 * Header signing (MS-RPCE 3.3.1.5.2.2): the client offers it with
 * DCERPC_PFC_SUPPORT_HEADER_SIGN in its bind; the server answers with the
 * flags dcerpc_auth_ack_flags gives; both then sign headers when
 * dcerpc_auth_header_sign says so.
 */
uint8_t dcerpc_auth_ack_flags(uint8_t bind_flags, bool supported);
bool dcerpc_auth_header_sign(uint8_t bind_flags, uint8_t ack_flags);

#endif /* PCQ_DCERPC_AUTH_H */
