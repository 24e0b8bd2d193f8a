/* SPDX-License-Identifier: MIT */
/*
 * The MS-RRP stubs (sdk/librpc/rrp-stubs.c): each call a performance client
 * makes on \PIPE\winreg, built by hand as MS-RRP 3.1.5's IDL lays it out,
 * the answers RegQueryValueEx gives (ERROR_MORE_DATA with the size, the
 * size alone, the value), every refusal, every request that breaks the IDL
 * (a fault, nothing changed), and MS-RRP bound beside PerflibV2 only where
 * a server asked for it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dcerpc.h"
#include "ndr.h"
#include "perflibv2.h"
#include "pv2-fake.h"
#include "rrp.h"

enum { OPEN_HKCU = 1, OPEN_HKLM = 2, OPEN_HKPD = 3, CLOSE = 5, OPEN_KEY = 15, QUERY = 17,
       VERSION = 26, OPEN_HKPT = 32 };

static const uint8_t value[] = { '1', 0, 0, 0, 'X', 0, 0, 0, 0, 0 };   /* "1\0X\0\0" */
static int queries;
static enum rrp_hive last_hive;

/* Holds one value, "Counter 009", under HKPD and HKPT. */
static uint32_t query_value(void *ctx, enum rrp_hive hive, const uint8_t *name, size_t units,
                            struct rrp_value *ret)
{
        static const uint8_t counter[] = { 'C', 0, 'o', 0, 'u', 0, 'n', 0, 't', 0, 'e', 0, 'r', 0,
                                           ' ', 0, '0', 0, '0', 0, '9', 0 };

        (void) ctx;
        queries++;
        last_hive = hive;
        if (hive == RRP_HKLM || units * 2 != sizeof(counter) || memcmp(name, counter, units * 2))
                return 2;
        ret->type = RRP_REG_MULTI_SZ;
        ret->data = malloc(sizeof(value));
        assert_non_null(ret->data);
        memcpy(ret->data, value, sizeof(value));
        ret->len = sizeof(value);
        return 0;
}

static int released;

/* Every value query_value made comes back here once it is in the reply. */
static void release(void *ctx, struct rrp_value *v)
{
        (void) ctx;
        released++;
        free(v->data);
}

static const struct rrp_handlers handlers = { .query_value = query_value, .release = release };

struct reply {
        struct ndr_push o;
        uint32_t fault;
};

static int call(struct rrp_stubs *s, uint16_t opnum, const struct ndr_push *in, struct reply *r)
{
        ndr_push_done(&r->o);
        ndr_push_init(&r->o);
        r->fault = 0;
        return rrp_stubs_call(s, opnum, in->data, in->size, &r->o, &r->fault);
}

/* The Win32 status that ends every reply. */
static uint32_t status_of(const struct reply *r)
{
        assert_true(r->o.size >= 4);
        return ndr_le32(r->o.data + r->o.size - 4);
}

/* Open* with a null or a one-wchar_t server name; *h is the handle returned. */
static uint32_t open_hive(struct rrp_stubs *s, uint16_t opnum, uint8_t h[NDR_HANDLE_SIZE])
{
        struct ndr_push in;
        struct reply r = { 0 };

        ndr_push_init(&in);
        ndr_push_u32(&in, 0x20000);
        ndr_push_u16(&in, '\\');
        ndr_push_align(&in, 4);
        ndr_push_u32(&in, 0x02000000);  /* MAXIMUM_ALLOWED */
        assert_int_equal(call(s, opnum, &in, &r), 0);
        assert_int_equal(r.fault, 0);
        assert_int_equal(r.o.size, NDR_HANDLE_SIZE + 4);
        memcpy(h, r.o.data, NDR_HANDLE_SIZE);
        uint32_t st = status_of(&r);
        ndr_push_done(&in);
        ndr_push_done(&r.o);
        return st;
}

struct qv {
        const char *name;       /* ASCII; sent with its NUL, as clients do */
        bool type, data, cb, len;
        uint32_t cb_value;
};

