/* SPDX-License-Identifier: MIT */
/*
 * Pressure Stall: one instance per resource of /proc/pressure (cpu,
 * memory, io, irq).  A resource whose file cannot be read (a kernel
 * without CONFIG_PSI, one booted with psi=0, where reading fails with
 * EOPNOTSUPP, or one older than the resource: irq came in 6.1) has no
 * instance, and one log line says why; the instance comes back when the
 * file can be read again.
 */
#include <errno.h>
#include <string.h>

#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "psi.h"
#include "pressure.h"

#define N_VALUES        (PV_PRESSURE_FULL_AVG300 + 1)
/* PSI's totals are in us, the 100 ns timers count 100 ns. */
#define US_100NS        10u

static const char *const resources[] = { "cpu", "memory", "io", "irq" };
#define N_RESOURCES     (sizeof(resources) / sizeof(resources[0]))

static struct pv_instset instances;
/* Bit i: the failure to read resources[i] was logged (until it reads again). */
static unsigned logged;

static void psi_values(const struct pv_psi *p, uint64_t *v)
{
        /* A line the kernel does not print leaves its counters 0 (zeroed by pv_psi_parse). */
        v[PV_PRESSURE_PCT_SOME] = p->some.total * US_100NS;
        v[PV_PRESSURE_PCT_FULL] = p->full.total * US_100NS;
        v[PV_PRESSURE_SOME_AVG10] = p->some.avg10;
        v[PV_PRESSURE_SOME_AVG60] = p->some.avg60;
        v[PV_PRESSURE_SOME_AVG300] = p->some.avg300;
        v[PV_PRESSURE_FULL_AVG10] = p->full.avg10;
        v[PV_PRESSURE_FULL_AVG60] = p->full.avg60;
        v[PV_PRESSURE_FULL_AVG300] = p->full.avg300;
}

/* resources[i], published or, when unreadable, left out with one log line. */
static int publish(size_t i)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        char text[512];
        struct pv_psi psi;
        int r;

        r = pv_read_small("/proc/pressure", resources[i], text, sizeof(text));
        if (r >= 0)
                r = pv_psi_parse(text, &psi);
        if (r < 0) {
                if (!(logged & 1u << i))
                        pv_log(LOG_INFO, "/proc/pressure/%s: %s; no instance %s", resources[i],
                               r == -EINVAL ? "not pressure stall information" : strerror(-r),
                               resources[i]);
                logged |= 1u << i;
                return 0;
        }
        logged &= ~(1u << i);
        psi_values(&psi, v);
        r = pv_instset_get(&instances, resources[i], (uint32_t) i, &inst);
        if (r < 0)
                return r;
        pv_set_values(PV_PRESSURE_PROVIDER, inst, &PV_PRESSUREInfo.CounterSet, v, N_VALUES);
        return 0;
}

static int collect(void)
{
        int r = 0;

        for (size_t i = 0; r == 0 && i < N_RESOURCES; i++)
                r = publish(i);
        if (r == 0)
                pv_instset_sweep(&instances);
        return r;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        logged = 0;
        if (status == ERROR_SUCCESS)
                pv_instset_init(&instances, PV_PRESSURE_PROVIDER, &PV_PRESSUREGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&instances);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "pressure", .start = start, .collect = collect, .stop = stop,
};
