/* SPDX-License-Identifier: MIT */
/*
 * Snapshots shared between concurrent requests, and paid from the query
 * memory (server-glue/namespace/ns-snapshot.c), over a real provider in
 * this process: requests that arrive while a collection is under way
 * share the next one, and never get values read before they arrived; a
 * request holding a snapshot does not make a later one reuse it; a
 * snapshot the query memory cannot pay for is refused, and everything
 * paid is given back.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "ns-internal.h"
#include "testutil.h"

static GUID prov = { 0x5a4e0001, 0x15, 0x15, { 5, 4, 5, 4, 5, 4, 5, 4 } };
static GUID cset = { 0x5a4e0002, 0x15, 0x15, { 5, 4, 5, 4, 5, 4, 5, 4 } };

/* What the provider's callback saw, and the hold on PERF_COLLECT_END. */
static unsigned starts, ends;           /* atomic */
static bool hold_end;                   /* atomic: the next PERF_COLLECT_END waits for release */
static unsigned held;                   /* atomic: PERF_COLLECT_ENDs waiting now */
static sem_t release;

static ULONG callback(ULONG code, PVOID buffer, ULONG size)
{
        if (code == PERF_COLLECT_START)
                __atomic_add_fetch(&starts, 1, __ATOMIC_SEQ_CST);
        if (code != PERF_COLLECT_END)
                return ERROR_SUCCESS;
        __atomic_add_fetch(&ends, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&hold_end, __ATOMIC_SEQ_CST)) {
                __atomic_add_fetch(&held, 1, __ATOMIC_SEQ_CST);
                sem_wait(&release);
                __atomic_sub_fetch(&held, 1, __ATOMIC_SEQ_CST);
        }
        return ERROR_SUCCESS;
}

/* A provider in this process: n instances of one 8-byte counter, each valued 1. */
static HANDLE start_provider(unsigned n, PPERF_COUNTERSET_INSTANCE *ret_first)
{
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx), .ControlCallback = callback };
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 1,
                                              (const ULONG[]) { 8 }, &size);
        HANDLE h = NULL;

        assert_int_equal(PerfStartProviderEx(&prov, &ctx, &h), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        free(t);
        for (unsigned i = 0; i < n; i++) {
                char name[16];
                PPERF_COUNTERSET_INSTANCE in;

                snprintf(name, sizeof(name), "i%u", i);
                in = PerfCreateInstanceUtf8(h, &cset, name, i);
                assert_non_null(in);
                assert_int_equal(PerfSetULongLongCounterValue(h, in, 1, 1), ERROR_SUCCESS);
                if (i == 0)
                        *ret_first = in;
        }
        return h;
}

static struct ns *new_ns(bool threaded, const struct ns_counterset **ret_cs)
{
        struct ns *ns;

        assert_int_equal(ns_new(getenv("PERFLIB_RUNTIME_DIR"), &ns), 0);
        if (threaded)
                ns_set_threaded(ns);
        assert_int_equal(ns_refresh(ns), 0);
        *ret_cs = ns_find(ns, &cset);
        assert_non_null(*ret_cs);
        return ns;
}

/* One request on a thread of its own: a collection, as QueryCounterData makes. */
struct request {
        pthread_t t;
        struct ns *ns;
        const struct ns_counterset *cs;
        struct ns_snapshot *snap;       /* kept for the test, which frees it */
        int r;
        uint64_t value;                 /* of the first instance */
};

static void *request_run(void *arg)
{
        struct request *rq = arg;

        ns_lock(rq->ns);
        rq->r = ns_collect(rq->ns, rq->cs, NULL, 0, &rq->snap);
        if (rq->r == 0 && rq->snap->n_instances == 1)
                rq->value = rq->snap->instances[0].values[0];
        ns_unlock(rq->ns);
        return NULL;
}

static void request_start(struct request *rq, struct ns *ns, const struct ns_counterset *cs)
{
        *rq = (struct request){ .ns = ns, .cs = cs, .r = 1 };
        assert_int_equal(pthread_create(&rq->t, NULL, request_run, rq), 0);
}

/* Waits until n threads wait on a provider or on another's snapshot. */
static void wait_waiters(struct ns *ns, unsigned n)
{
        double end = tu_now() + 10;
        unsigned w;

        do {
                usleep(1000);
                ns_lock(ns);
                w = ns->waiters;
                ns_unlock(ns);
        } while (w < n && tu_now() < end);
        assert_int_equal(w, n);
}

/*
 * A reads the value 1 and is held in PERF_COLLECT_END; the value becomes
 * 2; B and C arrive while A's collection is under way.  They must not get
 * A's values, read before they arrived: they share the next collection,
 * one more PERF_COLLECT_START, not two.
 */