/* BaseRegQueryValue's request after the handle. */
static void push_query(struct ndr_push *in, const uint8_t h[NDR_HANDLE_SIZE], const struct qv *q)
{
        uint16_t units = (uint16_t) (strlen(q->name) + 1);

        ndr_push_handle(in, h);
        ndr_push_u16(in, (uint16_t) (units * 2));
        ndr_push_u16(in, (uint16_t) (units * 2));
        ndr_push_u32(in, 0x20000);
        ndr_push_u32(in, units);
        ndr_push_u32(in, 0);
        ndr_push_u32(in, units);
        for (uint16_t i = 0; i < units; i++)
                ndr_push_u16(in, (uint8_t) q->name[i]);
        ndr_push_align(in, 4);
        ndr_push_u32(in, q->type ? 0x20004 : 0);
        if (q->type)
                ndr_push_u32(in, 0);
        ndr_push_u32(in, q->data ? 0x20008 : 0);
        if (q->data) {
                ndr_push_u32(in, q->cb_value);
                ndr_push_u32(in, 0);
                ndr_push_u32(in, q->cb_value);
                for (uint32_t i = 0; i < q->cb_value; i++)
                        ndr_push_u8(in, ' ');
                ndr_push_align(in, 4);
        }
        ndr_push_u32(in, q->cb ? 0x2000c : 0);
        if (q->cb)
                ndr_push_u32(in, q->cb_value);
        ndr_push_u32(in, q->len ? 0x20010 : 0);
        if (q->len)
                ndr_push_u32(in, q->cb_value);
}

/* The reply's fields, read back in the IDL's order. */
struct qv_reply {
        uint32_t type, cb, len, n_data, status;
        const uint8_t *data;
};

static void pull_query_reply(const struct reply *r, const struct qv *q, struct qv_reply *ret)
{
        struct ndr_pull p;

        ndr_pull_init(&p, r->o.data, r->o.size);
        assert_int_equal(ndr_pull_u32(&p) != 0, q->type);
        if (q->type)
                ret->type = ndr_pull_u32(&p);
        assert_int_equal(ndr_pull_u32(&p) != 0, q->data);
        if (q->data) {
                assert_int_equal(ndr_pull_u32(&p), q->cb_value);       /* size_is */
                assert_int_equal(ndr_pull_u32(&p), 0);
                ret->n_data = ndr_pull_u32(&p);
                ret->data = ndr_pull_bytes(&p, ret->n_data);
                ndr_pull_align(&p, 4);
        }
        assert_int_equal(ndr_pull_u32(&p) != 0, q->cb);
        if (q->cb)
                ret->cb = ndr_pull_u32(&p);
        assert_int_equal(ndr_pull_u32(&p) != 0, q->len);
        if (q->len)
                ret->len = ndr_pull_u32(&p);
        ret->status = ndr_pull_u32(&p);
        assert_int_equal(p.err, 0);
        assert_int_equal(p.off, p.size);
}

static void query(struct rrp_stubs *s, const uint8_t h[NDR_HANDLE_SIZE], const struct qv *q,
                  struct qv_reply *ret)
{
        struct ndr_push in;
        struct reply r = { 0 };

        ndr_push_init(&in);
        push_query(&in, h, q);
        assert_int_equal(call(s, QUERY, &in, &r), 0);
        assert_int_equal(r.fault, 0);
        pull_query_reply(&r, q, ret);
        if (ret->data) {
                /* Point into our own copy: the reply's buffer goes now. */
                static uint8_t copy[64];
                assert_true(ret->n_data <= sizeof(copy));
                memcpy(copy, ret->data, ret->n_data);
                ret->data = copy;
        }
        ndr_push_done(&in);
        ndr_push_done(&r.o);
}

