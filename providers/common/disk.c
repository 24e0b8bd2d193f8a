/* SPDX-License-Identifier: MIT */
/* The I/O counters PhysicalDisk and LogicalDisk share (disk.h). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "disk.h"

/* diskstats counts 512-byte sectors whatever the device's block size. */
#define SECTOR  512u

void pv_disk_values(const struct pv_disk *d, uint64_t now_100ns, uint64_t *v)
{
        static const struct pv_disk none;

        if (!d)
                d = &none;
        v[PV_DISK_CURRENT_QUEUE] = d->in_flight;
        /* Busy time in 100 ns against a 100 ns clock: PERF_PRECISION_100NS_TIMER. */
        v[PV_DISK_PCT_DISK_TIME] = d->ms_io * 10000u;
        v[PV_DISK_PCT_DISK_TIME_BASE] = now_100ns;
        /* PERF_AVERAGE_TIMER divides by the query's PerfFreq, 10^9 in perflibd: ns. */
        v[PV_DISK_AVG_SEC_READ] = d->ms_reading * 1000000u;
        v[PV_DISK_AVG_SEC_READ_BASE] = d->reads;
        v[PV_DISK_AVG_SEC_WRITE] = d->ms_writing * 1000000u;
        v[PV_DISK_AVG_SEC_WRITE_BASE] = d->writes;
        v[PV_DISK_READS] = d->reads;
        v[PV_DISK_WRITES] = d->writes;
        v[PV_DISK_READ_BYTES] = d->sectors_read * SECTOR;
        v[PV_DISK_WRITE_BYTES] = d->sectors_written * SECTOR;
        v[PV_DISK_AVG_QUEUE] = d->ms_weighted * 10000u;
}

int pv_diskstats_read_all(const char *root, struct pv_disk **ret, size_t *ret_n)
{
        struct pv_disk *v = NULL, d;
        FILE *f = pv_fopen(root, "diskstats");
        size_t n = 0;
        int r;

        if (!f)
                return -errno;
        while ((r = pv_diskstats_next(f, &d)) > 0) {
                struct pv_disk *w = realloc(v, (n + 1) * sizeof(*w));

                if (!w) {
                        r = -ENOMEM;
                        break;
                }
                v = w;
                v[n++] = d;
        }
        fclose(f);
        if (r < 0) {
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

uint64_t pv_monotonic_100ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 10000000u + (uint64_t) ts.tv_nsec / 100u;
}
