/* SPDX-License-Identifier: MIT */
/*
 * NUMA Node Memory: one instance per node of /sys/devices/system/node,
 * named by its number as on Windows ("0", "1" ...; instance id: the node),
 * and _Total.  A kernel without NUMA support has no node directory: then
 * the counterset has no instances, and that is logged once.  A node whose
 * numastat cannot be read keeps its memory figures, with zero allocations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "memhw.h"
#include "plugin.h"
#include "procfs.h"
#include "numa.h"

#define N_VALUES        (PV_NUMA_NODE_MEMORY_OTHER_NODE + 1)
#define MIB             (1024 * 1024)
#define NODE_DIR        "devices/system/node"
#define TOTAL_ID        UINT32_MAX

enum { MEM_TOTAL, MEM_FREE, ACTIVE_FILE, INACTIVE_FILE, KRECLAIMABLE, SRECLAIMABLE, N_MEM };
static const char *const mem_keys[N_MEM] = {
        "MemTotal", "MemFree", "Active(file)", "Inactive(file)", "KReclaimable", "SReclaimable",
};
/* In the order of the counters HIT .. OTHER_NODE. */
#define N_STAT  6
static const char *const stat_keys[N_STAT] = {
        "numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node", "other_node",
};

static struct pv_instset nodes;
static int logged;              /* the last error logged, not to log it at every collection */

/* Bytes and pages of one node, or of all (_Total). */
struct node_figures {
        uint64_t total, free, standby;
        uint64_t stat[N_STAT];
};

static int node_read(unsigned node, struct node_figures *ret)
{
        uint64_t m[N_MEM] = { 0 }, found = 0;
        struct node_figures n = { 0 };
        char rel[96];
        int r;

        if ((r = pv_node_meminfo(pv_sysfs(), node, mem_keys, N_MEM, m, &found)) < 0)
                return r;
        n.total = m[MEM_TOTAL];
        n.free = m[MEM_FREE];
        n.standby = m[ACTIVE_FILE] + m[INACTIVE_FILE] +
                    (found & 1u << KRECLAIMABLE ? m[KRECLAIMABLE] : m[SRECLAIMABLE]);
        snprintf(rel, sizeof(rel), NODE_DIR "/node%u/numastat", node);
        (void) pv_kv_read_file(pv_sysfs(), rel, stat_keys, N_STAT, n.stat, NULL);
        *ret = n;
        return 0;
}

static int publish(const char *name, uint32_t id, const struct node_figures *n)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        int r;

        if ((r = pv_instset_get(&nodes, name, id, &inst)) < 0)
                return r;
        v[PV_NUMA_NODE_MEMORY_TOTAL_MBYTES] = n->total / MIB;
        v[PV_NUMA_NODE_MEMORY_FREE_ZERO_MBYTES] = n->free / MIB;
        v[PV_NUMA_NODE_MEMORY_STANDBY_MBYTES] = n->standby / MIB;
        v[PV_NUMA_NODE_MEMORY_AVAILABLE_MBYTES] = (n->free + n->standby) / MIB;
        for (size_t i = 0; i < N_STAT; i++)
                v[PV_NUMA_NODE_MEMORY_HIT + i] = n->stat[i];
        pv_set_values(PV_NUMA_NODE_MEMORY_PROVIDER, inst, &PV_NUMA_NODE_MEMORYInfo.CounterSet,
                      v, N_VALUES);
        return 0;
}

static void log_once(int r, const char *what)
{
        if (r != logged)
                pv_log(LOG_INFO, "%s: %s: NUMA Node Memory shows what it could read",
                       what, strerror(-r));
        logged = r;
}

static int collect(void)
{
        unsigned *id = NULL;
        struct node_figures total = { 0 }, n;
        size_t count = 0;
        int r;

        if ((r = pv_list_numbered(pv_sysfs(), NODE_DIR, "node", "", &id, &count)) < 0) {
                log_once(r, "/sys/" NODE_DIR " (a kernel without NUMA)");
                pv_instset_sweep(&nodes);
                return 0;
        }
        for (size_t i = 0; i < count; i++) {
                char name[16];
                int e = node_read(id[i], &n);

                if (e < 0) {
                        log_once(e, "a node's meminfo");
                        continue;
                }
                snprintf(name, sizeof(name), "%u", id[i]);
                if ((r = publish(name, id[i], &n)) < 0)
                        break;
                total.total += n.total;
                total.free += n.free;
                total.standby += n.standby;
                for (size_t k = 0; k < N_STAT; k++)
                        total.stat[k] += n.stat[k];
        }
        free(id);
        if (r >= 0)
                r = publish("_Total", TOTAL_ID, &total);
        if (r < 0)
                return r;
        pv_instset_sweep(&nodes);
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&nodes, PV_NUMA_NODE_MEMORY_PROVIDER, &PV_NUMA_NODE_MEMORYGuid);
        logged = 0;
        return status;
}

static void stop(void)
{
        pv_instset_done(&nodes);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "numa", .start = start, .collect = collect, .stop = stop,
};
