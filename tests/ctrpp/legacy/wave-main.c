/* SPDX-License-Identifier: MIT */
/*
 * A provider written against ctrpp -legacy's output the way the Windows
 * SDK 6.0 sample's main.c is: PerfAutoInitialize(), instances created on
 * hDataSource_<base>_1 with CtrSetGuid_<base>_1_<c>, values by id (set
 * directly in the multi-instance set, by reference in the single one),
 * PerfAutoCleanup() at the end.  Written for test-ctrpp-legacy.sh: it
 * prints "ready" once every value is published, then serves until stdin
 * closes.
 */
#include <stdio.h>

#include "WaveProvider.h"

/* By-reference counters: perflib reads these where they are. */
static ULONG sine = 42, steps = 7, base = 4, ratio = 1;

static ULONG publish(void)
{
        PPERF_COUNTERSET_INSTANCE gen1, gen2, summary;
        ULONG Status;

        gen1 = PerfCreateInstance(hDataSource_WaveProvider_1, &CtrSetGuid_WaveProvider_1_1, L"gen1", 0);
        gen2 = PerfCreateInstance(hDataSource_WaveProvider_1, &CtrSetGuid_WaveProvider_1_1, L"gen2", 1);
        summary = PerfCreateInstance(hDataSource_WaveProvider_1, &CtrSetGuid_WaveProvider_1_2,
                                     L"_Default", 0);
        if (gen1 == NULL || gen2 == NULL || summary == NULL)
                return GetLastError();
        Status = PerfSetULongCounterValue(hDataSource_WaveProvider_1, gen1, 1, 11);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(hDataSource_WaveProvider_1, gen1, 2, 12);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(hDataSource_WaveProvider_1, gen2, 1, 21);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(hDataSource_WaveProvider_1, gen2, 2, 22);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetCounterRefValue(hDataSource_WaveProvider_1, summary, 3, &sine);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetCounterRefValue(hDataSource_WaveProvider_1, summary, 4, &steps);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(hDataSource_WaveProvider_1, summary, 5, base);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetCounterRefValue(hDataSource_WaveProvider_1, summary, 6, &ratio);
        return Status;
}

int main(void)
{
        ULONG Status = PerfAutoInitialize();

        if (Status != ERROR_SUCCESS) {
                fprintf(stderr, "PerfAutoInitialize: %lu\n", (unsigned long) Status);
                return 1;
        }
        Status = publish();
        if (Status != ERROR_SUCCESS) {
                fprintf(stderr, "publishing: %lu\n", (unsigned long) Status);
                PerfAutoCleanup();
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        while (getchar() != EOF)
                ;
        return PerfAutoCleanup() == ERROR_SUCCESS ? 0 : 1;
}
