/* SPDX-License-Identifier: MIT */
/*
 * The instance block as docs/instance-block.md describes it, byte for byte:
 * what PerfCreateInstance returns to code that reads the block directly.
 * Each test builds the block the page uses as its example and compares it
 * with the bytes the page lists, so the page and the library cannot drift
 * apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflib.h"
#include "testutil.h"

static GUID prov = { 0x51a1e101, 0x1111, 0x2222, { 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa } };
static GUID multi = { 0x51a1e102, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static GUID single = { 0x51a1e103, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };

/* The provider of the page's example: counters 1, 2, 3 of 4, 4 and 8 bytes. */
static HANDLE start_example(const GUID *set, ULONG instance_type)
{
        static const ULONG sizes[] = { 4, 4, 8 };
        HANDLE h = NULL;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, set, instance_type, 3, sizes, &size);

        assert_int_equal(PerfStartProvider(&prov, NULL, &h), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        free(t);
        return h;
}

/* The page's example: instance "11", id 1, counters set to 0x11, 0x22, 0x33. */
static void example_block(void **state)
{
        static const BYTE data[24] = { 0x11, 0, 0, 0, 0, 0, 0, 0, 0x22, 0, 0, 0, 0, 0, 0, 0,
                                       0x33, 0, 0, 0, 0, 0, 0, 0 };
        static const BYTE name[16] = { '1', 0, 0, 0, '1', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        HANDLE h = start_example(&multi, PERF_COUNTERSET_MULTI_INSTANCES);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &multi, L"11", 1);
        const BYTE *b = (const BYTE *) i;

        (void) state;
        assert_non_null(i);
        assert_int_equal((uintptr_t) i % 8, 0);
        assert_int_equal(PerfSetULongCounterValue(h, i, 1, 0x11), ERROR_SUCCESS);
        assert_int_equal(PerfSetULongCounterValue(h, i, 2, 0x22), ERROR_SUCCESS);
        assert_int_equal(PerfSetULongLongCounterValue(h, i, 3, 0x33), ERROR_SUCCESS);

        /* 0-31: the header, Windows' fields in Windows' order. */
        assert_memory_equal(b, &multi, 16);
        assert_int_equal(du_le32(b + 16), 72);                     /* dwSize */
        assert_int_equal(du_le32(b + 20), 1);                      /* InstanceId */
        assert_int_equal(du_le32(b + 24), 56);                     /* InstanceNameOffset */
        assert_int_equal(du_le32(b + 28), 12);                     /* InstanceNameSize: 3 wchar_t */
        /* 32-55: the counter data, Windows' 8-byte slots: 1 at 0, 2 at 8, 3 at 16. */
        assert_memory_equal(b + 32, data, sizeof(data));
        /* 56-71: L"11" in UTF-32 with its NUL, then zero padding to 8. */
        assert_memory_equal(b + 56, name, sizeof(name));
        assert_true(wcscmp((const wchar_t *) (b + i->InstanceNameOffset), L"11") == 0);
        /* The rule the page gives: dwSize = round8(InstanceNameOffset + InstanceNameSize). */
        assert_int_equal(i->dwSize, (i->InstanceNameOffset + i->InstanceNameSize + 7) / 8 * 8);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* A name whose length fills the 8-byte unit leaves no padding; one that does not, some. */
static void name_sizes_and_padding(void **state)
{
        static const struct {
                const wchar_t *name;
                ULONG name_size, dw_size;
        } cases[] = {
                { L"", 4, 64 },                 /* 56 + 4, rounded up */
                { L"a", 8, 64 },
                { L"ab", 12, 72 },
                { L"abc", 16, 72 },
                { L"\U0001F600", 8, 64 },       /* one wchar_t, two UTF-16 units on the wire */
        };
        HANDLE h = start_example(&multi, PERF_COUNTERSET_MULTI_INSTANCES);

        (void) state;
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &multi, cases[k].name,
                                                                 (ULONG) k);
                const BYTE *b = (const BYTE *) i;

                assert_non_null(i);
                assert_int_equal(i->InstanceNameOffset, 56);
                assert_int_equal(i->InstanceNameSize, cases[k].name_size);
                assert_int_equal(i->dwSize, cases[k].dw_size);
                for (ULONG off = 56 + cases[k].name_size - 4; off < i->dwSize; off++)
                        assert_int_equal(b[off], 0);
        }
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* A single-instance set's one instance is the same block. */
static void single_instance_block(void **state)
{
        HANDLE h = start_example(&single, PERF_COUNTERSET_SINGLE_INSTANCE);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &single, L"", 0);

        (void) state;
        assert_non_null(i);
        assert_memory_equal(&i->CounterSetGuid, &single, sizeof(GUID));
        assert_int_equal(i->InstanceNameOffset, 56);
        assert_int_equal(i->InstanceNameSize, sizeof(wchar_t));
        assert_int_equal(i->dwSize, 64);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(example_block),
                TU_TEST(name_sizes_and_padding),
                TU_TEST(single_instance_block),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
