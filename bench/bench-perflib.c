/* SPDX-License-Identifier: MIT */
/*
 * bench-perflib: prints what the provider API and the segment reader cost.
 *
 *   updates     PerfIncrementULongLongCounterValue, PerfSetULongCounterValue,
 *               and a direct write through the instance pointer
 *   create      100,000 instances: time, and segment heap bytes per instance
 *   churn       a PerfCreateInstance + PerfDeleteInstance pair among
 *               100,000 live instances
 *   snapshot    pl_reader_snapshot of 100,000 instances x 4 counters
 *   contention  4 threads incrementing one counter (and, for comparison,
 *               4 threads each incrementing their own instance)
 *
 * One figure a line, "name: value unit", after a header of '#' lines.  The
 * provider runs with a private runtime directory, removed at the end, so the
 * run neither sees nor disturbs other providers.  Built by `make check`,
 * never run as a test: timings are for people to read.  See README.md.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif
/* Taken now: PCP's headers redefine PACKAGE_VERSION as their own. */
static const char bench_version[] = PACKAGE_VERSION;

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <sys/stat.h>

#ifdef HAVE_PCP_MMV
#include <pcp/pmapi.h>
#include <pcp/mmv_stats.h>
#endif

#include "perflib.h"
#include "reader.h"

#define N_INSTANCES 100000u
#define N_THREADS 4u
#define NAME_LEN 16u            /* "instance-NNNNNN" and its NUL */
#define REPEATS 3u              /* timed loops are run this often; the best run counts */

/* {b3e1c7a0-5d2f-4e61-9a8b-0c1d2e3f4a50} and the countersets below it. */
static GUID bench_provider = {
        0xb3e1c7a0, 0x5d2f, 0x4e61, { 0x9a, 0x8b, 0x0c, 0x1d, 0x2e, 0x3f, 0x4a, 0x50 }
};
static const GUID bench_cset = {
        0xb3e1c7a1, 0x5d2f, 0x4e61, { 0x9a, 0x8b, 0x0c, 0x1d, 0x2e, 0x3f, 0x4a, 0x50 }
};

enum { CTR_REQUESTS = 1, CTR_BYTES = 2, CTR_QUEUE = 3, CTR_ERRORS = 4 };

/*
 * The template gives each counter its member's offsetof(), so perflib lays
 * the counters out as this struct, right after the PERF_COUNTERSET_INSTANCE
 * header: what lets a provider write its data directly (all-zero Offsets
 * would give Windows' 8-byte slots instead, where the two ULONGs differ).
 */
struct bench_data {
        ULONGLONG requests;
        ULONGLONG bytes;
        ULONG queue;
        ULONG errors;
};

static struct {
        PERF_COUNTERSET_INFO info;
        PERF_COUNTER_INFO counters[4];
} bench_template = {
        { { 0xb3e1c7a1, 0x5d2f, 0x4e61, { 0x9a, 0x8b, 0x0c, 0x1d, 0x2e, 0x3f, 0x4a, 0x50 } },
          { 0xb3e1c7a0, 0x5d2f, 0x4e61, { 0x9a, 0x8b, 0x0c, 0x1d, 0x2e, 0x3f, 0x4a, 0x50 } },
          4, PERF_COUNTERSET_MULTI_INSTANCES },
        {
                { CTR_REQUESTS, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0,
                  offsetof(struct bench_data, requests) },
                { CTR_BYTES, PERF_COUNTER_LARGE_RAWCOUNT, 0, 8, PERF_DETAIL_NOVICE, 0,
                  offsetof(struct bench_data, bytes) },
                { CTR_QUEUE, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0,
                  offsetof(struct bench_data, queue) },
                { CTR_ERRORS, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0,
                  offsetof(struct bench_data, errors) },
        },
};

struct sizes {
        uint64_t update_iters;          /* per timed loop of an update call */
        uint64_t churn_pairs;
        unsigned snapshots;
        uint64_t thread_iters;          /* per thread */
};

