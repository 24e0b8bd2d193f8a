/* SPDX-License-Identifier: MIT */
/*
 * Provider code written for Windows runs unchanged (issue 19, points 1-5
 * and 7): the template shapes that real providers and Wine's conformance
 * test of this API hand PerfSetCounterSetInfo (another provider's GUID,
 * by-reference counters of any Size, Offset 0xdeadbeef, overlapping
 * offsets), the last error left alone by successful calls, the request code
 * under Windows' name in a ControlCallback, and the provider-type constants.
 * Every accepted layout is read back through the segment reader, so a
 * fallback layout is shown to publish the right values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testutil.h"

static GUID prov = { 0x19c0ffee, 0x1, 0x19, { 1, 9, 1, 9, 1, 9, 1, 9 } };
static GUID other = { 0x19c0ffee, 0x2, 0x19, { 1, 9, 1, 9, 1, 9, 1, 9 } };
static GUID set_a = { 0x19c0ffee, 0x3, 0x19, { 1, 9, 1, 9, 1, 9, 1, 9 } };
static GUID set_b = { 0x19c0ffee, 0x4, 0x19, { 1, 9, 1, 9, 1, 9, 1, 9 } };

/* A template as providers declare one: the counterset, then its counters. */
struct tmpl {
        PERF_COUNTERSET_INFO set;
        PERF_COUNTER_INFO ctr[4];
};

static struct tmpl tmpl_of(const GUID *cset, const GUID *provider, ULONG n)
{
        struct tmpl t = { .set = { .CounterSetGuid = *cset, .ProviderGuid = *provider,
                                   .NumCounters = n,
                                   .InstanceType = PERF_COUNTERSET_MULTI_INSTANCES } };

        for (ULONG i = 0; i < n; i++)
                t.ctr[i] = (PERF_COUNTER_INFO) { .CounterId = i + 1, .Type = PERF_COUNTER_RAWCOUNT,
                                                 .Size = sizeof(ULONG),
                                                 .DetailLevel = PERF_DETAIL_NOVICE };
        return t;
}

static HANDLE start(void)
{
        HANDLE h = NULL;

        assert_int_equal(PerfStartProvider(&prov, NULL, &h), ERROR_SUCCESS);
        return h;
}

/* The one instance of the provider's counterset `cset`, read with a collection. */
static struct pl_snapshot *read_back(struct pl_reader *r, const GUID *cset,
                                     const struct pl_counterset **ret_c)
{
        struct pl_snapshot *s = NULL;

        assert_int_equal(pl_reader_find_counterset(r, cset, ret_c), 0);
        assert_int_equal(pl_reader_snapshot(r, (*ret_c)->index, PL_SNAPSHOT_COLLECT, &s), 0);
        assert_int_equal(s->n_instances, 1);
        assert_false(s->refs_stale);
        return s;
}

/* Wine's test: a template whose ProviderGuid is not the provider's is accepted. */
static void foreign_provider_guid(void **state)
{
        HANDLE h = start();
        struct tmpl t = tmpl_of(&set_a, &other, 1);
        struct pl_reader *r = NULL;
        const struct pl_counterset *c;

        (void) state;
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_ALREADY_EXISTS);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_a, L"n", 7);
        assert_non_null(i);
        assert_int_equal(PerfSetULongCounterValue(h, i, 1, 19), ERROR_SUCCESS);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        struct pl_snapshot *s = read_back(r, &set_a, &c);
        assert_int_equal(s->instances[0].instance_id, 7);
        assert_int_equal(s->instances[0].values[0], 19);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * By-reference counters with the Sizes real templates pass: ctrpp -legacy
 * sizeof(LPVOID), Wine sizeof(PERF_COUNTER_INFO) with Offset 0xdeadbeef,
 * Service Fabric sizeof(LONGLONG) for a 32-bit raw count.  The value's width
 * is the type's: a 32-bit type reads the low half of a 64-bit variable.
 */
static ULONG var_ptr;
static ULONGLONG var_info, var_ll, var_large;

