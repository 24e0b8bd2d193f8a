/* SPDX-License-Identifier: MIT */
/*
 * memhw.h: parsers of the memory-detail and hardware files (/proc/swaps,
 * the NUMA nodes, thermal zones, hwmon and RAPL in sysfs).  Internal to
 * providers/, conventions of procfs.h: each takes an open FILE * or a root
 * directory ("/proc", "/sys") so that the tests feed them fake trees, and
 * returns 0 (1 for "one more record" from the _next iterators) or -errno,
 * writing ret_ parameters only on success.
 */
#ifndef PV_MEMHW_H
#define PV_MEMHW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Where the providers of this file read /proc and /sys: $PERFLIB_PROCFS and
 * $PERFLIB_SYSFS when set (a host's trees mounted into a container, as
 * node_exporter's --path.procfs and --path.sysfs; the tests' fake trees),
 * else /proc and /sys.
 */
const char *pv_procfs(void);
const char *pv_sysfs(void);

/*
 * The numbers N of the entries of root/rel named PREFIX N SUFFIX (node0,
 * thermal_zone3, temp2_input), ascending, in *ret (allocated here, owned by
 * the caller, NULL when there are none).  A missing directory is -ENOENT.
 */
int pv_list_numbered(const char *root, const char *rel, const char *prefix,
                     const char *suffix, unsigned **ret, size_t *ret_n);

/* ---- /proc/swaps ---- */

struct pv_swap {
        char name[512];                 /* the path, octal escapes (\040) decoded */
        char type[16];                  /* partition, file */
        uint64_t size, used;            /* bytes */
        int priority;
};

/* The next swap area (the header line is skipped); 1, or 0 at the end. */
int pv_swaps_next(FILE *f, struct pv_swap *ret);

/* ---- NUMA nodes: root/devices/system/node/nodeN ---- */

/*
 * pv_kv_parse of root/devices/system/node/nodeN/meminfo, whose lines
 * read "Node N KEY: VALUE kB".
 */
int pv_node_meminfo(const char *root, unsigned node, const char *const *keys, size_t n,
                    uint64_t *values, uint64_t *ret_found);

/* ---- thermal zones: root/class/thermal/thermal_zoneN ---- */

struct pv_thermal_zone {
        char type[64];
        int64_t millicelsius;
        /*
         * Of the cooling devices bound to the zone (cdevK links): the deepest
         * throttling, cur_state / max_state, in percent; 0 with none.
         */
        unsigned cooling_pct;
        bool cooling;                   /* a bound device is throttling now */
};

/*
 * Zone N.  -ENOENT when it is gone; a sensor that cannot read its
 * temperature now (EAGAIN, ENODATA, EINVAL from the driver) is that error.
 */
int pv_thermal_zone_read(const char *root, unsigned zone, struct pv_thermal_zone *ret);

/*
 * Millidegrees Celsius in tenths of a Kelvin on ACPI's scale, where 0 degrees
 * Celsius is 2732 (so Linux's ACPI zones give back the firmware's figure),
 * rounded; 0 below absolute zero.
 */
uint32_t pv_tenths_kelvin(int64_t millicelsius);

/* ---- hwmon: root/class/hwmon/hwmonN/tempK_input ---- */

struct pv_hwmon_temp {
        char chip[64];                  /* hwmonN/name */
        char label[64];                 /* tempK_label, else "tempK" */
        int64_t millicelsius;
};

/* Sensor K of chip N. */
int pv_hwmon_temp_read(const char *root, unsigned chip, unsigned k, struct pv_hwmon_temp *ret);

/* ---- RAPL: root/class/powercap/intel-rapl:X[:Y] ---- */

struct pv_rapl_zone {
        char dir[64];                   /* intel-rapl:0:1 */
        char name[128];                 /* "package-0", "package-0/core" for a subzone */
        bool has_energy;                /* energy_uj could be read (root-only since Linux 5.10) */
        uint64_t energy_uj;
        uint64_t max_energy_uj;         /* where energy_uj wraps, 0 when unknown */
        uint64_t limit_uw;              /* constraint_0_power_limit_uw, 0 when none */
};

/*
 * The RAPL zones (directories intel-rapl:*, intel-rapl-mmio:*), sorted by
 * directory name, in *ret (owned by the caller, free()).  No powercap
 * directory is -ENOENT; no zones is 0 with *ret_n 0.
 */
int pv_rapl_zones(const char *root, struct pv_rapl_zone **ret, size_t *ret_n);

/*
 * The energy used between two readings prev and cur of an energy_uj that
 * wraps past max (max_energy_range_uj); 0 when it went back and max is
 * unknown (0) or smaller than prev, which is no wrap this zone can make.
 */
uint64_t pv_energy_delta(uint64_t prev, uint64_t cur, uint64_t max);

#endif /* PV_MEMHW_H */
