/* SPDX-License-Identifier: MIT */
/*
 * sample-provider: a user-mode counter provider in the style of Microsoft's
 * PerfLib V2 samples, written against perflib.h alone so that it ports to and
 * from Windows with no edits beyond the includes.
 *
 * It publishes two countersets:
 *
 *   "Geometric Waves" (multi-instance): one instance per wave shape
 *   ("sine", "square", "triangle", plus a "pulse" instance that comes and
 *   goes every half period), each with
 *     1 Wave Value          PERF_COUNTER_RAWCOUNT        (32-bit, 0..100)
 *     2 Operations/sec      PERF_COUNTER_BULK_COUNT      (64-bit rate)
 *     3 % Time Above Half   PERF_RAW_FRACTION            (32-bit)
 *     4   (its base)        PERF_RAW_BASE                (32-bit)
 *
 *   "Sample Process" (single instance):
 *     1 Active Waves        PERF_COUNTER_RAWCOUNT
 *     2 Ticks/sec           PERF_COUNTER_COUNTER
 *     3 Uptime (ms)         PERF_COUNTER_LARGE_RAWCOUNT, by reference
 *
 * Run it, then watch it with `perflib-top`.  It runs until SIGINT or SIGTERM
 * (or --duration), then calls PerfStopProvider and exits 0.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perflib.h>

/* What Windows ctrpp would generate from a manifest: GUIDs and templates. */

/* {5b8a7d1e-3c42-4f6b-9e1a-2d7c0f4b8a61} */
static GUID SampleProviderGuid = {
        0x5b8a7d1e, 0x3c42, 0x4f6b, { 0x9e, 0x1a, 0x2d, 0x7c, 0x0f, 0x4b, 0x8a, 0x61 }
};
/* {c1d0f3a2-6e57-4b89-a0c4-71f2e98d3b15} */
static const GUID GeometricWavesGuid = {
        0xc1d0f3a2, 0x6e57, 0x4b89, { 0xa0, 0xc4, 0x71, 0xf2, 0xe9, 0x8d, 0x3b, 0x15 }
};
/* {0e4b9c67-d815-4a3f-8b2e-5f6a1c7d9e03} */
static const GUID SampleProcessGuid = {
        0x0e4b9c67, 0xd815, 0x4a3f, { 0x8b, 0x2e, 0x5f, 0x6a, 0x1c, 0x7d, 0x9e, 0x03 }
};

enum {
        WAVE_VALUE = 1,
        WAVE_OPERATIONS = 2,
        WAVE_ABOVE_HALF = 3,
        WAVE_ABOVE_HALF_BASE = 4,
};
enum {
        PROC_ACTIVE_WAVES = 1,
        PROC_TICKS = 2,
        PROC_UPTIME_MS = 3,
};

/*
 * The counter data of one wave instance.  Giving the template explicit
 * Offsets from this struct (relative to the end of PERF_COUNTERSET_INSTANCE,
 * the one Offset convention) would also let the provider write the struct
 * directly; this sample uses the Perf*CounterValue calls instead.
 */
struct wave_data {
        ULONG value;
        ULONG pad;              /* keeps operations 8-byte aligned */
        ULONGLONG operations;
        ULONG above_half;
        ULONG samples;
};

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[4];
} WaveTemplate = {
        { { 0xc1d0f3a2, 0x6e57, 0x4b89, { 0xa0, 0xc4, 0x71, 0xf2, 0xe9, 0x8d, 0x3b, 0x15 } },
          { 0x5b8a7d1e, 0x3c42, 0x4f6b, { 0x9e, 0x1a, 0x2d, 0x7c, 0x0f, 0x4b, 0x8a, 0x61 } },
          4, PERF_COUNTERSET_MULTI_INSTANCES },
        {
                { WAVE_VALUE, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG),
                  PERF_DETAIL_NOVICE, 0, offsetof(struct wave_data, value) },
                { WAVE_OPERATIONS, PERF_COUNTER_BULK_COUNT, 0, sizeof(ULONGLONG),
                  PERF_DETAIL_NOVICE, 0, offsetof(struct wave_data, operations) },
                { WAVE_ABOVE_HALF, PERF_RAW_FRACTION, 0, sizeof(ULONG),
                  PERF_DETAIL_NOVICE, 0, offsetof(struct wave_data, above_half) },
                { WAVE_ABOVE_HALF_BASE, PERF_RAW_BASE, 0, sizeof(ULONG),
                  PERF_DETAIL_NOVICE, 0, offsetof(struct wave_data, samples) },
        },
};

