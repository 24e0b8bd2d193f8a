/* SPDX-License-Identifier: MIT */
/*
 * The DCE/RPC security layer (sdk/librpc/dcerpc-auth.h) with the toy
 * mechanism of toy-mech.h.  Real mechanisms are tested on their own; this checks the
 * layout, the ranges given to the mechanism and every refusal.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dcerpc.h"
#include "dcerpc-auth.h"
#include "toy-mech.h"

/* Both ends of one association; not to be copied (it points into itself). */
struct pair {
        struct toy cli_ctx, srv_ctx;
        struct dcerpc_auth cli, srv;
};

static void pair_init(struct pair *p, uint8_t level, bool header_sign)
{
        *p = (struct pair){ .cli_ctx.key = 0x5a, .srv_ctx.key = 0x5a };
        p->cli = (struct dcerpc_auth){ &toy_mech, &p->cli_ctx, DCERPC_AUTH_TYPE_NTLM, level, 7,
                                       header_sign };
        p->srv = p->cli;
        p->srv.ctx = &p->srv_ctx;
}

struct buf {
        uint8_t *b;
        size_t n;
};

static uint8_t *pattern(size_t n)
{
        uint8_t *s = malloc(n + 1);

        assert_non_null(s);
        for (size_t i = 0; i < n; i++)
                s[i] = (uint8_t)(i * 31 + 7);
        return s;
}

/* One protected request of stub_len pattern bytes, in one fragment. */
static void one_request(struct pair *p, size_t stub_len, struct buf *ret)
{
        uint8_t *stub = pattern(stub_len);

        *ret = (struct buf){ 0 };
        assert_int_equal(dcerpc_auth_append_call(&p->cli, &ret->b, &ret->n, DCERPC_REQUEST, 3, 0, 5,
                                                 stub, stub_len, DCERPC_MIN_FRAG), 0);
        assert_int_equal(ret->n, ret->b[8] | ret->b[9] << 8);
        free(stub);
}

static int verify_copy(struct pair *p, const struct buf *f, struct dcerpc_auth_view *v)
{
        uint8_t *c = malloc(f->n);

        assert_non_null(c);
        memcpy(c, f->b, f->n);
        int r = dcerpc_auth_verify(&p->srv, c, f->n, v);
        free(c);
        return r;
}

/* ---- parsing ---- */

static void parse_views(void **state)
{
        (void)state;
        /* A request with an object uuid, 3 stub bytes, a pad byte holding 0xee. */
        uint8_t req[56] = { 5, 0, 0, 0x83, 0x10, 0, 0, 0, 56, 0, 4, 0, 9, 0, 0, 0,
                            3, 0, 0, 0, 0, 0, 1, 0 };
        memset(req + 24, 0x11, 16);
        memcpy(req + 40, "abc\xee", 4);
        memcpy(req + 44, "\x0a\x06\x01\x00\x04\x03\x02\x01" "SIGN", 12);
        struct dcerpc_auth_view v;

        assert_int_equal(dcerpc_auth_parse(req, sizeof(req), &v), 0);
        assert_int_equal(v.stub_off, 40);
        assert_int_equal(v.stub_len, 3);
        assert_int_equal(v.pad_len, 1);
        assert_int_equal(v.trailer_off, 44);
        assert_int_equal(v.auth_off, 52);
        assert_int_equal(v.auth_len, 4);
        assert_int_equal(v.auth_type, DCERPC_AUTH_TYPE_NTLM);
        assert_int_equal(v.auth_level, DCERPC_AUTH_LEVEL_PRIVACY);
        assert_int_equal(v.auth_context_id, 0x01020304);
        assert_int_equal(v.call_id, 9);

        /* No verifier: the stub runs to the end. */
        req[10] = 0;
        assert_int_equal(dcerpc_auth_parse(req, sizeof(req), &v), 0);
        assert_int_equal(v.auth_len, 0);
        assert_int_equal(v.stub_len, 16);
        assert_int_equal(v.trailer_off, 56);

        /* Shorter than a header, another version, a fragment past the buffer. */
        assert_int_equal(dcerpc_auth_parse(req, 15, &v), -EBADMSG);
        assert_int_equal(dcerpc_auth_parse(req, 55, &v), -EBADMSG);
        req[0] = 4;
        assert_int_equal(dcerpc_auth_parse(req, sizeof(req), &v), -EPROTONOSUPPORT);
}

