/* SPDX-License-Identifier: MIT */
/*
 * interop-provider: a provider whose every published value is known in
 * advance, for the impacket interop test (pcq_session.py checks the values
 * perflibd returns against the ones listed here; keep the two in step).
 *
 *   "Interop Single" {6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9}, single instance
 *   "_Default" id 0:
 *     1 Fixed 32    PERF_COUNTER_RAWCOUNT         42
 *     2 Fixed 64    PERF_COUNTER_LARGE_RAWCOUNT   0x0123456789abcdef
 *     3 Ticks       PERF_COUNTER_COUNTER          +1 every 10 ms (increases)
 *     4 By Ref      PERF_COUNTER_LARGE_RAWCOUNT   0xfeedface12345678, by reference
 *
 *   "Interop Multi" {0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9}, multiple
 *   instances "alpha" 1, "beta" 2, "gamma" 3:
 *     1 Value       PERF_COUNTER_RAWCOUNT         1000 + id
 *     2 Big         PERF_COUNTER_LARGE_RAWCOUNT   (id << 40) | 7
 *
 *   "Interop Many" {5e6f7081-92a3-4b4c-8d5e-6f708192a3b4}, multiple
 *   instances "inst-000" 0 ... "inst-299" 299, enough that the answers
 *   (and ValidateCounters requests) span several DCE/RPC fragments:
 *     1 Id          PERF_COUNTER_RAWCOUNT         the instance id
 *
 * It prints "interop-provider: ready" once everything is published and runs
 * until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include <perflib.h>

/* {3c9d8e7f-6a5b-4c4d-9e3f-2a1b0c9d8e7f} */
static GUID ProviderGuid = {
        0x3c9d8e7f, 0x6a5b, 0x4c4d, { 0x9e, 0x3f, 0x2a, 0x1b, 0x0c, 0x9d, 0x8e, 0x7f }
};
static const GUID SingleGuid = {
        0x6f1e2d3c, 0x4b5a, 0x4978, { 0x86, 0x95, 0xa4, 0xb3, 0xc2, 0xd1, 0xe0, 0xf9 }
};
static const GUID MultiGuid = {
        0x0a1b2c3d, 0x4e5f, 0x4061, { 0x82, 0x73, 0x94, 0xa5, 0xb6, 0xc7, 0xd8, 0xe9 }
};

static const GUID ManyGuid = {
        0x5e6f7081, 0x92a3, 0x4b4c, { 0x8d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4 }
};
#define MANY_INSTANCES 300

#define FIXED32 42u
#define FIXED64 0x0123456789abcdefULL
#define BYREF64 0xfeedface12345678ULL

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[4];
} SingleTemplate = {
        { { 0x6f1e2d3c, 0x4b5a, 0x4978, { 0x86, 0x95, 0xa4, 0xb3, 0xc2, 0xd1, 0xe0, 0xf9 } },
          { 0x3c9d8e7f, 0x6a5b, 0x4c4d, { 0x9e, 0x3f, 0x2a, 0x1b, 0x0c, 0x9d, 0x8e, 0x7f } },
          4, PERF_COUNTERSET_SINGLE_INSTANCE },
        {
                { 1, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 0, 0 },
                { 2, PERF_COUNTER_LARGE_RAWCOUNT, 0, sizeof(ULONGLONG), PERF_DETAIL_NOVICE, 0, 0 },
                { 3, PERF_COUNTER_COUNTER, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 0, 0 },
                { 4, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE, sizeof(ULONGLONG),
                  PERF_DETAIL_ADVANCED, 0, 0 },
        },
};

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[2];
} MultiTemplate = {
        { { 0x0a1b2c3d, 0x4e5f, 0x4061, { 0x82, 0x73, 0x94, 0xa5, 0xb6, 0xc7, 0xd8, 0xe9 } },
          { 0x3c9d8e7f, 0x6a5b, 0x4c4d, { 0x9e, 0x3f, 0x2a, 0x1b, 0x0c, 0x9d, 0x8e, 0x7f } },
          2, PERF_COUNTERSET_MULTI_INSTANCES },
        {
                { 1, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 0, 0 },
                { 2, PERF_COUNTER_LARGE_RAWCOUNT, 0, sizeof(ULONGLONG), PERF_DETAIL_NOVICE, 0, 0 },
        },
};

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counters[1];
} ManyTemplate = {
        { { 0x5e6f7081, 0x92a3, 0x4b4c, { 0x8d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4 } },
          { 0x3c9d8e7f, 0x6a5b, 0x4c4d, { 0x9e, 0x3f, 0x2a, 0x1b, 0x0c, 0x9d, 0x8e, 0x7f } },
          1, PERF_COUNTERSET_MULTI_INSTANCES },
        {
                { 1, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 0, 0 },
        },
};

