/* SPDX-License-Identifier: MIT */
/*
 * The Linux providers' parsers (providers/common/procfs.h) on fixture files
 * under tests/data/proc, with the shapes that trip parsers up: a comm with
 * spaces and parentheses, escaped mount points, numbers that run into an
 * interface's colon, kernels with fewer or more fields; and the instance
 * bookkeeping (instances.h) on a real provider.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
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

static void assert_stat_equal(const struct pv_pid_stat *s, const struct pv_pid_stat *want)
{
        assert_int_equal(s->pid, want->pid);
        assert_int_equal(s->ppid, want->ppid);
        assert_string_equal(s->comm, want->comm);
        assert_int_equal(s->state, want->state);
        assert_int_equal(s->utime, want->utime);
        assert_int_equal(s->stime, want->stime);
        assert_int_equal(s->num_threads, want->num_threads);
        assert_int_equal(s->starttime, want->starttime);
        assert_int_equal(s->vsize, want->vsize);
        assert_int_equal(s->rss, want->rss);
}

static void test_pid_stat(void **state)
{
        struct pv_pid_stat s;
        char line[512];
        FILE *f = fixture("4242/stat");

        assert_non_null(fgets(line, sizeof(line), f));
        fclose(f);
        assert_int_equal(pv_pid_stat_parse(line, &s), 0);
        assert_stat_equal(&s, &(struct pv_pid_stat) {
                .pid = 4242, .ppid = 1, .comm = "my (weird) prog", .state = 'S', .utime = 120,
                .stime = 34, .num_threads = 7, .starttime = 5000, .vsize = 123456789,
                .rss = 2048 });
        assert_int_equal(pv_pid_stat_parse("12 (x) S 1 2", &s), -EBADMSG);
        assert_int_equal(pv_pid_stat_parse("12 x) S", &s), -EBADMSG);
}

static void test_pid_stat_bad(void **state)
{
        static const char *const bad[] = {
                "",
                "(x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22",  /* no pid */
                "12 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",     /* 22 fields */
                "12 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15 16 17 18 19 20 21 22", /* utime */
        };
        struct pv_pid_stat s = { .pid = 99 };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(pv_pid_stat_parse(bad[i], &s), -EBADMSG);
        assert_int_equal(s.pid, 99);                    /* untouched on failure */
        /* Exactly 24 fields, the last without a newline; signed fields skipped. */
        assert_int_equal(pv_pid_stat_parse("12 (a) b) R 1 2 3 -4 5 6 7 8 9 10 11 12 -13 14 "
                                           "-15 -16 17 18 19 20 21", &s), 0);
        assert_stat_equal(&s, &(struct pv_pid_stat) {
                .pid = 12, .ppid = 1, .comm = "a) b", .state = 'R', .utime = 11, .stime = 12,
                .num_threads = 17, .starttime = 19, .vsize = 20, .rss = 21 });
        assert_int_equal(pv_pid_stat_parse("12 (a) R -1", &s), -EBADMSG);
}