/* Each lie of a hand-made request's verifier is refused as malformed. */
static void parse_hostile(void **state)
{
        (void)state;
        /* 24 + 8 stub + 0 pad + trailer + 8 verifier */
        static const uint8_t good[48] = { 5, 0, 0, 3, 0x10, 0, 0, 0, 48, 0, 8, 0, 1, 0, 0, 0,
                                          8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
                                          10, 6, 0, 0, 7, 0, 0, 0 };
        static const struct { size_t at; uint8_t v; } lies[] = {
                { 10, 41 },     /* auth_length past the call header */
                { 10, 17 },     /* ... into it */
                { 10, 33 },     /* beyond frag_length */
                { 10, 7 },      /* the trailer off its 4-byte alignment */
                { 34, 9 },      /* a pad longer than the stub */
                { 34, 16 },     /* a pad past 15 */
                { 8, 23 },      /* a fragment shorter than the call header */
        };
        struct dcerpc_auth_view v;
        uint8_t b[sizeof(good)];

        assert_int_equal(dcerpc_auth_parse(good, sizeof(good), &v), 0);
        for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
                memcpy(b, good, sizeof(b));
                b[lies[i].at] = lies[i].v;
                assert_int_equal(dcerpc_auth_parse(b, sizeof(b), &v), -EBADMSG);
        }
        /* Whatever the pad bytes hold, a pad as long as the stub is fine. */
        memcpy(b, good, sizeof(b));
        b[34] = 8;
        assert_int_equal(dcerpc_auth_parse(b, sizeof(b), &v), 0);
        assert_int_equal(v.stub_len, 0);
        assert_int_equal(v.pad_len, 8);
}

/* Tokens in bind and auth3, the body padded to 4 bytes with zeros. */
static void tokens(void **state)
{
        (void)state;
        struct buf f = { 0 };
        struct dcerpc_auth_view v;
        uint8_t *at;

        /* An auth3: header and its 4-byte pad field. */
        assert_int_equal(dcerpc_grow(&f.b, &f.n, 20, &at), 0);
        memset(at, 0xff, 20);
        dcerpc_put_hdr(at, DCERPC_AUTH3, 3, 20, 2);
        assert_int_equal(dcerpc_auth_append_token(&f.b, &f.n, 0, DCERPC_AUTH_TYPE_NTLM,
                                                  DCERPC_AUTH_LEVEL_PRIVACY, 1, (const uint8_t *)"tok", 3), 0);
        static const uint8_t auth3[31] = { 5, 0, 16, 3, 0x10, 0, 0, 0, 31, 0, 3, 0, 2, 0, 0, 0,
                                           0xff, 0xff, 0xff, 0xff, 10, 6, 0, 0, 1, 0, 0, 0,
                                           't', 'o', 'k' };
        assert_int_equal(f.n, sizeof(auth3));
        assert_memory_equal(f.b, auth3, sizeof(auth3));

        /* A bind body of 42 bytes after a first PDU: 2 zero pad bytes. */
        size_t off = f.n;
        assert_int_equal(dcerpc_grow(&f.b, &f.n, 58, &at), 0);
        memset(at, 0xff, 58);
        dcerpc_put_hdr(at, DCERPC_BIND, 3 | DCERPC_PFC_SUPPORT_HEADER_SIGN, 58, 1);
        assert_int_equal(dcerpc_auth_append_token(&f.b, &f.n, off, DCERPC_AUTH_TYPE_SPNEGO,
                                                  DCERPC_AUTH_LEVEL_PRIVACY, 1, (const uint8_t *)"xy", 2), 0);
        assert_int_equal(dcerpc_auth_parse(f.b + off, f.n - off, &v), 0);
        assert_int_equal(v.frag_len, 70);
        assert_int_equal(v.stub_off, 16);
        assert_int_equal(v.stub_len, 42);
        assert_int_equal(v.pad_len, 2);
        assert_int_equal(f.b[off + 58], 0);
        assert_int_equal(f.b[off + 59], 0);
        assert_int_equal(v.trailer_off, 60);
        assert_int_equal(v.auth_type, DCERPC_AUTH_TYPE_SPNEGO);
        assert_memory_equal(f.b + off + v.auth_off, "xy", 2);

        /* An empty token is no verifier. */
        size_t n = f.n;
        assert_int_equal(dcerpc_auth_append_token(&f.b, &f.n, off, 9, 6, 1, NULL, 0), -EMSGSIZE);
        assert_int_equal(f.n, n);
        free(f.b);
}