/* What ctrpp's resource output would hold for the same manifest. */
#define COUNTER(i, t, a, sz, lvl, nm, desc) { \
        .id = (i), .type = (t), .attrib = (a), .size = (sz), .detail_level = (lvl), \
        .default_scale = 0, .aggregate = CTRPP_NO_AGGREGATE, .base_id = CTRPP_NO_ID, \
        .perf_time_id = CTRPP_NO_ID, .perf_freq_id = CTRPP_NO_ID, \
        .multi_counter_id = CTRPP_NO_ID, .name_id = CTRPP_NO_ID, \
        .description_id = CTRPP_NO_ID, .name = (nm), .description = (desc) }

static const struct ctrpp_counter_desc single_counters[] = {
        COUNTER(1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE,
                "Fixed 32", "Always 42"),
        COUNTER(2, PERF_COUNTER_LARGE_RAWCOUNT, 0, 8, PERF_DETAIL_NOVICE,
                "Fixed 64", "Always 0x0123456789abcdef"),
        COUNTER(3, PERF_COUNTER_COUNTER, 0, 4, PERF_DETAIL_NOVICE,
                "Ticks", "Counts up every 10 ms"),
        COUNTER(4, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE, 8, PERF_DETAIL_ADVANCED,
                "By Ref", "Always 0xfeedface12345678, read by reference"),
};

static const struct ctrpp_counter_desc multi_counters[] = {
        COUNTER(1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE,
                "Value", "1000 plus the instance id"),
        COUNTER(2, PERF_COUNTER_LARGE_RAWCOUNT, 0, 8, PERF_DETAIL_NOVICE,
                "Big", "The instance id shifted left by 40, or 7"),
};

static const struct ctrpp_counter_desc many_counters[] = {
        COUNTER(1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, "Id", "The instance id"),
};

static const struct ctrpp_counterset_desc countersets[] = {
        {
                .guid = { 0x6f1e2d3c, 0x4b5a, 0x4978, { 0x86, 0x95, 0xa4, 0xb3, 0xc2, 0xd1, 0xe0, 0xf9 } },
                .instance_type = PERF_COUNTERSET_SINGLE_INSTANCE,
                .name_id = CTRPP_NO_ID, .description_id = CTRPP_NO_ID,
                .n_counters = 4, .counters = single_counters,
                .name = "Interop Single", .description = "Fixed values for the interop test",
                .instances = "single",
        },
        {
                .guid = { 0x0a1b2c3d, 0x4e5f, 0x4061, { 0x82, 0x73, 0x94, 0xa5, 0xb6, 0xc7, 0xd8, 0xe9 } },
                .instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
                .name_id = CTRPP_NO_ID, .description_id = CTRPP_NO_ID,
                .n_counters = 2, .counters = multi_counters,
                .name = "Interop Multi", .description = "Three instances with fixed values",
                .instances = "multiple",
        },
        {
                .guid = { 0x5e6f7081, 0x92a3, 0x4b4c, { 0x8d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4 } },
                .instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
                .name_id = CTRPP_NO_ID, .description_id = CTRPP_NO_ID,
                .n_counters = 1, .counters = many_counters,
                .name = "Interop Many", .description = "Enough instances to need several fragments",
                .instances = "multiple",
        },
};

static const struct ctrpp_provider_desc description = {
        .version = CTRPP_DESCRIPTION_VERSION,
        .size = sizeof(struct ctrpp_provider_desc),
        .guid = { 0x3c9d8e7f, 0x6a5b, 0x4c4d, { 0x9e, 0x3f, 0x2a, 0x1b, 0x0c, 0x9d, 0x8e, 0x7f } },
        .resource_base = CTRPP_NO_ID,
        .n_countersets = 3, .countersets = countersets,
        .name = "InteropProvider", .symbol = "InteropProvider",
        .schema_version = "1.1", .manifest = "interop-provider.man",
};