static void test_shared_never_older(void **state)
{
        PPERF_COUNTERSET_INSTANCE in;
        HANDLE h = start_provider(1, &in);
        const struct ns_counterset *cs;
        struct ns *ns = new_ns(true, &cs);
        struct request a, b, c;

        starts = ends = 0;
        __atomic_store_n(&hold_end, true, __ATOMIC_SEQ_CST);
        request_start(&a, ns, cs);
        while (__atomic_load_n(&held, __ATOMIC_SEQ_CST) == 0)
                usleep(1000);
        assert_int_equal(PerfSetULongLongCounterValue(h, in, 1, 2), ERROR_SUCCESS);
        request_start(&b, ns, cs);
        request_start(&c, ns, cs);
        /* A on its provider, B and C on A's collection. */
        wait_waiters(ns, 3);
        __atomic_store_n(&hold_end, false, __ATOMIC_SEQ_CST);
        sem_post(&release);
        pthread_join(a.t, NULL);
        pthread_join(b.t, NULL);
        pthread_join(c.t, NULL);

        assert_int_equal(a.r, 0);
        assert_int_equal(b.r, 0);
        assert_int_equal(c.r, 0);
        assert_int_equal(a.value, 1);
        assert_int_equal(b.value, 2);
        assert_int_equal(c.value, 2);
        assert_ptr_equal(b.snap, c.snap);
        assert_ptr_not_equal(a.snap, b.snap);
        assert_int_equal(starts, 2);
        assert_int_equal(ends, 2);

        ns_lock(ns);
        ns_snapshot_free(a.snap);
        ns_snapshot_free(b.snap);
        ns_snapshot_free(c.snap);
        assert_int_equal(ns_query_memory_used(ns), 0);
        ns_unlock(ns);
        ns_free(ns);
        PerfStopProvider(h);
}

/* A snapshot still held is not handed to a request that arrives later. */
static void test_held_not_reused(void **state)
{
        PPERF_COUNTERSET_INSTANCE in;
        HANDLE h = start_provider(1, &in);
        const struct ns_counterset *cs;
        struct ns *ns = new_ns(false, &cs);
        struct ns_snapshot *s1, *s2;

        assert_int_equal(ns_snapshot(ns, cs, 0, &s1), 0);
        assert_int_equal(PerfSetULongLongCounterValue(h, in, 1, 7), ERROR_SUCCESS);
        assert_int_equal(ns_snapshot(ns, cs, 0, &s2), 0);
        assert_ptr_not_equal(s1, s2);
        assert_int_equal(s1->instances[0].values[0], 1);
        assert_int_equal(s2->instances[0].values[0], 7);
        ns_snapshot_free(s1);
        ns_snapshot_free(s2);
        ns_free(ns);
        PerfStopProvider(h);
}

/*
 * 5,000 instances take more than 64 KiB of snapshot: refused with -ENOMEM,
 * nothing left paid; without the cap it is taken, paid while held and
 * given back when freed; and the arrays it leaves to this thread are paid
 * again by the next snapshot that uses them.
 */
static void test_query_memory(void **state)
{
        PPERF_COUNTERSET_INSTANCE in;
        HANDLE h = start_provider(5000, &in);
        const struct ns_counterset *cs;
        struct ns *ns = new_ns(false, &cs);
        struct ns_snapshot *s = NULL;

        ns_set_query_memory(ns, 64 * 1024);
        assert_int_equal(ns_snapshot(ns, cs, 0, &s), -ENOMEM);
        assert_null(s);
        assert_int_equal(ns_query_memory_used(ns), 0);
        ns_set_query_memory(ns, 0);
        assert_int_equal(ns_snapshot(ns, cs, 0, &s), 0);
        assert_int_equal(s->n_instances, 5000);
        assert_true(ns_query_memory_used(ns) > 64 * 1024);
        ns_snapshot_free(s);
        assert_int_equal(ns_query_memory_used(ns), 0);
        ns_set_query_memory(ns, 64 * 1024);
        assert_int_equal(ns_collect(ns, cs, NULL, 0, &s), -ENOMEM);
        assert_int_equal(ns_query_memory_used(ns), 0);
        ns_thread_trim();
        ns_free(ns);
        PerfStopProvider(h);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(test_shared_never_older),
                TU_TEST(test_held_not_reused),
                TU_TEST(test_query_memory),
        };

        /* The held PERF_COLLECT_END must not time out under a loaded machine. */
        setenv("PERFLIB_COLLECT_TIMEOUT_MS", "30000", 1);
        sem_init(&release, 0, 0);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