/* What RegQueryValueEx does: too small a buffer, then the size it was told. */
static void query_more_data_then_value(void **state)
{
        struct rrp_stubs *s;
        uint8_t h[NDR_HANDLE_SIZE];
        struct qv_reply a = { 0 }, b = { 0 }, c = { 0 };

        (void) state;
        assert_int_equal(rrp_stubs_new(&handlers, &s), 0);
        assert_int_equal(open_hive(s, OPEN_HKPD, h), 0);
        assert_int_equal(ndr_le32(h), 0);
        query(s, h, &(struct qv){ "Counter 009", true, true, true, true, 4 }, &a);
        assert_int_equal(a.status, 234);                /* ERROR_MORE_DATA */
        assert_int_equal(a.cb, sizeof(value));
        assert_int_equal(a.n_data, 0);
        assert_int_equal(last_hive, RRP_HKPD);
        query(s, h, &(struct qv){ "Counter 009", true, true, true, true, a.cb }, &b);
        assert_int_equal(b.status, 0);
        assert_int_equal(b.type, RRP_REG_MULTI_SZ);
        assert_int_equal(b.cb, sizeof(value));
        assert_int_equal(b.len, sizeof(value));
        assert_int_equal(b.n_data, sizeof(value));
        assert_memory_equal(b.data, value, sizeof(value));
        /* No buffer, only the size: success with the size. */
        query(s, h, &(struct qv){ "Counter 009", false, false, true, false, 0 }, &c);
        assert_int_equal(c.status, 0);
        assert_int_equal(c.cb, sizeof(value));
        /* A name not held: the handler's answer. */
        query(s, h, &(struct qv){ "Nothing", true, true, true, true, 64 }, &c);
        assert_int_equal(c.status, 2);
        assert_int_equal(c.n_data, 0);
        /* Two full values and one size-only answer were made, and each given back. */
        assert_int_equal(released, 3);
        /* A buffer without lpcbData. */
        int before = queries;
        query(s, h, &(struct qv){ "Counter 009", true, true, false, false, 0 }, &c);
        assert_int_equal(c.status, 87);
        assert_int_equal(queries, before);
        rrp_stubs_free(s);
}

/* The hives: four open, the rest are refused; subkeys never exist; the version is 5. */
static void hives_keys_version(void **state)
{
        static const uint8_t null_handle[NDR_HANDLE_SIZE];
        struct rrp_stubs *s;
        uint8_t h[NDR_HANDLE_SIZE], lm[NDR_HANDLE_SIZE];
        struct ndr_push in;
        struct reply r = { 0 };

        (void) state;
        assert_int_equal(rrp_stubs_new(&handlers, &s), 0);
        assert_int_equal(open_hive(s, OPEN_HKCU, h), 5);
        assert_memory_equal(h, null_handle, NDR_HANDLE_SIZE);
        assert_int_equal(open_hive(s, OPEN_HKPT, h), 0);
        assert_int_equal(open_hive(s, OPEN_HKLM, lm), 0);
        assert_memory_not_equal(h, lm, NDR_HANDLE_SIZE);

        ndr_push_init(&in);
        ndr_push_handle(&in, lm);
        ndr_push_u16(&in, 8);
        ndr_push_u16(&in, 8);
        ndr_push_u32(&in, 0x20000);
        ndr_push_u32(&in, 4);
        ndr_push_u32(&in, 0);
        ndr_push_u32(&in, 4);
        ndr_push_bytes(&in, "S\0W\0\0\0\0\0", 8);
        ndr_push_u32(&in, 0);
        ndr_push_u32(&in, 0x20019);     /* KEY_READ */
        assert_int_equal(call(s, OPEN_KEY, &in, &r), 0);
        assert_int_equal(r.fault, 0);
        assert_int_equal(status_of(&r), 2);
        assert_memory_equal(r.o.data, null_handle, NDR_HANDLE_SIZE);
        ndr_push_done(&in);

        ndr_push_init(&in);
        ndr_push_handle(&in, h);
        assert_int_equal(call(s, VERSION, &in, &r), 0);
        assert_int_equal(r.o.size, 8);
        assert_int_equal(ndr_le32(r.o.data), 5);
        assert_int_equal(status_of(&r), 0);
        /* Any other opnum: not a registry. */
        assert_int_equal(call(s, 6, &in, &r), 0);
        assert_int_equal(r.fault, PV2_NCA_S_OP_RNG_ERROR);
        /* Closed, the handle is gone. */
        assert_int_equal(call(s, CLOSE, &in, &r), 0);
        assert_int_equal(r.fault, 0);
        assert_int_equal(status_of(&r), 0);
        assert_memory_equal(r.o.data, null_handle, NDR_HANDLE_SIZE);
        assert_int_equal(call(s, VERSION, &in, &r), 0);
        assert_int_equal(r.fault, PV2_NCA_S_FAULT_CONTEXT_MISMATCH);
        ndr_push_done(&in);
        ndr_push_done(&r.o);
        rrp_stubs_free(s);
}