static void by_reference_sizes(void **state)
{
        HANDLE h = start();
        struct tmpl t = tmpl_of(&set_a, &prov, 4);
        struct pl_reader *r = NULL;
        const struct pl_counterset *c;

        (void) state;
        t.ctr[0].Size = sizeof(LPVOID);
        t.ctr[1].Type = PERF_COUNTER_COUNTER;
        t.ctr[1].Size = sizeof(PERF_COUNTER_INFO);
        t.ctr[1].Offset = 0xdeadbeef;
        t.ctr[2].Size = sizeof(LONGLONG);
        t.ctr[3].Type = PERF_COUNTER_BULK_COUNT;
        t.ctr[3].Size = sizeof(PERF_COUNTER_INFO);
        for (int k = 0; k < 4; k++)
                t.ctr[k].Attrib = PERF_ATTRIB_BY_REFERENCE;
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_a, L"refs", 0);
        assert_non_null(i);
        assert_int_equal(PerfSetCounterRefValue(h, i, 1, &var_ptr), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterRefValue(h, i, 2, &var_info), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterRefValue(h, i, 3, &var_ll), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterRefValue(h, i, 4, &var_large), ERROR_SUCCESS);
        var_ptr = 11;
        var_info = 0x700000022ULL;
        var_ll = 33;
        var_large = 0x500000044ULL;

        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        struct pl_snapshot *s = read_back(r, &set_a, &c);
        const uint32_t widths[] = { 4, 4, 4, 8 };
        for (int k = 0; k < 4; k++)
                assert_int_equal(c->counters[k].size, widths[k]);
        assert_int_equal(s->instances[0].values[0], 11);
        assert_int_equal(s->instances[0].values[1], 0x22);
        assert_int_equal(s->instances[0].values[2], 33);
        assert_true(s->instances[0].values[3] == 0x500000044ULL);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * A plain counter whose Size is larger than its type's width keeps that
 * room in the block; its value is still the type's width, so only the
 * ULong calls fit a 32-bit type, and a Size smaller than the width fails.
 */
static void plain_counter_larger_size(void **state)
{
        HANDLE h = start();
        struct tmpl t = tmpl_of(&set_a, &prov, 2);
        struct pl_reader *r = NULL;
        const struct pl_counterset *c;

        (void) state;
        t.ctr[0].Size = sizeof(LONGLONG);
        t.ctr[1].Type = PERF_COUNTER_BULK_COUNT;
        t.ctr[1].Size = sizeof(ULONG);
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_INVALID_PARAMETER);
        t.ctr[1].Size = sizeof(ULONGLONG);
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_a, L"wide", 0);
        assert_non_null(i);
        assert_int_equal(PerfSetULongLongCounterValue(h, i, 1, 5), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetULongCounterValue(h, i, 1, 0xfffffffe), ERROR_SUCCESS);
        assert_int_equal(PerfIncrementULongCounterValue(h, i, 1, 1), ERROR_SUCCESS);
        assert_int_equal(PerfSetULongLongCounterValue(h, i, 2, 1ULL << 40), ERROR_SUCCESS);

        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        struct pl_snapshot *s = read_back(r, &set_a, &c);
        assert_int_equal(c->counters[0].size, 4);
        assert_int_equal(c->counters[0].offset, 0);
        assert_int_equal(c->counters[1].offset, 8);     /* after the 8-byte room */
        assert_int_equal(s->instances[0].values[0], 0xffffffff);
        assert_true(s->instances[0].values[1] == 1ULL << 40);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * Offsets perflib cannot use get its own layout, the one an all-zero
 * template gets: each case sets every counter and reads back exactly what
 * was set, at the offsets the reader was told.
 */
