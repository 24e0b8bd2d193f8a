/* SPDX-License-Identifier: MIT */
/*
 * kernelmode-provider: the spec's kernel-mode example manifest
 * (example-kernelmode.man) as a working provider.  On Windows that manifest
 * describes a driver's counters published through PCW, laid out by the
 * driver's own structs (<structs>, field="...").  Linux has no PCW, so
 * ctrpp gives kernel-mode manifests the user-mode API in their struct
 * layout: each counter's Offset is offsetof() its field, and
 * UpdateMY_LOGICALDISK()/UpdateMY_SYSTEMOBJECTS() publish a whole struct,
 * as the PCW Add functions do.  The struct types are ours, declared before
 * the generated header is included:
 *
 *      ctrpp example-kernelmode.man
 *      cc -o kernelmode-provider kernelmode-provider.c example-kernelmode_strings.c \
 *         sample-common.c $(pkg-config --cflags --libs perflib) -lm
 *
 * The manifest names no provider symbol, so the generated names come from
 * the provider's default name, "Counters": CountersGuid, the handle
 * Counters.  Its counters have no symbols either, hence the numeric ids
 * below.  The figures are those of usermode-provider.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perflib.h>

/* The structs the manifest's <struct type="..."> attributes name. */
typedef struct {
        ULONG FreeMegabytes;
        ULONG TransferTime;     /* by reference: read from here when collected */
        ULONG TransferCount;
} MY_LOGICALDISK_DATA;

typedef struct {
        ULONG ProcessCount;
        ULONG ThreadCount;
        ULONGLONG SystemElapsedTime;
        ULONGLONG PerfTime;
        ULONGLONG PerfFreq;
} MY_SYSTEMOBJECTS_DATA;

#include "example-kernelmode.h"
#include "sample-common.h"

#define PROGRAM "kernelmode-provider"
/* counter id="2" of "My LogicalDisk", field TransferTime */
#define LOGICALDISK_TRANSFER_TIME 2

struct disk {
        const char *path;
        PPERF_COUNTERSET_INSTANCE instance;
        MY_LOGICALDISK_DATA data;
        uint32_t seed;
};

struct provider {
        struct disk *disks;
        unsigned n_disks;
        PPERF_COUNTERSET_INSTANCE system;
        MY_SYSTEMOBJECTS_DATA system_data;
};

static int disk_start(struct disk *d, ULONG id)
{
        d->seed = 0x5eed0000u + id;
        d->instance = PerfCreateInstanceUtf8(Counters, &MY_LOGICALDISKGuid, d->path, id);
        if (!d->instance)
                return sc_check(GetLastError(), PROGRAM, "PerfCreateInstance(My LogicalDisk)");
        /*
         * A reference counter's value stays in our struct; UpdateMY_LOGICALDISK
         * leaves it alone and consumers read it from there.
         */
        return sc_check(PerfSetCounterRefValue(Counters, d->instance, LOGICALDISK_TRANSFER_TIME,
                                               &d->data.TransferTime),
                        PROGRAM, "PerfSetCounterRefValue");
}

static int disk_tick(struct disk *d, double dt)
{
        ULONG free_mb, count, ns;
        int r;

        r = sc_free_megabytes(d->path, &free_mb);
        if (r < 0) {
                fprintf(stderr, PROGRAM ": %s: %s\n", d->path, strerror(-r));
                return r;
        }
        sc_simulate_transfers(&d->seed, dt, &count, &ns);
        d->data.FreeMegabytes = free_mb;
        /* Read by perflib's collect thread: atomically, and before the count grows. */
        __atomic_fetch_add(&d->data.TransferTime, ns, __ATOMIC_RELAXED);
        d->data.TransferCount += count;
        return sc_check(UpdateMY_LOGICALDISK(d->instance, &d->data), PROGRAM,
                        "UpdateMY_LOGICALDISK");
}

static int system_tick(struct provider *p)
{
        MY_SYSTEMOBJECTS_DATA *s = &p->system_data;
        int r;

        r = sc_process_count(&s->ProcessCount);
        if (r >= 0)
                r = sc_thread_count(&s->ThreadCount);
        /* Elapsed time = (PerfTime - SystemElapsedTime) / PerfFreq: the uptime. */
        if (r >= 0)
                r = sc_clock(&s->SystemElapsedTime, &s->PerfTime);
        if (r < 0)
                return r;
        s->PerfFreq = SC_NS_PER_SEC;
        return sc_check(UpdateMY_SYSTEMOBJECTS(p->system, s), PROGRAM, "UpdateMY_SYSTEMOBJECTS");
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

        if (sc_check(CounterInitialize(), PROGRAM, "CounterInitialize") < 0)
                return -EIO;
        for (unsigned i = 0; i < p->n_disks; i++) {
                r = disk_start(&p->disks[i], i);
                if (r < 0)
                        return r;
        }
        p->system = PerfCreateInstance(Counters, &MY_SYSTEMOBJECTSGuid, L"_Default", 0);
        if (!p->system)
                return sc_check(GetLastError(), PROGRAM, "PerfCreateInstance(My System Objects)");
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
        if (o.verbose)
                fprintf(stderr, PROGRAM ": -v: this provider takes no notifications "
                        "(its manifest has no callback)\n");
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
                       "\"My System Objects\" in struct layout; stop with Ctrl-C\n",
                       (long) getpid(), p.n_disks);
                fflush(stdout);
                r = sc_run(&o, tick, &p);
        }
        CounterCleanup();
        free(p.disks);
        if (r < 0)
                return 1;
        printf(PROGRAM ": stopped\n");
        return 0;
}
