/* SPDX-License-Identifier: MIT */
/*
 * usermode-provider: the spec's user-mode example manifest
 * (example-usermode.man) as a working provider.  ctrpp turns the manifest
 * into example-usermode.h (GUIDs, templates, counter ids,
 * CounterInitialize/CounterCleanup) and example-usermode_strings.c (the
 * names and help, which make the provider self-describing); this file is
 * the code a Windows developer writes around them, unchanged but for the
 * includes:
 *
 *      ctrpp example-usermode.man
 *      cc -o usermode-provider usermode-provider.c example-usermode_strings.c \
 *         sample-common.c $(pkg-config --cflags --libs perflib) -lm
 *
 * "My LogicalDisk" (one instance per PATH on the command line):
 *      My Free Megabytes          the filesystem's free space, set every tick
 *      My Avg. Disk sec/Transfer  a reference counter: its value lives in this
 *                                 program's memory (struct disk) and is read
 *                                 when a consumer collects
 *      (base) transfer count      incremented every tick
 * "My System Objects" (single instance): Process Count, Thread Count, and
 * System Elapsed Time (the boot time, with its own clock and frequency
 * counters, so a consumer shows the uptime).
 *
 * The manifest says callback="custom", so CounterInitialize takes a
 * notification callback; this one only reports what it is told (-v).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perflib.h>

#include "example-usermode.h"
#include "sample-common.h"

#define PROGRAM "usermode-provider"

struct disk {
        const char *path;
        PPERF_COUNTERSET_INSTANCE instance;
        /* My Avg. Disk sec/Transfer: read by perflib's collect thread, hence atomics. */
        ULONG transfer_time_ns;
        uint32_t seed;
};

struct provider {
        struct disk *disks;
        unsigned n_disks;
        PPERF_COUNTERSET_INSTANCE system;
};

static int verbose_notifications;

static const char *request_name(ULONG code)
{
        switch (code) {
        case PERF_ADD_COUNTER:
                return "PERF_ADD_COUNTER";
        case PERF_REMOVE_COUNTER:
                return "PERF_REMOVE_COUNTER";
        case PERF_ENUMERATE_INSTANCES:
                return "PERF_ENUMERATE_INSTANCES";
        case PERF_COLLECT_START:
                return "PERF_COLLECT_START";
        case PERF_COLLECT_END:
                return "PERF_COLLECT_END";
        default:
                return "unknown request";
        }
}

/* Runs on perflib's service thread when a consumer's request reaches us. */
static ULONG WINAPI notification(ULONG RequestCode, PVOID Buffer, ULONG BufferSize)
{
        (void) Buffer;
        if (verbose_notifications) {
                printf(PROGRAM ": %s (%lu bytes)\n", request_name(RequestCode),
                       (unsigned long) BufferSize);
                fflush(stdout);
        }
        return ERROR_SUCCESS;
}

static int disk_start(struct disk *d, ULONG id)
{
        ULONG free_mb;
        int r;

        r = sc_free_megabytes(d->path, &free_mb);
        if (r < 0) {
                fprintf(stderr, PROGRAM ": %s: %s\n", d->path, strerror(-r));
                return r;
        }
        d->seed = 0x5eed0000u + id;
        d->instance = PerfCreateInstanceUtf8(MY_PROVIDER, &MY_LOGICALDISKGuid, d->path, id);
        if (!d->instance)
                return sc_check(GetLastError(), PROGRAM, "PerfCreateInstance(My LogicalDisk)");
        return sc_check(PerfSetCounterRefValue(MY_PROVIDER, d->instance,
                                               MY_LOGICALDISK_SEC_PER_TRANSFER,
                                               &d->transfer_time_ns),
                        PROGRAM, "PerfSetCounterRefValue");
}

static int system_start(struct provider *p)
{
        ULONGLONG boot_ns, now_ns;
        int r;

        p->system = PerfCreateInstance(MY_PROVIDER, &MY_SYSTEMOBJECTSGuid, L"_Default", 0);
        if (!p->system)
                return sc_check(GetLastError(), PROGRAM, "PerfCreateInstance(My System Objects)");
        r = sc_clock(&boot_ns, &now_ns);
        if (r < 0)
                return r;
        /* Elapsed time = (PerfTime - this) / PerfFreq: the start value never changes. */
        if (sc_check(PerfSetULongLongCounterValue(MY_PROVIDER, p->system,
                                                  MY_SYSTEMOBJECTS_ELAPSED_TIME, boot_ns),
                     PROGRAM, "PerfSetULongLongCounterValue") < 0 ||
            sc_check(PerfSetULongLongCounterValue(MY_PROVIDER, p->system,
                                                  MY_SYSTEMOBJECTS_PERFFREQ, SC_NS_PER_SEC),
                     PROGRAM, "PerfSetULongLongCounterValue") < 0)
                return -EIO;
        return 0;
}