static void header_sign_negotiation(void **state)
{
        (void)state;
        assert_int_equal(dcerpc_auth_ack_flags(0x07, true), DCERPC_PFC_SUPPORT_HEADER_SIGN);
        assert_int_equal(dcerpc_auth_ack_flags(0x03, true), 0);
        assert_int_equal(dcerpc_auth_ack_flags(0x07, false), 0);
        assert_true(dcerpc_auth_header_sign(0x07, 0x07));
        assert_false(dcerpc_auth_header_sign(0x07, 0x03));
        assert_false(dcerpc_auth_header_sign(0x03, 0x07));
}

/* ---- protection ---- */

/* Checks one fragment as sent, then verifies it; appends its stub to all. */
static void receive(struct pair *p, uint8_t *f, size_t n, const uint8_t *plain, struct buf *all)
{
        struct dcerpc_auth_view v;

        assert_int_equal(dcerpc_auth_parse(f, n, &v), 0);
        assert_int_equal((v.stub_len + v.pad_len) % 16, 0);
        assert_true(v.pad_len <= 15);
        assert_int_equal(v.auth_len, TOY_SIG);
        assert_int_equal(v.auth_level, p->cli.auth_level);
        if (v.stub_len > 0) {
                int same = memcmp(f + v.stub_off, plain + all->n, v.stub_len) == 0;
                assert_int_equal(same, p->cli.auth_level == DCERPC_AUTH_LEVEL_INTEGRITY);
        }
        assert_int_equal(dcerpc_auth_verify(&p->srv, f, n, &v), 0);
        assert_memory_equal(f + v.stub_off, plain + all->n, v.stub_len);
        all->b = realloc(all->b, all->n + v.stub_len + 1);
        assert_non_null(all->b);
        memcpy(all->b + all->n, f + v.stub_off, v.stub_len);
        all->n += v.stub_len;
}

static void round_trip_one(size_t size, uint8_t level, bool header_sign, uint8_t ptype)
{
        struct pair p;
        struct buf out = { 0 }, all = { 0 };
        uint8_t *stub = pattern(size);
        size_t frags = 0;

        pair_init(&p, level, header_sign);
        assert_int_equal(dcerpc_auth_append_call(&p.cli, &out.b, &out.n, ptype, 4, 0, 6, stub,
                                                 size, DCERPC_MIN_FRAG), 0);
        for (size_t off = 0; off < out.n; frags++) {
                size_t n = out.b[off + 8] | out.b[off + 9] << 8;
                assert_true(n <= DCERPC_MIN_FRAG && off + n <= out.n);
                assert_int_equal(out.b[off + 3] & DCERPC_PFC_FIRST_FRAG, off == 0);
                assert_int_equal(!!(out.b[off + 3] & DCERPC_PFC_LAST_FRAG), off + n == out.n);
                receive(&p, out.b + off, n, stub, &all);
                off += n;
        }
        size_t per = (DCERPC_MIN_FRAG - 24 - 8 - TOY_SIG) & ~15u;
        assert_int_equal(frags, size ? (size + per - 1) / per : 1);
        assert_int_equal(all.n, size);
        if (size)
                assert_memory_equal(all.b, stub, size);
        assert_int_equal(p.srv_ctx.recv_seq, frags);
        free(out.b);
        free(all.b);
        free(stub);
}

