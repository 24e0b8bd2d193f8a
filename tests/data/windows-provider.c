/*
 * A provider written as on Windows: only the Windows includes (no Linux
 * header), a template shaped like ctrpp's user-mode output (every Offset 0),
 * and the usual calls.  Built by test-install.sh with nothing but
 * `pkg-config --cflags --libs perflib`, as C and as C++.
 */
#include <perflib.h>
#include <winperf.h>
#include <stdio.h>

static GUID ProviderGuid = { 0x5e1d7a4c, 0x1b2f, 0x4c3d, { 0x9a, 0x8b, 0x7c, 0x6d, 0x5e, 0x4f, 0x30, 0x21 } };
static GUID CounterSetGuid = { 0x5e1d7a4d, 0x1b2f, 0x4c3d, { 0x9a, 0x8b, 0x7c, 0x6d, 0x5e, 0x4f, 0x30, 0x21 } };

static struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counter0;
        PERF_COUNTER_INFO Counter1;
} CounterSetInfo = {
        { { 0x5e1d7a4d, 0x1b2f, 0x4c3d, { 0x9a, 0x8b, 0x7c, 0x6d, 0x5e, 0x4f, 0x30, 0x21 } },
          { 0x5e1d7a4c, 0x1b2f, 0x4c3d, { 0x9a, 0x8b, 0x7c, 0x6d, 0x5e, 0x4f, 0x30, 0x21 } },
          2, PERF_COUNTERSET_MULTI_INSTANCES },
        { 1, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 0, 0 },
        { 2, PERF_COUNTER_BULK_COUNT, 0, sizeof(ULONGLONG), PERF_DETAIL_NOVICE, 0, 0 },
};

int main(void)
{
        HANDLE Provider = NULL;
        PPERF_COUNTERSET_INSTANCE Instance;
        ULONG Status;

        Status = PerfStartProvider(&ProviderGuid, NULL, &Provider);
        if (Status != ERROR_SUCCESS)
                return fprintf(stderr, "PerfStartProvider: %lu\n", (unsigned long) Status), 1;
        Status = PerfSetCounterSetInfo(Provider, &CounterSetInfo.CounterSet, sizeof(CounterSetInfo));
        if (Status != ERROR_SUCCESS)
                return fprintf(stderr, "PerfSetCounterSetInfo: %lu\n", (unsigned long) Status), 1;
        Instance = PerfCreateInstance(Provider, &CounterSetGuid, L"_Total", 0);
        if (Instance == NULL)
                return fprintf(stderr, "PerfCreateInstance: %lu\n", (unsigned long) GetLastError()), 1;
        PerfSetULongCounterValue(Provider, Instance, 1, 41);
        PerfIncrementULongCounterValue(Provider, Instance, 1, 1);
        PerfIncrementULongLongCounterValue(Provider, Instance, 2, 1000);
        /* The automatic layout is the C layout of { ULONG; ULONGLONG; }. */
        struct Data { ULONG c1; ULONGLONG c2; } *Data = (struct Data *) (Instance + 1);
        if (Data->c1 != 42 || Data->c2 != 1000)
                return fprintf(stderr, "values: %lu %llu\n", (unsigned long) Data->c1,
                               (unsigned long long) Data->c2), 1;
        PerfDeleteInstance(Provider, Instance);
        PerfStopProvider(Provider);
        printf("windows-style provider: ok\n");
        return 0;
}