static int disk_tick(struct disk *d, double dt)
{
        ULONG free_mb, count, ns;
        int r;

        r = sc_free_megabytes(d->path, &free_mb);
        if (r < 0)
                return r;
        sc_simulate_transfers(&d->seed, dt, &count, &ns);
        /* The time first: a reader never sees more transfers than their time. */
        __atomic_fetch_add(&d->transfer_time_ns, ns, __ATOMIC_RELAXED);
        if (sc_check(PerfSetULongCounterValue(MY_PROVIDER, d->instance,
                                              MY_LOGICALDISK_FREE_MB, free_mb),
                     PROGRAM, "PerfSetULongCounterValue") < 0 ||
            sc_check(PerfIncrementULongCounterValue(MY_PROVIDER, d->instance,
                                                    MY_LOGICALDISK_TRANSFER_COUNT, count),
                     PROGRAM, "PerfIncrementULongCounterValue") < 0)
                return -EIO;
        return 0;
}

static int system_tick(struct provider *p)
{
        ULONG processes, threads;
        ULONGLONG boot_ns, now_ns;
        int r;

        r = sc_process_count(&processes);
        if (r >= 0)
                r = sc_thread_count(&threads);
        if (r >= 0)
                r = sc_clock(&boot_ns, &now_ns);
        if (r < 0)
                return r;
        if (sc_check(PerfSetULongCounterValue(MY_PROVIDER, p->system,
                                              MY_SYSTEMOBJECTS_PROCESS_COUNT, processes),
                     PROGRAM, "PerfSetULongCounterValue") < 0 ||
            sc_check(PerfSetULongCounterValue(MY_PROVIDER, p->system,
                                              MY_SYSTEMOBJECTS_THREAD_COUNT, threads),
                     PROGRAM, "PerfSetULongCounterValue") < 0 ||
            sc_check(PerfSetULongLongCounterValue(MY_PROVIDER, p->system,
                                                  MY_SYSTEMOBJECTS_PERFTIME, now_ns),
                     PROGRAM, "PerfSetULongLongCounterValue") < 0)
                return -EIO;
        return 0;
}

static int tick(void *ctx, double t, double dt)
{
        struct provider *p = ctx;

        (void) t;
        for (unsigned i = 0; i < p->n_disks; i++) {
                int r = disk_tick(&p->disks[i], dt);

                if (r < 0)
                        return r;
        }
        return system_tick(p);
}

static int start(struct provider *p)
{
        int r;

        if (sc_check(CounterInitialize(notification, NULL, NULL, NULL), PROGRAM,
                     "CounterInitialize") < 0)
                return -EIO;
        for (unsigned i = 0; i < p->n_disks; i++) {
                r = disk_start(&p->disks[i], i);
                if (r < 0)
                        return r;
        }
        r = system_start(p);
        if (r < 0)
                return r;
        return tick(p, 0.0, 0.0);
}

int main(int argc, char **argv)
{
        struct sc_options o;
        struct provider p = { 0 };
        int r;

        r = sc_parse_options(argc, argv, PROGRAM, &o);
        if (r != 0)
                return r > 0 ? 0 : 2;
        verbose_notifications = o.verbose;
        p.disks = calloc(o.n_paths, sizeof(*p.disks));
        if (!p.disks) {
                fprintf(stderr, PROGRAM ": out of memory\n");
                return 1;
        }
        p.n_disks = o.n_paths;
        for (unsigned i = 0; i < o.n_paths; i++)
                p.disks[i].path = o.paths[i];

        r = start(&p);
        if (r >= 0) {
                printf(PROGRAM ": pid %ld publishing \"My LogicalDisk\" (%u instances) and "
                       "\"My System Objects\"; stop with Ctrl-C\n", (long) getpid(), p.n_disks);
                fflush(stdout);
                r = sc_run(&o, tick, &p);
        }
        /* Deletes the instances too: they live in the provider's segment. */
        CounterCleanup();
        free(p.disks);
        if (r < 0)
                return 1;
        printf(PROGRAM ": stopped\n");
        return 0;
}