static void round_trips(void **state)
{
        (void)state;
        static const size_t sizes[] = { 0, 1, 15, 16, 17, 1000, 1392, 1393, 5000 };

        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
                for (int hs = 0; hs < 2; hs++)
                        for (uint8_t l = DCERPC_AUTH_LEVEL_INTEGRITY; l <= DCERPC_AUTH_LEVEL_PRIVACY; l++)
                                round_trip_one(sizes[i], l, hs, i % 2 ? DCERPC_RESPONSE : DCERPC_REQUEST);
}

/* dcerpc_auth_append_framed's callback: the offsets, in a buf of size_t. */
static int note_frame(void *userdata, size_t off)
{
        struct buf *offs = userdata;

        offs->b = realloc(offs->b, (offs->n + 1) * sizeof(size_t));
        assert_non_null(offs->b);
        memcpy(offs->b + offs->n * sizeof(size_t), &off, sizeof(off));
        offs->n++;
        return 0;
}

/*
 * Framed now, sealed later (as perflibd seals out of its lock): the same
 * bytes as dcerpc_auth_append_call once sealed in order; a fragment not
 * sealed yet, or sealed out of order, does not verify.
 */
static void frame_then_seal(void **state)
{
        static const struct dcerpc_call_id id = { DCERPC_RESPONSE, 0, 6, 4 };
        struct pair now, later;
        struct buf a = { 0 }, b = { 0 }, offs = { 0 };
        uint8_t *stub = pattern(5000);
        struct dcerpc_auth_view v;
        size_t off[8];

        (void)state;
        for (int hs = 0; hs < 2; hs++) {
                pair_init(&now, DCERPC_AUTH_LEVEL_PRIVACY, hs);
                pair_init(&later, DCERPC_AUTH_LEVEL_PRIVACY, hs);
                assert_int_equal(dcerpc_auth_append_call(&now.cli, &a.b, &a.n, id.ptype, id.call_id,
                                                         id.ctx_id, id.opnum, stub, 5000,
                                                         DCERPC_MIN_FRAG), 0);
                assert_int_equal(dcerpc_auth_append_framed(&later.cli, &b.b, &b.n, &id, stub, 5000,
                                                           DCERPC_MIN_FRAG, note_frame, &offs), 0);
                assert_int_equal(b.n, a.n);
                assert_true(offs.n >= 2 && offs.n <= 8);
                memcpy(off, offs.b, offs.n * sizeof(size_t));
                /* Not sealed: the receiver refuses it. */
                struct buf first = { b.b, (size_t)(b.b[8] | b.b[9] << 8) };
                assert_int_not_equal(verify_copy(&later, &first, &v), 0);
                for (size_t i = 0; i < offs.n; i++) {
                        size_t n = b.b[off[i] + 8] | b.b[off[i] + 9] << 8;
                        assert_int_equal(dcerpc_auth_seal(&later.cli, b.b + off[i], n), 0);
                }
                assert_memory_equal(a.b, b.b, a.n);
                /* Sealed out of order: what goes first on the wire does not verify. */
                free(b.b);
                b = (struct buf){ 0 };
                offs.n = 0;
                pair_init(&later, DCERPC_AUTH_LEVEL_PRIVACY, hs);
                assert_int_equal(dcerpc_auth_append_framed(&later.cli, &b.b, &b.n, &id, stub, 5000,
                                                           DCERPC_MIN_FRAG, note_frame, &offs), 0);
                size_t n0 = b.b[off[0] + 8] | b.b[off[0] + 9] << 8;
                size_t n1 = b.b[off[1] + 8] | b.b[off[1] + 9] << 8;
                assert_int_equal(dcerpc_auth_seal(&later.cli, b.b + off[1], n1), 0);
                assert_int_equal(dcerpc_auth_seal(&later.cli, b.b + off[0], n0), 0);
                struct buf head = { b.b + off[0], n0 };
                assert_int_not_equal(verify_copy(&later, &head, &v), 0);
                /* A buffer that is not a framed fragment is refused. */
                assert_int_equal(dcerpc_auth_seal(&later.cli, b.b + off[1], n1 - 1), -EINVAL);
                free(a.b);
                free(b.b);
                a = b = (struct buf){ 0 };
                offs.n = 0;
        }
        free(offs.b);
        free(stub);
}