/* RRP_MAX_KEYS open keys at most; closing one makes room. */
static void key_cap(void **state)
{
        struct rrp_stubs *s;
        uint8_t h[NDR_HANDLE_SIZE];

        (void) state;
        assert_int_equal(rrp_stubs_new(&handlers, &s), 0);
        for (int i = 0; i < RRP_MAX_KEYS; i++)
                assert_int_equal(open_hive(s, OPEN_HKPD, h), 0);
        assert_int_equal(open_hive(s, OPEN_HKPD, h), 1020);
        rrp_stubs_free(s);
}

/* Every prefix of a good request, and every field that breaks the IDL, is a fault. */
static void hostile_requests(void **state)
{
        struct rrp_stubs *s;
        uint8_t h[NDR_HANDLE_SIZE];
        struct ndr_push in;
        struct reply r = { 0 };
        const struct qv q = { "Counter 009", true, true, true, true, 16 };

        (void) state;
        assert_int_equal(rrp_stubs_new(&handlers, &s), 0);
        assert_int_equal(open_hive(s, OPEN_HKPD, h), 0);
        ndr_push_init(&in);
        push_query(&in, h, &q);
        int before = queries;
        for (size_t n = 0; n < in.size; n++) {
                ndr_push_done(&r.o);
                ndr_push_init(&r.o);
                assert_int_equal(rrp_stubs_call(s, QUERY, in.data, n, &r.o, &r.fault), 0);
                assert_true(r.fault != 0);
        }
        assert_int_equal(queries, before);

        /* Byte offsets into push_query's layout: 20 handle, then Length, MaximumLength. */
        static const struct { size_t at; uint32_t v; int width; } breaks[] = {
                { 20, 23, 2 },          /* an odd Length */
                { 20, 26, 2 },          /* Length > MaximumLength */
                { 28, 11, 4 },          /* max_count is not MaximumLength / 2 */
                { 32, 1, 4 },           /* a nonzero offset */
                { 36, 11, 4 },          /* actual_count is not Length / 2 */
        };
        for (size_t k = 0; k < sizeof(breaks) / sizeof(breaks[0]); k++) {
                uint8_t *b = malloc(in.size);
                assert_non_null(b);
                memcpy(b, in.data, in.size);
                if (breaks[k].width == 2)
                        ndr_put_le16(b + breaks[k].at, (uint16_t) breaks[k].v);
                else
                        ndr_put_le32(b + breaks[k].at, breaks[k].v);
                assert_int_equal(rrp_stubs_call(s, QUERY, b, in.size, &r.o, &r.fault), 0);
                assert_int_equal(r.fault, PV2_NCA_S_FAULT_NDR);
                free(b);
        }
        /* A trailing byte, and lpData's size_is disagreeing with lpcbData. */
        ndr_push_u8(&in, 0);
        assert_int_equal(rrp_stubs_call(s, QUERY, in.data, in.size, &r.o, &r.fault), 0);
        assert_int_equal(r.fault, PV2_NCA_S_FAULT_NDR);
        ndr_push_done(&in);
        ndr_push_init(&in);
        push_query(&in, h, &q);
        ndr_put_le32(in.data + in.size - 12, 17);       /* *lpcbData */
        assert_int_equal(rrp_stubs_call(s, QUERY, in.data, in.size, &r.o, &r.fault), 0);
        assert_int_equal(r.fault, PV2_NCA_S_FAULT_INVALID_BOUND);
        assert_int_equal(queries, before);
        ndr_push_done(&in);
        ndr_push_done(&r.o);
        rrp_stubs_free(s);
}

