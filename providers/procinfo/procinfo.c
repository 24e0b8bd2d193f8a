/* SPDX-License-Identifier: MIT */
/*
 * Processor Information: the Processor counters by NUMA node, with the
 * frequency.  Instances as Windows names them: "NODE,CPU" for each online
 * CPU (CPU is the kernel's CPU number, the one mpstat -P shows, not a rank
 * within the node), "NODE,_Total" for each node and "_Total"; the totals
 * are averages over their CPUs, as in Processor.  Instance ids: NODE << 16
 * | CPU, NODE << 16 | 0xFFFF for a node's total.
 *
 * Sources, each read once a collection: /proc/stat and /proc/interrupts
 * (as Processor), the nodes' cpulist in sysfs (a CPU brought online in
 * another node moves with the next collection), and cpufreq, else
 * /proc/cpuinfo for the frequency.  What the machine lacks is logged once
 * and reads 0.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpuinfo.h"
#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "procinfo.h"

#define N_VALUES        (PV_PROCINFO_PCT_OF_MAXIMUM_FREQUENCY + 1)
/* Not NODE << 16 | CPU, and not PERF_WILDCARD_INSTANCE's 0xFFFFFFFF. */
#define TOTAL_ID        0xFFFFFFFEu
#define NODE_TOTAL      0xFFFFu

static struct pv_instset cpus;
static uint64_t tick_100ns;
static bool logged_no_freq, logged_no_max;

/* What one collection knows of each CPU of /proc/stat, in its order. */
struct cpu_figures {
        uint64_t interrupts;
        unsigned node;
        uint64_t mhz;
        uint64_t pct_max;               /* 0 when the maximum is unknown */
};

/* A CPU, or the sum of n of them: times and interrupts summed, the rest averaged. */
struct sum {
        struct pv_cpu_times t;
        uint64_t n, interrupts, mhz, pct_max;
};

static void add(struct sum *s, const struct pv_cpu_times *t, const struct cpu_figures *c)
{
        pv_cpu_times_add(&s->t, t);
        s->n++;
        s->interrupts += c->interrupts;
        s->mhz += c->mhz;
        s->pct_max += c->pct_max;
}

static void sum_values(const struct sum *s, uint64_t *v)
{
        const struct pv_cpu_times *t = &s->t;
        uint64_t k = tick_100ns, n = s->n ? s->n : 1;

        v[PV_PROCINFO_PCT_PROCESSOR_TIME] = (t->idle + t->iowait) * k / n;
        v[PV_PROCINFO_PCT_USER_TIME] = (t->user + t->nice) * k / n;
        v[PV_PROCINFO_PCT_PRIVILEGED_TIME] = (t->system + t->irq + t->softirq) * k / n;
        v[PV_PROCINFO_PCT_INTERRUPT_TIME] = t->irq * k / n;
        v[PV_PROCINFO_PCT_DPC_TIME] = t->softirq * k / n;
        v[PV_PROCINFO_PCT_IDLE_TIME] = (t->idle + t->iowait) * k / n;
        v[PV_PROCINFO_INTERRUPTS] = s->interrupts;
        /* Windows' low priority is Linux's positive nice: not "priority" time. */
        v[PV_PROCINFO_PCT_PRIORITY_TIME] = (t->idle + t->iowait + t->nice) * k / n;
        v[PV_PROCINFO_PROCESSOR_FREQUENCY] = (s->mhz + n / 2) / n;
        v[PV_PROCINFO_PCT_OF_MAXIMUM_FREQUENCY] = (s->pct_max + n / 2) / n;
}

static int set_instance(const char *name, uint32_t id, const struct sum *s)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        int r = pv_instset_get(&cpus, name, id, &inst);

        if (r < 0)
                return r;
        sum_values(s, v);
        pv_set_values(PV_PROCINFO_PROVIDER, inst, &PV_PROCINFOInfo.CounterSet, v, N_VALUES);
        return 0;
}

/* Every CPU's frequency from cpufreq; false when a CPU has none. */
static bool read_cpufreq(const struct pv_stat *st, struct cpu_figures *c)
{
        uint64_t cur, max;

        for (size_t i = 0; i < st->n_cpu; i++) {
                if (pv_cpufreq_read("/sys", st->cpu_id[i], &cur, &max) < 0)
                        return false;
                c[i].mhz = (cur + 500) / 1000;
                c[i].pct_max = max ? (100 * cur + max / 2) / max : 0;
                if (!max && !logged_no_max) {
                        pv_log(LOG_INFO, "no cpuinfo_max_freq: %% of Maximum Frequency is 0");
                        logged_no_max = true;
                }
        }
        return true;
}

