/* SPDX-License-Identifier: MIT */
/*
 * A provider of the spec's user-mode example manifest, written against
 * ctrpp -legacy's output as the Windows SDK 6.0 sample's main.c is, for
 * test-ctrpp-legacy-spec.sh.  It publishes every counterset shape of that
 * manifest:
 *   - "My LogicalDisk", multiple instances: a raw count set by id, and an
 *     average timer by reference (perflib reads it where it is) with its
 *     base set by id;
 *   - "My System Objects", single instance: a count shown in hexadecimal,
 *     and an elapsed time with its own PerfTime and PerfFreq counters.
 * A thread adds 1 ms and one transfer per 10 ms, so the average is 1 ms
 * a transfer whenever typeperf samples.  Prints "ready", then serves until
 * stdin closes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "example-usermode.h"

#define SECOND_100NS    10000000ULL
#define UP_SECONDS      42

/* The by-reference average timer: perflib reads it where it is. */
static ULONG transfer_ns;
static PPERF_COUNTERSET_INSTANCE disk_c, system_objects;
static atomic_bool stopping;

static ULONGLONG now_100ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (ULONGLONG) ts.tv_sec * SECOND_100NS + (ULONGLONG) ts.tv_nsec / 100;
}

static void *transfers(void *arg)
{
        const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
        ULONG count = 0;

        (void) arg;
        while (!atomic_load(&stopping)) {
                nanosleep(&tick, NULL);
                __atomic_store_n(&transfer_ns, transfer_ns + 1000000, __ATOMIC_RELEASE);
                PerfSetULongCounterValue(hDataSource_example_usermode_1, disk_c, 3, ++count);
                PerfSetULongLongCounterValue(hDataSource_example_usermode_1, system_objects, 4,
                                             now_100ns());
        }
        return NULL;
}

static ULONG publish(void)
{
        HANDLE h = hDataSource_example_usermode_1;
        PPERF_COUNTERSET_INSTANCE disk_d;
        ULONG Status;

        disk_c = PerfCreateInstance(h, &CtrSetGuid_example_usermode_1_1, L"C:", 0);
        disk_d = PerfCreateInstance(h, &CtrSetGuid_example_usermode_1_1, L"D:", 1);
        system_objects = PerfCreateInstance(h, &CtrSetGuid_example_usermode_1_2, L"_Default", 0);
        if (disk_c == NULL || disk_d == NULL || system_objects == NULL)
                return GetLastError();
        Status = PerfSetULongCounterValue(h, disk_c, 1, 1000);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(h, disk_d, 1, 2000);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetCounterRefValue(h, disk_c, 2, &transfer_ns);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(h, system_objects, 1, 255);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongCounterValue(h, system_objects, 2, 7);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongLongCounterValue(h, system_objects, 3,
                                                      now_100ns() - UP_SECONDS * SECOND_100NS);
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongLongCounterValue(h, system_objects, 4, now_100ns());
        if (Status == ERROR_SUCCESS)
                Status = PerfSetULongLongCounterValue(h, system_objects, 5, SECOND_100NS);
        return Status;
}

int main(void)
{
        ULONG Status = PerfAutoInitialize();
        pthread_t thread;

        if (Status != ERROR_SUCCESS) {
                fprintf(stderr, "PerfAutoInitialize: %lu\n", (unsigned long) Status);
                return 1;
        }
        Status = publish();
        if (Status != ERROR_SUCCESS || pthread_create(&thread, NULL, transfers, NULL) != 0) {
                fprintf(stderr, "publishing: %lu\n", (unsigned long) Status);
                PerfAutoCleanup();
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        while (getchar() != EOF)
                ;
        atomic_store(&stopping, true);
        pthread_join(thread, NULL);
        return PerfAutoCleanup() == ERROR_SUCCESS ? 0 : 1;
}
