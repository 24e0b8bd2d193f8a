/* SPDX-License-Identifier: MIT */
/* The bench's providers, the same from a process and from a plugin: see bench-publish.h. */
#include <stdio.h>
#include <stdlib.h>

#include "bench-publish.h"

ULONG WINAPI bench_answer(ULONG request, PVOID buffer, ULONG size)
{
        (void) request, (void) buffer, (void) size;
        return ERROR_SUCCESS;
}

static ULONG add_instances(HANDLE h, const struct bench_shape *s)
{
        for (uint32_t i = 0; i < s->instances; i++) {
                PPERF_COUNTERSET_INSTANCE in;
                char name[32];

                snprintf(name, sizeof(name), "i%u", i);
                in = PerfCreateInstanceUtf8(h, &s->cset, name, i);
                if (!in)
                        return GetLastError();
                for (uint32_t k = 0; k < s->counters; k++)
                        (void) PerfSetULongLongCounterValue(h, in, k + 1, (ULONGLONG) i * k);
        }
        return ERROR_SUCCESS;
}

ULONG bench_publish(const struct bench_shape *s, HANDLE *ret)
{
        size_t size = sizeof(PERF_COUNTERSET_INFO) + s->counters * sizeof(PERF_COUNTER_INFO);
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx), .ControlCallback = s->callback };
        PPERF_COUNTERSET_INFO t = calloc(1, size);
        PPERF_COUNTER_INFO ci = (PPERF_COUNTER_INFO) (t + 1);
        GUID prov = s->prov;
        HANDLE h;
        ULONG status;

        if (!t)
                return ERROR_OUTOFMEMORY;
        *t = (PERF_COUNTERSET_INFO){ .CounterSetGuid = s->cset, .ProviderGuid = s->prov,
                .NumCounters = s->counters, .InstanceType = PERF_COUNTERSET_MULTI_INSTANCES };
        for (uint32_t i = 0; i < s->counters; i++)
                ci[i] = (PERF_COUNTER_INFO){ .CounterId = i + 1, .Size = 8,
                        .Type = PERF_COUNTER_BULK_COUNT, .DetailLevel = PERF_DETAIL_NOVICE };
        status = PerfStartProviderEx(&prov, &ctx, &h);
        if (status == ERROR_SUCCESS) {
                status = PerfSetCounterSetInfo(h, t, (ULONG) size);
                if (status == ERROR_SUCCESS)
                        status = add_instances(h, s);
                if (status != ERROR_SUCCESS)
                        (void) PerfStopProvider(h);
        }
        free(t);
        if (status == ERROR_SUCCESS)
                *ret = h;
        return status;
}
