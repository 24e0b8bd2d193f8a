/* SPDX-License-Identifier: MIT */
/*
 * Connection-oriented DCE/RPC PDU helpers shared by both sides.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

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
        /*
         * alloc_hint, the context, cancel count 0, status, reserved.  The
         * hint is never 0: Samba's raw test harness checks that, as for
         * Windows' faults; the fault's own length is as good as any.
         */
        ndr_put_le32(b + 16, DCERPC_FAULT_SIZE);
        ndr_put_le16(b + 20, ctx_id);
        ndr_put_le32(b + 24, status);
        return 0;
}

void dcerpc_slices_reset(struct dcerpc_slices *s)
{
        s->n = 0;
        s->mark = 0;
}

void dcerpc_slices_done(struct dcerpc_slices *s)
{
        free(s->v);
        *s = (struct dcerpc_slices){ 0 };
}

static int slices_reserve(struct dcerpc_slices *s, size_t more)
{
        struct dcerpc_slice *v;
        size_t cap;

        if (more <= s->cap - s->n)
                return 0;
        if (more > SIZE_MAX / 4 / sizeof(*v) - s->n)
                return -ENOMEM;
        cap = s->cap ? s->cap : 16;
        while (cap < s->n + more)
                cap *= 2;
        v = realloc(s->v, cap * sizeof(*v));
        if (!v)
                return -ENOMEM;
        s->v = v;
        s->cap = cap;
        return 0;
}

/* The stretch of *out up to out_off, then lent bytes (room reserved). */
static void slices_put(struct dcerpc_slices *s, size_t out_off, const uint8_t *lent, size_t len)
{
        if (out_off > s->mark)
                s->v[s->n++] = (struct dcerpc_slice){ .off = s->mark, .len = out_off - s->mark };
        s->v[s->n++] = (struct dcerpc_slice){ .lent = lent, .len = len };
        s->mark = out_off;
}

int dcerpc_slices_close(struct dcerpc_slices *s, size_t out_len)
{
        if (out_len <= s->mark)
                return 0;
        if (slices_reserve(s, 1) < 0)
                return -ENOMEM;
        s->v[s->n++] = (struct dcerpc_slice){ .off = s->mark, .len = out_len - s->mark };
        s->mark = out_len;
        return 0;
}

static bool lendable(const struct dcerpc_slices *lend, const struct dcerpc_piece *p)
{
        return lend && p->len >= DCERPC_LEND_MIN;
}

/*
 * Puts n bytes of the pieces, from piece *k at offset *at, at b (copied) or
 * into lend (listed); moves *k and *at on and returns where b ends.  base is
 * *out, to turn b into an offset.
 */
static uint8_t *pieces_put(uint8_t *b, const uint8_t *base, size_t n,
                           const struct dcerpc_piece *pieces, size_t *k, size_t *at,
                           struct dcerpc_slices *lend)
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
                if (lendable(lend, &pieces[*k]))
                        slices_put(lend, (size_t) (b - base), pieces[*k].data + *at, m);
                else {
                        memcpy(b, pieces[*k].data + *at, m);
                        b += m;
                }
                n -= m;
                *at += m;
        }
        return b;
}

/* Bytes of the pieces that are copied rather than lent; 0 or -ENOMEM (too long). */
static int pieces_size(const struct dcerpc_piece *pieces, size_t n_pieces,
                       const struct dcerpc_slices *lend, size_t *ret_stub, size_t *ret_copied)
{
        size_t stub_len = 0, copied = 0;

        for (size_t i = 0; i < n_pieces; i++) {
                if (pieces[i].len > SIZE_MAX / 4 - stub_len)
                        return -ENOMEM;
                stub_len += pieces[i].len;
                if (!lendable(lend, &pieces[i]))
                        copied += pieces[i].len;
        }
        *ret_stub = stub_len;
        *ret_copied = copied;
        return 0;
}

int dcerpc_append_call_pieces(uint8_t **out, size_t *out_len, uint8_t ptype, uint32_t call_id,
                              uint16_t ctx_id, uint16_t opnum, const struct dcerpc_piece *pieces,
                              size_t n_pieces, uint16_t max_frag, struct dcerpc_slices *lend)
{
        size_t stub_len, copied;

        if (pieces_size(pieces, n_pieces, lend, &stub_len, &copied) < 0)
                return -ENOMEM;
        if (max_frag < DCERPC_CALL_HDR_SIZE + 8)
                return -EINVAL;
        size_t per = (max_frag - DCERPC_CALL_HDR_SIZE) & ~(size_t)7;
        size_t n_frags = stub_len ? (stub_len + per - 1) / per : 1;
        if (n_frags > (SIZE_MAX / 2 - stub_len) / DCERPC_CALL_HDR_SIZE)
                return -ENOMEM;
        /* Each fragment can list a stretch and a lent part of every piece. */
        if (lend && (n_frags > SIZE_MAX / 8 / (n_pieces + 1) ||
                     slices_reserve(lend, 2 * n_frags * (n_pieces + 1)) < 0))
                return -ENOMEM;

        uint8_t *b;
        int r = dcerpc_grow(out, out_len, copied + n_frags * DCERPC_CALL_HDR_SIZE, &b);
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
                b = pieces_put(b + DCERPC_CALL_HDR_SIZE, *out, n, pieces, &k, &at, lend);
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
                                         max_frag, NULL);
}

int dcerpc_random_uuid(uint8_t uuid[16])
{
        size_t got = 0;

        while (got < 16) {
                ssize_t k = getrandom(uuid + got, 16 - got, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                got += (size_t)k;
        }
        /* A version 4 uuid: never the null handle. */
        uuid[7] = (uint8_t)((uuid[7] & 0x0f) | 0x40);
        uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
        return 0;
}
