/* SPDX-License-Identifier: MIT */
/*
 * exporter-provider: a provider whose values perflib-exporter's tests
 * know in advance, one counter of each kind the exporter's rules treat
 * differently.
 *
 *   "Exporter Test" (single instance):
 *     1 Events/sec       PERF_COUNTER_BULK_COUNT  grows by exactly RATE a second
 *     2 Queue Length     PERF_COUNTER_RAWCOUNT    7
 *     3 Busy Time        PERF_100NSEC_TIMER       0.5 s a second (5,000,000 a second)
 *     4 Hit Ratio        PERF_RAW_FRACTION        3 / 8
 *     5   its base       PERF_RAW_BASE
 *     6 Bytes/Op         PERF_AVERAGE_BULK        25 bytes per operation, 1000 a second
 *     7   its base       PERF_AVERAGE_BASE
 *   "Exporter Workers" (multiple instances):
 *     1 Queue Length     PERF_COUNTER_RAWCOUNT    the instance's id
 *     2 Items/sec        PERF_COUNTER_BULK_COUNT  100 * id a second
 *   instances "alpha" (id 1), "dup" (id 2) and "dup" (id 3), two sharing
 *   a name, and "_Total" (id 0) with the sums.
 *
 * A 1 ms timerfd drives the growing counters, its expiration count making
 * up for delayed ticks.  Once set up it prints "ready" on standard output
 * and runs until SIGINT or SIGTERM.
 *
 * Usage: exporter-provider [--rate N]   (default 1000)
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <perflib.h>

#define TICKS_PER_SECOND 1000
#define BUSY_PER_TICK   5000u           /* 100 ns units: half of each 1 ms tick */

#define GUID_OF(a) { 0x3b7d1c52, 0x8e4f, 0x4a06, { 0xb1, 0x2c, 0x5d, 0x90, 0x47, 0xe3, 0x6a, a } }
static GUID provider_guid = GUID_OF(0x01);
static const GUID test_guid = GUID_OF(0x02);
static const GUID workers_guid = GUID_OF(0x03);

