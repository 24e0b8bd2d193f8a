/* SPDX-License-Identifier: MIT */
/*
 * Many threads against one provider: every increment counted, instances
 * created and deleted concurrently without losing or mixing any, and a
 * reader running alongside never seeing an instance half made.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <cmocka.h>

#include "testutil.h"

#define N_THREADS       8
#define N_INCREMENTS    100000
#define N_PER_THREAD    2000

static GUID prov = { 0x7d3ead01, 0x1, 0x2, { 3, 1, 4, 1, 5, 9, 2, 6 } };
static GUID cset = { 0x7d3ead02, 0x1, 0x2, { 3, 1, 4, 1, 5, 9, 2, 6 } };

static HANDLE h;
static PPERF_COUNTERSET_INSTANCE shared;
static atomic_bool stop_reader;

static int setup(void **state)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES,
                                              2, (const ULONG[]) { 4, 8 }, &size);

        (void) state;
        tu_runtime_setup();
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                return -1;
        free(t);
        shared = PerfCreateInstance(h, &cset, L"shared", 0);
        return shared ? 0 : -1;
}

static int teardown(void **state)
{
        (void) state;
        PerfStopProvider(h);
        tu_runtime_teardown();
        return 0;
}

static void *incrementer(void *arg)
{
        (void) arg;
        for (int k = 0; k < N_INCREMENTS; k++) {
                PerfIncrementULongCounterValue(h, shared, 1, 1);
                PerfIncrementULongLongCounterValue(h, shared, 2, 3);
                if (k % 2)
                        PerfDecrementULongLongCounterValue(h, shared, 2, 1);
        }
        return NULL;
}

static void concurrent_increments_all_counted(void **state)
{
        pthread_t t[N_THREADS];
        struct { ULONG a; ULONGLONG b; } *d = (void *) (shared + 1);

        (void) state;
        for (int k = 0; k < N_THREADS; k++)
                assert_int_equal(pthread_create(&t[k], NULL, incrementer, NULL), 0);
        for (int k = 0; k < N_THREADS; k++)
                pthread_join(t[k], NULL);
        assert_int_equal(d->a, N_THREADS * N_INCREMENTS);
        assert_true(d->b == (ULONGLONG) N_THREADS * (3 * N_INCREMENTS - N_INCREMENTS / 2));
}

/* Instance names encode their id, and counter 2 holds id * 7 once set. */
static void name_for(wchar_t *buf, size_t n, ULONG id)
{
        swprintf(buf, n, L"t%u", id);
}

static void *churner(void *arg)
{
        ULONG base = (ULONG) (uintptr_t) arg * N_PER_THREAD;
        PPERF_COUNTERSET_INSTANCE mine[N_PER_THREAD];
        wchar_t name[32];

        for (ULONG k = 0; k < N_PER_THREAD; k++) {
                name_for(name, 32, base + k);
                mine[k] = PerfCreateInstance(h, &cset, name, base + k);
                if (!mine[k])
                        return (void *) 1;
                PerfSetULongLongCounterValue(h, mine[k], 2, (ULONGLONG) (base + k) * 7);
        }
        /* Delete the odd ones. */
        for (ULONG k = 1; k < N_PER_THREAD; k += 2)
                if (PerfDeleteInstance(h, mine[k]) != ERROR_SUCCESS)
                        return (void *) 2;
        return NULL;
}

static void *snapshotter(void *arg)
{
        struct pl_reader *r = NULL;
        uintptr_t bad = 0;
        wchar_t name[32];

        (void) arg;
        if (tu_open_only_provider(1.0, &r) < 0)
                return (void *) 100;
        while (!atomic_load(&stop_reader) && !bad) {
                struct pl_snapshot *s = NULL;
                if (pl_reader_snapshot(r, 0, 0, &s) < 0) {
                        bad = 101;
                        break;
                }
                for (uint32_t i = 0; i < s->n_instances; i++) {
                        const struct pl_instance *in = &s->instances[i];
                        if (wcscmp(in->name, L"shared") == 0)
                                continue;
                        name_for(name, 32, in->instance_id);
                        if (wcscmp(in->name, name) != 0)
                                bad = 102;      /* a name from another instance */
                        else if (in->values[1] != 0 && in->values[1] != in->instance_id * 7ULL)
                                bad = 103;      /* a value from another instance */
                }
                pl_snapshot_free(s);
        }
        pl_reader_close(r);
        return (void *) bad;
}

static void concurrent_create_delete(void **state)
{
        pthread_t t[N_THREADS], reader;
        void *ret;
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;
        wchar_t name[32];

        (void) state;
        atomic_store(&stop_reader, false);
        assert_int_equal(pthread_create(&reader, NULL, snapshotter, NULL), 0);
        for (uintptr_t k = 0; k < N_THREADS; k++)
                assert_int_equal(pthread_create(&t[k], NULL, churner, (void *) k), 0);
        for (int k = 0; k < N_THREADS; k++) {
                pthread_join(t[k], &ret);
                assert_null(ret);
        }
        atomic_store(&stop_reader, true);
        pthread_join(reader, &ret);
        assert_null(ret);

        /* Exactly the even ones are left, each findable and intact. */
        for (ULONG id = 0; id < N_THREADS * N_PER_THREAD; id++) {
                name_for(name, 32, id);
                PPERF_COUNTERSET_INSTANCE i = PerfQueryInstance(h, &cset, name, id);
                if (id % 2)
                        assert_null(i);
                else
                        assert_true(i && i->InstanceId == id);
        }
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_snapshot(r, 0, 0, &s), 0);
        assert_int_equal(s->n_instances, 1 + N_THREADS * N_PER_THREAD / 2);
        pl_snapshot_free(s);
        pl_reader_close(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(concurrent_increments_all_counted, setup, teardown),
                cmocka_unit_test_setup_teardown(concurrent_create_delete, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