/*
 * One flipped bit anywhere (header signing) or in stub, pad and verifier
 * (without) is refused; the server's sequence stays put, so the intact
 * fragment still verifies after.
 */
static void tamper_one(uint8_t level, bool header_sign)
{
        struct pair p;
        struct buf f, c;
        struct dcerpc_auth_view v;

        pair_init(&p, level, header_sign);
        one_request(&p, 17, &f);
        assert_int_equal(dcerpc_auth_parse(f.b, f.n, &v), 0);
        c.n = f.n;
        for (size_t i = 0; i < f.n; i++) {
                bool body = i >= v.stub_off && i < v.trailer_off;
                if (!header_sign && !body && i < v.auth_off)
                        continue;
                for (int bit = 0; bit < 8; bit += 7) {
                        c.b = f.b;
                        f.b[i] ^= (uint8_t)(1u << bit);
                        int r = verify_copy(&p, &c, &v);
                        f.b[i] ^= (uint8_t)(1u << bit);
                        assert_true(r < 0);
                        if (body || i >= v.auth_off)
                                assert_int_equal(r, -EKEYREJECTED);
                }
        }
        assert_int_equal(p.srv_ctx.recv_seq, 0);
        /* Without header signing, the header is not covered: the reason to sign it. */
        f.b[12] ^= 1;
        assert_int_equal(verify_copy(&p, &f, &v), header_sign ? -EKEYREJECTED : 0);
        f.b[12] ^= 1;
        if (header_sign)
                assert_int_equal(verify_copy(&p, &f, &v), 0);
        free(f.b);
}

static void tampering(void **state)
{
        (void)state;
        for (int hs = 0; hs < 2; hs++) {
                tamper_one(DCERPC_AUTH_LEVEL_INTEGRITY, hs);
                tamper_one(DCERPC_AUTH_LEVEL_PRIVACY, hs);
        }
}

static void replay_and_reorder(void **state)
{
        (void)state;
        struct pair p;
        struct buf a, b;
        struct dcerpc_auth_view v;

        pair_init(&p, DCERPC_AUTH_LEVEL_PRIVACY, true);
        one_request(&p, 40, &a);
        one_request(&p, 40, &b);
        assert_int_equal(verify_copy(&p, &b, &v), -EKEYREJECTED);       /* reordered */
        assert_int_equal(verify_copy(&p, &a, &v), 0);
        assert_int_equal(verify_copy(&p, &a, &v), -EKEYREJECTED);       /* replayed */
        assert_int_equal(verify_copy(&p, &b, &v), 0);
        assert_int_equal(verify_copy(&p, &b, &v), -EKEYREJECTED);
        free(a.b);
        free(b.b);
}

