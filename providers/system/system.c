/* SPDX-License-Identifier: MIT */
/*
 * System: the single instance of system-wide counts, from /proc/stat,
 * /proc/loadavg and the /proc directory.  System Up Time is an elapsed
 * time: the boot (0) against CLOCK_BOOTTIME now, in 100 ns units.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "system.h"

#define N_VALUES        (PV_SYSTEM_SYSTEM_UP_TIME_FREQ + 1)

static PPERF_COUNTERSET_INSTANCE instance;

/* Numeric entries of /proc: one per process (ps -e counts the same). */
static int count_processes(uint64_t *ret)
{
        DIR *d = opendir("/proc");
        struct dirent *e;
        uint64_t n = 0;

        if (!d)
                return -errno;
        while ((e = readdir(d)))
                if (isdigit((unsigned char) e->d_name[0]))
                        n++;
        closedir(d);
        *ret = n;
        return 0;
}

static int read_threads(uint64_t *ret)
{
        FILE *f = pv_fopen("/proc", "loadavg");
        uint64_t running;
        int r;

        if (!f)
                return -errno;
        r = pv_loadavg_read(f, &running, ret);
        fclose(f);
        return r;
}

static int collect(void)
{
        uint64_t v[N_VALUES] = { 0 };
        struct pv_stat st;
        struct timespec now;
        int r;

        if ((r = pv_stat_read_file("/proc", &st)) < 0)
                return r;
        v[PV_SYSTEM_CONTEXT_SWITCHES] = st.ctxt;
        v[PV_SYSTEM_PROCESSOR_QUEUE_LENGTH] = st.procs_running;
        pv_stat_done(&st);
        if ((r = count_processes(&v[PV_SYSTEM_PROCESSES])) < 0 ||
            (r = read_threads(&v[PV_SYSTEM_THREADS])) < 0)
                return r;
        clock_gettime(CLOCK_BOOTTIME, &now);
        v[PV_SYSTEM_SYSTEM_UP_TIME] = 0;
        v[PV_SYSTEM_SYSTEM_UP_TIME_NOW] = (uint64_t) now.tv_sec * 10000000u +
                                          (uint64_t) now.tv_nsec / 100u;
        v[PV_SYSTEM_SYSTEM_UP_TIME_FREQ] = 10000000u;
        pv_set_values(PV_SYSTEM_PROVIDER, instance, &PV_SYSTEMInfo.CounterSet, v, N_VALUES);
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status != ERROR_SUCCESS)
                return status;
        return pv_single_instance(PV_SYSTEM_PROVIDER, &PV_SYSTEMGuid, CounterCleanup, &instance);
}

static void stop(void)
{
        CounterCleanup();
        instance = NULL;
}

const struct pv_provider pv_provider = {
        .name = "system", .start = start, .collect = collect, .stop = stop,
};
