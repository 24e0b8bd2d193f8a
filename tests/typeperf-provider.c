/* SPDX-License-Identifier: MIT */
/*
 * typeperf-provider: a provider whose values typeperf's tests know in
 * advance.
 *
 *   "Typeperf Test" (single instance):
 *     1 Ticks/sec          PERF_COUNTER_BULK_COUNT   grows by exactly RATE a second
 *     2 Hit Ratio          PERF_RAW_FRACTION         3 / 8: 37.5 %
 *     3   its base         PERF_RAW_BASE
 *     4 Bytes/Op           PERF_AVERAGE_BULK         25 bytes per operation, always
 *     5   its base         PERF_AVERAGE_BASE
 *     6 Uptime             PERF_ELAPSED_TIME         seconds since the provider started
 *     7   Now (ms)         PERF_COUNTER_LARGE_RAWCOUNT, no display: Uptime's PerfTimeId
 *     8   Frequency        PERF_COUNTER_LARGE_RAWCOUNT, no display: 1000, its PerfFreqId
 *   "Typeperf Workers" (multiple instances w1 ... wN):
 *     1 Queue Length       PERF_COUNTER_RAWCOUNT     the instance's number
 *
 * A 1 ms timerfd drives the growing counters; its expiration count makes up
 * for ticks the scheduler delayed, so over any second Ticks/sec grows by
 * RATE give or take one tick's share.  Once set up it prints
 * "ready REALTIME" (the Unix time, in seconds, at which Uptime is 0) on
 * standard output and runs until SIGINT or SIGTERM.
 *
 * Usage: typeperf-provider [--rate N] [--workers N]   (defaults 10000, 2)
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <perflib.h>

#define TICKS_PER_SECOND 1000

#define CSET_DATA(a) { 0x7e3f0a11, 0x5c2d, 0x4e8b, { 0x9a, 0x10, 0x3c, 0x44, 0x21, 0x6d, 0x0e, a } }
static GUID provider_guid = CSET_DATA(0x01);
static const GUID test_guid = CSET_DATA(0x02);
static const GUID workers_guid = CSET_DATA(0x03);
static const GUID pool_guid = CSET_DATA(0x04);

enum { TICKS = 1, HIT, HIT_BASE, BYTES, BYTES_BASE, UPTIME, NOW, FREQ };

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[8];
} test_template = {
        { CSET_DATA(0x02), CSET_DATA(0x01), 8, PERF_COUNTERSET_SINGLE_INSTANCE },
        {
                { TICKS, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, 0 },
                { HIT, PERF_RAW_FRACTION, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
                { HIT_BASE, PERF_RAW_BASE, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
                { BYTES, PERF_AVERAGE_BULK, 0, 8, PERF_DETAIL_NOVICE, 0, 0 },
                { BYTES_BASE, PERF_AVERAGE_BASE, 0, 4, PERF_DETAIL_NOVICE, 0, 0 },
                { UPTIME, PERF_ELAPSED_TIME, 0, 8, PERF_DETAIL_NOVICE, 0, 0 },
                { NOW, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 8,
                  PERF_DETAIL_NOVICE, 0, 0 },
                { FREQ, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 8,
                  PERF_DETAIL_NOVICE, 0, 0 },
        },
};

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[1];
} workers_template = {
        { CSET_DATA(0x03), CSET_DATA(0x01), 1, PERF_COUNTERSET_MULTI_INSTANCES },
        { { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, 0 } },
};

/* globalAggregate: instances p1 = 10 and p2 = 20, which a reader sees as one Size of 30. */
static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[1];
} pool_template = {
        { CSET_DATA(0x04), CSET_DATA(0x01), 1, PERF_COUNTERSET_SINGLE_AGGREGATE },
        { { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, 0 } },
};

/* What ctrpp would write from a manifest: the names perflibd serves. */
#define CA(id, type, attrib, size, agg, base, ptime, pfreq, name)                      \
        { id, type, attrib, size, PERF_DETAIL_NOVICE, 0, agg, base, ptime,              \
          pfreq, CTRPP_NO_ID, 0, 0, NULL, NULL, name, name " help" }
