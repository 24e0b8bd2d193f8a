/* SPDX-License-Identifier: MIT */
/*
 * Reference counters (PERF_ATTRIB_BY_REFERENCE): a reader asking for a
 * collection sees the current value of the provider's variable, in the same
 * process (direct dereference) and from another process (through the
 * provider's collect service); without a collection it sees the last one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "testutil.h"

static GUID prov = { 0x7ef5c001, 0x1, 0x2, { 2, 7, 1, 8, 2, 8, 1, 8 } };
static GUID cset = { 0x7ef5c002, 0x1, 0x2, { 2, 7, 1, 8, 2, 8, 1, 8 } };

/* Counters: 1 = ULONG by reference, 2 = ULONGLONG by reference, 3 = plain ULONG. */
static ULONG ref32;
static ULONGLONG ref64;

static HANDLE start_refs_provider(PPERF_COUNTERSET_INSTANCE *ret)
{
        HANDLE h;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES,
                                              3, (const ULONG[]) { 4, 8, 4 }, &size);
        PPERF_COUNTER_INFO c = (PPERF_COUNTER_INFO) (t + 1);

        c[0].Attrib = c[1].Attrib = PERF_ATTRIB_BY_REFERENCE;
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                return NULL;
        free(t);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &cset, L"r", 0);
        if (!i || PerfSetCounterRefValue(h, i, 1, &ref32) != ERROR_SUCCESS ||
            PerfSetCounterRefValue(h, i, 2, &ref64) != ERROR_SUCCESS ||
            PerfSetULongCounterValue(h, i, 3, 5) != ERROR_SUCCESS)
                return NULL;
        *ret = i;
        return h;
}

static void expect_values(struct pl_reader *r, unsigned flags, uint64_t v32, uint64_t v64)
{
        struct pl_snapshot *s = NULL;

        assert_int_equal(pl_reader_snapshot(r, 0, flags, &s), 0);
        assert_int_equal(s->n_instances, 1);
        assert_false(s->refs_stale);
        assert_int_equal(s->instances[0].values[0], v32);
        assert_true(s->instances[0].values[1] == v64);
        assert_int_equal(s->instances[0].values[2], 5);
        pl_snapshot_free(s);
}

static void in_process(void **state)
{
        PPERF_COUNTERSET_INSTANCE i;
        HANDLE h = start_refs_provider(&i);
        struct pl_reader *r = NULL;

        (void) state;
        assert_non_null(h);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        ref32 = 41;
        ref64 = 0x100000002ULL;
        expect_values(r, PL_SNAPSHOT_COLLECT, 41, 0x100000002ULL);
        ref32 = 42;
        expect_values(r, 0, 41, 0x100000002ULL);        /* no collection asked */
        expect_values(r, PL_SNAPSHOT_COLLECT, 42, 0x100000002ULL);

        /* A reference moved to another variable is followed from then on. */
        ULONG other = 1000;
        assert_int_equal(PerfSetCounterRefValue(h, i, 1, &other), ERROR_SUCCESS);
        expect_values(r, PL_SNAPSHOT_COLLECT, 1000, 0x100000002ULL);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* 'u' sets ref32 to 100 + the number of 'u's so far, ref64 to that << 32. */
static void refs_child(int cmd_fd, int ack_fd)
{
        PPERF_COUNTERSET_INSTANCE i;
        ULONG n = 0;

        ref32 = 0, ref64 = 0;   /* not what the parent left in them before fork */
        if (!start_refs_provider(&i))
                _exit(2);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd) == 'u') {
                n++;
                ref32 = 100 + n;
                ref64 = (ULONGLONG) (100 + n) << 32;
                tu_ready(ack_fd);
        }
        _exit(0);
}

static void out_of_process(void **state)
{
        struct tu_child c = { .cmd_fd = -1, .ack_fd = -1 };
        struct pl_reader *r = NULL;

        (void) state;
        assert_int_equal(tu_child_start(&c, refs_child), 0);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        expect_values(r, PL_SNAPSHOT_COLLECT, 0, 0);
        for (uint64_t n = 1; n <= 50; n++) {
                assert_int_equal(tu_command(&c, 'u'), 0);
                /* Until collected, the value of the previous collection. */
                uint64_t prev = n == 1 ? 0 : 100 + n - 1;
                expect_values(r, 0, prev, prev << 32);
                expect_values(r, PL_SNAPSHOT_COLLECT, 100 + n, (100 + n) << 32);
        }
        pl_reader_close(r);
        tu_child_stop(&c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(in_process),
                TU_TEST(out_of_process),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
