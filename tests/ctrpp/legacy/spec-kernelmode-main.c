/* SPDX-License-Identifier: MIT */
/*
 * A provider of the spec's kernel-mode example manifest through ctrpp
 * -legacy, for test-ctrpp-legacy-spec.sh: the same two counterset shapes as
 * the user-mode example, laid out by the provider's structs (struct and
 * field attributes).  Linux has no PCW, so the provider runs in user space
 * (ctrpp(1)).  "My System Objects" is published the way struct-based
 * code does it, by copying a whole MY_SYSTEMOBJECTS_DATA over the
 * instance's counter data (every field there is at its own offset);
 * "My LogicalDisk" holds a by-reference average timer, whose pointer does
 * not fit the 32-bit field the manifest names, so perflib lays that set
 * out itself (as Windows does with offsets it cannot use) and the values
 * are set by id.  Prints "ready", then serves until stdin closes.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "spec-kernelmode-structs.h"
#include "example-kernelmode.h"

#define SECOND_100NS    10000000ULL
#define UP_SECONDS      42

static ULONG transfer_ns = 3000000;

static ULONGLONG now_100ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (ULONGLONG) ts.tv_sec * SECOND_100NS + (ULONGLONG) ts.tv_nsec / 100;
}

static ULONG publish_system_objects(void)
{
        const MY_SYSTEMOBJECTS_DATA data = {
                .ProcessCount = 300, .ThreadCount = 900,
                .SystemElapsedTime = now_100ns() - UP_SECONDS * SECOND_100NS,
                .PerfTime = now_100ns(), .PerfFreq = SECOND_100NS,
        };
        PPERF_COUNTERSET_INSTANCE inst;

        inst = PerfCreateInstance(hDataSource_example_kernelmode_1,
                                  &CtrSetGuid_example_kernelmode_1_2, L"_Default", 0);
        if (inst == NULL)
                return GetLastError();
        memcpy(inst + 1, &data, sizeof(data));
        return ERROR_SUCCESS;
}

static ULONG publish_disk(void)
{
        HANDLE h = hDataSource_example_kernelmode_1;
        PPERF_COUNTERSET_INSTANCE inst;
        ULONG Status;

        inst = PerfCreateInstance(h, &CtrSetGuid_example_kernelmode_1_1, L"E:", 0);
        if (inst == NULL)
                return GetLastError();
        Status = PerfSetULongCounterValue(h, inst, 1, 5000);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetCounterRefValue(h, inst, 2, &transfer_ns);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(h, inst, 3, 1);
        return Status;
}

int main(void)
{
        ULONG Status = PerfAutoInitialize();

        if (Status != ERROR_SUCCESS) {
                fprintf(stderr, "PerfAutoInitialize: %lu\n", (unsigned long) Status);
                return 1;
        }
        Status = publish_system_objects();
        if (Status == ERROR_SUCCESS)
                Status = publish_disk();
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
