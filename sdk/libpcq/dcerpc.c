/* SPDX-License-Identifier: MIT */
/*
 * Connection-oriented DCE/RPC PDU helpers shared by both sides.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dcerpc.h"
#include "ndr.h"

/* da5a86c5-12c2-4943-ab30-7f74a813d853 v1.0 */
const uint8_t dcerpc_pv2_syntax[DCERPC_SYNTAX_SIZE] = {
        0xc5, 0x86, 0x5a, 0xda, 0xc2, 0x12, 0x43, 0x49,
        0xab, 0x30, 0x7f, 0x74, 0xa8, 0x13, 0xd8, 0x53,
        0x01, 0x00, 0x00, 0x00,
};

/* 8a885d04-1ceb-11c9-9fe8-08002b104860 v2 */
const uint8_t dcerpc_ndr_syntax[DCERPC_SYNTAX_SIZE] = {
        0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
        0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60,
        0x02, 0x00, 0x00, 0x00,
};

/* 6cb71c2c-9812-4540-XXXX-000000000000 */
const uint8_t dcerpc_btfn_prefix[8] = {
        0x2c, 0x1c, 0xb7, 0x6c, 0x12, 0x98, 0x40, 0x45,
};

int dcerpc_parse_hdr(const uint8_t b[DCERPC_HDR_SIZE], struct dcerpc_hdr *ret)
{
        if (b[0] != 5 || b[1] != 0)
                return -EPROTONOSUPPORT;
        /* drep: integers and characters in byte 0, floats in byte 1. */
        if (b[4] != DCERPC_DREP0 || b[5] != 0)
                return -EBADMSG;
        struct dcerpc_hdr h = {
                .ptype = b[2],
                .flags = b[3],
                .frag_len = ndr_le16(b + 8),
                .auth_len = ndr_le16(b + 10),
                .call_id = ndr_le32(b + 12),
        };
        if (h.frag_len < DCERPC_HDR_SIZE || h.auth_len > h.frag_len - DCERPC_HDR_SIZE)
                return -EBADMSG;
        *ret = h;
        return 0;
}

void dcerpc_put_hdr(uint8_t b[DCERPC_HDR_SIZE], uint8_t ptype, uint8_t flags,
                    uint16_t frag_len, uint32_t call_id)
{
        b[0] = 5;
        b[1] = 0;
        b[2] = ptype;
        b[3] = flags;
        b[4] = DCERPC_DREP0;
        b[5] = 0;
        b[6] = 0;
        b[7] = 0;
        ndr_put_le16(b + 8, frag_len);
        ndr_put_le16(b + 10, 0);
        ndr_put_le32(b + 12, call_id);
}

int dcerpc_grow(uint8_t **out, size_t *out_len, size_t n, uint8_t **ret_at)
{
        if (n > SIZE_MAX / 2 - *out_len)
                return -ENOMEM;
        uint8_t *b = realloc(*out, *out_len + n ? *out_len + n : 1);
        if (!b)
                return -ENOMEM;
        *out = b;
        *ret_at = b + *out_len;
        *out_len += n;
        return 0;
}

int dcerpc_append_fault(uint8_t **out, size_t *out_len, uint32_t call_id,
                        uint16_t ctx_id, uint32_t status, uint8_t extra_flags)
{
        uint8_t *b;
        int r = dcerpc_grow(out, out_len, DCERPC_FAULT_SIZE, &b);

        if (r < 0)
                return r;
        memset(b, 0, DCERPC_FAULT_SIZE);
        dcerpc_put_hdr(b, DCERPC_FAULT,
                       DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG | extra_flags,
                       DCERPC_FAULT_SIZE, call_id);
        /* alloc_hint 0, then the context, cancel count 0, status, reserved. */
        ndr_put_le16(b + 20, ctx_id);
        ndr_put_le32(b + 24, status);
        return 0;
}

/* Copies n bytes of the pieces to b, from piece *k at offset *at, moving both on. */
static void pieces_copy(uint8_t *b, size_t n, const struct dcerpc_piece *pieces, size_t *k,
                        size_t *at)
{
        while (n > 0) {
                size_t m = pieces[*k].len - *at;

                if (m == 0) {
                        (*k)++;
                        *at = 0;
                        continue;
                }
                if (m > n)
                        m = n;
                memcpy(b, pieces[*k].data + *at, m);
                b += m;
                n -= m;
                *at += m;
        }
}

int dcerpc_append_call_pieces(uint8_t **out, size_t *out_len, uint8_t ptype, uint32_t call_id,
                              uint16_t ctx_id, uint16_t opnum, const struct dcerpc_piece *pieces,
                              size_t n_pieces, uint16_t max_frag)
{
        size_t stub_len = 0;

        for (size_t i = 0; i < n_pieces; i++) {
                if (pieces[i].len > SIZE_MAX / 4 - stub_len)
                        return -ENOMEM;
                stub_len += pieces[i].len;
        }
        if (max_frag < DCERPC_CALL_HDR_SIZE + 8)
                return -EINVAL;
        size_t per = (max_frag - DCERPC_CALL_HDR_SIZE) & ~(size_t)7;
        size_t n_frags = stub_len ? (stub_len + per - 1) / per : 1;
        if (n_frags > (SIZE_MAX / 2 - stub_len) / DCERPC_CALL_HDR_SIZE)
                return -ENOMEM;

        uint8_t *b;
        int r = dcerpc_grow(out, out_len, stub_len + n_frags * DCERPC_CALL_HDR_SIZE, &b);
        if (r < 0)
                return r;
        size_t off = 0, k = 0, at = 0;
        for (size_t i = 0; i < n_frags; i++) {
                size_t n = stub_len - off < per ? stub_len - off : per;
                uint8_t flags = 0;
                if (i == 0)
                        flags |= DCERPC_PFC_FIRST_FRAG;
                if (i == n_frags - 1)
                        flags |= DCERPC_PFC_LAST_FRAG;
                dcerpc_put_hdr(b, ptype, flags, (uint16_t)(DCERPC_CALL_HDR_SIZE + n), call_id);
                /* alloc_hint: what remains of the stub, capped to its field. */
                size_t left = stub_len - off;
                ndr_put_le32(b + 16, left > UINT32_MAX ? UINT32_MAX : (uint32_t)left);
                ndr_put_le16(b + 20, ctx_id);
                ndr_put_le16(b + 22, ptype == DCERPC_REQUEST ? opnum : 0);
                pieces_copy(b + DCERPC_CALL_HDR_SIZE, n, pieces, &k, &at);
                b += DCERPC_CALL_HDR_SIZE + n;
                off += n;
        }
        return 0;
}

int dcerpc_append_call(uint8_t **out, size_t *out_len, uint8_t ptype, uint32_t call_id,
                       uint16_t ctx_id, uint16_t opnum, const uint8_t *stub,
                       size_t stub_len, uint16_t max_frag)
{
        struct dcerpc_piece one = { stub, stub_len };

        return dcerpc_append_call_pieces(out, out_len, ptype, call_id, ctx_id, opnum, &one, 1,
                                         max_frag);
}