static HANDLE provider;
static PPERF_COUNTERSET_INSTANCE single;
/* Read through the by-reference counter; never changes. */
static ULONGLONG byref_value = BYREF64;
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
        stop_requested = sig;
}

static int check(ULONG status, const char *what)
{
        if (status == ERROR_SUCCESS)
                return 0;
        fprintf(stderr, "interop-provider: %s failed: Win32 error %lu\n",
                what, (unsigned long) status);
        return -1;
}

static int start_multi(void)
{
        static const wchar_t *const names[] = { L"alpha", L"beta", L"gamma" };

        for (ULONG id = 1; id <= 3; id++) {
                PPERF_COUNTERSET_INSTANCE inst =
                        PerfCreateInstance(provider, &MultiGuid, names[id - 1], id);

                if (!inst)
                        return check(GetLastError(), "PerfCreateInstance(multi)");
                if (check(PerfSetULongCounterValue(provider, inst, 1, 1000 + id),
                          "PerfSetULongCounterValue") < 0 ||
                    check(PerfSetULongLongCounterValue(provider, inst, 2,
                                                       ((ULONGLONG) id << 40) | 7),
                          "PerfSetULongLongCounterValue") < 0)
                        return -1;
        }
        return 0;
}

static int start_many(void)
{
        for (ULONG id = 0; id < MANY_INSTANCES; id++) {
                wchar_t name[16];
                PPERF_COUNTERSET_INSTANCE inst;

                swprintf(name, sizeof(name) / sizeof(name[0]), L"inst-%03lu", (unsigned long) id);
                inst = PerfCreateInstance(provider, &ManyGuid, name, id);
                if (!inst)
                        return check(GetLastError(), "PerfCreateInstance(many)");
                if (check(PerfSetULongCounterValue(provider, inst, 1, id),
                          "PerfSetULongCounterValue") < 0)
                        return -1;
        }
        return 0;
}

static int start(void)
{
        if (check(PerfStartProvider(&ProviderGuid, NULL, &provider), "PerfStartProvider") < 0)
                return -1;
        if (pl_set_provider_description(provider, &description) < 0) {
                fprintf(stderr, "interop-provider: pl_set_provider_description failed\n");
                return -1;
        }
        if (check(PerfSetCounterSetInfo(provider, &SingleTemplate.CounterSet,
                                        sizeof(SingleTemplate)), "PerfSetCounterSetInfo(single)") < 0 ||
            check(PerfSetCounterSetInfo(provider, &MultiTemplate.CounterSet,
                                        sizeof(MultiTemplate)), "PerfSetCounterSetInfo(multi)") < 0 ||
            check(PerfSetCounterSetInfo(provider, &ManyTemplate.CounterSet,
                                        sizeof(ManyTemplate)), "PerfSetCounterSetInfo(many)") < 0)
                return -1;
        single = PerfCreateInstance(provider, &SingleGuid, L"_Default", 0);
        if (!single)
                return check(GetLastError(), "PerfCreateInstance(single)");
        if (check(PerfSetULongCounterValue(provider, single, 1, FIXED32), "PerfSetULongCounterValue") < 0 ||
            check(PerfSetULongLongCounterValue(provider, single, 2, FIXED64),
                  "PerfSetULongLongCounterValue") < 0 ||
            check(PerfSetCounterRefValue(provider, single, 4, &byref_value),
                  "PerfSetCounterRefValue") < 0)
                return -1;
        return start_multi() < 0 ? -1 : start_many();
}

int main(void)
{
        struct sigaction sa = { .sa_handler = on_signal };
        const struct timespec tick = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
        int ret = 1;

        /* No SA_RESTART: the signal must cut the sleep short. */
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
                fprintf(stderr, "interop-provider: sigaction: %s\n", strerror(errno));
                return 1;
        }
        if (start() == 0) {
                printf("interop-provider: ready\n");
                fflush(stdout);
                ret = 0;
                while (!stop_requested) {
                        if (check(PerfIncrementULongCounterValue(provider, single, 3, 1),
                                  "PerfIncrementULongCounterValue") < 0) {
                                ret = 1;
                                break;
                        }
                        (void) nanosleep(&tick, NULL);
                }
        }
        if (provider && check(PerfStopProvider(provider), "PerfStopProvider") < 0)
                ret = 1;
        return ret;
}