/* ---- bound beside PerflibV2 ---- */

#define NDR_UUID 0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, \
                 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60

/* A bind of context 0 to MS-RRP v1.0 over NDR. */
static const uint8_t rrp_bind[72] = {
        5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 1, 0, 0, 0,
        0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0,
        1, 0, 0, 0,
        0, 0, 1, 0,
        0x01, 0xd0, 0x8c, 0x33, 0x44, 0x22, 0xf1, 0x31, 0xaa, 0xaa, 0x90, 0x00, 0x38, 0x00,
        0x10, 0x03, 1, 0, 0, 0, NDR_UUID, 2, 0, 0, 0,
};

/* The p_result_t of the bind_ack's one context: result, reason. */
static void bind_result(const struct rrp_handlers *h, uint16_t *ret_result, uint16_t *ret_reason,
                        struct pv2_server_conn **ret_c)
{
        struct pv2_server_conn *c;
        uint8_t *out = NULL;
        size_t out_len = 0;

        assert_int_equal(pv2_server_conn_new(&fake_handlers, NULL, &c), 0);
        if (h)
                assert_int_equal(pv2_server_conn_serve_rrp(c, h), 0);
        assert_int_equal(pv2_server_conn_feed(c, rrp_bind, sizeof(rrp_bind), &out, &out_len), 0);
        assert_true(out_len >= 56);
        assert_int_equal(out[2], 12);           /* bind_ack */
        /* 24-byte header + 4 (secondary address "" and pad) + 4 (n_results, pads). */
        *ret_result = ndr_le16(out + 32);
        *ret_reason = ndr_le16(out + 34);
        free(out);
        *ret_c = c;
}

static void bind_only_where_served(void **state)
{
        struct pv2_server_conn *c;
        uint16_t result, reason;
        uint8_t *out = NULL;
        size_t out_len = 0;

        (void) state;
        bind_result(NULL, &result, &reason, &c);
        assert_int_equal(result, DCERPC_RESULT_PROVIDER_REJECTION);
        assert_int_equal(reason, DCERPC_REASON_ABSTRACT_SYNTAX);
        pv2_server_conn_free(c);

        bind_result(&handlers, &result, &reason, &c);
        assert_int_equal(result, DCERPC_RESULT_ACCEPTANCE);
        /* OpenPerformanceData through the connection: a response with a handle, status 0. */
        static const uint8_t req[24 + 8] = {
                5, 0, 0, 3, 0x10, 0, 0, 0, 32, 0, 0, 0, 2, 0, 0, 0,
                8, 0, 0, 0, 0, 0, 3, 0,
                0, 0, 0, 0, 0, 0, 0, 2,         /* no server name, MAXIMUM_ALLOWED */
        };
        assert_int_equal(pv2_server_conn_feed(c, req, sizeof(req), &out, &out_len), 0);
        assert_int_equal(out_len, 24 + 24);
        assert_int_equal(out[2], 2);            /* response */
        assert_int_equal(ndr_le32(out + 24 + 20), 0);
        assert_int_equal(ndr_le32(out + 24), 0);
        free(out);
        pv2_server_conn_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(query_more_data_then_value),
                cmocka_unit_test(hives_keys_version),
                cmocka_unit_test(key_cap),
                cmocka_unit_test(hostile_requests),
                cmocka_unit_test(bind_only_where_served),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