static void unusable_offsets(void **state)
{
        static const ULONG cases[][3] = {
                { 0xdeadbeef, 0xdeadbeef, 0xdeadbeef },         /* Wine's */
                { 0, 0, 4 },                                    /* two at 0 */
                { 16, 8, 12 },                                  /* 12..16 inside 8..16 */
                { 0, 8, 0x40000000 },                           /* past any instance */
        };

        (void) state;
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                HANDLE h = start();
                struct tmpl t = tmpl_of(&set_b, &prov, 3);
                struct pl_reader *r = NULL;
                const struct pl_counterset *c;

                t.ctr[1].Type = PERF_COUNTER_BULK_COUNT;
                t.ctr[1].Size = sizeof(ULONGLONG);
                for (int n = 0; n < 3; n++)
                        t.ctr[n].Offset = cases[k][n];
                assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
                PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_b, L"odd", 0);
                assert_non_null(i);
                assert_int_equal(PerfSetULongCounterValue(h, i, 1, 0x11111111), ERROR_SUCCESS);
                assert_int_equal(PerfSetULongLongCounterValue(h, i, 2, 0x2222222222222222ULL),
                                 ERROR_SUCCESS);
                assert_int_equal(PerfSetULongCounterValue(h, i, 3, 0x33333333), ERROR_SUCCESS);

                assert_int_equal(tu_open_only_provider(1.0, &r), 0);
                struct pl_snapshot *s = read_back(r, &set_b, &c);
                assert_int_equal(c->counters[0].offset, 0);
                assert_int_equal(c->counters[1].offset, 8);
                assert_int_equal(c->counters[2].offset, 16);
                assert_int_equal(c->data_size, 24);
                assert_int_equal(s->instances[0].values[0], 0x11111111);
                assert_true(s->instances[0].values[1] == 0x2222222222222222ULL);
                assert_int_equal(s->instances[0].values[2], 0x33333333);
                /* The values sit where the reader was told: the provider may write there. */
                const BYTE *data = (const BYTE *) (i + 1);
                assert_int_equal(*(const ULONG *) (data + c->counters[2].offset), 0x33333333);
                pl_snapshot_free(s);
                pl_reader_close(r);
                assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
        }
}

/* The SDK 6.0 sample's offsets (0 and 8 for two DWORDs) are usable, so they stand. */
static void usable_offsets_stand(void **state)
{
        HANDLE h = start();
        struct tmpl t = tmpl_of(&set_a, &prov, 2);
        struct pl_reader *r = NULL;
        const struct pl_counterset *c;

        (void) state;
        t.ctr[1].Offset = 8;
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_a, L"sdk", 0);
        assert_non_null(i);
        *(ULONG *) ((BYTE *) (i + 1) + 8) = 88;
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        struct pl_snapshot *s = read_back(r, &set_a, &c);
        assert_int_equal(c->counters[1].offset, 8);
        assert_int_equal(s->instances[0].values[1], 88);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * Windows gives every number an 8-byte slot in template order (Wine's test,
 * run on Windows, finds the name at 32 + 8 x NumCounters): code that writes
 * 4-byte values at Instance + 1 + 8k itself finds them read back here too.
 */
static void windows_slots(void **state)
{
        HANDLE h = start();
        struct tmpl t = tmpl_of(&set_a, &prov, 3);
        struct pl_reader *r = NULL;
        const struct pl_counterset *c;

        (void) state;
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_a, L"slots", 0);
        assert_non_null(i);
        assert_int_equal(i->InstanceNameOffset, sizeof(*i) + 3 * 8);
        for (ULONG k = 0; k < 3; k++)
                *(ULONG *) ((BYTE *) (i + 1) + 8 * k) = 0x100 + k;
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        struct pl_snapshot *s = read_back(r, &set_a, &c);
        for (ULONG k = 0; k < 3; k++)
                assert_int_equal(s->instances[0].values[k], 0x100 + k);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* Text counters of odd Sizes are laid out too, between aligned numbers. */
static void odd_text_sizes(void **state)
{
        HANDLE h = start();
        struct tmpl t = tmpl_of(&set_a, &prov, 4);
        struct pl_reader *r = NULL;
        const struct pl_counterset *c;

        (void) state;
        t.ctr[1].Type = t.ctr[2].Type = PERF_SIZE_VARIABLE_LEN | PERF_TYPE_TEXT;
        t.ctr[1].Size = 3;
        t.ctr[2].Size = 6;
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_a, L"text", 0);
        assert_non_null(i);
        assert_int_equal(PerfSetULongCounterValue(h, i, 4, 44), ERROR_SUCCESS);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        struct pl_snapshot *s = read_back(r, &set_a, &c);
        /* Numbers take Windows' 8-byte slots, text its own room, aligned to it. */
        assert_int_equal(c->counters[1].offset, 8);
        assert_int_equal(c->counters[2].offset, 12);
        assert_int_equal(c->counters[3].offset, 24);
        assert_int_equal(s->instances[0].values[3], 44);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* Successful calls leave the thread's last error as it was (Wine's test checks it). */
