/* SPDX-License-Identifier: MIT */
/*
 * bench-pcq-format: what turning raw samples into text costs a client.
 * 10,000 counter values, each from two samples, are computed with
 * pcq_calculate and formatted with pcq_value_text (6 decimals, as typeperf
 * prints), for a mix of types like a real query's: raw counts, rates,
 * 100 ns timers, averages with their base, fractions, multi timers, hex and
 * elapsed time.  The batch is timed many times; the best run is printed,
 * per value and for the 10,000.  Built by `make check`, never run as a test.
 *
 *   bench-pcq-format [--quick]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcq.h"
#include "perflib.h"

#define N_VALUES        10000
#define RUNS            5

struct item {
        uint32_t type;
        int32_t scale;
        uint64_t attrib;
        struct pcq_raw prev, cur;
};

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The mix, in tenths of a percent: what a Process / Processor / Disk /
 * Network query returns, mostly counts and rates, some timers.
 */
static const struct {
        uint32_t type;
        unsigned share;
        int32_t scale;
        uint64_t attrib;
} mix[] = {
        { PERF_COUNTER_RAWCOUNT, 200, 0, 0 },
        { PERF_COUNTER_LARGE_RAWCOUNT, 200, 0, 0 },
        { PERF_COUNTER_COUNTER, 150, 0, 0 },
        { PERF_COUNTER_BULK_COUNT, 150, 0, 0 },
        { PERF_100NSEC_TIMER, 100, 0, 0 },
        { PERF_100NSEC_TIMER_INV, 50, 0, 0 },
        { PERF_AVERAGE_TIMER, 50, 0, 0 },
        { PERF_AVERAGE_BULK, 30, 0, 0 },
        { PERF_RAW_FRACTION, 20, 0, 0 },
        { PERF_COUNTER_MULTI_TIMER, 20, 0, 0 },
        { PERF_COUNTER_LARGE_RAWCOUNT_HEX, 10, 0, 0 },
        { PERF_ELAPSED_TIME, 10, 0, 0 },
        { PERF_COUNTER_LARGE_RAWCOUNT, 10, -3, PERF_ATTRIB_DISPLAY_AS_REAL },
};

/* Plausible samples one second apart, varied per value so no two are alike. */
static void fill(struct item *it, uint32_t type, int32_t scale, uint64_t attrib, unsigned i)
{
        uint64_t t0 = 1000000000ull + i, t1 = t0 + 10000000ull;

        it->type = type;
        it->scale = scale;
        it->attrib = attrib;
        it->prev = (struct pcq_raw){ .first = 1000ull * i, .second = 50ull + i, .multi = 4,
                                     .freq = 10000000, .perf_time = t0,
                                     .perf_freq = 10000000, .time_100ns = t0 };
        it->cur = it->prev;
        it->cur.first += 123457ull * (i % 97 + 1);
        it->cur.second += i % 13 + 1;
        it->cur.perf_time = it->cur.time_100ns = t1;
        if (type == PERF_ELAPSED_TIME)
                it->cur.second = it->cur.first + 3600ull * 10000000ull;
}

static struct item *make_items(void)
{
        struct item *items = calloc(N_VALUES, sizeof(*items));
        unsigned i = 0;

        if (!items)
                return NULL;
        for (size_t m = 0; m < sizeof(mix) / sizeof(mix[0]); m++)
                for (unsigned k = 0; k < mix[m].share * N_VALUES / 1000 && i < N_VALUES; k++, i++)
                        fill(&items[i], mix[m].type, mix[m].scale, mix[m].attrib, i);
        for (; i < N_VALUES; i++)
                fill(&items[i], PERF_COUNTER_RAWCOUNT, 0, 0, i);
        /* Interleave the types as a counterset's counters are, not in runs. */
        for (i = 0; i < N_VALUES; i++) {
                unsigned j = (i * 7919u) % N_VALUES;
                struct item t = items[i];

                items[i] = items[j];
                items[j] = t;
        }
        return items;
}

/* One batch: the nanoseconds it took; *ret_chars sums the text lengths so nothing is optimised away. */
static uint64_t run_batch(const struct item *items, size_t *ret_chars, unsigned *ret_bad)
{
        char buf[64];
        size_t chars = 0;
        unsigned bad = 0;
        uint64_t t0 = now_ns();

        for (unsigned i = 0; i < N_VALUES; i++) {
                const struct item *it = &items[i];
                double v;

                if (pcq_calculate(it->type, it->scale, &it->prev, &it->cur, 0, &v) ||
                    pcq_value_text(v, it->cur.first, it->type, it->attrib, 6, 0, buf, sizeof(buf))) {
                        bad++;
                        continue;
                }
                chars += strlen(buf);
        }
        *ret_chars = chars;
        *ret_bad = bad;
        return now_ns() - t0;
}

int main(int argc, char **argv)
{
        bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
        unsigned batches = quick ? 100 : 1000, bad = 0;
        uint64_t best = UINT64_MAX;
        size_t chars = 0;
        struct item *items;

        if (argc > 1 && !quick) {
                fprintf(stderr, "Usage: bench-pcq-format [--quick]\n");
                return strcmp(argv[1], "--help") == 0 ? 0 : 2;
        }
        items = make_items();
        if (!items) {
                fprintf(stderr, "bench-pcq-format: out of memory\n");
                return 1;
        }
        printf("# pcq_calculate + pcq_value_text of %u values from two samples (%s run)\n",
               N_VALUES, quick ? "quick" : "full");
        printf("# %zu types in the mix; best of %u runs of %u batches\n",
               sizeof(mix) / sizeof(mix[0]), RUNS, batches);
        for (unsigned r = 0; r < RUNS; r++) {
                uint64_t total = 0;

                for (unsigned b = 0; b < batches; b++)
                        total += run_batch(items, &chars, &bad);
                if (total / batches < best)
                        best = total / batches;
        }
        if (bad) {
                fprintf(stderr, "bench-pcq-format: %u of %u values failed to compute\n", bad, N_VALUES);
                free(items);
                return 1;
        }
        printf("# %zu characters of text per batch\n", chars);
        printf("format-per-value: %.1f ns\n", (double)best / N_VALUES);
        printf("format-10000-values: %.1f us\n", (double)best / 1000.0);
        free(items);
        return 0;
}
