/* SPDX-License-Identifier: MIT */
/*
 * The Linux providers' parsers (providers/common/procfs.h) on fixture files
 * under tests/data/proc, with the shapes that trip parsers up: a comm with
 * spaces and parentheses, escaped mount points, numbers that run into an
 * interface's colon, kernels with fewer or more fields; and the instance
 * bookkeeping (instances.h) on a real provider.
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

#include "instances.h"
#include "procfs.h"
#include "testutil.h"

static FILE *fixture(const char *rel)
{
        FILE *f = pv_fopen(PROC_FIXTURES, rel);

        if (!f)
                fail_msg("%s/%s: %s", PROC_FIXTURES, rel, strerror(errno));
        return f;
}

/* A FILE over a string, for malformed input. */
static FILE *text(const char *s)
{
        FILE *f = fmemopen((void *) s, strlen(s), "r");

        assert_non_null(f);
        return f;
}

static void test_stat(void **state)
{
        struct pv_stat s;
        FILE *f = fixture("stat");

        assert_int_equal(pv_stat_read(f, &s), 0);
        fclose(f);
        assert_int_equal(s.total.user, 1000);
        assert_int_equal(s.total.nice, 50);
        assert_int_equal(s.total.idle, 8000);
        assert_int_equal(s.total.iowait, 200);
        assert_int_equal(s.total.steal, 5);
        /* CPUs as listed: an offline CPU 1 is simply missing. */
        assert_int_equal(s.n_cpu, 2);
        assert_int_equal(s.cpu_id[0], 0);
        assert_int_equal(s.cpu_id[1], 2);
        assert_int_equal(s.cpu[1].system, 150);
        assert_int_equal(s.cpu[1].softirq, 8);
        assert_int_equal(s.intr, 123456);
        assert_int_equal(s.ctxt, 987654);
        assert_int_equal(s.processes, 4321);
        assert_int_equal(s.procs_running, 3);
        assert_int_equal(s.procs_blocked, 1);
        assert_int_equal(s.btime, 1700000000);
        pv_stat_done(&s);
        pv_stat_done(NULL);
}

static void test_stat_bad(void **state)
{
        struct pv_stat s = { .n_cpu = 99 };
        FILE *f = text("cpu  1 2\n");

        /* Fewer than four times: not a cpu line this parser understands. */
        assert_int_equal(pv_stat_read(f, &s), -EBADMSG);
        assert_int_equal(s.n_cpu, 99);                  /* untouched on failure */
        fclose(f);
        f = text("cpu0 1 2 3 4\nctxt x\n");
        assert_int_equal(pv_stat_read(f, &s), -EBADMSG);
        fclose(f);
}

static void test_interrupts(void **state)
{
        const unsigned ids[] = { 2, 0, 5 };
        uint64_t per[3] = { 9, 9, 9 };
        FILE *f = fixture("interrupts");

        assert_int_equal(pv_interrupts_read(f, ids, 3, per), 0);
        fclose(f);
        /* Columns are CPU0 and CPU2; ERR has one column; CPU 5 has none. */
        assert_int_equal(per[1], 40 + 9 + 3 + 1000 + 7);
        assert_int_equal(per[0], 2 + 1 + 4 + 2000);
        assert_int_equal(per[2], 0);
        f = text("no header\n");
        assert_int_equal(pv_interrupts_read(f, ids, 3, per), -EBADMSG);
        fclose(f);
}

static void test_meminfo(void **state)
{
        static const char *const keys[] = { "MemAvailable", "SwapTotal", "HugePages_Total",
                                            "Missing" };
        uint64_t v[4] = { 0, 0, 0, 77 }, found;
        FILE *f = fixture("meminfo");

        assert_int_equal(pv_kv_read(f, keys, 4, v, &found), 0);
        fclose(f);
        assert_true(v[0] == 9000000ull * 1024);
        assert_true(v[1] == 4000000ull * 1024);
        assert_int_equal(v[2], 0);                      /* no unit: as is */
        assert_int_equal(v[3], 77);                     /* absent: kept */
        assert_int_equal(found, 0x7);
}

static void test_vmstat_status_io(void **state)
{
        static const char *const vm[] = { "pgfault", "pgmajfault", "pswpin", "pswpout" };
        static const char *const st[] = { "Threads", "RssAnon", "VmSwap", "PPid" };
        static const char *const io[] = { "rchar", "wchar" };
        uint64_t v[4] = { 0 }, found;
        FILE *f = fixture("vmstat");

        assert_int_equal(pv_kv_read(f, vm, 4, v, &found), 0);
        fclose(f);
        assert_int_equal(v[0], 333333);
        assert_int_equal(v[1], 444);
        assert_int_equal(v[2] + v[3], 33);
        f = fixture("4242/status");
        assert_int_equal(pv_kv_read(f, st, 4, v, &found), 0);
        fclose(f);
        assert_int_equal(v[0], 7);
        assert_int_equal(v[1], 4096 * 1024);
        assert_int_equal(v[2], 100 * 1024);
        assert_int_equal(v[3], 1);
        f = fixture("4242/io");
        assert_int_equal(pv_kv_read(f, io, 2, v, NULL), 0);
        fclose(f);
        assert_int_equal(v[0], 1111);
        assert_int_equal(v[1], 2222);
        assert_int_equal(pv_kv_read(NULL, io, 2, v, NULL), -EINVAL);
}