#define C(id, type, attrib, size, base, ptime, pfreq, name)                             \
        CA(id, type, attrib, size, CTRPP_NO_AGGREGATE, base, ptime, pfreq, name)
static const struct ctrpp_counter_desc test_counters[] = {
        C(TICKS, PERF_COUNTER_BULK_COUNT, 0, 8, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, "Ticks/sec"),
        C(HIT, PERF_RAW_FRACTION, 0, 4, HIT_BASE, CTRPP_NO_ID, CTRPP_NO_ID, "Hit Ratio"),
        C(HIT_BASE, PERF_RAW_BASE, 0, 4, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, "Hit Ratio Base"),
        C(BYTES, PERF_AVERAGE_BULK, 0, 8, BYTES_BASE, CTRPP_NO_ID, CTRPP_NO_ID, "Bytes/Op"),
        C(BYTES_BASE, PERF_AVERAGE_BASE, 0, 4, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID,
          "Bytes/Op Base"),
        C(UPTIME, PERF_ELAPSED_TIME, 0, 8, CTRPP_NO_ID, NOW, FREQ, "Uptime"),
        C(NOW, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 8, CTRPP_NO_ID,
          CTRPP_NO_ID, CTRPP_NO_ID, "Now"),
        C(FREQ, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 8, CTRPP_NO_ID,
          CTRPP_NO_ID, CTRPP_NO_ID, "Frequency"),
};
static const struct ctrpp_counter_desc workers_counters[] = {
        C(1, PERF_COUNTER_RAWCOUNT, 0, 4, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, "Queue Length"),
};
static const struct ctrpp_counter_desc pool_counters[] = {
        CA(1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_AGGREGATE_TOTAL, CTRPP_NO_ID, CTRPP_NO_ID,
           CTRPP_NO_ID, "Size"),
};
static const struct ctrpp_counterset_desc csets[] = {
        { CSET_DATA(0x02), PERF_COUNTERSET_SINGLE_INSTANCE, 0, 0, 8, test_counters, NULL, NULL,
          "Typeperf Test", "Known values for typeperf's tests", "single" },
        { CSET_DATA(0x03), PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 1, workers_counters, NULL,
          NULL, "Typeperf Workers", "One instance per worker", "multiple" },
        { CSET_DATA(0x04), PERF_COUNTERSET_SINGLE_AGGREGATE, 0, 0, 1, pool_counters, NULL,
          NULL, "Typeperf Pool", "Pools, totalled", "globalAggregate" },
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = CSET_DATA(0x01), .resource_base = CTRPP_NO_ID,
        .n_countersets = 3, .countersets = csets, .name = "Typeperf Test Provider",
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        stop = 1;
}

