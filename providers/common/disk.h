/* SPDX-License-Identifier: MIT */
/*
 * disk.h: the I/O counters PhysicalDisk and LogicalDisk share.  Both
 * manifests give them the same ids (1..12), which the providers check at
 * compile time against their generated headers.  Internal to providers/.
 */
#ifndef PV_DISK_H
#define PV_DISK_H

#include <stddef.h>
#include <stdint.h>

#include "procfs.h"

enum {
        PV_DISK_CURRENT_QUEUE = 1,
        PV_DISK_PCT_DISK_TIME,
        PV_DISK_PCT_DISK_TIME_BASE,
        PV_DISK_AVG_SEC_READ,
        PV_DISK_AVG_SEC_READ_BASE,
        PV_DISK_AVG_SEC_WRITE,
        PV_DISK_AVG_SEC_WRITE_BASE,
        PV_DISK_READS,
        PV_DISK_WRITES,
        PV_DISK_READ_BYTES,
        PV_DISK_WRITE_BYTES,
        PV_DISK_AVG_QUEUE,
};

/* The instance id of a device: major << 20 | minor, as the kernel's dev_t packs them. */
#define PV_DISK_ID(major, minor) ((uint32_t) (major) << 20 | ((uint32_t) (minor) & 0xFFFFFu))

/*
 * Sets v[PV_DISK_*] from one diskstats record; now_100ns is the % Disk
 * Time base (a monotonic clock in 100 ns units, read at this collection).
 * A NULL d sets them all to 0 (a filesystem with no block device).
 */
void pv_disk_values(const struct pv_disk *d, uint64_t now_100ns, uint64_t *v);

/* Every record of root/diskstats; *ret is owned by the caller (free). */
int pv_diskstats_read_all(const char *root, struct pv_disk **ret, size_t *ret_n);

/* CLOCK_MONOTONIC in 100 ns units. */
uint64_t pv_monotonic_100ns(void);

#endif /* PV_DISK_H */
