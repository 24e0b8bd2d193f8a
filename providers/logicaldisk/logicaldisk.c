/* SPDX-License-Identifier: MIT */
/*
 * LogicalDisk: one instance per mounted filesystem with storage of its own
 * (pseudo filesystems are left out), named by its mount point, id
 * PV_DISK_ID of its device.  A device mounted at several places (bind
 * mounts) is one volume, listed once: at the mount of its root when there
 * is one, else at its first mount.  Space comes from statvfs(3), I/O from
 * the device's (the partition's) line of /proc/diskstats.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "disk.h"
#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "logicaldisk.h"

#define N_VALUES        (PV_LOGICALDISK_FREE_MEGABYTES + 1)
#define MIB             (1024 * 1024)

_Static_assert(PV_LOGICALDISK_CURRENT_QUEUE == PV_DISK_CURRENT_QUEUE &&
               PV_LOGICALDISK_AVG_QUEUE == PV_DISK_AVG_QUEUE &&
               PV_LOGICALDISK_READS == PV_DISK_READS, "disk counter ids as in disk.h");

static struct pv_instset volumes;

struct volume {
        struct pv_mount m;
};

/* Adds m, or lets it replace the mount of the same device it is better than. */
static int volume_add(struct volume **v, size_t *n, const struct pv_mount *m)
{
        struct volume *w;

        for (size_t i = 0; i < *n; i++) {
                struct pv_mount *o = &(*v)[i].m;

                if (o->major != m->major || o->minor != m->minor)
                        continue;
                if (strcmp(o->root, "/") != 0 && strcmp(m->root, "/") == 0)
                        *o = *m;
                return 0;
        }
        w = realloc(*v, (*n + 1) * sizeof(*w));
        if (!w)
                return -ENOMEM;
        *v = w;
        w[(*n)++].m = *m;
        return 0;
}

static int read_volumes(struct volume **ret, size_t *ret_n)
{
        struct volume *v = NULL;
        struct pv_mount m;
        size_t n = 0;
        FILE *f = pv_fopen("/proc", "self/mountinfo");
        int r;

        if (!f)
                return -errno;
        while ((r = pv_mountinfo_next(f, &m)) != 0) {
                /* A mount point too long for us is skipped, not fatal. */
                if (r == -ENAMETOOLONG || (r > 0 && pv_fs_is_pseudo(m.fstype)))
                        continue;
                if (r < 0 || (r = volume_add(&v, &n, &m)) < 0)
                        break;
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

static const struct pv_disk *disk_of(const struct pv_disk *d, size_t n, const struct pv_mount *m)
{
        for (size_t i = 0; i < n; i++)
                if (d[i].major == m->major && d[i].minor == m->minor)
                        return &d[i];
        return NULL;
}

/* 0, or 1 when the volume has no size (nothing to report) or cannot be statted. */
static int space_values(const struct pv_mount *m, uint64_t *v)
{
        struct statvfs s;
        uint64_t size, free_bytes;

        if (statvfs(m->point, &s) < 0 || s.f_blocks == 0)
                return 1;
        size = (uint64_t) s.f_blocks * s.f_frsize;
        free_bytes = (uint64_t) s.f_bfree * s.f_frsize;
        /* The fraction and its base are 32-bit: MiB, as Windows does. */
        v[PV_LOGICALDISK_PCT_FREE_SPACE] = free_bytes / MIB;
        v[PV_LOGICALDISK_PCT_FREE_SPACE_BASE] = size / MIB;
        v[PV_LOGICALDISK_FREE_MEGABYTES] = free_bytes / MIB;
        return 0;
}

static int publish(const struct volume *vol, size_t n, const struct pv_disk *d, size_t nd)
{
        uint64_t v[N_VALUES] = { 0 }, now = pv_monotonic_100ns();
        PPERF_COUNTERSET_INSTANCE inst;
        int r;

        for (size_t i = 0; i < n; i++) {
                const struct pv_mount *m = &vol[i].m;

                if (space_values(m, v) > 0)
                        continue;
                pv_disk_values(disk_of(d, nd, m), now, v);
                r = pv_instset_get(&volumes, m->point, PV_DISK_ID(m->major, m->minor), &inst);
                if (r < 0)
                        return r;
                pv_set_values(PV_LOGICALDISK_PROVIDER, inst, &PV_LOGICALDISKInfo.CounterSet, v,
                              N_VALUES);
        }
        return 0;
}

static int collect(void)
{
        struct volume *vol = NULL;
        struct pv_disk *d = NULL;
        size_t n = 0, nd = 0;
        int r;

        /* Without diskstats (a container may hide it) there is still space to report. */
        if (pv_diskstats_read_all("/proc", &d, &nd) < 0)
                nd = 0;
        r = read_volumes(&vol, &n);
        if (r == 0)
                r = publish(vol, n, d, nd);
        if (r == 0)
                pv_instset_sweep(&volumes);
        free(vol);
        free(d);
        return r;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&volumes, PV_LOGICALDISK_PROVIDER, &PV_LOGICALDISKGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&volumes);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "logicaldisk", .start = start, .collect = collect, .stop = stop,
};