static void last_error_left_alone(void **state)
{
        HANDLE h = NULL;
        struct tmpl t = tmpl_of(&set_a, &prov, 1);
        ULONG var = 1;

        (void) state;
        SetLastError(1234);
        assert_int_equal(PerfStartProvider(&prov, NULL, &h), ERROR_SUCCESS);
        t.ctr[0].Attrib = PERF_ATTRIB_BY_REFERENCE;
        assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &set_a, L"e", 1);
        assert_non_null(i);
        assert_int_equal(GetLastError(), 1234);
        assert_ptr_equal(PerfQueryInstance(h, &set_a, L"e", 1), i);
        assert_int_equal(GetLastError(), 1234);
        PPERF_COUNTERSET_INSTANCE u = PerfCreateInstanceUtf8(h, &set_a, "\xc3\xa9", 2);
        assert_non_null(u);
        assert_ptr_equal(PerfQueryInstanceUtf8(h, &set_a, "\xc3\xa9", 2), u);
        assert_int_equal(PerfSetCounterRefValue(h, i, 1, &var), ERROR_SUCCESS);
        assert_int_equal(PerfDeleteInstance(h, u), ERROR_SUCCESS);
        assert_int_equal(GetLastError(), 1234);

        /* A failing query still says why, and the next success leaves that alone. */
        assert_null(PerfQueryInstance(h, &set_a, L"e", 2));
        assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
        assert_non_null(PerfQueryInstance(h, &set_a, L"e", 1));
        assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
        SetLastError(1234);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
        assert_int_equal(GetLastError(), 1234);
}

/* A ControlCallback in the shape ctrpp.exe generates, switching on Windows' names. */
static ULONG enum_seen, start_seen;

static ULONG WINAPI control_callback(ULONG RequestCode, PVOID Buffer, ULONG BufferSize)
{
        (void) Buffer, (void) BufferSize;
        switch (RequestCode) {
        case PERF_ENUM_INSTANCES:
                enum_seen++;
                break;
        case PERF_COLLECT_START:
                start_seen++;
                break;
        default:
                return ERROR_NOT_SUPPORTED;
        }
        return ERROR_SUCCESS;
}

static void enum_instances_name(void **state)
{
        HANDLE h = NULL;
        struct pl_reader *r = NULL;
        uint32_t status = 1;

        (void) state;
        assert_int_equal(PERF_ENUM_INSTANCES, PERF_ENUMERATE_INSTANCES);
        assert_int_equal(PerfStartProvider(&prov, control_callback, &h), ERROR_SUCCESS);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_notify(r, PERF_ENUMERATE_INSTANCES, NULL, 0, &status), 0);
        assert_int_equal(status, ERROR_SUCCESS);
        assert_int_equal(enum_seen, 1);
        assert_int_equal(pl_reader_notify(r, PERF_COLLECT_START, NULL, 0, &status), 0);
        assert_int_equal(start_seen, 1);
        assert_int_equal(enum_seen, 1);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* Windows' perflib.h values: provider code compares against them. */
static void provider_type_constants(void **state)
{
        (void) state;
        assert_int_equal(PERF_PROVIDER_USER_MODE, 0);
        assert_int_equal(PERF_PROVIDER_KERNEL_MODE, 1);
        assert_int_equal(PERF_PROVIDER_DRIVER, 2);
        assert_int_equal(PERF_ENUM_INSTANCES, 3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(foreign_provider_guid),
                TU_TEST(by_reference_sizes),
                TU_TEST(plain_counter_larger_size),
                TU_TEST(unusable_offsets),
                TU_TEST(usable_offsets_stand),
                TU_TEST(windows_slots),
                TU_TEST(odd_text_sizes),
                TU_TEST(last_error_left_alone),
                TU_TEST(enum_instances_name),
                cmocka_unit_test(provider_type_constants),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