static uint64_t now_ms(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int fail(const char *what, unsigned long code)
{
        fprintf(stderr, "typeperf-provider: %s failed: %lu\n", what, code);
        return 1;
}

static int parse(const char *s, unsigned long *ret)
{
        char *end;

        errno = 0;
        *ret = strtoul(s, &end, 10);
        return errno || end == s || *end ? -1 : 0;
}

static int create_workers(HANDLE h, unsigned long n)
{
        for (unsigned long i = 1; i <= n; i++) {
                char name[32];
                PPERF_COUNTERSET_INSTANCE w;

                snprintf(name, sizeof(name), "w%lu", i);
                w = PerfCreateInstanceUtf8(h, &workers_guid, name, (ULONG) i);
                if (!w)
                        return fail("PerfCreateInstance(worker)", i);
                PerfSetULongCounterValue(h, w, 1, (ULONG) i);
        }
        return 0;
}

/* Two sources of the global aggregate, as gas.c's provider and a second one would be. */
static int create_pools(HANDLE h)
{
        for (ULONG i = 1; i <= 2; i++) {
                PPERF_COUNTERSET_INSTANCE p = PerfCreateInstance(h, &pool_guid,
                                                                 i == 1 ? L"p1" : L"p2", i);

                if (!p)
                        return fail("PerfCreateInstance(pool)", i);
                PerfSetULongCounterValue(h, p, 1, 10 * i);
        }
        return 0;
}

/* The timer loop: every tick adds its share of the rate and one 25-byte operation. */
static void run(HANDLE h, PPERF_COUNTERSET_INSTANCE t, unsigned long rate, int tfd)
{
        uint64_t ticks = 0, expirations;

        while (!stop) {
                if (read(tfd, &expirations, sizeof(expirations)) != sizeof(expirations))
                        continue;
                /* Exact over whole seconds: tick k has added k * rate / 1000 in total. */
                PerfSetULongLongCounterValue(h, t, TICKS,
                                             (ticks + expirations) * rate / TICKS_PER_SECOND);
                ticks += expirations;
                PerfIncrementULongLongCounterValue(h, t, BYTES, 25 * expirations);
                PerfIncrementULongCounterValue(h, t, BYTES_BASE, (ULONG) expirations);
                PerfSetULongLongCounterValue(h, t, NOW, now_ms(CLOCK_MONOTONIC));
        }
}

int main(int argc, char **argv)
{
        struct itimerspec its = { { 0, 1000000000L / TICKS_PER_SECOND },
                                  { 0, 1000000000L / TICKS_PER_SECOND } };
        struct sigaction sa = { .sa_handler = on_signal };
        unsigned long rate = 10000, workers = 2;
        PPERF_COUNTERSET_INSTANCE t;
        struct timespec real;
        HANDLE h;
        ULONG st;
        int tfd;

        for (int i = 1; i < argc; i++) {
                if (i + 1 < argc && strcmp(argv[i], "--rate") == 0 && parse(argv[i + 1], &rate) == 0)
                        i++;
                else if (i + 1 < argc && strcmp(argv[i], "--workers") == 0 &&
                         parse(argv[i + 1], &workers) == 0)
                        i++;
                else {
                        fprintf(stderr, "usage: typeperf-provider [--rate N] [--workers N]\n");
                        return 2;
                }
        }
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        st = PerfStartProvider(&provider_guid, NULL, &h);
        if (st != ERROR_SUCCESS)
                return fail("PerfStartProvider", st);
        if ((st = PerfSetCounterSetInfo(h, &test_template.CounterSet, sizeof(test_template))) ||
            (st = PerfSetCounterSetInfo(h, &workers_template.CounterSet, sizeof(workers_template))) ||
            (st = PerfSetCounterSetInfo(h, &pool_template.CounterSet, sizeof(pool_template))))
                return fail("PerfSetCounterSetInfo", st);
        if (pl_set_provider_description(h, &desc) < 0)
                return fail("pl_set_provider_description", 0);
        t = PerfCreateInstanceUtf8(h, &test_guid, "_Default", 0);
        if (!t || create_workers(h, workers) != 0 || create_pools(h) != 0)
                return fail("PerfCreateInstance", 0);
        PerfSetULongCounterValue(h, t, HIT, 3);
        PerfSetULongCounterValue(h, t, HIT_BASE, 8);
        PerfSetULongLongCounterValue(h, t, FREQ, 1000);
        tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0)
                return fail("timerfd", (unsigned long) errno);
        /* Uptime counts from here. */
        clock_gettime(CLOCK_REALTIME, &real);
        PerfSetULongLongCounterValue(h, t, UPTIME, now_ms(CLOCK_MONOTONIC));
        PerfSetULongLongCounterValue(h, t, NOW, now_ms(CLOCK_MONOTONIC));
        printf("ready %lld.%03ld\n", (long long) real.tv_sec, real.tv_nsec / 1000000);
        fflush(stdout);
        run(h, t, rate, tfd);
        close(tfd);
        PerfStopProvider(h);
        return 0;
}