static const struct sizes full_sizes = { 20000000, 200000, 20, 5000000 };
static const struct sizes quick_sizes = { 2000000, 20000, 3, 500000 };

struct bench {
        const struct sizes *sz;
        char runtime_dir[64];
        HANDLE provider;
        PPERF_COUNTERSET_INSTANCE *inst;        /* N_INSTANCES */
        wchar_t (*names)[NAME_LEN];             /* N_INSTANCES */
        struct pl_reader *reader;
        uint32_t cset_index;
};

/* A failed step: says what and why; the caller unwinds. */
__attribute__((format(printf, 1, 2)))
static int fail(const char *fmt, ...)
{
        va_list ap;

        fflush(stdout);
        fputs("bench-perflib: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -1;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void figure(const char *name, double value, const char *unit)
{
        printf("%s: %.*f %s\n", name, value < 10.0 ? 2 : 1, value, unit);
}

static struct bench_data *data_of(PPERF_COUNTERSET_INSTANCE inst)
{
        return (struct bench_data *) ((BYTE *) inst + sizeof(PERF_COUNTERSET_INSTANCE));
}

/* ---- setup ---- */

static int make_runtime_dir(struct bench *b)
{
        snprintf(b->runtime_dir, sizeof(b->runtime_dir), "/tmp/perflib-bench-XXXXXX");
        if (!mkdtemp(b->runtime_dir)) {
                b->runtime_dir[0] = '\0';
                return fail("mkdtemp: %s", strerror(errno));
        }
        /* Before PerfStartProvider, which announces the provider there. */
        if (setenv("PERFLIB_RUNTIME_DIR", b->runtime_dir, 1) < 0)
                return fail("setenv: %s", strerror(errno));
        return 0;
}

/* Whatever a crashed step may have left, then the directory itself. */
static void remove_runtime_dir(struct bench *b)
{
        DIR *d;
        struct dirent *de;

        if (!b->runtime_dir[0])
                return;
        d = opendir(b->runtime_dir);
        if (d) {
                while ((de = readdir(d)))
                        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                                (void) unlinkat(dirfd(d), de->d_name, 0);
                closedir(d);
        }
        if (rmdir(b->runtime_dir) < 0)
                fail("cannot remove %s: %s", b->runtime_dir, strerror(errno));
}

static int start_provider(struct bench *b)
{
        ULONG err;

        err = PerfStartProvider(&bench_provider, NULL, &b->provider);
        if (err != ERROR_SUCCESS)
                return fail("PerfStartProvider: error %lu", (unsigned long) err);
        err = PerfSetCounterSetInfo(b->provider, &bench_template.info, sizeof(bench_template));
        if (err != ERROR_SUCCESS)
                return fail("PerfSetCounterSetInfo: error %lu", (unsigned long) err);
        return 0;
}

/* Names are made before any timing, so that swprintf is not measured. */
static int alloc_instances(struct bench *b)
{
        b->inst = calloc(N_INSTANCES, sizeof(*b->inst));
        b->names = calloc(N_INSTANCES, sizeof(*b->names));
        if (!b->inst || !b->names)
                return fail("out of memory");
        for (uint32_t i = 0; i < N_INSTANCES; i++)
                swprintf(b->names[i], NAME_LEN, L"instance-%06u", (unsigned) i);
        return 0;
}

static int first_socket(const char *path, void *userdata)
{
        char **ret = userdata;

        *ret = strdup(path);
        return *ret ? 1 : -ENOMEM;
}

/* Our provider is the only one in the private runtime directory. */
static int open_reader(struct bench *b)
{
        const struct pl_counterset *cs;
        char *path = NULL;
        int k;

        k = pl_scan(b->runtime_dir, first_socket, &path, NULL);
        if (k < 0 || !path)
                return fail("no provider socket in %s: %s", b->runtime_dir,
                            k < 0 ? strerror(-k) : "none found");
        k = pl_reader_open(path, &b->reader);
        free(path);
        if (k < 0)
                return fail("pl_reader_open: %s", strerror(-k));
        k = pl_reader_find_counterset(b->reader, &bench_cset, &cs);
        if (k < 0)
                return fail("pl_reader_find_counterset: %s", strerror(-k));
        b->cset_index = cs->index;
        return 0;
}

/* Heap bytes handed out so far, as the reader sees them; 0 on error (reported). */
static uint64_t heap_used(const struct bench *b)
{
        uint64_t used = 0, size;
        int k = pl_reader_heap_usage(b->reader, &used, &size);

        if (k < 0)
                fail("pl_reader_heap_usage: %s", strerror(-k));
        return used;
}

/* ---- updates ---- */

/*
 * Best of REPEATS loops of iters calls of PerfIncrementULongLongCounterValue
 * (increment) or PerfSetULongCounterValue; ns per call, negative on error.
 * Checking each result is part of the cost, as in any careful provider.
 */
static double time_calls(HANDLE h, PPERF_COUNTERSET_INSTANCE inst, ULONG id, uint64_t iters,
                         bool increment)
{
        double best = -1.0;

        for (unsigned r = 0; r < REPEATS; r++) {
                ULONG err = ERROR_SUCCESS;
                uint64_t t0 = now_ns();

                for (uint64_t i = 0; i < iters && err == ERROR_SUCCESS; i++)
                        err = increment ?
                                PerfIncrementULongLongCounterValue(h, inst, id, 1) :
                                PerfSetULongCounterValue(h, inst, CTR_QUEUE, (ULONG) i);
                double ns = (double) (now_ns() - t0) / (double) iters;
                if (err != ERROR_SUCCESS) {
                        fail("update call: error %lu", (unsigned long) err);
                        return -1.0;
                }
                if (best < 0 || ns < best)
                        best = ns;
        }
        return best;
}

/*
 * A provider may write its counters itself.  The volatile store cannot be
 * elided or merged, and the empty asm keeps the compiler from batching the
 * atomic adds: each loop iteration is one real write.
 */
static double time_direct(PPERF_COUNTERSET_INSTANCE inst, uint64_t iters, bool atomic)
{
        struct bench_data *d = data_of(inst);
        volatile ULONGLONG *v = &d->bytes;
        double best = -1.0;

        for (unsigned r = 0; r < REPEATS; r++) {
                uint64_t t0 = now_ns();

                if (atomic)
                        for (uint64_t i = 0; i < iters; i++) {
                                __atomic_fetch_add(&d->bytes, 1, __ATOMIC_RELAXED);
                                __asm__ __volatile__("" ::: "memory");
                        }
                else
                        for (uint64_t i = 0; i < iters; i++)
                                *v = i;
                double ns = (double) (now_ns() - t0) / (double) iters;
                if (best < 0 || ns < best)
                        best = ns;
        }
        return best;
}

/* The struct must be where the API writes, or the direct figure means nothing. */
static int check_layout(HANDLE h, PPERF_COUNTERSET_INSTANCE inst)
{
        if (PerfSetULongLongCounterValue(h, inst, CTR_BYTES, 0x1122334455667788ull) != 0 ||
            PerfSetULongCounterValue(h, inst, CTR_ERRORS, 0x99aabbccu) != 0)
                return fail("PerfSet*CounterValue failed");
        if (data_of(inst)->bytes != 0x1122334455667788ull || data_of(inst)->errors != 0x99aabbccu)
                return fail("counter layout differs from struct bench_data");
        return 0;
}

static int bench_updates(struct bench *b)
{
        PPERF_COUNTERSET_INSTANCE inst;
        double inc, set;
        int r = -1;

        inst = PerfCreateInstance(b->provider, &bench_cset, L"updates", 0);
        if (!inst)
                return fail("PerfCreateInstance: error %lu", (unsigned long) GetLastError());
        if (check_layout(b->provider, inst) < 0)
                goto out;
        inc = time_calls(b->provider, inst, CTR_REQUESTS, b->sz->update_iters, true);
        set = time_calls(b->provider, inst, CTR_QUEUE, b->sz->update_iters, false);
        if (inc < 0 || set < 0)
                goto out;
        figure("increment-ulonglong", inc, "ns/op");
        figure("set-ulong", set, "ns/op");
        figure("direct-store", time_direct(inst, b->sz->update_iters, false), "ns/op");
        figure("direct-atomic-add", time_direct(inst, b->sz->update_iters, true), "ns/op");
        r = 0;
out:
        /* Deleted so the 100,000 below are all there is in the counterset. */
        if (PerfDeleteInstance(b->provider, inst) != ERROR_SUCCESS)
                r = fail("PerfDeleteInstance failed");
        return r;
}

/*
 * Counter lookup by id: an increment of the last counter of a counterset of
 * n 64-bit counters, one instance.  Flat figures for 10 and 10,000 counters
 * show the lookup does not depend on the number of counters.
 */
static double time_lookup(struct bench *b, ULONG n, ULONG guid_tag)
{
        ULONG size = sizeof(PERF_COUNTERSET_INFO) + n * sizeof(PERF_COUNTER_INFO);
        PPERF_COUNTERSET_INFO t = calloc(1, size);
        PPERF_COUNTERSET_INSTANCE inst = NULL;
        double ns = -1.0;

        if (!t)
                return fail("out of memory"), -1.0;
        t->CounterSetGuid = bench_cset;
        t->CounterSetGuid.Data1 += guid_tag;
        t->ProviderGuid = bench_provider;
        t->NumCounters = n;
        t->InstanceType = PERF_COUNTERSET_SINGLE_INSTANCE;
        PPERF_COUNTER_INFO c = (PPERF_COUNTER_INFO) (t + 1);
        for (ULONG i = 0; i < n; i++)
                c[i] = (PERF_COUNTER_INFO) { .CounterId = i + 1, .Type = PERF_COUNTER_BULK_COUNT,
                                             .Size = 8, .DetailLevel = PERF_DETAIL_NOVICE };
        if (PerfSetCounterSetInfo(b->provider, t, size) != ERROR_SUCCESS)
                fail("PerfSetCounterSetInfo(%lu counters) failed", (unsigned long) n);
        else if (!(inst = PerfCreateInstance(b->provider, &t->CounterSetGuid, L"lookup", 0)))
                fail("PerfCreateInstance: error %lu", (unsigned long) GetLastError());
        else
                ns = time_calls(b->provider, inst, n, b->sz->update_iters, true);
        if (inst)
                (void) PerfDeleteInstance(b->provider, inst);
        free(t);
        return ns;
}

static int bench_lookup(struct bench *b)
{
        double few = time_lookup(b, 10, 0x100), many = time_lookup(b, 10000, 0x200);

        if (few < 0 || many < 0)
                return -1;
        figure("increment-lookup-10-counters", few, "ns/op");
        figure("increment-lookup-10000-counters", many, "ns/op");
        return 0;
}

/* ---- instances ---- */

static int bench_create(struct bench *b)
{
        uint64_t heap0 = heap_used(b), t0 = now_ns(), dt;

        for (uint32_t i = 0; i < N_INSTANCES; i++) {
                b->inst[i] = PerfCreateInstance(b->provider, &bench_cset, b->names[i], i);
                if (!b->inst[i])
                        return fail("PerfCreateInstance #%u: error %lu", (unsigned) i,
                                    (unsigned long) GetLastError());
        }
        dt = now_ns() - t0;
        figure("create-100000-instances", (double) dt / 1e6, "ms");
        figure("create-instance", (double) dt / N_INSTANCES, "ns/op");
        double heap = (double) (heap_used(b) - heap0) / N_INSTANCES;
        /* What the instance itself needs: its counter data and its name. */
        double payload = (double) (sizeof(struct bench_data) +
                                   ((NAME_LEN * sizeof(wchar_t) + 7) & ~(size_t) 7));
        figure("heap-bytes-per-instance", heap, "bytes");
        figure("directory-bytes-per-instance", (double) sizeof(uint64_t), "bytes");
        figure("overhead-bytes-per-instance", heap - payload + sizeof(uint64_t), "bytes");
        return 0;
}

/* Create and delete one more instance while N_INSTANCES others live. */
static int bench_churn(struct bench *b)
{
        double best = -1.0;

        for (unsigned r = 0; r < REPEATS; r++) {
                uint64_t t0 = now_ns();

                for (uint64_t i = 0; i < b->sz->churn_pairs; i++) {
                        PPERF_COUNTERSET_INSTANCE x =
                                PerfCreateInstance(b->provider, &bench_cset, L"churn", (ULONG) i);
                        if (!x || PerfDeleteInstance(b->provider, x) != ERROR_SUCCESS)
                                return fail("create/delete pair #%llu failed",
                                            (unsigned long long) i);
                }
                double ns = (double) (now_ns() - t0) / (double) b->sz->churn_pairs;
                if (best < 0 || ns < best)
                        best = ns;
        }
        figure("create-delete-pair-100000-live", best, "ns/op");
        return 0;
}

static int bench_snapshot(struct bench *b)
{
        uint64_t total = 0, best = UINT64_MAX;

        for (unsigned i = 0; i < b->sz->snapshots; i++) {
                struct pl_snapshot *s = NULL;
                uint64_t t0 = now_ns(), dt;
                int k = pl_reader_snapshot(b->reader, b->cset_index, 0, &s);

                dt = now_ns() - t0;
                if (k < 0)
                        return fail("pl_reader_snapshot: %s", strerror(-k));
                bool ok = s->n_instances == N_INSTANCES && s->instances[0].num_values == 4;
                pl_snapshot_free(s);
                if (!ok)
                        return fail("snapshot is not 100,000 instances x 4 counters");
                total += dt;
                best = dt < best ? dt : best;
        }
        figure("snapshot-100000x4", (double) total / b->sz->snapshots / 1e6, "ms");
        figure("snapshot-100000x4-best", (double) best / 1e6, "ms");
        figure("snapshot-per-instance", (double) total / b->sz->snapshots / N_INSTANCES,
               "ns/instance");
        return 0;
}

static int bench_delete(struct bench *b)
{
        uint64_t t0 = now_ns();

        for (uint32_t i = 0; i < N_INSTANCES; i++)
                if (PerfDeleteInstance(b->provider, b->inst[i]) != ERROR_SUCCESS)
                        return fail("PerfDeleteInstance #%u failed", (unsigned) i);
        figure("delete-100000-instances", (double) (now_ns() - t0) / 1e6, "ms");
        return 0;
}

/* ---- contention ---- */

struct worker {
        HANDLE provider;
        PPERF_COUNTERSET_INSTANCE inst;
        uint64_t iters;
        const int *go;
        unsigned failures;
        pthread_t thread;
};

static void *worker_run(void *arg)
{
        struct worker *w = arg;

        /* A start flag, not a barrier: the main thread can always release it,
         * even when it could not start every worker. */
        while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
                sched_yield();
        for (uint64_t i = 0; i < w->iters; i++)
                w->failures += PerfIncrementULongLongCounterValue(w->provider, w->inst,
                                                                  CTR_REQUESTS, 1) != 0;
        return NULL;
}

/*
 * Wall time of n threads doing iters increments each, from the moment they
 * are released together; ns per increment per thread, negative on error.
 * shared: all on one counter; else each on its own instance.
 */
static double run_workers(struct bench *b, unsigned n, bool shared, uint64_t iters)
{
        struct worker w[N_THREADS];
        unsigned failures = 0, started = 0;
        int go = 0;
        uint64_t t0;

        for (unsigned i = 0; i < n && i < N_THREADS; i++) {
                w[i] = (struct worker) {
                        .provider = b->provider,
                        /* Neighbouring blocks are 128 bytes apart; every other
                         * one keeps the threads off each other's cache lines. */
                        .inst = b->inst[shared ? 0 : 2 * i + 2],
                        .iters = iters,
                        .go = &go,
                };
                if (pthread_create(&w[i].thread, NULL, worker_run, &w[i]) != 0)
                        break;
                started++;
        }
        t0 = now_ns();
        __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
        for (unsigned i = 0; i < started; i++) {
                pthread_join(w[i].thread, NULL);
                failures += w[i].failures;
        }
        double ns = (double) (now_ns() - t0) / (double) iters;
        if (started < n)
                fail("pthread_create failed");
        return started < n || failures ? -1.0 : ns;
}

/* n threads on one counter; the increments lost (must be 0), negative on error. */
static double shared_increments(struct bench *b, unsigned n, double *ret_ns)
{
        uint64_t iters = b->sz->thread_iters;
        ULONGLONG before = data_of(b->inst[0])->requests;
        double ns = run_workers(b, n, true, iters);

        if (ns < 0)
                return fail("contended increments failed"), -1.0;
        *ret_ns = ns;
        return (double) (n * iters - (data_of(b->inst[0])->requests - before));
}

static int bench_contention(struct bench *b)
{
        double ns2, ns4, lost2, lost4, own;

        lost2 = shared_increments(b, 2, &ns2);
        lost4 = shared_increments(b, N_THREADS, &ns4);
        own = run_workers(b, N_THREADS, false, b->sz->thread_iters);
        if (lost2 < 0 || lost4 < 0 || own < 0)
                return -1;
        figure("increment-2-threads-lost", lost2, "increments");
        figure("contended-increment-2-threads", ns2, "ns/op per thread");
        figure("contended-increment-4-threads-lost", lost4, "increments");
        figure("contended-increment-4-threads", ns4, "ns/op per thread");
        figure("contended-increment-4-threads-aggregate", ns4 / N_THREADS, "ns/op");
        figure("own-instance-increment-4-threads", own, "ns/op per thread");
        /* Every concurrent increment must have been counted. */
        if (lost2 != 0 || lost4 != 0)
                return fail("increments were lost");
        return 0;
}

/* ---- PCP MMV, for comparison ---- */

#ifdef HAVE_PCP_MMV
struct mmv_worker {
        void *addr;
        pmAtomValue *value;
        uint64_t iters;
        pthread_t thread;
};

static void *mmv_worker_run(void *arg)
{
        struct mmv_worker *w = arg;

        for (uint64_t i = 0; i < w->iters; i++)
                mmv_inc(w->addr, w->value);
        return NULL;
}

/* The share of 2 x iters concurrent mmv_inc calls that were lost, in percent. */
static double mmv_lost_percent(void *addr, pmAtomValue *v, uint64_t iters)
{
        struct mmv_worker w[2];

        v->ull = 0;
        for (unsigned i = 0; i < 2; i++) {
                w[i] = (struct mmv_worker) { .addr = addr, .value = v, .iters = iters };
                if (pthread_create(&w[i].thread, NULL, mmv_worker_run, &w[i]) != 0)
                        return fail("pthread_create failed"), -1.0;
        }
        for (unsigned i = 0; i < 2; i++)
                pthread_join(w[i].thread, NULL);
        return 100.0 * (double) (2 * iters - v->ull) / (double) (2 * iters);
}

static double mmv_inc_ns(void *addr, pmAtomValue *v, uint64_t iters)
{
        double best = -1.0;

        for (unsigned r = 0; r < REPEATS; r++) {
                uint64_t t0 = now_ns();
                for (uint64_t i = 0; i < iters; i++)
                        mmv_inc(addr, v);
                double ns = (double) (now_ns() - t0) / (double) iters;
                if (best < 0 || ns < best)
                        best = ns;
        }
        return best;
}

/* The same two figures for PCP's MMV: one counter, single thread and two threads. */
static int bench_mmv(struct bench *b)
{
        static const pmUnits count = MMV_UNITS(0, 0, 1, 0, 0, PM_COUNT_ONE);
        char dir[sizeof(b->runtime_dir) + 8], file[sizeof(dir) + 32];
        mmv_registry_t *reg;
        void *addr = NULL;
        pmAtomValue *v = NULL;
        int r = -1;

        /* MMV files live in $PCP_TMP_DIR/mmv: keep ours in the private directory. */
        snprintf(dir, sizeof(dir), "%s/mmv", b->runtime_dir);
        snprintf(file, sizeof(file), "%s/bench-perflib", dir);
        if (setenv("PCP_TMP_DIR", b->runtime_dir, 1) < 0 || mkdir(dir, 0700) < 0)
                return fail("cannot make %s: %s", dir, strerror(errno));
        reg = mmv_stats_registry("bench-perflib", 42, 0);
        if (reg && mmv_stats_add_metric(reg, "requests", 1, MMV_TYPE_U64, MMV_SEM_COUNTER,
                                        count, 0, "requests", "requests") == 0)
                addr = mmv_stats_start(reg);
        if (addr)
                v = mmv_lookup_value_desc(addr, "requests", NULL);
        if (!v) {
                fail("PCP MMV setup failed");
                goto out;
        }
        figure("pcp-mmv-inc", mmv_inc_ns(addr, v, b->sz->update_iters), "ns/op");
        double lost = mmv_lost_percent(addr, v, b->sz->thread_iters);
        if (lost >= 0) {
                figure("pcp-mmv-2-threads-lost", lost, "% of increments");
                r = 0;
        }
out:
        /* Also unmaps what mmv_stats_start mapped. */
        if (reg)
                mmv_stats_free(reg);
        (void) unlink(file);
        (void) rmdir(dir);
        return r;
}
#else
static int bench_mmv(struct bench *b)
{
        (void) b;
        printf("# PCP MMV not found at configure time: no comparison figures\n");
        return 0;
}
#endif

/* ---- main ---- */

static int run(struct bench *b)
{
        if (make_runtime_dir(b) < 0 || start_provider(b) < 0 || alloc_instances(b) < 0 ||
            open_reader(b) < 0)
                return -1;
        if (bench_updates(b) < 0 || bench_lookup(b) < 0 || bench_create(b) < 0 ||
            bench_churn(b) < 0 || bench_snapshot(b) < 0 || bench_contention(b) < 0 ||
            bench_delete(b) < 0 || bench_mmv(b) < 0)
                return -1;
        return 0;
}

static void teardown(struct bench *b)
{
        pl_reader_close(b->reader);
        if (b->provider && PerfStopProvider(b->provider) != ERROR_SUCCESS)
                fail("PerfStopProvider failed");
        free(b->inst);
        free(b->names);
        remove_runtime_dir(b);
}

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: bench-perflib [--quick]\n"
                "Print the costs of perflib's counter updates, instance creation and\n"
                "deletion, reader snapshots and contended increments, one figure a line.\n"
                "\n"
                "  -q, --quick   a tenth of the iterations: rougher figures, sooner\n"
                "  -h, --help    show this help and exit\n");
}

static int parse_args(int argc, char **argv, bool *quick)
{
        static const struct option opts[] = {
                { "quick", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        int c;

        while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
                switch (c) {
                case 'q':
                        *quick = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 1;
                default:
                        usage(stderr);
                        return -1;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return -1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct bench b = { 0 };
        bool quick = false;
        int k;

        k = parse_args(argc, argv, &quick);
        if (k != 0)
                return k > 0 ? EXIT_SUCCESS : 2;
        b.sz = quick ? &quick_sizes : &full_sizes;
        printf("# perflib-linux %s benchmark (%s run, %ld online CPUs)\n", bench_version,
               quick ? "quick" : "full", sysconf(_SC_NPROCESSORS_ONLN));
        printf("# timed loops: best of %u; see bench/README.md for what each figure means\n",
               REPEATS);
        /* Then the threads take turns, and the contention figures say so. */
        if (sysconf(_SC_NPROCESSORS_ONLN) < (long) N_THREADS)
                printf("# fewer CPUs than the %u contention threads: those figures include "
                       "time-slicing\n", N_THREADS);
        fflush(stdout);
        k = run(&b);
        teardown(&b);
        return k < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
