/* SPDX-License-Identifier: MIT */
/*
 * The NDR primitives: little-endian layout, alignment relative to the stub,
 * and every bound a hostile stub can break.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ndr.h"

static void pull_scalars(void **state)
{
        static const uint8_t b[] = { 0xaa, 0, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0x01 };
        struct ndr_pull p;

        (void)state;
        ndr_pull_init(&p, b, sizeof(b));
        assert_int_equal(ndr_pull_u8(&p), 0xaa);
        assert_int_equal(ndr_pull_u16(&p), 0x1234);     /* skips one pad byte */
        assert_int_equal(ndr_pull_u32(&p), 0x12345678);
        assert_int_equal(p.off, 8);
        assert_int_equal(p.err, 0);
        assert_int_equal(ndr_pull_u16(&p), 0);          /* one byte left */
        assert_int_equal(p.err, -EBADMSG);
        /* Sticky: even a byte that is there is not read now. */
        assert_int_equal(ndr_pull_u8(&p), 0);
}

static void pull_align_past_end(void **state)
{
        static const uint8_t b[] = { 1, 2, 3, 4, 5 };
        struct ndr_pull p;

        (void)state;
        ndr_pull_init(&p, b, sizeof(b));
        (void)ndr_pull_u8(&p);
        (void)ndr_pull_u16(&p);
        assert_int_equal(p.off, 4);
        assert_int_equal(p.err, 0);
        ndr_pull_align(&p, 8);
        assert_int_equal(p.err, -EBADMSG);
}

static void pull_guid_handle(void **state)
{
        static const uint8_t b[] = {
                0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
                0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60,
                0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
        };
        struct ndr_pull p;
        GUID g;
        uint8_t h[NDR_HANDLE_SIZE];

        (void)state;
        ndr_pull_init(&p, b, sizeof(b));
        ndr_pull_guid(&p, &g);
        assert_int_equal(g.Data1, 0x8a885d04);
        assert_int_equal(g.Data2, 0x1ceb);
        assert_int_equal(g.Data3, 0x11c9);
        assert_int_equal(g.Data4[7], 0x60);
        ndr_pull_handle(&p, h);
        assert_int_equal(p.err, 0);
        assert_memory_equal(h, b + 16, NDR_HANDLE_SIZE);
        ndr_pull_handle(&p, h);
        assert_int_equal(p.err, -EBADMSG);
}

static int pull_string(const uint8_t *b, size_t n, uint32_t *ret_units)
{
        struct ndr_pull p;
        const uint8_t *s = NULL;

        ndr_pull_init(&p, b, n);
        ndr_pull_wstring(&p, &s, ret_units);
        if (!p.err)
                assert_ptr_equal(s, b + 12);
        return p.err;
}

static void pull_strings(void **state)
{
        static const uint8_t ok[] = { 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'A', 0, 0, 0 };
        static const uint8_t empty[] = { 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 };
        static const uint8_t offset[] = { 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0 };
        static const uint8_t over[] = { 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'A', 0, 0, 0 };
        static const uint8_t zero[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        static const uint8_t unterminated[] = {
                2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'A', 0, 'B', 0,
        };
        static const uint8_t short_data[] = { 9, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 'A', 0 };
        static const uint8_t huge[] = {
                0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0,
        };
        uint32_t n = 0;

        (void)state;
        assert_int_equal(pull_string(ok, sizeof(ok), &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(pull_string(empty, sizeof(empty), &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(pull_string(offset, sizeof(offset), &n), -EBADMSG);
        assert_int_equal(pull_string(over, sizeof(over), &n), -EBADMSG);
        assert_int_equal(pull_string(zero, sizeof(zero), &n), -EBADMSG);
        assert_int_equal(pull_string(unterminated, sizeof(unterminated), &n), -EBADMSG);
        assert_int_equal(pull_string(short_data, sizeof(short_data), &n), -EBADMSG);
        assert_int_equal(pull_string(huge, sizeof(huge), &n), -EBADMSG);
}

static void pull_varying(void **state)
{
        static const uint8_t b[] = { 8, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0 };
        static const uint8_t off[] = { 8, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0 };
        static const uint8_t over[] = { 8, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0 };
        struct ndr_pull p;

        (void)state;
        ndr_pull_init(&p, b, sizeof(b));
        assert_int_equal(ndr_pull_varying_header(&p, 8), 4);
        assert_int_equal(p.err, 0);
        ndr_pull_init(&p, b, sizeof(b));
        (void)ndr_pull_varying_header(&p, 7);           /* max_count != size_is */
        assert_int_equal(p.err, -EBADMSG);
        ndr_pull_init(&p, off, sizeof(off));
        (void)ndr_pull_varying_header(&p, 8);
        assert_int_equal(p.err, -EBADMSG);
        ndr_pull_init(&p, over, sizeof(over));
        (void)ndr_pull_varying_header(&p, 8);
        assert_int_equal(p.err, -EBADMSG);
}

static void push_layout(void **state)
{
        static const uint8_t want[] = {
                0x01, 0, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12,
                2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'x', 0, 0, 0,
                0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
                0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60,
        };
        static const uint8_t units[] = { 'x', 0, 0, 0 };
        static const GUID g = { 0x8a885d04, 0x1ceb, 0x11c9,
                                { 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60 } };
        struct ndr_push p;

        (void)state;
        ndr_push_init(&p);
        ndr_push_presize(&p, 100);
        assert_int_equal(p.cap, 100);
        uint8_t *before = p.data;
        ndr_push_u8(&p, 1);
        ndr_push_u16(&p, 0x1234);
        ndr_push_u32(&p, 0x12345678);
        ndr_push_wstring(&p, units, 2);
        ndr_push_guid(&p, &g);
        assert_int_equal(p.err, 0);
        assert_int_equal(p.size, sizeof(want));
        assert_memory_equal(p.data, want, sizeof(want));
        assert_ptr_equal(p.data, before);       /* presized: never moved */
        ndr_push_presize(&p, 10);               /* never shrinks */
        assert_int_equal(p.cap, 100);
        /* An unterminated string is refused, and the error sticks. */
        ndr_push_wstring(&p, (const uint8_t *)"ab", 1);
        assert_int_equal(p.err, -EINVAL);
        ndr_push_u32(&p, 1);
        assert_int_equal(p.size, sizeof(want));
        ndr_push_done(&p);
        ndr_push_done(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(pull_scalars),
                cmocka_unit_test(pull_align_past_end),
                cmocka_unit_test(pull_guid_handle),
                cmocka_unit_test(pull_strings),
                cmocka_unit_test(pull_varying),
                cmocka_unit_test(push_layout),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
