/* SPDX-License-Identifier: MIT */
/*
 * Processor: one instance per online CPU ("0", "1", ...; id: the CPU's
 * number) and _Total, from /proc/stat and /proc/interrupts.  Times go out
 * in 100 ns units, as the PERF_100NSEC_TIMER types want them; _Total's are
 * the average over the CPUs, so that its percentages stay within 100 as on
 * Windows.
 *
 * _Total is summed here from the per-CPU lines of the same read, not taken
 * from /proc/stat's "cpu" line: the kernel converts that line's sum of
 * nanoseconds to ticks once, and each CPU's line separately, so the two
 * disagree by a tick that comes and goes between reads.  Over a 0.5 s sample
 * on two CPUs one tick is 1% of _Total, which then showed 0.007 beside CPUs
 * at 2.007 and 0.007.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "processor.h"

#define N_VALUES        (PV_PROCESSOR_INTERRUPTS + 1)
/* Not a CPU number, and not PERF_WILDCARD_INSTANCE's 0xFFFFFFFF. */
#define TOTAL_ID        0xFFFFFFFEu

static struct pv_instset cpus;
static uint64_t tick_100ns;

static void cpu_values(const struct pv_cpu_times *t, uint64_t n, uint64_t interrupts,
                       uint64_t *v)
{
        uint64_t k = tick_100ns;

        v[PV_PROCESSOR_PCT_PROCESSOR_TIME] = (t->idle + t->iowait) * k / n;
        v[PV_PROCESSOR_PCT_USER_TIME] = (t->user + t->nice) * k / n;
        v[PV_PROCESSOR_PCT_PRIVILEGED_TIME] = (t->system + t->irq + t->softirq) * k / n;
        v[PV_PROCESSOR_PCT_INTERRUPT_TIME] = t->irq * k / n;
        v[PV_PROCESSOR_PCT_DPC_TIME] = t->softirq * k / n;
        v[PV_PROCESSOR_PCT_IDLE_TIME] = (t->idle + t->iowait) * k / n;
        v[PV_PROCESSOR_INTERRUPTS] = interrupts;
}

static int set_instance(const char *name, uint32_t id, const uint64_t *v)
{
        PPERF_COUNTERSET_INSTANCE inst;
        int r = pv_instset_get(&cpus, name, id, &inst);

        if (r == 0)
                pv_set_values(PV_PROCESSOR_PROVIDER, inst, &PV_PROCESSORInfo.CounterSet, v,
                              N_VALUES);
        return r;
}

static int publish(const struct pv_stat *st, const uint64_t *interrupts)
{
        uint64_t v[N_VALUES] = { 0 }, sum = 0;
        struct pv_cpu_times total = { 0 };
        char name[16];
        int r;

        for (size_t i = 0; i < st->n_cpu; i++) {
                snprintf(name, sizeof(name), "%u", st->cpu_id[i]);
                cpu_values(&st->cpu[i], 1, interrupts[i], v);
                if ((r = set_instance(name, st->cpu_id[i], v)) < 0)
                        return r;
                sum += interrupts[i];
                pv_cpu_times_add(&total, &st->cpu[i]);
        }
        if (st->n_cpu == 0)
                total = st->total;
        cpu_values(&total, st->n_cpu ? st->n_cpu : 1, sum, v);
        return set_instance("_Total", TOTAL_ID, v);
}

static int collect(void)
{
        struct pv_stat st = { 0 };
        uint64_t *interrupts;
        int r;

        r = pv_stat_read_file("/proc", &st);
        if (r < 0)
                return r;
        interrupts = calloc(st.n_cpu ? st.n_cpu : 1, sizeof(*interrupts));
        if (!interrupts) {
                pv_stat_done(&st);
                return -ENOMEM;
        }
        pv_interrupts_read_file("/proc", st.cpu_id, st.n_cpu, interrupts);
        r = publish(&st, interrupts);
        /* A CPU taken offline is no longer listed: its instance goes. */
        if (r == 0)
                pv_instset_sweep(&cpus);
        free(interrupts);
        pv_stat_done(&st);
        return r;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status;

        tick_100ns = pv_tick_100ns();
        status = CounterInitialize(callback, NULL, NULL, NULL);
        if (status == ERROR_SUCCESS)
                pv_instset_init(&cpus, PV_PROCESSOR_PROVIDER, &PV_PROCESSORGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&cpus);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "processor", .start = start, .collect = collect, .stop = stop,
};