/* All Offsets 0: perflib lays the counters out like a C struct, in order. */
static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[3];
} ProcessTemplate = {
        { { 0x0e4b9c67, 0xd815, 0x4a3f, { 0x8b, 0x2e, 0x5f, 0x6a, 0x1c, 0x7d, 0x9e, 0x03 } },
          { 0x5b8a7d1e, 0x3c42, 0x4f6b, { 0x9e, 0x1a, 0x2d, 0x7c, 0x0f, 0x4b, 0x8a, 0x61 } },
          3, PERF_COUNTERSET_SINGLE_INSTANCE },
        {
                { PROC_ACTIVE_WAVES, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG),
                  PERF_DETAIL_NOVICE, 0, 0 },
                { PROC_TICKS, PERF_COUNTER_COUNTER, 0, sizeof(ULONG),
                  PERF_DETAIL_NOVICE, 0, 0 },
                { PROC_UPTIME_MS, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE,
                  sizeof(ULONGLONG), PERF_DETAIL_ADVANCED, 0, 0 },
        },
};

/* ---- the program ---- */

#define PERIOD_S 10.0
#define TWO_PI 6.283185307179586

enum wave_shape { SHAPE_SINE, SHAPE_SQUARE, SHAPE_TRIANGLE, SHAPE_PULSE };

struct wave {
        const wchar_t *name;
        ULONG id;
        enum wave_shape shape;
        PPERF_COUNTERSET_INSTANCE instance;     /* NULL while absent */
};

static struct wave waves[] = {
        { L"sine", 0, SHAPE_SINE, NULL },
        { L"square", 1, SHAPE_SQUARE, NULL },
        { L"triangle", 2, SHAPE_TRIANGLE, NULL },
        { L"pulse", 3, SHAPE_PULSE, NULL },
};
#define N_WAVES (sizeof(waves) / sizeof(waves[0]))

static HANDLE provider;
static PPERF_COUNTERSET_INSTANCE process_instance;
/* Read by the collect service thread through the by-reference counter. */
static ULONGLONG uptime_ms;
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
        stop_requested = sig;
}

/* Runs on perflib's service thread when a consumer sends a notification. */
static ULONG WINAPI control_callback(ULONG RequestCode, PVOID Buffer, ULONG BufferSize)
{
        printf("sample-provider: notification %lu (%lu bytes)\n",
               (unsigned long) RequestCode, (unsigned long) BufferSize);
        fflush(stdout);
        return ERROR_SUCCESS;
}

static int check(ULONG status, const char *what)
{
        if (status == ERROR_SUCCESS)
                return 0;
        fprintf(stderr, "sample-provider: %s failed: Win32 error %lu\n",
                what, (unsigned long) status);
        return -1;
}

/* A wave's value at time t, 0..100. */
static ULONG wave_value(enum wave_shape shape, double t)
{
        double phase = fmod(t, PERIOD_S) / PERIOD_S;

        switch (shape) {
        case SHAPE_SINE:
                return (ULONG) lround(50.0 + 50.0 * sin(TWO_PI * phase));
        case SHAPE_SQUARE:
                return phase < 0.5 ? 100 : 0;
        case SHAPE_TRIANGLE:
                return (ULONG) lround(100.0 * (1.0 - fabs(2.0 * phase - 1.0)));
        case SHAPE_PULSE:
                return 100;
        }
        return 0;
}

/* The pulse instance exists during the first half of every period. */
static int wave_present(const struct wave *w, double t)
{
        return w->shape != SHAPE_PULSE || fmod(t, PERIOD_S) < PERIOD_S / 2.0;
}

static int wave_show(struct wave *w)
{
        w->instance = PerfCreateInstance(provider, &GeometricWavesGuid, w->name, w->id);
        if (!w->instance) {
                fprintf(stderr, "sample-provider: PerfCreateInstance(%ls) failed: Win32 error %lu\n",
                        w->name, (unsigned long) GetLastError());
                return -1;
        }
        return 0;
}

static int wave_hide(struct wave *w)
{
        ULONG st = PerfDeleteInstance(provider, w->instance);

        w->instance = NULL;
        return check(st, "PerfDeleteInstance");
}

static int wave_update(struct wave *w, double t, double dt)
{
        ULONG v = wave_value(w->shape, t);
        ULONGLONG ops = (ULONGLONG) llround((double) v * 1000.0 * dt);

        if (check(PerfSetULongCounterValue(provider, w->instance, WAVE_VALUE, v),
                  "PerfSetULongCounterValue") < 0 ||
            check(PerfIncrementULongLongCounterValue(provider, w->instance, WAVE_OPERATIONS, ops),
                  "PerfIncrementULongLongCounterValue") < 0 ||
            check(PerfIncrementULongCounterValue(provider, w->instance, WAVE_ABOVE_HALF, v > 50),
                  "PerfIncrementULongCounterValue") < 0 ||
            check(PerfIncrementULongCounterValue(provider, w->instance, WAVE_ABOVE_HALF_BASE, 1),
                  "PerfIncrementULongCounterValue") < 0)
                return -1;
        return 0;
}

