/* SPDX-License-Identifier: MIT */
/*
 * The server connection, byte for byte: hand-built PDUs go in, and the exact
 * bind_ack, response, fault and bind_nak bytes are checked against what
 * C706 and MS-RPCE lay out.  The expected bytes are written out here by
 * hand, not produced by the library's own encoders.
 *
 * One file, and long: every case drives the same connection fixture with
 * the same hand-written PDU builders, and most of its lines are the
 * expected bytes spelled out, which is the point of the test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <cmocka.h>

#include "dcerpc.h"
#include "perflibv2.h"
#include "pv2-fake.h"

#define PV2_UUID 0xc5, 0x86, 0x5a, 0xda, 0xc2, 0x12, 0x43, 0x49, \
                 0xab, 0x30, 0x7f, 0x74, 0xa8, 0x13, 0xd8, 0x53
#define NDR_UUID 0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, \
                 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60
#define NDR64_UUID 0x33, 0x05, 0x71, 0x71, 0xba, 0xbe, 0x37, 0x49, \
                   0x83, 0x19, 0xb5, 0xdb, 0xef, 0x9c, 0xcc, 0x36
#define BTFN_UUID 0x2c, 0x1c, 0xb7, 0x6c, 0x12, 0x98, 0x40, 0x45, \
                  0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00

/* What impacket sends: max frags 4280, assoc group 0x12345678, one context. */
static const uint8_t bind_pdu[72] = {
        5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 1, 0, 0, 0,
        0xb8, 0x10, 0xb8, 0x10, 0x78, 0x56, 0x34, 0x12,
        1, 0, 0, 0,
        0, 0, 1, 0, PV2_UUID, 1, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
};

static const uint8_t bind_ack_pdu[56] = {
        5, 0, 12, 3, 0x10, 0, 0, 0, 56, 0, 0, 0, 1, 0, 0, 0,
        0xb8, 0x10, 0xb8, 0x10, 0x78, 0x56, 0x34, 0x12,
        1, 0, 0, 0,                     /* secondary address "", pad */
        1, 0, 0, 0,
        0, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
};

struct sess {
        struct pv2_server_conn *c;
        uint8_t *out;
        size_t out_len;
};

static int feed(struct sess *s, const void *b, size_t n)
{
        free(s->out);
        s->out = NULL;
        s->out_len = 0;
        return pv2_server_conn_feed(s->c, b, n, &s->out, &s->out_len);
}

static void sess_new(struct sess *s)
{
        *s = (struct sess){ 0 };
        assert_int_equal(pv2_server_conn_new(&fake_handlers, NULL, &s->c), 0);
}

static void sess_bound(struct sess *s)
{
        sess_new(s);
        assert_int_equal(feed(s, bind_pdu, sizeof(bind_pdu)), 0);
        assert_int_equal(s->out_len, sizeof(bind_ack_pdu));
}

static void sess_free(struct sess *s)
{
        pv2_server_conn_free(s->c);
        free(s->out);
        *s = (struct sess){ 0 };
}

static int setup(void **state)
{
        (void)state;
        fake_reset();
        return 0;
}

/* ---- building stubs and PDUs by hand ---- */

struct stub {
        uint8_t *b;
        size_t n;
};

static void put(struct stub *t, const void *b, size_t n)
{
        t->b = realloc(t->b, t->n + n + 1);
        assert_non_null(t->b);
        if (n)
                memcpy(t->b + t->n, b, n);
        t->n += n;
}

static void put32(struct stub *t, uint32_t v)
{
        static const uint8_t zero[4];
        uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

        put(t, zero, (4 - t->n % 4) % 4);
        put(t, b, 4);
}

/* The empty [string] szMachine: max 1, offset 0, actual 1, one NUL unit. */
static void put_machine(struct stub *t)
{
        static const uint8_t m[] = { 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 };

        put(t, m, sizeof(m));
}

