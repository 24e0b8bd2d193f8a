/* SPDX-License-Identifier: MIT */
/*
 * The memory-detail and hardware parsers (providers/common/memhw.h) on the
 * fake /proc and /sys trees of tests/data/memhw: /proc/swaps of several
 * kernels with escaped paths and garbage lines, two NUMA nodes of different
 * kernels and a node without meminfo, thermal zones with passive and active
 * cooling devices and unreadable temperatures, hwmon chips with and without
 * names and labels, RAPL packages, subzones, an MMIO zone and a zone whose
 * energy is unreadable; and the arithmetic the providers build on them.
 * This machine has no swap, hwmon or RAPL: these trees are their proof.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "memhw.h"
#include "procfs.h"

#define SYS     MEMHW_FIXTURES "/sys"
#define PROC    MEMHW_FIXTURES "/proc"
#define BARE    MEMHW_FIXTURES "/bare"

static FILE *fixture(const char *rel)
{
        FILE *f = pv_fopen(MEMHW_FIXTURES, rel);

        if (!f)
                fail_msg("%s/%s: %s", MEMHW_FIXTURES, rel, strerror(errno));
        return f;
}

/* ---- directory listings and names ---- */

static void test_list_numbered(void **state)
{
        unsigned *v = (unsigned *) 1;
        size_t n = 99;

        /* node0..2, not online, possible, power, nodeX, node1a. */
        assert_int_equal(pv_list_numbered(SYS, "devices/system/node", "node", "", &v, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(v[0], 0);
        assert_int_equal(v[1], 1);
        assert_int_equal(v[2], 2);
        free(v);
        /* Numeric order, not the directory's: zone 10 after zone 4. */
        assert_int_equal(pv_list_numbered(SYS, "class/thermal", "thermal_zone", "", &v, &n), 0);
        assert_int_equal(n, 6);
        assert_int_equal(v[4], 4);
        assert_int_equal(v[5], 10);
        free(v);
        /* cdev0_trip_point is no cooling device. */
        assert_int_equal(pv_list_numbered(SYS, "class/thermal/thermal_zone0", "cdev", "", &v, &n),
                         0);
        assert_int_equal(n, 2);
        free(v);
        /* With a suffix: temp1_input, temp10_input, not temp1_max. */
        assert_int_equal(pv_list_numbered(SYS, "class/hwmon/hwmon4", "temp", "_input", &v, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(v[0], 1);
        assert_int_equal(v[1], 10);
        free(v);
        /* Nothing numbered: no array. */
        v = (unsigned *) 1;
        assert_int_equal(pv_list_numbered(BARE, "class/thermal", "thermal_zone", "", &v, &n), 0);
        assert_int_equal(n, 0);
        assert_null(v);
        n = 99;
        assert_int_equal(pv_list_numbered(BARE, "class/hwmon", "hwmon", "", &v, &n), -ENOENT);
        assert_int_equal(n, 99);                /* untouched on failure */
        assert_int_equal(pv_list_numbered(SYS, NULL, "x", "", &v, &n), -EINVAL);
}

static void test_roots(void **state)
{
        assert_int_equal(setenv("PERFLIB_SYSFS", SYS, 1), 0);
        assert_string_equal(pv_sysfs(), SYS);
        /* A relative path would depend on the host's working directory: ignored. */
        assert_int_equal(setenv("PERFLIB_SYSFS", "sys", 1), 0);
        assert_string_equal(pv_sysfs(), "/sys");
        unsetenv("PERFLIB_SYSFS");
        unsetenv("PERFLIB_PROCFS");
        assert_string_equal(pv_sysfs(), "/sys");
        assert_string_equal(pv_procfs(), "/proc");
}

/* ---- /proc/swaps ---- */

static void test_swaps(void **state)
{
        struct pv_swap s;
        FILE *f = fixture("proc/swaps");

        assert_int_equal(pv_swaps_next(f, &s), 1);
        assert_string_equal(s.name, "/dev/vda3");
        assert_string_equal(s.type, "partition");
        assert_true(s.size == UINT64_C(2097148) * 1024);
        assert_true(s.used == UINT64_C(1024) * 1024);
        assert_int_equal(s.priority, -2);
        /* The kernel escapes a space in a path as \040. */
        assert_int_equal(pv_swaps_next(f, &s), 1);
        assert_string_equal(s.name, "/var/lib/paging file.swap");
        assert_string_equal(s.type, "file");
        assert_int_equal(s.used, 0);
        assert_int_equal(s.priority, -3);
        /* Beyond 32 bits of KiB. */
        assert_int_equal(pv_swaps_next(f, &s), 1);
        assert_true(s.size == UINT64_C(4294967292) * 1024);
        assert_true(s.used == UINT64_C(2147483648) * 1024);
        assert_int_equal(s.priority, 10);
        assert_int_equal(pv_swaps_next(f, &s), 0);
        fclose(f);
        f = fixture("swaps/empty");
        assert_int_equal(pv_swaps_next(f, &s), 0);
        fclose(f);
        f = fixture("swaps/linux-2.6");
        assert_int_equal(pv_swaps_next(f, &s), 1);
        assert_string_equal(s.name, "/dev/sda2");
        assert_true(s.used == 52 * 1024);
        assert_int_equal(pv_swaps_next(f, &s), 0);
        fclose(f);
        assert_int_equal(pv_swaps_next(NULL, &s), -EINVAL);
}

static void test_swaps_garbage(void **state)
{
        struct pv_swap s = { .priority = 77 };
        FILE *f = fixture("swaps/garbage");

        assert_int_equal(pv_swaps_next(f, &s), 1);
        assert_string_equal(s.name, "/dev/vdb1");
        assert_true(s.size == 100 * 1024);
        /* Each bad line is its own error; the next call goes on after it. */
        s.priority = 77;
        assert_int_equal(pv_swaps_next(f, &s), -EBADMSG);       /* words */
        assert_int_equal(pv_swaps_next(f, &s), -EBADMSG);       /* no Used, no Priority */
        assert_int_equal(pv_swaps_next(f, &s), -EBADMSG);       /* more used than its size */
        assert_int_equal(s.priority, 77);                       /* untouched on failure */
        assert_int_equal(pv_swaps_next(f, &s), 1);
        assert_string_equal(s.name, "/dev/vdb4");
        assert_int_equal(s.priority, 5);
        assert_int_equal(pv_swaps_next(f, &s), 0);
        fclose(f);
}

/* ---- NUMA nodes ---- */

enum { TOTAL, FREE, AFILE, IFILE, KRECL, SRECL, HP_TOTAL, N_KEYS };
static const char *const node_keys[N_KEYS] = {
        "MemTotal", "MemFree", "Active(file)", "Inactive(file)", "KReclaimable",
        "SReclaimable", "HugePages_Total",
};

static void test_node_meminfo(void **state)
{
        uint64_t v[N_KEYS] = { 0 }, found = 0;

        assert_int_equal(pv_node_meminfo(SYS, 0, node_keys, N_KEYS, v, &found), 0);
        assert_int_equal(found, (1u << N_KEYS) - 1);
        assert_true(v[TOTAL] == UINT64_C(8388608) * 1024);
        /* Node 1's line in node 0's file is not node 0's. */
        assert_true(v[FREE] == UINT64_C(2097152) * 1024);
        assert_true(v[AFILE] == UINT64_C(2000000) * 1024);
        assert_true(v[KRECL] == UINT64_C(300000) * 1024);
        /* A count, not kB. */
        assert_int_equal(v[HP_TOTAL], 16);
        /* A 4.x kernel: no KReclaimable, its bit clear and its value kept. */
        memset(v, 0, sizeof(v));
        v[KRECL] = 5;
        assert_int_equal(pv_node_meminfo(SYS, 1, node_keys, N_KEYS, v, &found), 0);
        assert_false(found & 1u << KRECL);
        assert_true(found & 1u << SRECL);
        assert_int_equal(v[KRECL], 5);
        assert_true(v[IFILE] == UINT64_C(500000) * 1024);
        assert_int_equal(pv_node_meminfo(SYS, 2, node_keys, N_KEYS, v, &found), -ENOENT);
        assert_int_equal(pv_node_meminfo(SYS, 7, node_keys, N_KEYS, v, &found), -ENOENT);
        assert_int_equal(pv_node_meminfo(NULL, 0, node_keys, N_KEYS, v, &found), -EINVAL);
}

static void test_node_numastat(void **state)
{
        static const char *const keys[] = { "numa_hit", "numa_miss", "other_node" };
        uint64_t v[3] = { 0 }, found = 0;

        assert_int_equal(pv_kv_read_file(SYS, "devices/system/node/node0/numastat", keys, 3,
                                          v, &found), 0);
        assert_int_equal(found, 7);
        assert_true(v[0] == UINT64_C(1850861801));
        assert_int_equal(v[1], 12);
        assert_int_equal(v[2], 801);
        /* An older kernel's file without other_node. */
        memset(v, 0, sizeof(v));
        assert_int_equal(pv_kv_read_file(SYS, "devices/system/node/node1/numastat", keys, 3,
                                          v, &found), 0);
        assert_int_equal(found, 3);
        assert_int_equal(v[0], 5000);
}

/* ---- thermal zones and hwmon ---- */

static void test_thermal_zones(void **state)
{
        struct pv_thermal_zone z = { .cooling_pct = 99 };

        /* Processor at 2 of 10: 20 %; the running fan is no limit. */
        assert_int_equal(pv_thermal_zone_read(SYS, 0, &z), 0);
        assert_string_equal(z.type, "acpitz");
        assert_int_equal(z.millicelsius, 45000);
        assert_int_equal(z.cooling_pct, 20);
        assert_true(z.cooling);
        assert_int_equal(pv_thermal_zone_read(SYS, 1, &z), 0);
        assert_int_equal(z.millicelsius, 27850);
        assert_int_equal(z.cooling_pct, 0);
        assert_false(z.cooling);
        /* A temperature that is no number, and none at all. */
        z.cooling_pct = 99;
        assert_int_equal(pv_thermal_zone_read(SYS, 2, &z), -EBADMSG);
        assert_int_equal(pv_thermal_zone_read(SYS, 3, &z), -ENOENT);
        assert_int_equal(z.cooling_pct, 99);
        assert_int_equal(pv_thermal_zone_read(SYS, 4, &z), 0);
        assert_string_equal(z.type, "battery(main)");
        assert_int_equal(z.millicelsius, -5000);
        /* A driver's cur_state beyond max_state is full throttling, not more. */
        assert_int_equal(pv_thermal_zone_read(SYS, 10, &z), 0);
        assert_int_equal(z.cooling_pct, 100);
        assert_int_equal(pv_thermal_zone_read(SYS, 5, &z), -ENOENT);
}

static void test_hwmon(void **state)
{
        struct pv_hwmon_temp t;

        assert_int_equal(pv_hwmon_temp_read(SYS, 0, 1, &t), 0);
        assert_string_equal(t.chip, "coretemp");
        assert_string_equal(t.label, "Package id 0");
        assert_int_equal(t.millicelsius, 42000);
        assert_int_equal(pv_hwmon_temp_read(SYS, 0, 2, &t), 0);
        assert_string_equal(t.label, "Core 0");
        /* No label: the sensor's file name, as sensors(1) shows it. */
        assert_int_equal(pv_hwmon_temp_read(SYS, 1, 1, &t), 0);
        assert_string_equal(t.chip, "nvme");
        assert_string_equal(t.label, "temp1");
        assert_int_equal(t.millicelsius, 35850);
        /* No name: the hwmon directory's. */
        assert_int_equal(pv_hwmon_temp_read(SYS, 2, 1, &t), 0);
        assert_string_equal(t.chip, "hwmon2");
        /* An empty reading (a sensor that is off). */
        assert_int_equal(pv_hwmon_temp_read(SYS, 4, 1, &t), -EBADMSG);
        assert_int_equal(pv_hwmon_temp_read(SYS, 4, 10, &t), 0);
        assert_string_equal(t.label, "a/b (c) #d");
        assert_int_equal(pv_hwmon_temp_read(SYS, 0, 3, &t), -ENOENT);
}

static void test_kelvin(void **state)
{
        /* ACPI's 2732: Linux turned the firmware's 3182 into 45000 m°C. */
        assert_int_equal(pv_tenths_kelvin(45000), 3182);
        assert_int_equal(pv_tenths_kelvin(0), 2732);
        assert_int_equal(pv_tenths_kelvin(27850), 3011);       /* 3010.5 rounds up */
        assert_int_equal(pv_tenths_kelvin(27849), 3010);
        assert_int_equal(pv_tenths_kelvin(-5000), 2682);
        assert_int_equal(pv_tenths_kelvin(-273200), 0);
        assert_int_equal(pv_tenths_kelvin(-300000), 0);
        assert_int_equal(pv_tenths_kelvin(INT64_MAX), 0);
        assert_int_equal(pv_tenths_kelvin(INT64_MIN), 0);
}

/* ---- RAPL ---- */

static void test_rapl(void **state)
{
        struct pv_rapl_zone *z = NULL;
        size_t n = 0;

        assert_int_equal(pv_rapl_zones(SYS, &z, &n), 0);
        /* intel-rapl (the control type), intel-rapl:2 (no name) and dtpm are not zones. */
        assert_int_equal(n, 6);
        /* Version order: the MMIO zone, then :0, :0:0, :0:1, :1, :10. */
        assert_string_equal(z[0].dir, "intel-rapl-mmio:0");
        assert_string_equal(z[0].name, "package-0");
        memmove(z, z + 1, 5 * sizeof(*z));
        assert_string_equal(z[0].dir, "intel-rapl:0");
        assert_string_equal(z[0].name, "package-0");
        assert_true(z[0].has_energy);
        assert_int_equal(z[0].energy_uj, 123456789);
        assert_true(z[0].max_energy_uj == UINT64_C(262143328850));
        assert_int_equal(z[0].limit_uw, 15000000);
        assert_string_equal(z[1].name, "package-0/core");
        assert_int_equal(z[1].energy_uj, 5000);
        assert_int_equal(z[1].limit_uw, 0);     /* a limit not enabled is none */
        assert_string_equal(z[2].name, "package-0/uncore");
        assert_int_equal(z[2].max_energy_uj, 0);
        assert_int_equal(z[2].limit_uw, 5000000);
        /* energy_uj unreadable (root-only): the zone stays, with its budget. */
        assert_string_equal(z[3].dir, "intel-rapl:1");
        assert_false(z[3].has_energy);
        assert_int_equal(z[3].energy_uj, 0);
        assert_int_equal(z[3].limit_uw, 20000000);
        assert_string_equal(z[4].dir, "intel-rapl:10");
        assert_string_equal(z[4].name, "psys");
        free(z);
        /* A powercap directory without RAPL, and none at all. */
        z = (struct pv_rapl_zone *) 1;
        assert_int_equal(pv_rapl_zones(BARE, &z, &n), 0);
        assert_int_equal(n, 0);
        assert_null(z);
        assert_int_equal(pv_rapl_zones(PROC, &z, &n), -ENOENT);
}

static void test_energy_delta(void **state)
{
        const uint64_t max = UINT64_C(262143328850);

        assert_int_equal(pv_energy_delta(1000, 3500, max), 2500);
        assert_int_equal(pv_energy_delta(7, 7, 0), 0);
        /* Wrapped past max. */
        assert_int_equal(pv_energy_delta(max - 100, 50, max), 150);
        /* Went back with no known range, or with one it cannot have wrapped at. */
        assert_int_equal(pv_energy_delta(5000, 10, 0), 0);
        assert_int_equal(pv_energy_delta(5000, 10, 4000), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_list_numbered),
                cmocka_unit_test(test_roots),
                cmocka_unit_test(test_swaps),
                cmocka_unit_test(test_swaps_garbage),
                cmocka_unit_test(test_node_meminfo),
                cmocka_unit_test(test_node_numastat),
                cmocka_unit_test(test_thermal_zones),
                cmocka_unit_test(test_hwmon),
                cmocka_unit_test(test_kelvin),
                cmocka_unit_test(test_rapl),
                cmocka_unit_test(test_energy_delta),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
