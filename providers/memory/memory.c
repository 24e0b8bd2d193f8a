/* SPDX-License-Identifier: MIT */
/*
 * Memory: the single instance of the system's memory, from /proc/meminfo
 * and /proc/vmstat: Windows' counters, then the Linux-only ones (ids 20 and
 * up) that admins look for, memory pressure among them (ids 32 to 34, from
 * /proc/pressure/memory, as Pressure Stall(memory) has it with more).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "psi.h"
#include "memory.h"

#define N_VALUES        (PV_MEMORY_PRESSURE_AVG10 + 1)
/* PSI's totals are in us, the 100 ns timers count 100 ns. */
#define US_100NS        10
#define MIB             (1024 * 1024)

enum { MEM_TOTAL, MEM_FREE, MEM_AVAILABLE, BUFFERS, CACHED, SRECLAIMABLE, SWAP_TOTAL,
       SWAP_FREE, COMMITTED_AS, DIRTY, WRITEBACK, SLAB, SUNRECLAIM, ANON_PAGES, SHMEM,
       MAPPED, HUGE_TOTAL, HUGE_FREE, HUGE_SIZE, ANON_HUGE, N_MEM };
static const char *const mem_keys[N_MEM] = {
        "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable",
        "SwapTotal", "SwapFree", "Committed_AS", "Dirty", "Writeback", "Slab", "SUnreclaim",
        "AnonPages", "Shmem", "Mapped", "HugePages_Total", "HugePages_Free", "Hugepagesize",
        "AnonHugePages",
};
enum { PGFAULT, PGMAJFAULT, PSWPIN, PSWPOUT, N_VM };
static const char *const vm_keys[N_VM] = { "pgfault", "pgmajfault", "pswpin", "pswpout" };

static PPERF_COUNTERSET_INSTANCE instance;

static void memory_values(const uint64_t *m, uint64_t *v)
{
        uint64_t limit = m[MEM_TOTAL] + m[SWAP_TOTAL];
        uint64_t swap_used = m[SWAP_TOTAL] > m[SWAP_FREE] ? m[SWAP_TOTAL] - m[SWAP_FREE] : 0;

        v[PV_MEMORY_AVAILABLE_BYTES] = m[MEM_AVAILABLE];
        v[PV_MEMORY_AVAILABLE_KBYTES] = m[MEM_AVAILABLE] / 1024;
        v[PV_MEMORY_AVAILABLE_MBYTES] = m[MEM_AVAILABLE] / MIB;
        v[PV_MEMORY_COMMITTED_BYTES] = m[COMMITTED_AS];
        v[PV_MEMORY_COMMIT_LIMIT] = limit;
        /* The fractions are 32-bit: MiB keeps them exact up to 4 PiB. */
        v[PV_MEMORY_PCT_COMMITTED_IN_USE] = m[COMMITTED_AS] / MIB;
        v[PV_MEMORY_PCT_COMMITTED_IN_USE_BASE] = limit / MIB;
        v[PV_MEMORY_CACHE_BYTES] = m[BUFFERS] + m[CACHED] + m[SRECLAIMABLE];
        v[PV_MEMORY_FREE_ZERO_BYTES] = m[MEM_FREE];
        v[PV_MEMORY_SWAP_TOTAL] = m[SWAP_TOTAL];
        v[PV_MEMORY_SWAP_FREE] = m[SWAP_FREE];
        v[PV_MEMORY_SWAP_USED] = swap_used;
        v[PV_MEMORY_PCT_SWAP_USAGE] = swap_used / MIB;
        v[PV_MEMORY_PCT_SWAP_USAGE_BASE] = m[SWAP_TOTAL] / MIB;
}

/* The Linux-only counters: meminfo's own figures, those a kernel lacks 0. */
static void memory_linux_values(const uint64_t *m, uint64_t *v)
{
        v[PV_MEMORY_DIRTY_BYTES] = m[DIRTY];
        v[PV_MEMORY_WRITEBACK_BYTES] = m[WRITEBACK];
        v[PV_MEMORY_SLAB_BYTES] = m[SLAB];
        v[PV_MEMORY_SLAB_RECLAIMABLE_BYTES] = m[SRECLAIMABLE];
        v[PV_MEMORY_SLAB_UNRECLAIMABLE_BYTES] = m[SUNRECLAIM];
        v[PV_MEMORY_ANON_BYTES] = m[ANON_PAGES];
        v[PV_MEMORY_SHMEM_BYTES] = m[SHMEM];
        v[PV_MEMORY_MAPPED_BYTES] = m[MAPPED];
        v[PV_MEMORY_HUGE_PAGES_TOTAL] = m[HUGE_TOTAL];
        v[PV_MEMORY_HUGE_PAGES_FREE] = m[HUGE_FREE];
        v[PV_MEMORY_HUGE_PAGE_SIZE] = m[HUGE_SIZE];
        v[PV_MEMORY_ANON_HUGE_PAGES_BYTES] = m[ANON_HUGE];
}

/*
 * Memory pressure, as Pressure Stall(memory) has it (psi.h): all 0 where
 * the kernel has no PSI, said once.
 */
static void memory_pressure(uint64_t *v)
{
        static bool told;
        struct pv_psi p;
        char buf[512];
        int r = pv_read_small("/proc", "pressure/memory", buf, sizeof(buf));

        if (r >= 0)
                r = pv_psi_parse(buf, &p);
        if (r < 0) {
                if (!told)
                        pv_log(LOG_INFO, "no memory pressure counters: /proc/pressure/memory: %s "
                               "(a kernel without PSI, or booted with psi=0)", strerror(-r));
                told = true;
                return;
        }
        if (p.have & PV_PSI_SOME) {
                v[PV_MEMORY_PCT_STALLED] = p.some.total * US_100NS;
                v[PV_MEMORY_PRESSURE_AVG10] = p.some.avg10;
        }
        if (p.have & PV_PSI_FULL)
                v[PV_MEMORY_PCT_FULL_STALLED] = p.full.total * US_100NS;
}

static int collect(void)
{
        uint64_t m[N_MEM] = { 0 }, vm[N_VM] = { 0 }, v[N_VALUES] = { 0 };
        int r;

        if ((r = pv_kv_read_file("/proc", "meminfo", mem_keys, N_MEM, m, NULL)) < 0 ||
            (r = pv_kv_read_file("/proc", "vmstat", vm_keys, N_VM, vm, NULL)) < 0)
                return r;
        memory_values(m, v);
        memory_linux_values(m, v);
        memory_pressure(v);
        v[PV_MEMORY_PAGE_FAULTS] = vm[PGFAULT];
        v[PV_MEMORY_PAGES] = vm[PSWPIN] + vm[PSWPOUT];
        v[PV_MEMORY_PAGES_INPUT] = vm[PSWPIN];
        v[PV_MEMORY_PAGES_OUTPUT] = vm[PSWPOUT];
        v[PV_MEMORY_PAGE_READS] = vm[PGMAJFAULT];
        pv_set_values(PV_MEMORY_PROVIDER, instance, &PV_MEMORYInfo.CounterSet, v, N_VALUES);
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status != ERROR_SUCCESS)
                return status;
        return pv_single_instance(PV_MEMORY_PROVIDER, &PV_MEMORYGuid, CounterCleanup, &instance);
}

static void stop(void)
{
        CounterCleanup();
        instance = NULL;
}

const struct pv_provider pv_provider = {
        .name = "memory", .start = start, .collect = collect, .stop = stop,
};