static const GUID cs_guid = { 0x11223344, 0x5566, 0x7788, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const uint8_t cs_wire[16] = { 0x44, 0x33, 0x22, 0x11, 0x66, 0x55, 0x88, 0x77,
                                     1, 2, 3, 4, 5, 6, 7, 8 };

/* One request PDU (flags given) around stub bytes. */
static void make_request(struct stub *pdu, uint32_t call_id, uint16_t ctx, uint16_t opnum,
                         uint8_t flags, const uint8_t *stub, size_t n, uint32_t alloc_hint)
{
        size_t len = 24 + n;
        uint8_t h[24] = {
                5, 0, 0, flags, 0x10, 0, 0, 0, (uint8_t)len, (uint8_t)(len >> 8), 0, 0,
                (uint8_t)call_id, (uint8_t)(call_id >> 8), 0, 0,
                (uint8_t)alloc_hint, (uint8_t)(alloc_hint >> 8), (uint8_t)(alloc_hint >> 16),
                (uint8_t)(alloc_hint >> 24),
                (uint8_t)ctx, 0, (uint8_t)opnum, (uint8_t)(opnum >> 8),
        };
        put(pdu, h, sizeof(h));
        put(pdu, stub, n);
}

/* Feeds one single-fragment request and returns feed()'s result. */
static int call(struct sess *s, uint32_t call_id, uint16_t opnum, const struct stub *t)
{
        struct stub pdu = { 0 };

        make_request(&pdu, call_id, 0, opnum, 3, t->b, t->n, (uint32_t)t->n);
        int r = feed(s, pdu.b, pdu.n);
        free(pdu.b);
        return r;
}

/* The output must be exactly one response PDU of call_id carrying want. */
static void expect_response(const struct sess *s, uint32_t call_id, const uint8_t *want,
                            size_t n)
{
        size_t len = 24 + n;
        uint8_t h[24] = {
                5, 0, 2, 3, 0x10, 0, 0, 0, (uint8_t)len, (uint8_t)(len >> 8), 0, 0,
                (uint8_t)call_id, (uint8_t)(call_id >> 8), 0, 0,
                (uint8_t)n, (uint8_t)(n >> 8), 0, 0, 0, 0, 0, 0,
        };
        assert_int_equal(s->out_len, len);
        assert_memory_equal(s->out, h, sizeof(h));
        assert_memory_equal(s->out + 24, want, n);
}

static void expect_fault(const struct sess *s, uint32_t call_id, uint32_t status)
{
        assert_int_equal(s->out_len, 32);
        assert_int_equal(s->out[2], 3);
        assert_int_equal(s->out[8], 32);
        assert_int_equal(s->out[12], (uint8_t)call_id);
        uint32_t st = (uint32_t)s->out[24] | (uint32_t)s->out[25] << 8 |
                      (uint32_t)s->out[26] << 16 | (uint32_t)s->out[27] << 24;
        assert_int_equal(st, status);
}

static void stub_done(struct stub *t)
{
        free(t->b);
        *t = (struct stub){ 0 };
}

/* Opens a query on s; returns its 20-byte handle in h. */
static void open_query(struct sess *s, uint32_t call_id, uint8_t h[20])
{
        struct stub t = { 0 };

        put_machine(&t);
        assert_int_equal(call(s, call_id, 3, &t), 0);
        stub_done(&t);
        assert_int_equal(s->out_len, 48);
        memcpy(h, s->out + 24, 20);
        assert_int_equal(s->out[44] | s->out[45] | s->out[46] | s->out[47], 0);
}

/* ---- bind ---- */

static void bind_ack_exact(void **state)
{
        struct sess s;

        (void)state;
        sess_new(&s);
        assert_int_equal(feed(&s, bind_pdu, sizeof(bind_pdu)), 0);
        assert_int_equal(s.out_len, sizeof(bind_ack_pdu));
        assert_memory_equal(s.out, bind_ack_pdu, sizeof(bind_ack_pdu));
        sess_free(&s);
}

static void bind_ack_port(void **state)
{
        static const uint8_t want[60] = {
                5, 0, 12, 3, 0x10, 0, 0, 0, 60, 0, 0, 0, 1, 0, 0, 0,
                0xb8, 0x10, 0xb8, 0x10, 0x78, 0x56, 0x34, 0x12,
                6, 0, '4', '9', '6', '6', '7', 0,
                1, 0, 0, 0,
                0, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
        };
        struct sess s;

        (void)state;
        sess_new(&s);
        assert_int_equal(pv2_server_conn_set_secondary_address(s.c, "49667"), 0);
        assert_int_equal(feed(&s, bind_pdu, sizeof(bind_pdu)), 0);
        assert_int_equal(s.out_len, sizeof(want));
        assert_memory_equal(s.out, want, sizeof(want));
        char longer[300];
        memset(longer, '9', sizeof(longer) - 1);
        longer[sizeof(longer) - 1] = 0;
        assert_int_equal(pv2_server_conn_set_secondary_address(s.c, longer), -EINVAL);
        assert_int_equal(pv2_server_conn_set_secondary_address(s.c, NULL), -EINVAL);
        sess_free(&s);
}

static void bind_many_contexts(void **state)
{
        /* NDR64 only, NDR, another interface, bind time feature negotiation. */
        static const uint8_t b[] = {
                5, 0, 11, 3, 0x10, 0, 0, 0, 224, 0, 0, 0, 2, 0, 0, 0,
                0xd0, 0x16, 0xd0, 0x16, 0, 0, 0, 0,
                4, 0, 0, 0,
                0, 0, 1, 0, PV2_UUID, 1, 0, 0, 0, NDR64_UUID, 1, 0, 0, 0,
                1, 0, 2, 0, PV2_UUID, 1, 0, 0, 0, NDR64_UUID, 1, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
                2, 0, 1, 0, NDR_UUID, 1, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
                3, 0, 1, 0, PV2_UUID, 1, 0, 0, 0, BTFN_UUID, 1, 0, 0, 0,
        };
        static const uint8_t results[4][24] = {
                { 2, 0, 2, 0 },
                { 0, 0, 0, 0, NDR_UUID, 2, 0, 0, 0 },
                { 2, 0, 1, 0 },
                { 3, 0, 0, 0 },
        };
        struct sess s;

        (void)state;
        assert_int_equal(sizeof(b), 224);
        sess_new(&s);
        assert_int_equal(feed(&s, b, sizeof(b)), 0);
        assert_int_equal(s.out_len, 28 + 4 + 4 * 24);
        assert_int_equal(s.out[2], 12);
        /* Our frag limit, and a fresh nonzero association group. */
        assert_int_equal(s.out[16] | s.out[17] << 8, 5840);
        assert_int_equal(s.out[18] | s.out[19] << 8, 5840);
        assert_true(s.out[20] | s.out[21] | s.out[22] | s.out[23]);
        assert_int_equal(s.out[28], 4);
        assert_memory_equal(s.out + 32, results, sizeof(results));

        /* Context 1 is usable, context 0 (rejected) is not. */
        struct stub t = { 0 }, pdu = { 0 };
        put_machine(&t);
        make_request(&pdu, 5, 1, 3, 3, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(s.out[2], 2);
        stub_done(&pdu);
        make_request(&pdu, 6, 0, 3, 3, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        expect_fault(&s, 6, PV2_NCA_S_UNK_IF);
        stub_done(&pdu);
        stub_done(&t);
        sess_free(&s);
}

static void bind_frag_sizes(void **state)
{
        uint8_t b[sizeof(bind_pdu)];
        struct sess s;

        (void)state;
        memcpy(b, bind_pdu, sizeof(b));
        /* Client sends up to 2000, receives up to 1000 (below C706's 1432). */
        b[16] = 0xd0, b[17] = 0x07, b[18] = 0xe8, b[19] = 0x03;
        sess_new(&s);
        assert_int_equal(feed(&s, b, sizeof(b)), 0);
        assert_int_equal(s.out[16] | s.out[17] << 8, 1432);
        assert_int_equal(s.out[18] | s.out[19] << 8, 2000);
        sess_free(&s);
        b[16] = 0xff, b[17] = 0xff, b[18] = 0xff, b[19] = 0xff;
        sess_new(&s);
        assert_int_equal(feed(&s, b, sizeof(b)), 0);
        assert_int_equal(s.out[16] | s.out[17] << 8, 5840);
        assert_int_equal(s.out[18] | s.out[19] << 8, 5840);
        sess_free(&s);
}

static void bind_nak_cases(void **state)
{
        static const uint8_t nak_auth[24] = {
                5, 0, 13, 3, 0x10, 0, 0, 0, 24, 0, 0, 0, 1, 0, 0, 0,
                8, 0, 1, 5, 0, 0, 0, 0,
        };
        uint8_t b[sizeof(bind_pdu) + 16];
        struct sess s;

        (void)state;
        /* An auth verifier: authentication_type_not_recognized. */
        memcpy(b, bind_pdu, sizeof(bind_pdu));
        memset(b + sizeof(bind_pdu), 0, 16);
        b[8] = sizeof(b);
        b[10] = 8;
        b[sizeof(bind_pdu)] = 10;               /* auth_type NTLMSSP, level 2 */
        b[sizeof(bind_pdu) + 1] = 2;
        sess_new(&s);
        assert_int_equal(feed(&s, b, sizeof(b)), -EPROTO);
        assert_int_equal(s.out_len, sizeof(nak_auth));
        assert_memory_equal(s.out, nak_auth, sizeof(nak_auth));
        sess_free(&s);

        /* Version 4: protocol_version_not_supported. */
        memcpy(b, bind_pdu, sizeof(bind_pdu));
        b[0] = 4;
        sess_new(&s);
        assert_int_equal(feed(&s, b, sizeof(bind_pdu)), -EPROTO);
        assert_int_equal(s.out_len, 24);
        assert_int_equal(s.out[2], 13);
        assert_int_equal(s.out[16], 4);
        sess_free(&s);

        /* Big-endian drep: not spoken. */
        memcpy(b, bind_pdu, sizeof(bind_pdu));
        b[4] = 0;
        sess_new(&s);
        assert_int_equal(feed(&s, b, sizeof(bind_pdu)), -EPROTO);
        assert_int_equal(s.out[2], 13);
        assert_int_equal(s.out[16], 0);
        sess_free(&s);

        /* More contexts announced than the PDU holds. */
        memcpy(b, bind_pdu, sizeof(bind_pdu));
        b[24] = 2;
        sess_new(&s);
        assert_int_equal(feed(&s, b, sizeof(bind_pdu)), -EPROTO);
        assert_int_equal(s.out[2], 13);
        sess_free(&s);
}

static void alter_context(void **state)
{
        static const uint8_t alter[72] = {
                5, 0, 14, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 2, 0, 0, 0,
                0xb8, 0x10, 0xb8, 0x10, 0x78, 0x56, 0x34, 0x12,
                1, 0, 0, 0,
                1, 0, 1, 0, PV2_UUID, 1, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
        };
        static const uint8_t resp[56] = {
                5, 0, 15, 3, 0x10, 0, 0, 0, 56, 0, 0, 0, 2, 0, 0, 0,
                0xb8, 0x10, 0xb8, 0x10, 0x78, 0x56, 0x34, 0x12,
                0, 0, 0, 0,
                1, 0, 0, 0,
                0, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
        };
        struct sess s;
        struct stub t = { 0 }, pdu = { 0 };

        (void)state;
        /* Before a bind, an alter_context is a protocol error. */
        sess_new(&s);
        assert_int_equal(feed(&s, alter, sizeof(alter)), -EPROTO);
        assert_int_equal(s.out[2], 13);
        sess_free(&s);

        sess_bound(&s);
        assert_int_equal(feed(&s, alter, sizeof(alter)), 0);
        assert_int_equal(s.out_len, sizeof(resp));
        assert_memory_equal(s.out, resp, sizeof(resp));
        put_machine(&t);
        make_request(&pdu, 3, 1, 3, 3, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(s.out[2], 2);
        assert_int_equal(s.out[20], 1);         /* answered on context 1 */
        stub_done(&pdu);
        make_request(&pdu, 4, 7, 3, 3, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        expect_fault(&s, 4, PV2_NCA_S_UNK_IF);
        stub_done(&pdu);
        stub_done(&t);
        assert_int_equal(pv2_server_conn_queries(s.c), 1);
        sess_free(&s);
        assert_int_equal(fake.closed, 1);
}

/* ---- each opnum, exactly ---- */

static void opnum_enumerate(void **state)
{
        struct sess s;
        struct stub t = { 0 }, want = { 0 };

        (void)state;
        sess_bound(&s);
        put_machine(&t);
        put32(&t, 4);
        assert_int_equal(t.n, 20);
        assert_int_equal(call(&s, 2, 0, &t), 0);
        put32(&want, 2);
        put32(&want, 2);
        put32(&want, 4);
        put32(&want, 0);
        put32(&want, 2);
        for (size_t i = 0; i < 32; i++) {
                uint8_t v = fake_byte(0, i);
                put(&want, &v, 1);
        }
        put32(&want, 0);
        expect_response(&s, 2, want.b, want.n);
        assert_true(fake.machine_null == 0 && fake.last_machine[0] == 0);

        /* Too small: the sizing rule's answer passes through unchanged. */
        stub_done(&t);
        stub_done(&want);
        put_machine(&t);
        put32(&t, 1);
        assert_int_equal(call(&s, 3, 0, &t), 0);
        put32(&want, 0);
        put32(&want, 2);
        put32(&want, 1);
        put32(&want, 0);
        put32(&want, 0);
        put32(&want, ERROR_NOT_ENOUGH_MEMORY);
        expect_response(&s, 3, want.b, want.n);
        stub_done(&t);
        stub_done(&want);
        sess_free(&s);
}

/* A stub whose response is pdwOutSize, pdwRtnSize, lpData of opnum's pattern, status 0. */
static void want_out(struct stub *want, unsigned opnum, uint32_t in_size, uint32_t n)
{
        put32(want, n);
        put32(want, n);
        put32(want, in_size);
        put32(want, 0);
        put32(want, n);
        for (size_t i = 0; i < n; i++) {
                uint8_t v = fake_byte(opnum, i);
                put(want, &v, 1);
        }
        put32(want, 0);
}

static void opnum_registration_and_instances(void **state)
{
        struct sess s;
        struct stub t = { 0 }, want = { 0 };

        (void)state;
        sess_bound(&s);
        put_machine(&t);
        put32(&t, 0);                   /* the GUID starts 4-aligned */
        t.n -= 4;
        put(&t, cs_wire, 16);
        put32(&t, 7);                   /* RequestCode */
        put32(&t, 0x409);               /* RequestLCID */
        put32(&t, 64);
        assert_int_equal(t.n, 44);
        assert_int_equal(call(&s, 9, 1, &t), 0);
        want_out(&want, 1, 64, FAKE_REG_INFO_BYTES);
        expect_response(&s, 9, want.b, want.n);
        assert_memory_equal(&fake.last_counterset, &cs_guid, sizeof(GUID));
        assert_int_equal(fake.last_code, 7);
        assert_int_equal(fake.last_lcid, 0x409);
        stub_done(&t);
        stub_done(&want);

        put_machine(&t);
        put32(&t, 0);
        t.n -= 4;
        put(&t, cs_wire, 16);
        put32(&t, 100);
        assert_int_equal(call(&s, 10, 2, &t), 0);
        want_out(&want, 2, 100, FAKE_INSTANCES_BYTES);
        expect_response(&s, 10, want.b, want.n);
        stub_done(&t);
        stub_done(&want);
        sess_free(&s);
}

static void opnum_handles(void **state)
{
        static const uint8_t null_handle[20];
        struct sess s;
        struct stub t = { 0 }, want = { 0 };
        uint8_t h[20];

        (void)state;
        sess_bound(&s);
        open_query(&s, 2, h);
        assert_int_equal(h[0] | h[1] | h[2] | h[3], 0);
        assert_memory_not_equal(h, null_handle, 20);
        assert_int_equal(pv2_server_conn_queries(s.c), 1);

        put(&t, h, 20);
        put32(&t, 16);
        assert_int_equal(call(&s, 3, 5, &t), 0);
        want_out(&want, 5, 16, FAKE_COUNTER_INFO_BYTES);
        expect_response(&s, 3, want.b, want.n);
        stub_done(&t);
        stub_done(&want);

        put(&t, h, 20);
        put32(&t, 100);
        assert_int_equal(call(&s, 4, 6, &t), 0);
        want_out(&want, 6, 100, 32);
        expect_response(&s, 4, want.b, want.n);
        stub_done(&t);
        stub_done(&want);

        /* ValidateCounters: the buffer comes back as the handler left it. */
        static const uint8_t buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
        static const uint8_t flipped[8] = { 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf7 };
        put(&t, h, 20);
        put32(&t, 8);
        put32(&t, 8);
        put(&t, buf, 8);
        put32(&t, 1);
        assert_int_equal(call(&s, 5, 7, &t), 0);
        put32(&want, 8);
        put(&want, flipped, 8);
        put32(&want, 0);
        expect_response(&s, 5, want.b, want.n);
        assert_int_equal(fake.last_add, 1);
        stub_done(&t);
        stub_done(&want);

        /* CloseQueryHandle returns the null handle; the old one is dead. */
        put(&t, h, 20);
        assert_int_equal(call(&s, 6, 4, &t), 0);
        put(&want, null_handle, 20);
        put32(&want, 0);
        expect_response(&s, 6, want.b, want.n);
        assert_int_equal(pv2_server_conn_queries(s.c), 0);
        assert_int_equal(fake.closed, 1);
        assert_int_equal(call(&s, 7, 4, &t), 0);
        expect_fault(&s, 7, PV2_NCA_S_FAULT_CONTEXT_MISMATCH);
        stub_done(&t);
        stub_done(&want);

        /* Nor is the null handle, or a handle with attributes set, a query. */
        put(&t, null_handle, 20);
        put32(&t, 16);
        assert_int_equal(call(&s, 8, 5, &t), 0);
        expect_fault(&s, 8, PV2_NCA_S_FAULT_CONTEXT_MISMATCH);
        stub_done(&t);
        open_query(&s, 9, h);
        h[0] = 1;
        put(&t, h, 20);
        put32(&t, 16);
        assert_int_equal(call(&s, 10, 5, &t), 0);
        expect_fault(&s, 10, PV2_NCA_S_FAULT_CONTEXT_MISMATCH);
        stub_done(&t);
        assert_int_equal(fake.calls[5], 1);
        sess_free(&s);
        assert_int_equal(fake.closed, 2);
}

static void foreign_handle(void **state)
{
        struct sess a, b;
        struct stub t = { 0 };
        uint8_t h[20];

        (void)state;
        sess_bound(&a);
        sess_bound(&b);
        open_query(&a, 2, h);
        put(&t, h, 20);
        put32(&t, 16);
        assert_int_equal(call(&b, 2, 5, &t), 0);
        expect_fault(&b, 2, PV2_NCA_S_FAULT_CONTEXT_MISMATCH);
        assert_int_equal(call(&a, 3, 5, &t), 0);
        assert_int_equal(a.out[2], 2);
        stub_done(&t);
        sess_free(&b);
        assert_int_equal(fake.closed, 0);
        sess_free(&a);
        assert_int_equal(fake.closed, 1);
}

/* PFC_OBJECT_UUID: 16 bytes of object uuid sit between header and stub. */
static void object_uuid(void **state)
{
        struct sess s;
        struct stub t = { 0 }, pdu = { 0 };
        static const uint8_t object[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

        (void)state;
        sess_bound(&s);
        put(&t, object, 16);
        put_machine(&t);
        make_request(&pdu, 2, 0, 3, 0x83, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(s.out_len, 48);
        assert_int_equal(s.out[2], 2);
        assert_int_equal(fake.calls[3], 1);
        stub_done(&pdu);
        /* A client that vanishes mid-request: freeing the connection frees it all. */
        make_request(&pdu, 4, 0, 3, 1, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(feed(&s, pdu.b, 10), 0);
        assert_int_equal(s.out_len, 0);
        stub_done(&pdu);
        stub_done(&t);
        sess_free(&s);
        assert_int_equal(fake.closed, 1);
}

/* ---- faults ---- */

static void stub_faults(void **state)
{
        struct sess s;
        struct stub t = { 0 };
        uint8_t h[20];

        (void)state;
        sess_bound(&s);

        /* Unknown opnum. */
        put_machine(&t);
        assert_int_equal(call(&s, 2, 8, &t), 0);
        expect_fault(&s, 2, PV2_NCA_S_OP_RNG_ERROR);
        assert_int_equal(s.out[3], 0x23);       /* first, last, did not execute */

        /*
         * EnumerateCounterSet's dwInSize (t still holds the machine name):
         * the IDL's range(0, 256), which perflibd extends to
         * PV2_MAX_ENUMERATE_GUIDS_EXT (perflibv2.h); one more faults, and
         * 257 reaches the method.
         */
        put32(&t, PV2_MAX_ENUMERATE_GUIDS_EXT + 1);
        assert_int_equal(call(&s, 3, 0, &t), 0);
        expect_fault(&s, 3, PV2_NCA_S_FAULT_INVALID_BOUND);
        stub_done(&t);
        put_machine(&t);
        put32(&t, 257);
        assert_int_equal(call(&s, 40, 0, &t), 0);
        assert_true(s.out_len > 24);
        assert_int_equal(s.out[2], 2);          /* a response, not a fault */
        assert_int_equal(fake.calls[0], 1);
        stub_done(&t);

        /* Short stub: dwInSize missing. */
        put_machine(&t);
        assert_int_equal(call(&s, 4, 0, &t), 0);
        expect_fault(&s, 4, PV2_NCA_S_FAULT_NDR);
        stub_done(&t);

        /* An empty stub, for every opnum. */
        for (uint16_t op = 0; op <= 7; op++) {
                assert_int_equal(call(&s, 5, op, &t), 0);
                expect_fault(&s, 5, PV2_NCA_S_FAULT_NDR);
        }

        /* A string with a nonzero offset, or not NUL-terminated. */
        static const uint8_t bad_offset[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 };
        static const uint8_t no_nul[] = { 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'A', 0, 0, 0 };
        static const uint8_t too_long[] = { 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'A', 0, 0, 0 };
        const uint8_t *bad[] = { bad_offset, no_nul, too_long };
        for (size_t i = 0; i < 3; i++) {
                put(&t, bad[i], 16);
                put32(&t, 4);
                assert_int_equal(call(&s, 6, 0, &t), 0);
                expect_fault(&s, 6, PV2_NCA_S_FAULT_NDR);
                stub_done(&t);
        }

        /* ValidateCounters: conformance must equal dwInSize; range(0, 64 MiB). */
        open_query(&s, 7, h);
        put(&t, h, 20);
        put32(&t, 4);
        put32(&t, 5);
        put32(&t, 0);
        put32(&t, 0);
        put32(&t, 0);
        assert_int_equal(call(&s, 8, 7, &t), 0);
        expect_fault(&s, 8, PV2_NCA_S_FAULT_INVALID_BOUND);
        stub_done(&t);
        put(&t, h, 20);
        put32(&t, PV2_MAX_VALIDATE_BYTES + 1);
        put32(&t, PV2_MAX_VALIDATE_BYTES + 1);
        assert_int_equal(call(&s, 9, 7, &t), 0);
        expect_fault(&s, 9, PV2_NCA_S_FAULT_INVALID_BOUND);
        stub_done(&t);
        put(&t, h, 20);
        put32(&t, PV2_MAX_COUNTER_DATA_BYTES + 1);
        assert_int_equal(call(&s, 10, 6, &t), 0);
        expect_fault(&s, 10, PV2_NCA_S_FAULT_INVALID_BOUND);
        stub_done(&t);
        assert_int_equal(fake.calls[0] + fake.calls[6] + fake.calls[7], 1);
        sess_free(&s);
}

static void protocol_errors(void **state)
{
        struct sess s;
        struct stub t = { 0 }, pdu = { 0 };

        (void)state;
        /* A request before the bind. */
        sess_new(&s);
        put_machine(&t);
        make_request(&pdu, 1, 0, 3, 3, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), -EPROTO);
        expect_fault(&s, 1, PV2_NCA_S_PROTO_ERROR);
        sess_free(&s);

        /* frag_length below the header, or below the request header. */
        sess_bound(&s);
        pdu.b[8] = 10;
        assert_int_equal(feed(&s, pdu.b, pdu.n), -EPROTO);
        expect_fault(&s, 1, PV2_NCA_S_PROTO_ERROR);
        sess_free(&s);
        sess_bound(&s);
        pdu.b[8] = 20;
        assert_int_equal(feed(&s, pdu.b, 20), -EPROTO);
        expect_fault(&s, 1, PV2_NCA_S_PROTO_ERROR);
        sess_free(&s);

        /* frag_length beyond what arrived: wait, then the peer vanishes. */
        sess_bound(&s);
        pdu.b[8] = 0xff;
        pdu.b[9] = 0xff;
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(s.out_len, 0);
        sess_free(&s);

        /* Unknown and server-to-client PDU types. */
        static const uint8_t types[] = { 2, 3, 12, 13, 15, 16, 17, 42, 255 };
        for (size_t i = 0; i < sizeof(types); i++) {
                uint8_t b[32] = { 5, 0, types[i], 3, 0x10, 0, 0, 0, 32, 0, 0, 0, 9, 0, 0, 0 };
                sess_bound(&s);
                assert_int_equal(feed(&s, b, sizeof(b)), -EPROTO);
                expect_fault(&s, 9, PV2_NCA_S_PROTO_ERROR);
                sess_free(&s);
        }

        /* A second bind; a middle fragment without a first. */
        sess_bound(&s);
        assert_int_equal(feed(&s, bind_pdu, sizeof(bind_pdu)), -EPROTO);
        sess_free(&s);
        sess_bound(&s);
        stub_done(&pdu);
        make_request(&pdu, 2, 0, 3, 0, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), -EPROTO);
        expect_fault(&s, 2, PV2_NCA_S_PROTO_ERROR);
        sess_free(&s);
        stub_done(&pdu);
        stub_done(&t);
}

static void orphaned_and_cancel(void **state)
{
        struct sess s;
        struct stub t = { 0 }, pdu = { 0 };
        uint8_t orphaned[16] = { 5, 0, 19, 3, 0x10, 0, 0, 0, 16, 0, 0, 0, 2, 0, 0, 0 };
        uint8_t cancel[16] = { 5, 0, 18, 3, 0x10, 0, 0, 0, 16, 0, 0, 0, 2, 0, 0, 0 };

        (void)state;
        sess_bound(&s);
        put_machine(&t);
        make_request(&pdu, 2, 0, 3, 1, t.b, t.n, 0);   /* first fragment only */
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(feed(&s, cancel, sizeof(cancel)), 0);
        assert_int_equal(s.out_len, 0);
        assert_int_equal(feed(&s, orphaned, sizeof(orphaned)), 0);
        assert_int_equal(s.out_len, 0);
        stub_done(&pdu);
        /* The orphaned call is gone: a new one starts cleanly. */
        make_request(&pdu, 3, 0, 3, 3, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(s.out[2], 2);
        assert_int_equal(fake.calls[3], 1);
        stub_done(&pdu);
        /* A client that vanishes mid-request: freeing the connection frees it all. */
        make_request(&pdu, 4, 0, 3, 1, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdu.b, pdu.n), 0);
        assert_int_equal(feed(&s, pdu.b, 10), 0);
        assert_int_equal(s.out_len, 0);
        stub_done(&pdu);
        stub_done(&t);
        sess_free(&s);
        assert_int_equal(fake.closed, 1);
}

/* ---- fragmentation ---- */

static void fragmented_request_and_response(void **state)
{
        struct sess s;
        struct stub t = { 0 }, pdus = { 0 };
        uint8_t h[20];
        enum { N = 10000, PER = 1000 };

        (void)state;
        sess_bound(&s);
        open_query(&s, 2, h);
        put(&t, h, 20);
        put32(&t, N);
        put32(&t, N);
        for (size_t i = 0; i < N; i++) {
                uint8_t v = (uint8_t)(i * 13);
                put(&t, &v, 1);
        }
        put32(&t, 0);
        /* alloc_hint lies (4 GiB): it is only a hint. */
        for (size_t off = 0; off < t.n; off += PER) {
                size_t n = t.n - off < PER ? t.n - off : PER;
                uint8_t flags = (off == 0 ? 1 : 0) | (off + n == t.n ? 2 : 0);
                make_request(&pdus, 3, 0, 7, flags, t.b + off, n, 0xffffffffu);
        }
        assert_int_equal(feed(&s, pdus.b, pdus.n), 0);

        /* 10008 stub bytes in fragments of at most 4280: 4256, 4256, 1496. */
        static const size_t sizes[] = { 4256, 4256, 1496 };
        uint8_t *stub = malloc(N + 8);
        size_t off = 0, got = 0;
        assert_non_null(stub);
        for (size_t i = 0; i < 3; i++) {
                const uint8_t *f = s.out + off;
                size_t len = f[8] | f[9] << 8;
                assert_int_equal(f[2], 2);
                assert_int_equal(f[3], (i == 0 ? 1 : 0) | (i == 2 ? 2 : 0));
                assert_int_equal(len, 24 + sizes[i]);
                assert_int_equal(f[16] | f[17] << 8, N + 8 - got);   /* alloc_hint: what is left */
                memcpy(stub + got, f + 24, sizes[i]);
                got += sizes[i];
                off += len;
        }
        assert_int_equal(off, s.out_len);
        assert_int_equal(got, N + 8);
        assert_int_equal(stub[0] | stub[1] << 8, N);
        for (size_t i = 0; i < N; i++)
                assert_int_equal(stub[4 + i], (uint8_t)(i * 13) ^ 0xff);
        free(stub);
        stub_done(&t);
        stub_done(&pdus);
        sess_free(&s);
}

/*
 * The same pieces with the large ones lent: the slices, joined, are the
 * same bytes, and only the fragment headers and the small pieces were
 * copied (after a first byte already in the buffer, as after a bind_ack).
 */
static void lent_matches(const struct dcerpc_piece pieces[3], const uint8_t *whole,
                         size_t whole_len)
{
        struct dcerpc_slices sl = { 0 };
        uint8_t *hdrs = malloc(1), *joined = malloc(whole_len + 1);
        size_t hdrs_len = 1, n = 0, copied = 1;

        assert_non_null(hdrs);
        assert_non_null(joined);
        hdrs[0] = 0xAA;
        assert_int_equal(dcerpc_append_call_pieces(&hdrs, &hdrs_len, DCERPC_RESPONSE, 9, 1, 0,
                                                   pieces, 3, 1432, &sl), 0);
        assert_int_equal(dcerpc_slices_close(&sl, hdrs_len), 0);
        for (size_t i = 0; i < sl.n; i++) {
                const struct dcerpc_slice *x = &sl.v[i];

                assert_true(n + x->len <= whole_len + 1);
                memcpy(joined + n, x->lent ? x->lent : hdrs + x->off, x->len);
                n += x->len;
        }
        assert_int_equal(n, whole_len + 1);
        assert_int_equal(joined[0], 0xAA);
        assert_memory_equal(joined + 1, whole, whole_len);
        for (size_t i = 0; i < 3; i++)
                if (pieces[i].len < DCERPC_LEND_MIN)
                        copied += pieces[i].len;
        assert_int_equal(hdrs_len, copied + (whole_len - 5000));
        dcerpc_slices_done(&sl);
        free(hdrs);
        free(joined);
}

/* A stub given in pieces, however cut, makes the same PDUs as the stub whole. */
static void call_in_pieces(void **state)
{
        enum { N = 5000 };
        static const size_t cuts[][2] = {
                { 0, 0 }, { 0, N }, { 20, 20 }, { 20, 4997 }, { 1, 2 }, { 4255, 4257 }, { N, N },
        };
        uint8_t *stub = malloc(N);

        (void)state;
        assert_non_null(stub);
        for (size_t i = 0; i < N; i++)
                stub[i] = (uint8_t)(i * 7 + 3);
        for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
                size_t a = cuts[c][0], b = cuts[c][1];
                struct dcerpc_piece pieces[3] = {
                        { stub, a }, { stub + a, b - a }, { stub + b, N - b },
                };
                uint8_t *whole = NULL, *cut = NULL;
                size_t whole_len = 0, cut_len = 0;

                assert_int_equal(dcerpc_append_call(&whole, &whole_len, DCERPC_RESPONSE, 9, 1, 0,
                                                    stub, N, 1432), 0);
                assert_int_equal(dcerpc_append_call_pieces(&cut, &cut_len, DCERPC_RESPONSE, 9,
                                                           1, 0, pieces, 3, 1432, NULL), 0);
                assert_int_equal(cut_len, whole_len);
                assert_memory_equal(cut, whole, whole_len);
                free(cut);
                cut = NULL;
                cut_len = 0;
                lent_matches(pieces, whole, whole_len);
                free(whole);
        }
        free(stub);
}

/*
 * A bind and two calls in all, and the replies to them fed whole (malloc'ed,
 * owned by the caller, *ret_len long).
 */
static uint8_t *two_calls_whole(struct stub *all, size_t *ret_len)
{
        struct stub t = { 0 };
        struct sess s;
        uint8_t *whole;

        put(all, bind_pdu, sizeof(bind_pdu));
        put_machine(&t);
        put32(&t, 4);
        make_request(all, 2, 0, 0, 3, t.b, t.n, 0);
        make_request(all, 3, 0, 0, 3, t.b, t.n, 0);
        stub_done(&t);
        sess_new(&s);
        assert_int_equal(feed(&s, all->b, all->n), 0);
        whole = s.out;
        *ret_len = s.out_len;
        s.out = NULL;
        sess_free(&s);
        return whole;
}

/* The same session fed in one piece or one byte at a time answers the same. */
static void byte_at_a_time(void **state)
{
        struct stub all = { 0 }, joined = { 0 };
        struct sess s;
        size_t whole_len;
        uint8_t *whole = two_calls_whole(&all, &whole_len);

        (void)state;
        sess_new(&s);
        for (size_t i = 0; i < all.n; i++) {
                assert_int_equal(feed(&s, all.b + i, 1), 0);
                if (s.out_len)
                        put(&joined, s.out, s.out_len);
        }
        assert_int_equal(joined.n, whole_len);
        assert_memory_equal(joined.b, whole, whole_len);
        free(whole);
        sess_free(&s);
        stub_done(&all);
        stub_done(&joined);
}

/* Two QueryCounterData requests of one session, back to back in one stub. */
static void two_data_calls(struct sess *s, struct stub *all)
{
        struct stub t = { 0 };
        uint8_t h[20];

        sess_bound(s);
        open_query(s, 2, h);
        put(&t, h, 20);
        put32(&t, 1u << 20);
        make_request(all, 3, 0, 6, 3, t.b, t.n, 0);
        make_request(all, 4, 0, 6, 3, t.b, t.n, 0);
        stub_done(&t);
}

/*
 * Replies left as slices, lpData lent: joined, they are the bytes the
 * copying feed gives, for two multi-fragment replies from one feed; the
 * slices of the next feed replace them.
 */
static void replies_as_slices(void **state)
{
        struct stub a = { 0 }, b = { 0 }, joined = { 0 };
        struct sess sa, sb;
        struct iovec *iov;
        size_t n_iov = 0;
        bool lent = false;

        (void)state;
        fake.counter_data_bytes = 20000;
        two_data_calls(&sa, &a);
        two_data_calls(&sb, &b);
        assert_int_equal(feed(&sa, a.b, a.n), 0);
        assert_int_equal(pv2_server_conn_feed_iov(sb.c, b.b, b.n, &iov, &n_iov), 0);
        for (size_t i = 0; i < n_iov; i++) {
                put(&joined, iov[i].iov_base, iov[i].iov_len);
                /* Slices of a fragment's worth are lpData, not a copy of it. */
                lent |= iov[i].iov_len >= 1024;
        }
        assert_true(lent);
        assert_int_equal(joined.n, sa.out_len);
        assert_memory_equal(joined.b, sa.out, sa.out_len);
        assert_int_equal(pv2_server_conn_feed_iov(sb.c, NULL, 0, &iov, &n_iov), 0);
        assert_int_equal(n_iov, 0);
        assert_int_equal(fake.calls[6], 4);
        fake.counter_data_bytes = 32;
        sess_free(&sa);
        sess_free(&sb);
        stub_done(&a);
        stub_done(&b);
        stub_done(&joined);
}

static void request_cap(void **state)
{
        struct sess s;
        struct stub pdu = { 0 };
        uint8_t *zeros = calloc(1, 65535);
        int r = 0;
        size_t total = 0;

        (void)state;
        assert_non_null(zeros);
        sess_bound(&s);
        /* 64 KiB fragments with no last one: the stub must stop near 64 MiB. */
        for (unsigned i = 0; r == 0 && i < 2000; i++) {
                pdu.n = 0;
                make_request(&pdu, 2, 0, 7, i == 0 ? 1 : 0, zeros, 65535 - 24, 0);
                r = feed(&s, pdu.b, pdu.n);
                total += 65535 - 24;
        }
        assert_int_equal(r, -EPROTO);
        expect_fault(&s, 2, PV2_NCA_S_PROTO_ERROR);
        assert_true(total > PV2_MAX_VALIDATE_BYTES);
        assert_true(total < PV2_MAX_VALIDATE_BYTES + 2 * 65536);
        free(zeros);
        stub_done(&pdu);
        sess_free(&s);
}

/* A lowered cap (perflibd's, for callers it refuses) stops a request at it. */
static void request_cap_lowered(void **state)
{
        struct sess s;
        struct stub pdu = { 0 };
        uint8_t *zeros = calloc(1, 65535);
        int r = 0;
        unsigned frags = 0;

        (void)state;
        assert_non_null(zeros);
        sess_bound(&s);
        assert_int_equal(pv2_server_conn_set_max_request(s.c, 100), -EINVAL);
        assert_int_equal(pv2_server_conn_set_max_request(s.c, 65536), 0);
        for (unsigned i = 0; r == 0 && i < 100; i++, frags++) {
                pdu.n = 0;
                make_request(&pdu, 2, 0, 7, i == 0 ? 1 : 0, zeros, 30000, 0);
                r = feed(&s, pdu.b, pdu.n);
        }
        assert_int_equal(r, -EPROTO);
        expect_fault(&s, 2, PV2_NCA_S_PROTO_ERROR);
        assert_int_equal(frags, 3);             /* 60,000 bytes fit, 90,000 do not */
        free(zeros);
        stub_done(&pdu);
        sess_free(&s);
}

static void thousand_handles_released(void **state)
{
        struct sess s;
        struct stub t = { 0 }, pdus = { 0 };

        (void)state;
        sess_bound(&s);
        put_machine(&t);
        for (uint32_t i = 0; i < 1000; i++)
                make_request(&pdus, 2 + i, 0, 3, 3, t.b, t.n, 0);
        assert_int_equal(feed(&s, pdus.b, pdus.n), 0);
        assert_int_equal(s.out_len, 1000 * 48);
        assert_int_equal(pv2_server_conn_queries(s.c), 1000);
        assert_int_equal(fake.opened, 1000);
        assert_int_equal(fake.closed, 0);
        sess_free(&s);
        assert_int_equal(fake.closed, 1000);
        stub_done(&t);
        stub_done(&pdus);
}

/*
 * Streams frags fragments of 30,000 stub bytes of one call (its first one
 * with start), never the last; feed()'s result.
 */
static int stream(struct sess *s, bool start, unsigned frags)
{
        static uint8_t zeros[30000];
        struct stub pdu = { 0 };
        int r = 0;

        for (unsigned i = 0; r == 0 && i < frags; i++) {
                pdu.n = 0;
                make_request(&pdu, 2, 0, 7, start && i == 0 ? 1 : 0, zeros, sizeof(zeros), 0);
                r = feed(s, pdu.b, pdu.n);
        }
        stub_done(&pdu);
        return r;
}

/* Connections share the budget: past their free share, one's request is another's refusal. */
static void request_budget(void **state)
{
        struct pv2_budget *b;
        struct sess s1, s2;

        (void)state;
        assert_int_equal(pv2_budget_new(256 * 1024, &b), 0);
        sess_bound(&s1);
        sess_bound(&s2);
        assert_int_equal(pv2_server_conn_set_budget(s1.c, b), 0);
        assert_int_equal(pv2_server_conn_set_budget(s2.c, b), 0);
        /* 300,000 bytes: a 512 KiB buffer, 448 KiB of it paid: more than there is. */
        assert_int_equal(stream(&s1, true, 10), -EPROTO);
        expect_fault(&s1, 2, PV2_NCA_S_FAULT_REMOTE_NO_MEMORY);
        assert_true(pv2_budget_used(b) <= 256 * 1024);
        sess_free(&s1);
        /* 150,000 bytes fit (256 KiB buffer, 192 KiB paid) and are held... */
        assert_int_equal(stream(&s2, true, 5), 0);
        assert_int_equal(pv2_budget_used(b), 192 * 1024);
        /* ...so that another connection gets what is left (64 KiB past its free share). */
        sess_bound(&s1);
        assert_int_equal(pv2_server_conn_set_budget(s1.c, b), 0);
        assert_int_equal(stream(&s1, true, 2), 0);
        assert_int_equal(stream(&s1, false, 3), -EPROTO);
        expect_fault(&s1, 2, PV2_NCA_S_FAULT_REMOTE_NO_MEMORY);
        sess_free(&s1);
        assert_int_equal(pv2_server_conn_set_budget(s2.c, NULL), -EBUSY);
        sess_free(&s2);
        assert_int_equal(pv2_budget_used(b), 0);
        pv2_budget_free(b);
}

/* Fed in two pieces cut anywhere, a session answers as fed whole. */
static void every_cut(void **state)
{
        struct stub all = { 0 }, joined = { 0 };
        struct sess s;
        size_t whole_len;
        uint8_t *whole = two_calls_whole(&all, &whole_len);

        (void)state;
        for (size_t cut = 0; cut <= all.n; cut++) {
                joined.n = 0;
                sess_new(&s);
                assert_int_equal(feed(&s, all.b, cut), 0);
                put(&joined, s.out, s.out_len);
                assert_int_equal(feed(&s, all.b + cut, all.n - cut), 0);
                put(&joined, s.out, s.out_len);
                sess_free(&s);
                assert_int_equal(joined.n, whole_len);
                assert_memory_equal(joined.b, whole, whole_len);
        }
        free(whole);
        stub_done(&all);
        stub_done(&joined);
}

/*
 * The partial PDU kept between feeds is paid for with the request buffer:
 * a connection holding a large request cannot park 64 KiB more for free.
 */
static void tail_is_charged(void **state)
{
        static uint8_t zeros[40000];
        struct pv2_budget *b;
        struct stub pdu = { 0 };
        struct sess s;

        (void)state;
        assert_int_equal(pv2_budget_new(192 * 1024 + 65535, &b), 0);
        sess_bound(&s);
        assert_int_equal(pv2_server_conn_set_budget(s.c, b), 0);
        /* A bare partial PDU fits in the free share. */
        make_request(&pdu, 2, 0, 7, 1, zeros, sizeof(zeros), 0);
        assert_int_equal(feed(&s, pdu.b, 30000), 0);
        assert_int_equal(pv2_budget_used(b), 0);
        assert_int_equal(feed(&s, pdu.b + 30000, pdu.n - 30000), 0);
        /* 150,000 bytes of request: a 256 KiB buffer, 192 KiB of it paid... */
        assert_int_equal(stream(&s, false, 5), 0);
        size_t held = pv2_budget_used(b);
        assert_int_equal(held, 192 * 1024);
        /* ...and the next fragment's first half on top: all of the tail's 65,535 paid. */
        pdu.n = 0;
        make_request(&pdu, 2, 0, 7, 0, zeros, sizeof(zeros), 0);
        assert_int_equal(feed(&s, pdu.b, 20000), 0);
        assert_int_equal(pv2_budget_used(b), held + 65535);
        sess_free(&s);
        assert_int_equal(pv2_budget_used(b), 0);

        /* One byte short of that: the tail is refused, the connection closed. */
        pv2_budget_free(b);
        assert_int_equal(pv2_budget_new(192 * 1024 + 65534, &b), 0);
        sess_bound(&s);
        assert_int_equal(pv2_server_conn_set_budget(s.c, b), 0);
        assert_int_equal(stream(&s, true, 6), 0);
        assert_int_equal(feed(&s, pdu.b, 20000), -ENOMEM);
        sess_free(&s);
        assert_int_equal(pv2_budget_used(b), 0);
        pv2_budget_free(b);
        stub_done(&pdu);
}

/* Trimmed between calls, a connection gives back its buffers and goes on. */
static void trim_between_calls(void **state)
{
        uint8_t h[20];
        struct pv2_budget *b;
        struct sess s;

        (void)state;
        assert_int_equal(pv2_budget_new(1 << 20, &b), 0);
        sess_bound(&s);
        assert_int_equal(pv2_server_conn_set_budget(s.c, b), 0);
        assert_int_equal(stream(&s, true, 5), 0);
        assert_int_equal(pv2_budget_used(b), 192 * 1024);
        /* Mid-call the request is kept... */
        pv2_server_conn_trim(s.c);
        assert_int_equal(pv2_budget_used(b), 192 * 1024);
        sess_free(&s);
        /* ...between calls everything goes back, and calls still work. */
        sess_bound(&s);
        assert_int_equal(pv2_server_conn_set_budget(s.c, b), 0);
        open_query(&s, 2, h);
        pv2_server_conn_trim(s.c);
        pv2_server_conn_trim(NULL);
        open_query(&s, 3, h);
        sess_free(&s);
        assert_int_equal(pv2_budget_used(b), 0);
        pv2_budget_free(b);
}

/* A full handle table answers ERROR_OUTOFMEMORY without calling open_query. */
static void query_cap(void **state)
{
        static const uint8_t refused[24] = { [20] = 0x0e };     /* null handle, 14 */
        struct sess s;
        struct stub t = { 0 };
        uint8_t h[20];

        (void)state;
        sess_bound(&s);
        assert_int_equal(pv2_server_conn_set_max_queries(s.c, 0), -EINVAL);
        assert_int_equal(pv2_server_conn_set_max_queries(s.c, 2), 0);
        open_query(&s, 2, h);
        open_query(&s, 3, h);
        put_machine(&t);
        assert_int_equal(call(&s, 4, 3, &t), 0);
        expect_response(&s, 4, refused, sizeof(refused));
        assert_int_equal(fake.opened, 2);
        assert_int_equal(pv2_server_conn_queries(s.c), 2);
        stub_done(&t);
        sess_free(&s);
}

/* What a transport's deadlines count: the bind, then requests answered, faults included. */
static void bound_and_calls(void **state)
{
        struct sess s;
        struct stub t = { 0 };
        uint8_t h[20];

        (void)state;
        sess_new(&s);
        assert_false(pv2_server_conn_bound(s.c));
        assert_int_equal(feed(&s, bind_pdu, 10), 0);
        assert_false(pv2_server_conn_bound(s.c));
        assert_int_equal(feed(&s, bind_pdu + 10, sizeof(bind_pdu) - 10), 0);
        assert_true(pv2_server_conn_bound(s.c));
        assert_int_equal(pv2_server_conn_calls(s.c), 0);
        open_query(&s, 2, h);
        assert_int_equal(pv2_server_conn_calls(s.c), 1);
        assert_int_equal(call(&s, 3, 200, &t), 0);              /* opnum out of range */
        assert_int_equal(pv2_server_conn_calls(s.c), 2);
        assert_int_equal(stream(&s, true, 1), 0);                     /* not complete */
        assert_int_equal(pv2_server_conn_calls(s.c), 2);
        sess_free(&s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(bind_ack_exact, setup),
                cmocka_unit_test_setup(bind_ack_port, setup),
                cmocka_unit_test_setup(bind_many_contexts, setup),
                cmocka_unit_test_setup(bind_frag_sizes, setup),
                cmocka_unit_test_setup(bind_nak_cases, setup),
                cmocka_unit_test_setup(alter_context, setup),
                cmocka_unit_test_setup(opnum_enumerate, setup),
                cmocka_unit_test_setup(opnum_registration_and_instances, setup),
                cmocka_unit_test_setup(opnum_handles, setup),
                cmocka_unit_test_setup(foreign_handle, setup),
                cmocka_unit_test_setup(object_uuid, setup),
                cmocka_unit_test_setup(stub_faults, setup),
                cmocka_unit_test_setup(protocol_errors, setup),
                cmocka_unit_test_setup(orphaned_and_cancel, setup),
                cmocka_unit_test_setup(fragmented_request_and_response, setup),
                cmocka_unit_test_setup(byte_at_a_time, setup),
                cmocka_unit_test(call_in_pieces),
                cmocka_unit_test_setup(replies_as_slices, setup),
                cmocka_unit_test_setup(request_cap, setup),
                cmocka_unit_test_setup(request_cap_lowered, setup),
                cmocka_unit_test_setup(thousand_handles_released, setup),
                cmocka_unit_test_setup(request_budget, setup),
                cmocka_unit_test_setup(tail_is_charged, setup),
                cmocka_unit_test_setup(trim_between_calls, setup),
                cmocka_unit_test_setup(every_cut, setup),
                cmocka_unit_test_setup(query_cap, setup),
                cmocka_unit_test_setup(bound_and_calls, setup),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