/* One tick: instances come and go, values move. */
static int tick(double t, double dt)
{
        ULONG active = 0;

        for (size_t i = 0; i < N_WAVES; i++) {
                struct wave *w = &waves[i];
                int want = wave_present(w, t);

                if (want && !w->instance && wave_show(w) < 0)
                        return -1;
                if (!want && w->instance && wave_hide(w) < 0)
                        return -1;
                if (w->instance) {
                        if (wave_update(w, t, dt) < 0)
                                return -1;
                        active++;
                }
        }
        __atomic_store_n(&uptime_ms, (ULONGLONG) llround(t * 1000.0), __ATOMIC_RELAXED);
        if (check(PerfSetULongCounterValue(provider, process_instance, PROC_ACTIVE_WAVES, active),
                  "PerfSetULongCounterValue") < 0 ||
            check(PerfIncrementULongCounterValue(provider, process_instance, PROC_TICKS, 1),
                  "PerfIncrementULongCounterValue") < 0)
                return -1;
        return 0;
}

static int start(void)
{
        if (check(PerfStartProvider(&SampleProviderGuid, control_callback, &provider),
                  "PerfStartProvider") < 0)
                return -1;
        if (check(PerfSetCounterSetInfo(provider, &WaveTemplate.CounterSet, sizeof(WaveTemplate)),
                  "PerfSetCounterSetInfo(Geometric Waves)") < 0 ||
            check(PerfSetCounterSetInfo(provider, &ProcessTemplate.CounterSet,
                                        sizeof(ProcessTemplate)),
                  "PerfSetCounterSetInfo(Sample Process)") < 0)
                return -1;
        process_instance = PerfCreateInstance(provider, &SampleProcessGuid, L"_Default", 0);
        if (!process_instance) {
                fprintf(stderr, "sample-provider: PerfCreateInstance(_Default) failed: Win32 error %lu\n",
                        (unsigned long) GetLastError());
                return -1;
        }
        return check(PerfSetCounterRefValue(provider, process_instance, PROC_UPTIME_MS, &uptime_ms),
                     "PerfSetCounterRefValue");
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Sleeps until `until` (monotonic seconds) or a signal, whichever is first. */
static void sleep_until(double until)
{
        struct timespec ts = {
                .tv_sec = (time_t) until,
                .tv_nsec = (long) ((until - floor(until)) * 1e9),
        };

        if (ts.tv_nsec >= 1000000000L)
                ts.tv_nsec = 999999999L;
        (void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int run(unsigned duration_s, unsigned interval_ms)
{
        double t0 = now_s(), prev = 0.0, next = 0.0;

        while (!stop_requested) {
                double t = now_s() - t0;

                if (duration_s > 0 && t >= duration_s)
                        break;
                if (t >= next) {
                        if (tick(t, t - prev) < 0)
                                return -1;
                        prev = t;
                        next += interval_ms / 1000.0;
                        if (next < t)           /* fell behind: don't burst */
                                next = t + interval_ms / 1000.0;
                }
                double wake = next;
                if (duration_s > 0 && wake > duration_s)
                        wake = duration_s;
                sleep_until(t0 + wake);
        }
        return 0;
}

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: sample-provider [OPTION]...\n"
                "Publish sample Perflib counters until interrupted.\n"
                "\n"
                "  -d, --duration SECONDS  stop after SECONDS (default: run until SIGINT/SIGTERM)\n"
                "  -i, --interval MS       update the counters every MS milliseconds (default 1000)\n"
                "  -h, --help              show this help and exit\n"
                "\n"
                "Counters are published in $PERFLIB_RUNTIME_DIR (see perflib(7)); watch them with\n"
                "perflib-top(1).\n");
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
                return -1;
        *ret = (unsigned) v;
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "duration", required_argument, NULL, 'd' },
                { "interval", required_argument, NULL, 'i' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        unsigned duration_s = 0, interval_ms = 1000;
        struct sigaction sa = { .sa_handler = on_signal };
        int c, ret = 1;

        while ((c = getopt_long(argc, argv, "d:i:h", opts, NULL)) != -1) {
                switch (c) {
                case 'd':
                        if (parse_uint(optarg, 0, 86400 * 365, &duration_s) < 0) {
                                fprintf(stderr, "sample-provider: invalid duration '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case 'i':
                        if (parse_uint(optarg, 1, 3600 * 1000, &interval_ms) < 0) {
                                fprintf(stderr, "sample-provider: invalid interval '%s' (1..3600000 ms)\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "sample-provider: unexpected argument '%s'\n", argv[optind]);
                usage(stderr);
                return 2;
        }

        /* No SA_RESTART: the signal must cut the sleep short. */
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
                fprintf(stderr, "sample-provider: sigaction: %s\n", strerror(errno));
                return 1;
        }

        if (start() == 0) {
                printf("sample-provider: pid %ld publishing \"Geometric Waves\" and "
                       "\"Sample Process\"; stop with Ctrl-C\n", (long) getpid());
                fflush(stdout);
                if (run(duration_s, interval_ms) == 0)
                        ret = 0;
        }
        if (provider && check(PerfStopProvider(provider), "PerfStopProvider") < 0)
                ret = 1;
        if (ret == 0) {
                printf("sample-provider: stopped\n");
                fflush(stdout);
        }
        return ret;
}
