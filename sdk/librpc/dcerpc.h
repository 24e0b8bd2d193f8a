/* SPDX-License-Identifier: MIT */
/*
 * dcerpc.h: connection-oriented DCE/RPC PDUs (C706 chapter 12, MS-RPCE
 * 2.2.2), the pieces both the server connection and the client need.
 *
 * Only the data representation 0x10 (little-endian integers, ASCII, IEEE
 * floats) is spoken; a peer announcing another drep gets a bind_nak or a
 * fault.  Big-endian NDR is deliberately not supported.
 */
#ifndef PCQ_DCERPC_H
#define PCQ_DCERPC_H

#include <stddef.h>
#include <stdint.h>

enum dcerpc_ptype {
        DCERPC_REQUEST = 0,
        DCERPC_RESPONSE = 2,
        DCERPC_FAULT = 3,
        DCERPC_BIND = 11,
        DCERPC_BIND_ACK = 12,
        DCERPC_BIND_NAK = 13,
        DCERPC_ALTER_CONTEXT = 14,
        DCERPC_ALTER_CONTEXT_RESP = 15,
        DCERPC_AUTH3 = 16,
        DCERPC_SHUTDOWN = 17,
        DCERPC_CO_CANCEL = 18,
        DCERPC_ORPHANED = 19,
};

#define DCERPC_PFC_FIRST_FRAG           0x01
#define DCERPC_PFC_LAST_FRAG            0x02
#define DCERPC_PFC_PENDING_CANCEL       0x04
#define DCERPC_PFC_DID_NOT_EXECUTE      0x20
#define DCERPC_PFC_OBJECT_UUID          0x80

#define DCERPC_HDR_SIZE         16u     /* the common header */
#define DCERPC_CALL_HDR_SIZE    24u     /* request/response: + alloc_hint, ctx, opnum */
#define DCERPC_FAULT_SIZE       32u
#define DCERPC_DREP0            0x10u   /* little-endian, ASCII */
#define DCERPC_MIN_FRAG         1432u   /* C706 12.6.3.1: nobody may ask for less */
#define DCERPC_SERVER_MAX_FRAG  5840u   /* what our side sends and accepts */

/* p_cont_def_result_t and the reasons (C706 12.6.3.1, MS-RPCE 2.2.2.4). */
#define DCERPC_RESULT_ACCEPTANCE        0
#define DCERPC_RESULT_PROVIDER_REJECTION 2
#define DCERPC_RESULT_NEGOTIATE_ACK     3
#define DCERPC_REASON_NOT_SPECIFIED     0
#define DCERPC_REASON_ABSTRACT_SYNTAX   1       /* abstract_syntax_not_supported */
#define DCERPC_REASON_TRANSFER_SYNTAXES 2       /* proposed_transfer_syntaxes_not_supported */
#define DCERPC_REASON_LOCAL_LIMIT       3       /* local_limit_exceeded */

/* bind_nak p_reject_reason_t. */
#define DCERPC_NAK_NOT_SPECIFIED        0
#define DCERPC_NAK_PROTOCOL_VERSION     4
#define DCERPC_NAK_AUTH_TYPE            8       /* authentication_type_not_recognized */

/* A syntax id as on the wire: uuid (little-endian fields) then u32 version. */
#define DCERPC_SYNTAX_SIZE 20u
extern const uint8_t dcerpc_pv2_syntax[DCERPC_SYNTAX_SIZE];
extern const uint8_t dcerpc_ndr_syntax[DCERPC_SYNTAX_SIZE];
/* Bind time feature negotiation (MS-RPCE 3.3.1.5.3): these 8 bytes, then the bits. */
extern const uint8_t dcerpc_btfn_prefix[8];

/* A random (version 4) uuid, for context handles: never all zeros.  0 or -errno. */
int dcerpc_random_uuid(uint8_t uuid[16]);

struct dcerpc_hdr {
        uint8_t ptype;
        uint8_t flags;
        uint16_t frag_len;
        uint16_t auth_len;
        uint32_t call_id;
};

/*
 * Parses and checks the 16-byte common header.  -EPROTONOSUPPORT for a
 * version other than 5.0, -EBADMSG for another drep or impossible lengths
 * (frag_len below 16, auth_len beyond the fragment).
 */
int dcerpc_parse_hdr(const uint8_t b[DCERPC_HDR_SIZE], struct dcerpc_hdr *ret);
void dcerpc_put_hdr(uint8_t b[DCERPC_HDR_SIZE], uint8_t ptype, uint8_t flags,
                    uint16_t frag_len, uint32_t call_id);

/*
 * Grows the caller's buffer *out (owned by the caller) by n bytes and
 * returns where they start in *ret_at.  0 or -ENOMEM (nothing changed).
 */
int dcerpc_grow(uint8_t **out, size_t *out_len, size_t n, uint8_t **ret_at);

/* Appends a fault PDU (C706 12.6.4.7). */
int dcerpc_append_fault(uint8_t **out, size_t *out_len, uint32_t call_id,
                        uint16_t ctx_id, uint32_t status, uint8_t extra_flags);

/*
 * Appends a request (ptype 0, opnum) or response (ptype 2, opnum ignored)
 * carrying stub, split into fragments of at most max_frag bytes, each
 * fragment's stub a multiple of 8 except the last.
 */
int dcerpc_append_call(uint8_t **out, size_t *out_len, uint8_t ptype, uint32_t call_id,
                       uint16_t ctx_id, uint16_t opnum, const uint8_t *stub,
                       size_t stub_len, uint16_t max_frag);

/* A stub given in pieces, back to back: a large [out] buffer is copied once,
 * straight into the fragments, rather than into a stub first. */
struct dcerpc_piece {
        const uint8_t *data;
        size_t len;
};

/*
 * The bytes of replies as slices to send with one writev: stretches of the
 * caller's growing buffer *out (by offset: it may move as it grows) and
 * pieces lent by their owner (by address), in order.  mark is where in *out
 * the stretch not yet listed starts.
 */
struct dcerpc_slice {
        const uint8_t *lent;            /* NULL: (*out)[off, off + len) */
        size_t off, len;
};
struct dcerpc_slices {
        struct dcerpc_slice *v;         /* owned (dcerpc_slices_done) */
        size_t n, cap;
        size_t mark;
};
/* Pieces at least this long are lent rather than copied. */
#define DCERPC_LEND_MIN 512u

void dcerpc_slices_reset(struct dcerpc_slices *s);
void dcerpc_slices_done(struct dcerpc_slices *s);
/* Lists the rest of *out (up to out_len) as a last stretch.  0 or -ENOMEM. */
int dcerpc_slices_close(struct dcerpc_slices *s, size_t out_len);

/*
 * Appends a call carrying the pieces, as dcerpc_append_call.  With lend,
 * pieces of DCERPC_LEND_MIN bytes or more are not copied: their parts go
 * into lend by address, between the fragment headers written to *out, and
 * must stay valid until the slices are sent.
 */
int dcerpc_append_call_pieces(uint8_t **out, size_t *out_len, uint8_t ptype, uint32_t call_id,
                              uint16_t ctx_id, uint16_t opnum, const struct dcerpc_piece *pieces,
                              size_t n_pieces, uint16_t max_frag, struct dcerpc_slices *lend);

#endif /* PCQ_DCERPC_H */