static void test_loadavg(void **state)
{
        uint64_t running, threads;
        FILE *f = fixture("loadavg");

        assert_int_equal(pv_loadavg_read(f, &running, &threads), 0);
        fclose(f);
        assert_int_equal(running, 3);
        assert_int_equal(threads, 812);
        f = text("0.1 0.2 0.3\n");
        assert_int_equal(pv_loadavg_read(f, &running, &threads), -EBADMSG);
        fclose(f);
}

static void test_diskstats(void **state)
{
        struct pv_disk d;
        FILE *f = fixture("diskstats");

        /* A 2.6-era line of 14 fields; then one with discard and flush fields. */
        assert_int_equal(pv_diskstats_next(f, &d), 1);
        assert_string_equal(d.name, "loop0");
        assert_int_equal(pv_diskstats_next(f, &d), 1);
        assert_string_equal(d.name, "vda");
        assert_int_equal(d.major, 254);
        assert_int_equal(d.reads, 262540);
        assert_int_equal(d.sectors_read, 14144314);
        assert_int_equal(d.ms_reading, 431457);
        assert_int_equal(d.writes, 183398);
        assert_int_equal(d.sectors_written, 9227600);
        assert_int_equal(d.ms_writing, 70028);
        assert_int_equal(d.in_flight, 2);
        assert_int_equal(d.ms_io, 79444);
        assert_int_equal(d.ms_weighted, 516078);
        assert_int_equal(pv_diskstats_next(f, &d), 1);
        assert_int_equal(d.minor, 1);
        assert_int_equal(pv_diskstats_next(f, &d), 1);
        assert_string_equal(d.name, "nvme0n1");
        assert_int_equal(pv_diskstats_next(f, &d), 0);
        fclose(f);
        f = text("   8 0 sda 1 2 3\n");
        assert_int_equal(pv_diskstats_next(f, &d), -EBADMSG);
        fclose(f);
}

static void test_netdev(void **state)
{
        struct pv_netdev n;
        FILE *f = fixture("net/dev");

        assert_int_equal(pv_netdev_next(f, &n), 1);
        assert_string_equal(n.name, "lo");
        assert_int_equal(n.rx_bytes, 22291830);
        assert_int_equal(n.tx_packets, 34738);
        /* A byte count that runs into the colon. */
        assert_int_equal(pv_netdev_next(f, &n), 1);
        assert_string_equal(n.name, "eth0");
        assert_int_equal(n.rx_bytes, 276922718);
        assert_int_equal(n.rx_errs, 1);
        assert_int_equal(n.rx_drop, 2);
        assert_int_equal(n.tx_bytes, 360331);
        assert_int_equal(n.tx_errs, 3);
        assert_int_equal(n.tx_drop, 4);
        assert_int_equal(pv_netdev_next(f, &n), 1);
        assert_string_equal(n.name, "veth0.100");
        assert_int_equal(n.tx_bytes, 20);
        assert_int_equal(pv_netdev_next(f, &n), 0);
        fclose(f);
}

static void test_mountinfo(void **state)
{
        struct pv_mount m;
        FILE *f = fixture("self/mountinfo");

        assert_int_equal(pv_mountinfo_next(f, &m), 1);
        assert_string_equal(m.fstype, "proc");
        assert_true(pv_fs_is_pseudo(m.fstype));
        assert_int_equal(pv_mountinfo_next(f, &m), 1);
        assert_string_equal(m.point, "/");
        assert_int_equal(m.major, 254);
        assert_false(pv_fs_is_pseudo(m.fstype));
        /* Optional fields before the separator. */
        assert_int_equal(pv_mountinfo_next(f, &m), 1);
        assert_string_equal(m.root, "/srv/data");
        assert_string_equal(m.point, "/mnt/bind");
        assert_string_equal(m.fstype, "ext4");
        assert_string_equal(m.source, "/dev/vda");
        /* \040 is a space. */
        assert_int_equal(pv_mountinfo_next(f, &m), 1);
        assert_string_equal(m.point, "/media/my disk");
        assert_int_equal(m.minor, 17);
        assert_int_equal(pv_mountinfo_next(f, &m), 1);
        assert_true(pv_fs_is_pseudo(m.fstype));
        assert_int_equal(pv_mountinfo_next(f, &m), 0);
        fclose(f);
        f = text("1 2 8:1 / /x rw shared:1\n");             /* no separator */
        assert_true(pv_mountinfo_next(f, &m) < 0);
        fclose(f);
}