enum { EVENTS = 1, QUEUE, BUSY, HIT, HIT_BASE, BYTES, BYTES_BASE };
enum { W_QUEUE = 1, W_ITEMS };

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[7];
} test_template = {
        { GUID_OF(0x02), GUID_OF(0x01), 7, PERF_COUNTERSET_SINGLE_INSTANCE },
        {
                { EVENTS, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, 0 },
                { QUEUE, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
                { BUSY, PERF_100NSEC_TIMER, 0, 8, PERF_DETAIL_NOVICE, 0, 0 },
                { HIT, PERF_RAW_FRACTION, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
                { HIT_BASE, PERF_RAW_BASE, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
                { BYTES, PERF_AVERAGE_BULK, 0, 8, PERF_DETAIL_NOVICE, 0, 0 },
                { BYTES_BASE, PERF_AVERAGE_BASE, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
        },
};

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[2];
} workers_template = {
        { GUID_OF(0x03), GUID_OF(0x01), 2, PERF_COUNTERSET_MULTI_INSTANCES },
        {
                { W_QUEUE, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
                { W_ITEMS, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, 0 },
        },
};

/* The names and help perflibd serves, as ctrpp would write them from a manifest. */
#define C(id, type, size, base, name, help)                                              \
        { id, type, 0, size, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE, base, CTRPP_NO_ID, \
          CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL, name, help }
static const struct ctrpp_counter_desc test_counters[] = {
        C(EVENTS, PERF_COUNTER_BULK_COUNT, 8, CTRPP_NO_ID, "Events/sec", "Events handled."),
        C(QUEUE, PERF_COUNTER_RAWCOUNT, 4, CTRPP_NO_ID, "Queue Length", "Items waiting."),
        C(BUSY, PERF_100NSEC_TIMER, 8, CTRPP_NO_ID, "% Busy Time", "Time spent busy."),
        C(HIT, PERF_RAW_FRACTION, 4, HIT_BASE, "Hit Ratio", "Lookups that hit."),
        C(HIT_BASE, PERF_RAW_BASE, 4, CTRPP_NO_ID, "Hit Ratio Base", "Lookups."),
        C(BYTES, PERF_AVERAGE_BULK, 8, BYTES_BASE, "Bytes/Op", "Bytes per operation."),
        C(BYTES_BASE, PERF_AVERAGE_BASE, 4, CTRPP_NO_ID, "Bytes/Op Base", "Operations."),
};
static const struct ctrpp_counter_desc workers_counters[] = {
        C(W_QUEUE, PERF_COUNTER_RAWCOUNT, 4, CTRPP_NO_ID, "Queue Length", "A worker's queue."),
        C(W_ITEMS, PERF_COUNTER_BULK_COUNT, 8, CTRPP_NO_ID, "Items/sec", "Items a worker took."),
};
static const struct ctrpp_counterset_desc csets[] = {
        { GUID_OF(0x02), PERF_COUNTERSET_SINGLE_INSTANCE, 0, 0, 7, test_counters, NULL, NULL,
          "Exporter Test", "Known values for perflib-exporter's tests", "single" },
        { GUID_OF(0x03), PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 2, workers_counters, NULL,
          NULL, "Exporter Workers", "One instance per worker", "multiple" },
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = GUID_OF(0x01), .resource_base = CTRPP_NO_ID,
        .n_countersets = 2, .countersets = csets, .name = "Exporter Test Provider",
};

/* The workers: name, id; the last one is _Total. */
static const struct {
        const char *name;
        ULONG id;
} workers[] = { { "alpha", 1 }, { "dup", 2 }, { "dup", 3 }, { "_Total", 0 } };
#define N_WORKERS (sizeof(workers) / sizeof(workers[0]))
#define TOTAL_SHARE 6u                  /* 1 + 2 + 3: _Total's items, per 100 a second */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        (void) sig;
        stop = 1;
}

static int fail(const char *what, unsigned long code)
{
        fprintf(stderr, "exporter-provider: %s failed: %lu\n", what, code);
        return 1;
}

/* Items/sec of worker w after ticks ticks: exact over whole seconds. */
static ULONGLONG items(size_t w, uint64_t ticks)
{
        uint64_t share = workers[w].id ? workers[w].id : TOTAL_SHARE;

        return ticks * 100 * share / TICKS_PER_SECOND;
}

static void run(HANDLE h, PPERF_COUNTERSET_INSTANCE t, PPERF_COUNTERSET_INSTANCE *w,
                unsigned long rate, int tfd)
{
        uint64_t ticks = 0, exp;

        while (!stop) {
                if (read(tfd, &exp, sizeof(exp)) != sizeof(exp))
                        continue;
                ticks += exp;
                PerfSetULongLongCounterValue(h, t, EVENTS, ticks * rate / TICKS_PER_SECOND);
                PerfSetULongLongCounterValue(h, t, BUSY, ticks * BUSY_PER_TICK);
                PerfSetULongLongCounterValue(h, t, BYTES, ticks * 25);
                PerfSetULongCounterValue(h, t, BYTES_BASE, (ULONG) ticks);
                for (size_t i = 0; i < N_WORKERS; i++)
                        PerfSetULongLongCounterValue(h, w[i], W_ITEMS, items(i, ticks));
        }
}

static int parse_args(int argc, char **argv, unsigned long *rate)
{
        char *end;

        if (argc == 1)
                return 0;
        if (argc == 3 && !strcmp(argv[1], "--rate")) {
                errno = 0;
                *rate = strtoul(argv[2], &end, 10);
                if (!errno && end != argv[2] && !*end)
                        return 0;
        }
        fprintf(stderr, "usage: exporter-provider [--rate N]\n");
        return -1;
}

static int start(HANDLE *h, PPERF_COUNTERSET_INSTANCE *t, PPERF_COUNTERSET_INSTANCE *w)
{
        ULONG st = PerfStartProvider(&provider_guid, NULL, h);

        if (st != ERROR_SUCCESS)
                return fail("PerfStartProvider", st);
        if ((st = PerfSetCounterSetInfo(*h, &test_template.CounterSet, sizeof(test_template))) ||
            (st = PerfSetCounterSetInfo(*h, &workers_template.CounterSet,
                                        sizeof(workers_template))))
                return fail("PerfSetCounterSetInfo", st);
        if (pl_set_provider_description(*h, &desc) < 0)
                return fail("pl_set_provider_description", 0);
        *t = PerfCreateInstanceUtf8(*h, &test_guid, "_Default", 0);
        if (!*t)
                return fail("PerfCreateInstance", GetLastError());
        PerfSetULongCounterValue(*h, *t, QUEUE, 7);
        PerfSetULongCounterValue(*h, *t, HIT, 3);
        PerfSetULongCounterValue(*h, *t, HIT_BASE, 8);
        for (size_t i = 0; i < N_WORKERS; i++) {
                w[i] = PerfCreateInstanceUtf8(*h, &workers_guid, workers[i].name, workers[i].id);
                if (!w[i])
                        return fail("PerfCreateInstance(worker)", GetLastError());
                PerfSetULongCounterValue(*h, w[i], W_QUEUE, workers[i].id ? workers[i].id : 6);
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct itimerspec its = { { 0, 1000000000L / TICKS_PER_SECOND },
                                  { 0, 1000000000L / TICKS_PER_SECOND } };
        struct sigaction sa = { .sa_handler = on_signal };
        PPERF_COUNTERSET_INSTANCE t, w[N_WORKERS];
        unsigned long rate = 1000;
        HANDLE h;
        int tfd;

        if (parse_args(argc, argv, &rate) < 0)
                return 2;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        if (start(&h, &t, w))
                return 1;
        tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0)
                return fail("timerfd", (unsigned long) errno);
        printf("ready\n");
        fflush(stdout);
        run(h, t, w, rate, tfd);
        close(tfd);
        PerfStopProvider(h);
        return 0;
}