/* Each wrong field gets its own refusal, the fragment otherwise intact. */
static void refusals(void **state)
{
        (void)state;
        struct pair p, low;
        struct buf f, g = { 0 };
        struct dcerpc_auth_view v;

        pair_init(&p, DCERPC_AUTH_LEVEL_PRIVACY, false);
        one_request(&p, 17, &f);
        size_t t = f.n - TOY_SIG - 8;
        static const struct { size_t at; uint8_t v; int err; } wrong[] = {
                { 0, DCERPC_AUTH_TYPE_KRB5, -EPROTO },
                { 1, DCERPC_AUTH_LEVEL_INTEGRITY, -EACCES },
                { 1, DCERPC_AUTH_LEVEL_CONNECT, -EACCES },
                { 4, 8, -ESRCH },
                { 2, 16, -EBADMSG },    /* auth_pad_length past 15 */
        };
        for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
                uint8_t keep = f.b[t + wrong[i].at];
                f.b[t + wrong[i].at] = wrong[i].v;
                assert_int_equal(verify_copy(&p, &f, &v), wrong[i].err);
                f.b[t + wrong[i].at] = keep;
        }
        /* auth_length lies: too long, past frag_length, misaligned, too short. */
        static const uint16_t lies[] = { 41, 200, 9, 4 };
        for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
                f.b[10] = (uint8_t)lies[i];
                f.b[11] = (uint8_t)(lies[i] >> 8);
                assert_true(verify_copy(&p, &f, &v) < 0);
                assert_int_equal(p.srv_ctx.recv_seq, 0);
        }
        f.b[10] = TOY_SIG;
        f.b[11] = 0;
        /* A truncated verifier, lengths adjusted to match; a truncated fragment. */
        f.b[8] -= 4;
        f.b[10] -= 4;
        f.n -= 4;
        assert_int_equal(verify_copy(&p, &f, &v), -EBADMSG);
        f.b[8] += 4;
        f.b[10] += 4;
        assert_int_equal(verify_copy(&p, &f, &v), -EBADMSG);
        f.n += 4;
        /* A fragment with no verifier, one at a level below the required. */
        assert_int_equal(dcerpc_append_call(&g.b, &g.n, DCERPC_REQUEST, 3, 0, 5,
                                            (const uint8_t *)"plain", 5, DCERPC_MIN_FRAG), 0);
        assert_int_equal(verify_copy(&p, &g, &v), -EACCES);
        free(g.b);
        pair_init(&low, DCERPC_AUTH_LEVEL_INTEGRITY, false);
        one_request(&low, 17, &g);
        assert_int_equal(verify_copy(&p, &g, &v), -EACCES);
        /* A bind carries tokens, never signatures. */
        f.b[2] = DCERPC_BIND;
        assert_int_equal(verify_copy(&p, &f, &v), -EBADMSG);
        f.b[2] = DCERPC_REQUEST;
        assert_int_equal(verify_copy(&p, &f, &v), 0);
        free(f.b);
        free(g.b);
}

/* What protect refuses to do, leaving the buffer as it was. */
static void protect_refusals(void **state)
{
        (void)state;
        struct pair p;
        struct buf f = { 0 };
        uint8_t *big = pattern(65500);

        pair_init(&p, DCERPC_AUTH_LEVEL_CONNECT, false);
        assert_int_equal(dcerpc_append_call(&f.b, &f.n, DCERPC_REQUEST, 1, 0, 0, big, 20, 1000), 0);
        assert_int_equal(dcerpc_auth_protect(&p.cli, &f.b, &f.n, 0), -EINVAL);
        p.cli.auth_level = DCERPC_AUTH_LEVEL_PRIVACY;
        p.cli_ctx.fail = true;
        assert_int_equal(dcerpc_auth_protect(&p.cli, &f.b, &f.n, 0), -EIO);
        assert_int_equal(f.n, 44);
        assert_int_equal(f.b[8] | f.b[9] << 8, 44);
        assert_int_equal(f.b[10], 0);
        p.cli_ctx.fail = false;
        assert_int_equal(dcerpc_auth_protect(&p.cli, &f.b, &f.n, 0), 0);
        assert_int_equal(f.n, 24 + 32 + 8 + TOY_SIG);
        assert_int_equal(dcerpc_auth_protect(&p.cli, &f.b, &f.n, 0), -EINVAL);  /* twice */
        /* No room left for the verifier in a 64 KiB fragment. */
        f.n = 0;
        assert_int_equal(dcerpc_append_call(&f.b, &f.n, DCERPC_REQUEST, 1, 0, 0, big, 65500,
                                            UINT16_MAX), 0);
        assert_int_equal(dcerpc_auth_protect(&p.cli, &f.b, &f.n, 0), -EMSGSIZE);
        assert_int_equal(f.n, 65524);
        /* No room for any stub under max_frag. */
        assert_int_equal(dcerpc_auth_append_call(&p.cli, &f.b, &f.n, DCERPC_REQUEST, 1, 0, 0,
                                                 big, 1, 24 + 8 + TOY_SIG + 15), -EINVAL);
        assert_int_equal(f.n, 65524);
        free(f.b);
        free(big);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(parse_views),
                cmocka_unit_test(parse_hostile),
                cmocka_unit_test(tokens),
                cmocka_unit_test(header_sign_negotiation),
                cmocka_unit_test(round_trips),
                cmocka_unit_test(frame_then_seal),
                cmocka_unit_test(tampering),
                cmocka_unit_test(replay_and_reorder),
                cmocka_unit_test(refusals),
                cmocka_unit_test(protect_refusals),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