/* statm and status read whole through the process's directory, then parsed as text. */
static void test_pid_files(void **state)
{
        static const char *const st[] = { "VmRSS", "RssAnon", "VmSwap" };
        struct pv_pid_statm m = { 0 };
        uint64_t v[3] = { 0 }, found;
        char buf[4096], small[16];
        int dir = open(PROC_FIXTURES "/4242", O_PATH | O_DIRECTORY | O_CLOEXEC);

        assert_true(dir >= 0);
        assert_true(pv_read_at(dir, "statm", buf, sizeof(buf)) > 0);
        assert_int_equal(pv_pid_statm_parse(buf, &m), 0);
        assert_int_equal(m.size, 30141);
        assert_int_equal(m.resident, 2048);
        assert_int_equal(m.shared, 1024);
        assert_true(pv_read_at(dir, "status", buf, sizeof(buf)) > 0);
        assert_int_equal(pv_kv_parse(buf, st, 3, v, &found), 0);
        assert_true(v[0] == 8192 * 1024);
        assert_true(v[1] == 4096 * 1024);
        assert_true(v[2] == 100 * 1024);
        assert_int_equal(found, 0x7);
        assert_int_equal(pv_read_at(dir, "status", small, sizeof(small)), -ENOBUFS);
        assert_int_equal(pv_read_at(dir, "nothing", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(pv_read_at(dir, "statm", buf, 0), -EINVAL);
        close(dir);
        m.size = 7;
        assert_int_equal(pv_pid_statm_parse("12 x 3", &m), -EBADMSG);
        assert_int_equal(pv_pid_statm_parse("12 13", &m), -EBADMSG);
        assert_int_equal(m.size, 7);
}

static void test_kv_parse(void **state)
{
        static const char *const keys[] = { "a", "ab", "c", "d" };
        uint64_t v[4] = { 0, 0, 0, 77 }, found;

        /* A key that begins another, a unit that only begins with kB, the last
         * line without its newline, a key with no number (kept). */
        assert_int_equal(pv_kv_parse("ab: 5 kBx\nd:\na:\t3 kB\nx: 1\nc 9", keys, 4, v,
                                     &found), 0);
        assert_int_equal(v[0], 3 * 1024);
        assert_int_equal(v[1], 5);
        assert_int_equal(v[2], 9);
        assert_int_equal(v[3], 77);
        assert_int_equal(found, 0x7);
        assert_int_equal(pv_kv_parse("", keys, 4, v, &found), 0);
        assert_int_equal(found, 0);
        assert_int_equal(pv_kv_parse(NULL, keys, 4, v, NULL), -EINVAL);
}

/* The child: exactly FDS_HELD descriptors, wfd among them, then it waits to be killed. */
#define FDS_HELD 6

static void hold_fds(void *arg, int wfd)
{
        (void) arg;
        for (int fd = 0; fd < 1024; fd++)
                if (fd != wfd)
                        close(fd);
        for (int i = 1; i < FDS_HELD; i++)
                if (open("/dev/null", O_RDONLY) < 0)
                        _exit(1);
        tu_ready(wfd);
        for (;;)
                pause();
}

static bool kernel_at_least(int major, int minor)
{
        struct utsname u;
        int ma = 0, mi = 0;

        assert_int_equal(uname(&u), 0);
        assert_true(sscanf(u.release, "%d.%d", &ma, &mi) == 2);
        return ma > major || (ma == major && mi >= minor);
}

static void test_pid_fds(void **state)
{
        uint64_t by_size = 0, listed = 0;
        pid_t child = tu_spawn(hold_fds, NULL, NULL);
        char pid[16];
        int proc, dir;

        assert_true(child > 0);
        proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(proc >= 0);
        /* Linux 6.2 made fd/'s size its count. */
        assert_true(pv_fds_by_size(proc) == kernel_at_least(6, 2));
        snprintf(pid, sizeof(pid), "%d", (int) child);
        dir = openat(proc, pid, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(dir >= 0);
        assert_int_equal(pv_pid_count_fds(dir, false, &listed), 0);
        assert_int_equal(listed, FDS_HELD);
        if (pv_fds_by_size(proc)) {
                assert_int_equal(pv_pid_count_fds(dir, true, &by_size), 0);
                assert_int_equal(by_size, FDS_HELD);
        }
        assert_int_equal(pv_pid_count_fds(dir, false, NULL), -EINVAL);
        kill(child, SIGKILL);
        assert_int_equal(waitpid(child, NULL, 0), child);
        /* Gone: an error, not a count. */
        assert_true(pv_pid_count_fds(dir, false, &listed) < 0);
        assert_true(pv_pid_count_fds(dir, true, &listed) < 0);
        close(dir);
        close(proc);
}

static void test_proc_count(void **state)
{
        uint64_t listed = 0, before = 0, after = 0;
        int fixtures = open(PROC_FIXTURES, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        bool quiet = false;

        assert_true(fixtures >= 0);
        assert_true(proc >= 0);
        /* Numeric entries only: 4242, not self or net. */
        assert_int_equal(pv_proc_count_listed(fixtures, &listed), 0);
        assert_int_equal(listed, 1);
        assert_int_equal(pv_proc_count_listed(fixtures, NULL), -EINVAL);
        close(fixtures);
        assert_int_equal(pv_proc_count_listed(proc, &listed), 0);
        assert_true(listed >= 2);                       /* this process and its parent */
        /* Where the link count is the count (the machine's own /proc), it is the
         * listing's, in a moment when no process started or ended. */
        for (int i = 0; i < 20 && !quiet && pv_proc_links_count(proc); i++) {
                assert_int_equal(pv_proc_count_by_links(proc, &before), 0);
                assert_int_equal(pv_proc_count_listed(proc, &listed), 0);
                assert_int_equal(pv_proc_count_by_links(proc, &after), 0);
                quiet = before == after;
                if (quiet)
                        assert_int_equal(listed, before);
        }
        close(proc);
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

/* Enough instances for the index to grow several times, and a sweep of half of them. */
static void test_instset_many(void **state)
{
        enum { N = 3000 };
#define ID(i) ((i) / 2 * 7919 % (N / 2))
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 1,
                                              (const ULONG[]) { 8 }, &size);
        static PPERF_COUNTERSET_INSTANCE first[N];
        PPERF_COUNTERSET_INSTANCE again;
        struct pv_instset s;
        char name[32];
        HANDLE h;

        assert_int_equal(PerfStartProvider((LPGUID) &prov, NULL, &h), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        pv_instset_init(&s, h, &cset);
        /* Ids in no order, each twice under two names (a PID just reused). */
        for (uint32_t i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "p%u", i % 2);
                assert_int_equal(pv_instset_get(&s, name, ID(i), &first[i]), 0);
        }
        assert_int_equal(pv_instset_sweep(&s), 0);
        for (uint32_t i = 1; i < N; i += 2) {
                assert_int_equal(pv_instset_get(&s, "p1", ID(i), &again), 0);
                assert_ptr_equal(again, first[i]);
        }
        assert_int_equal(pv_instset_sweep(&s), N / 2);
        for (uint32_t i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "p%u", i % 2);
                assert_true(exists(h, name, ID(i)) == (i % 2 == 1));
        }
        /* After the sweep moved them, still found where they are. */
        for (uint32_t i = 1; i < N; i += 2) {
                assert_int_equal(pv_instset_get(&s, "p1", ID(i), &again), 0);
                assert_ptr_equal(again, first[i]);
        }
        assert_int_equal(pv_instset_sweep(&s), 0);
        pv_instset_done(&s);
        assert_false(exists(h, "p1", ID(1)));
#undef ID
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
                cmocka_unit_test(test_pid_stat_bad),
                cmocka_unit_test(test_pid_files),
                cmocka_unit_test(test_kv_parse),
                cmocka_unit_test(test_pid_fds),
                cmocka_unit_test(test_proc_count),
                cmocka_unit_test(test_read_small),
                TU_TEST(test_instset),
                TU_TEST(test_instset_many),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