/* cpufreq where the kernel has it, else /proc/cpuinfo's MHz without a maximum. */
static void read_frequencies(const struct pv_stat *st, struct cpu_figures *c, uint64_t *mhz)
{
        FILE *f;
        int r;

        if (read_cpufreq(st, c))
                return;
        f = pv_fopen("/proc", "cpuinfo");
        r = f ? pv_cpuinfo_mhz(f, st->cpu_id, st->n_cpu, mhz) : -errno;
        if (f)
                fclose(f);
        if (r < 0 && !logged_no_freq)
                pv_log(LOG_INFO, "no cpufreq and no cpu MHz in /proc/cpuinfo: "
                       "the frequency counters are 0");
        else if (!logged_no_freq)
                pv_log(LOG_INFO, "no cpufreq: Processor Frequency from /proc/cpuinfo, "
                       "%% of Maximum Frequency 0");
        logged_no_freq = true;
        for (size_t i = 0; i < st->n_cpu; i++) {
                c[i].mhz = r < 0 ? 0 : mhz[i];
                c[i].pct_max = 0;
        }
}

/* One node's CPUs and its total; *sum_all gathers every CPU. */
static int publish_node(const struct pv_stat *st, const struct cpu_figures *c, unsigned node,
                        struct sum *all)
{
        struct sum cpu, total = { 0 };
        char name[32];
        int r;

        for (size_t i = 0; i < st->n_cpu; i++) {
                if (c[i].node != node)
                        continue;
                cpu = (struct sum) { 0 };
                add(&cpu, &st->cpu[i], &c[i]);
                add(&total, &st->cpu[i], &c[i]);
                add(all, &st->cpu[i], &c[i]);
                snprintf(name, sizeof(name), "%u,%u", node, st->cpu_id[i]);
                if ((r = set_instance(name, node << 16 | (st->cpu_id[i] & 0xFFFFu), &cpu)) < 0)
                        return r;
        }
        snprintf(name, sizeof(name), "%u,_Total", node);
        return set_instance(name, node << 16 | NODE_TOTAL, &total);
}

static int publish(const struct pv_stat *st, const struct cpu_figures *c)
{
        struct sum all = { 0 };
        int r;

        for (size_t i = 0; i < st->n_cpu; i++) {
                bool first = true;

                /* Each node once, at its first CPU: O(CPUs x nodes), both small. */
                for (size_t j = 0; j < i && first; j++)
                        first = c[j].node != c[i].node;
                if (first && (r = publish_node(st, c, c[i].node, &all)) < 0)
                        return r;
        }
        return set_instance("_Total", TOTAL_ID, &all);
}

static int collect(void)
{
        struct pv_stat st = { 0 };
        struct cpu_figures *c;
        uint64_t *counts;
        unsigned *nodes;
        int r;

        if ((r = pv_stat_read_file("/proc", &st)) < 0)
                return r;
        c = calloc(st.n_cpu + 1, sizeof(*c));
        counts = calloc(st.n_cpu + 1, sizeof(*counts));
        nodes = calloc(st.n_cpu + 1, sizeof(*nodes));
        r = -ENOMEM;
        if (!c || !counts || !nodes)
                goto fail;
        pv_interrupts_read_file("/proc", st.cpu_id, st.n_cpu, counts);
        /* Without node information every CPU is in node 0, as on a machine of one node. */
        (void) pv_cpu_nodes("/sys", st.cpu_id, st.n_cpu, nodes);
        for (size_t i = 0; i < st.n_cpu; i++)
                c[i] = (struct cpu_figures) { .interrupts = counts[i], .node = nodes[i] };
        /* counts, copied, holds the MHz of /proc/cpuinfo now. */
        read_frequencies(&st, c, counts);
        r = publish(&st, c);
        /* A CPU taken offline, or moved to another node, loses its instance. */
        if (r == 0)
                pv_instset_sweep(&cpus);
fail:
        free(nodes);
        free(counts);
        free(c);
        pv_stat_done(&st);
        return r;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status;

        tick_100ns = pv_tick_100ns();
        status = CounterInitialize(callback, NULL, NULL, NULL);
        if (status == ERROR_SUCCESS)
                pv_instset_init(&cpus, PV_PROCINFO_PROVIDER, &PV_PROCINFOGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&cpus);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "procinfo", .start = start, .collect = collect, .stop = stop,
};
