/* SPDX-License-Identifier: MIT */
/*
 * 100,000 instances in one provider, created and deleted at run time; and
 * freed space reused, also across instance sizes, proved in a segment too
 * small to hold two rounds without reuse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <cmocka.h>

#include "testutil.h"

#define N_INSTANCES 100000u

static GUID prov = { 0x5ca1e001, 0x1, 0x2, { 0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0, 1 } };
static GUID cset = { 0x5ca1e002, 0x1, 0x2, { 0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0, 1 } };
static PPERF_COUNTERSET_INSTANCE *inst;

static int setup(void **state)
{
        (void) state;
        tu_runtime_setup();
        inst = calloc(N_INSTANCES, sizeof(*inst));
        return inst ? 0 : -1;
}

static int teardown(void **state)
{
        (void) state;
        free(inst);
        unsetenv("PERFLIB_SEGMENT_SIZE");
        tu_runtime_teardown();
        return 0;
}

static HANDLE start(void)
{
        HANDLE h = NULL;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES,
                                              2, (const ULONG[]) { 4, 8 }, &size);

        assert_int_equal(PerfStartProvider(&prov, NULL, &h), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        free(t);
        return h;
}

/* pad characters of filler make the name, and so the block, longer. */
static void name_for(wchar_t *buf, ULONG id, int pad)
{
        swprintf(buf, 128, L"instance-%u-%.*ls", id, pad,
                 L"................................................................");
}

static ULONG create_all(HANDLE h, int pad)
{
        wchar_t name[128];
        ULONG n = 0;

        for (ULONG id = 0; id < N_INSTANCES; id++) {
                name_for(name, id, pad);
                inst[id] = PerfCreateInstance(h, &cset, name, id);
                if (!inst[id])
                        break;
                PerfSetULongLongCounterValue(h, inst[id], 2, id * 3ULL);
                n++;
        }
        return n;
}

static void delete_all(HANDLE h, ULONG n)
{
        for (ULONG id = 0; id < n; id++)
                assert_int_equal(PerfDeleteInstance(h, inst[id]), ERROR_SUCCESS);
}

static void hundred_thousand_instances(void **state)
{
        HANDLE h = start();
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;
        wchar_t name[128];
        uint8_t *seen = calloc(N_INSTANCES, 1);

        (void) state;
        assert_int_equal(create_all(h, 8), N_INSTANCES);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_snapshot(r, 0, 0, &s), 0);
        assert_int_equal(s->n_instances, N_INSTANCES);
        for (uint32_t i = 0; i < s->n_instances; i++) {
                const struct pl_instance *in = &s->instances[i];
                assert_true(in->instance_id < N_INSTANCES && !seen[in->instance_id]);
                seen[in->instance_id] = 1;
                assert_true(in->values[1] == in->instance_id * 3ULL);
                name_for(name, in->instance_id, 8);
                assert_true(wcscmp(in->name, name) == 0);
        }
        pl_snapshot_free(s);
        free(seen);

        name_for(name, 77777, 8);
        assert_ptr_equal(PerfQueryInstance(h, &cset, name, 77777), inst[77777]);
        delete_all(h, N_INSTANCES);
        assert_int_equal(pl_reader_snapshot(r, 0, 0, &s), 0);
        assert_int_equal(s->n_instances, 0);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * 32 MiB: one round of 100,000 instances with 40-character names (about
 * 224 bytes each, 22 MB) fits; a second would not, unless the first
 * round's space is reused.
 */
static void freed_space_is_reused(void **state)
{
        (void) state;
        setenv("PERFLIB_SEGMENT_SIZE", "32M", 1);
        HANDLE h = start();

        for (int round = 0; round < 5; round++) {
                assert_int_equal(create_all(h, 24), N_INSTANCES);
                delete_all(h, N_INSTANCES);
        }
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * Space freed by long names serves shorter ones once the heap is used up:
 * every freed block yields at least one shorter block (blocks are split,
 * never merged; see docs/segment-format.md), so at least as many shorter
 * instances fit as longer ones were freed.
 */
static void freed_space_is_reused_across_sizes(void **state)
{
        (void) state;
        setenv("PERFLIB_SEGMENT_SIZE", "32M", 1);
        HANDLE h = start();
        ULONG n_long, n;

        n_long = create_all(h, 64);             /* long names: fill the heap */
        assert_true(n_long > N_INSTANCES / 2 && n_long < N_INSTANCES);
        assert_int_equal(GetLastError(), ERROR_OUTOFMEMORY);
        delete_all(h, n_long);
        for (int pad = 40; pad >= 0; pad -= 20) {
                n = create_all(h, pad);
                assert_true(n >= n_long);
                delete_all(h, n);
        }
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void full_segment_reports_out_of_memory(void **state)
{
        (void) state;
        setenv("PERFLIB_SEGMENT_SIZE", "1M", 1);
        HANDLE h = start();
        ULONG n = create_all(h, 0);

        assert_true(n > 0 && n < N_INSTANCES);
        assert_int_equal(GetLastError(), ERROR_OUTOFMEMORY);
        /* Deleting one makes room for one. */
        assert_int_equal(PerfDeleteInstance(h, inst[0]), ERROR_SUCCESS);
        assert_non_null(PerfCreateInstance(h, &cset, L"again", 0));
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(hundred_thousand_instances, setup, teardown),
                cmocka_unit_test_setup_teardown(freed_space_is_reused, setup, teardown),
                cmocka_unit_test_setup_teardown(freed_space_is_reused_across_sizes, setup, teardown),
                cmocka_unit_test_setup_teardown(full_segment_reports_out_of_memory, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