static void test_pid_stat(void **state)
{
        struct pv_pid_stat s;
        char line[512];
        FILE *f = fixture("4242/stat");

        assert_non_null(fgets(line, sizeof(line), f));
        fclose(f);
        assert_int_equal(pv_pid_stat_parse(line, &s), 0);
        assert_int_equal(s.pid, 4242);
        assert_string_equal(s.comm, "my (weird) prog");
        assert_int_equal(s.state, 'S');
        assert_int_equal(s.ppid, 1);
        assert_int_equal(s.utime, 120);
        assert_int_equal(s.stime, 34);
        assert_int_equal(s.num_threads, 7);
        assert_int_equal(s.starttime, 5000);
        assert_int_equal(s.vsize, 123456789);
        assert_int_equal(s.rss, 2048);
        assert_int_equal(pv_pid_stat_parse("12 (x) S 1 2", &s), -EBADMSG);
        assert_int_equal(pv_pid_stat_parse("12 x) S", &s), -EBADMSG);
}

static void test_read_small(void **state)
{
        char buf[8];
        int64_t v;

        assert_int_equal(pv_read_small(PROC_FIXTURES, "loadavg", buf, sizeof(buf)), -ENOBUFS);
        assert_int_equal(pv_read_small(PROC_FIXTURES, "nothing", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(pv_read_s64(PROC_FIXTURES, "loadavg", &v), -EBADMSG);
}

/* ---- instances.h, on a real provider ---- */

static const GUID prov = { 0x5e1f7e57, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID cset = { 0x5e1f7e57, 0x3, 0x4, { 1, 2, 3, 4, 5, 6, 7, 8 } };

static bool exists(HANDLE h, const char *name, uint32_t id)
{
        return PerfQueryInstanceUtf8(h, &cset, name, id) != NULL;
}

static void test_instset(void **state)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                              (const ULONG[]) { 4, 8 }, &size);
        PPERF_COUNTERSET_INSTANCE a, b, again;
        struct pv_instset s;
        const uint64_t values[] = { 0, 0x100000005ull, 0x1234567890ull };
        HANDLE h;

        assert_int_equal(PerfStartProvider((LPGUID) &prov, NULL, &h), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        pv_instset_init(&s, h, &cset);
        /* Same name, different ids (two processes called sh): two instances. */
        assert_int_equal(pv_instset_get(&s, "sh", 20, &a), 0);
        assert_int_equal(pv_instset_get(&s, "sh", 10, &b), 0);
        assert_ptr_not_equal(a, b);
        assert_int_equal(pv_instset_get(&s, "init", 1, &again), 0);
        assert_int_equal(pv_instset_sweep(&s), 0);
        /* Seen again: the same block; not seen: deleted at the sweep. */
        assert_int_equal(pv_instset_get(&s, "sh", 20, &again), 0);
        assert_ptr_equal(again, a);
        assert_int_equal(pv_instset_get(&s, "init", 1, &again), 0);
        assert_int_equal(pv_instset_sweep(&s), 1);
        assert_false(exists(h, "sh", 10));
        assert_true(exists(h, "sh", 20));
        /* A PID reused by another program: a new instance, the old one swept. */
        assert_int_equal(pv_instset_get(&s, "bash", 20, &b), 0);
        assert_int_equal(pv_instset_get(&s, "init", 1, &again), 0);
        assert_int_equal(pv_instset_sweep(&s), 1);
        assert_false(exists(h, "sh", 20));
        assert_true(exists(h, "bash", 20));
        /* Values go out with each counter's width: the 4-byte one truncated. */
        pv_set_values(h, b, t, values, 3);
        assert_int_equal(*(uint32_t *) ((uint8_t *) b + sizeof(*b)), 5);
        pv_instset_done(&s);
        assert_false(exists(h, "bash", 20));
        assert_false(exists(h, "init", 1));
        pv_instset_done(NULL);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
        free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stat),
                cmocka_unit_test(test_stat_bad),
                cmocka_unit_test(test_interrupts),
                cmocka_unit_test(test_meminfo),
                cmocka_unit_test(test_vmstat_status_io),
                cmocka_unit_test(test_loadavg),
                cmocka_unit_test(test_diskstats),
                cmocka_unit_test(test_netdev),
                cmocka_unit_test(test_mountinfo),
                cmocka_unit_test(test_pid_stat),
                cmocka_unit_test(test_read_small),
                TU_TEST(test_instset),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
