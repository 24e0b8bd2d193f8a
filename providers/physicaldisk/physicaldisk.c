/* SPDX-License-Identifier: MIT */
/*
 * PhysicalDisk: one instance per whole block device (a directory of
 * /sys/block; partitions are not) with a non-zero size (unattached loop
 * devices and empty drives have none), named by its kernel name, id
 * PV_DISK_ID of its device, from /proc/diskstats.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disk.h"
#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "physicaldisk.h"

#define N_VALUES        (PV_PHYSICALDISK_AVG_QUEUE + 1)

_Static_assert(PV_PHYSICALDISK_CURRENT_QUEUE == PV_DISK_CURRENT_QUEUE &&
               PV_PHYSICALDISK_AVG_QUEUE == PV_DISK_AVG_QUEUE &&
               PV_PHYSICALDISK_READS == PV_DISK_READS, "disk counter ids as in disk.h");

static struct pv_instset disks;

static bool whole_disk_with_media(const char *name)
{
        char rel[96], *slash;
        int64_t sectors;

        snprintf(rel, sizeof(rel), "%s", name);
        /* sysfs spells a '/' in a device name (cciss/c0d0) as '!'. */
        while ((slash = strchr(rel, '/')))
                *slash = '!';
        if (strlen(rel) + sizeof("/size") > sizeof(rel))
                return false;
        strcat(rel, "/size");
        return pv_read_s64("/sys/block", rel, &sectors) == 0 && sectors > 0;
}

static int collect(void)
{
        uint64_t v[N_VALUES] = { 0 }, now = pv_monotonic_100ns();
        PPERF_COUNTERSET_INSTANCE inst;
        struct pv_disk d;
        FILE *f = pv_fopen("/proc", "diskstats");
        int r;

        if (!f)
                return -errno;
        while ((r = pv_diskstats_next(f, &d)) > 0) {
                if (!whole_disk_with_media(d.name))
                        continue;
                r = pv_instset_get(&disks, d.name, PV_DISK_ID(d.major, d.minor), &inst);
                if (r < 0)
                        break;
                pv_disk_values(&d, now, v);
                pv_set_values(PV_PHYSICALDISK_PROVIDER, inst, &PV_PHYSICALDISKInfo.CounterSet, v,
                              N_VALUES);
        }
        fclose(f);
        if (r < 0)
                return r;
        pv_instset_sweep(&disks);
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&disks, PV_PHYSICALDISK_PROVIDER, &PV_PHYSICALDISKGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&disks);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "physicaldisk", .start = start, .collect = collect, .stop = stop,
};
