/* SPDX-License-Identifier: MIT */
/*
 * The parsers of the CPU detail providers (Processor Information, Thread)
 * on fixture trees under tests/data/procinfo: sysfs with three NUMA nodes
 * (one without CPUs) and cpufreq present, partial or garbled; a sysfs with
 * neither; /proc/cpuinfo of x86 and of arm64 (no MHz); thread stat lines
 * of a niced thread, a real-time one, an old kernel's and garbage.
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

#include "cpuinfo.h"
#include "procfs.h"
#include "task.h"

#define SYS_NUMA        FIXTURES "/sys-numa"
#define SYS_FLAT        FIXTURES "/sys-flat"

struct list {
        unsigned cpu[16];
        size_t n, stop_after;
};

static int collect_cpu(unsigned cpu, void *userdata)
{
        struct list *l = userdata;

        l->cpu[l->n++] = cpu;
        return l->n == l->stop_after;
}

static void test_cpulist(void **state)
{
        static const char *const bad[] = { "a", "1-", "3-1", "0,,1", "0;1", "-1", "99999999999" };
        struct list l = { 0 };

        assert_int_equal(pv_cpulist_parse("0-2,5,7-8\n", collect_cpu, &l), 0);
        assert_int_equal(l.n, 6);
        assert_int_equal(l.cpu[0], 0);
        assert_int_equal(l.cpu[2], 2);
        assert_int_equal(l.cpu[3], 5);
        assert_int_equal(l.cpu[5], 8);
        /* A node of memory only lists nothing. */
        l = (struct list) { 0 };
        assert_int_equal(pv_cpulist_parse("\n", collect_cpu, &l), 0);
        assert_int_equal(pv_cpulist_parse("", collect_cpu, &l), 0);
        assert_int_equal(l.n, 0);
        /* The callback stops the walk. */
        l = (struct list) { .stop_after = 2 };
        assert_int_equal(pv_cpulist_parse("4-9", collect_cpu, &l), 0);
        assert_int_equal(l.n, 2);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                l = (struct list) { 0 };
                assert_int_equal(pv_cpulist_parse(bad[i], collect_cpu, &l), -EBADMSG);
        }
}

static void test_cpu_nodes(void **state)
{
        const unsigned cpu[] = { 0, 1, 2, 3, 4, 9 };
        unsigned node[6];

        assert_int_equal(pv_cpu_nodes(SYS_NUMA, cpu, 6, node), 0);
        assert_int_equal(node[0], 0);
        assert_int_equal(node[1], 0);
        assert_int_equal(node[2], 1);
        assert_int_equal(node[3], 1);
        assert_int_equal(node[4], 0);
        /* Listed by no node (the fixture's "power" directory is not one): node 0. */
        assert_int_equal(node[5], 0);
        /* No node directory at all (a kernel without NUMA): every CPU in node 0. */
        node[2] = 7;
        assert_int_equal(pv_cpu_nodes(SYS_FLAT, cpu, 6, node), 0);
        assert_int_equal(node[2], 0);
}

static void test_cpufreq(void **state)
{
        uint64_t cur = 1, max = 1;

        assert_int_equal(pv_cpufreq_read(SYS_NUMA, 0, &cur, &max), 0);
        assert_int_equal(cur, 2400000);
        assert_int_equal(max, 3000000);
        /* Only cpuinfo_cur_freq (no scaling driver), no maximum. */
        assert_int_equal(pv_cpufreq_read(SYS_NUMA, 1, &cur, &max), 0);
        assert_int_equal(cur, 1200000);
        assert_int_equal(max, 0);
        /* Garbage, and no cpufreq directory at all: nothing written. */
        cur = max = 1;
        assert_true(pv_cpufreq_read(SYS_NUMA, 2, &cur, &max) < 0);
        assert_int_equal(pv_cpufreq_read(SYS_NUMA, 3, &cur, &max), -ENOENT);
        assert_int_equal(pv_cpufreq_read(SYS_FLAT, 0, &cur, &max), -ENOENT);
        assert_int_equal(cur, 1);
        assert_int_equal(max, 1);
}

static void test_cpuinfo_mhz(void **state)
{
        const unsigned cpu[] = { 0, 1, 2, 3 };
        uint64_t mhz[4];
        FILE *f = pv_fopen(FIXTURES, "cpuinfo-x86");

        assert_non_null(f);
        assert_int_equal(pv_cpuinfo_mhz(f, cpu, 4, mhz), 0);
        fclose(f);
        assert_int_equal(mhz[0], 2596);
        assert_int_equal(mhz[1], 0);            /* not listed */
        assert_int_equal(mhz[2], 800);          /* 799.5 rounds up */
        assert_int_equal(mhz[3], 0);            /* "fast" */
        f = pv_fopen(FIXTURES, "cpuinfo-arm64");
        assert_non_null(f);
        assert_int_equal(pv_cpuinfo_mhz(f, cpu, 4, mhz), -ENOENT);
        fclose(f);
}

static void read_fixture(const char *rel, char *buf, size_t size)
{
        assert_true(pv_read_small(FIXTURES, rel, buf, size) > 0);
}

static void test_task_stat(void **state)
{
        struct pv_task_stat t = { .nice = 99 };
        char line[1024];

        read_fixture("task/nice5", line, sizeof(line));
        assert_int_equal(pv_task_stat_parse(line, &t), 0);
        assert_int_equal(t.stat.pid, 4243);
        assert_string_equal(t.stat.comm, "worker (1)");
        assert_int_equal(t.stat.utime, 300);
        assert_int_equal(t.stat.stime, 40);
        assert_int_equal(t.stat.starttime, 5100);
        assert_int_equal(t.priority, 25);
        assert_int_equal(t.nice, 5);
        assert_int_equal(pv_task_priority_base(&t), 15);
        assert_int_equal(pv_task_priority_current(&t), 15);
        assert_int_equal(pv_task_state(t.stat.state), 5);
        assert_int_equal(pv_task_wait_reason(t.stat.state), 6);

        read_fixture("task/fifo50", line, sizeof(line));
        assert_int_equal(pv_task_stat_parse(line, &t), 0);
        assert_int_equal(t.priority, -51);
        assert_int_equal(t.rt_priority, 50);
        assert_int_equal(t.policy, 1);
        assert_int_equal(pv_task_priority_base(&t), 90);
        assert_int_equal(pv_task_priority_current(&t), 90);
        assert_int_equal(pv_task_state(t.stat.state), 2);

        /* Before fields 40 and 41: a normal thread. */
        read_fixture("task/old-kernel", line, sizeof(line));
        assert_int_equal(pv_task_stat_parse(line, &t), 0);
        assert_int_equal(t.rt_priority, 0);
        assert_int_equal(t.policy, 0);
        assert_int_equal(pv_task_priority_base(&t), 20);
        assert_int_equal(pv_task_wait_reason(t.stat.state), 0);

        t.stat.pid = 1;
        read_fixture("task/garbage", line, sizeof(line));
        assert_int_equal(pv_task_stat_parse(line, &t), -EBADMSG);
        assert_int_equal(pv_task_stat_parse("1 (x) S", &t), -EBADMSG);
        assert_int_equal(t.stat.pid, 1);        /* untouched on failure */
}

static void test_task_states(void **state)
{
        assert_int_equal(pv_task_state('T'), 5);
        assert_int_equal(pv_task_wait_reason('T'), 5);
        assert_int_equal(pv_task_state('Z'), 4);
        assert_int_equal(pv_task_state('?'), 7);
        assert_int_equal(pv_task_wait_reason('R'), 0);
}

static void test_task_switches(void **state)
{
        static const char *const keys[] = { "voluntary_ctxt_switches",
                                            "nonvoluntary_ctxt_switches" };
        uint64_t v[2] = { 0 }, found = 0;
        char text[1024];

        read_fixture("task/status", text, sizeof(text));
        assert_int_equal(pv_kv_parse(text, keys, 2, v, &found), 0);
        assert_int_equal(found, 3);
        assert_int_equal(v[0], 1500);
        assert_int_equal(v[1], 23);
}

/* schedstat's third field, the switches in; anything else is refused and nothing written. */
static void test_task_schedstat(void **state)
{
        uint64_t v = 7;

        (void) state;
        assert_int_equal(pv_task_schedstat_switches("366607379 374520317 1501\n", &v), 0);
        assert_int_equal(v, 1501);
        assert_int_equal(pv_task_schedstat_switches("0 0 0", &v), 0);
        assert_int_equal(v, 0);
        v = 7;
        assert_int_equal(pv_task_schedstat_switches("1 2\n", &v), -EINVAL);
        assert_int_equal(pv_task_schedstat_switches("-1 2 3\n", &v), -EINVAL);
        assert_int_equal(pv_task_schedstat_switches("1 2 3 4\n", &v), -EINVAL);
        assert_int_equal(pv_task_schedstat_switches("", &v), -EINVAL);
        assert_int_equal(v, 7);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cpulist),
                cmocka_unit_test(test_cpu_nodes),
                cmocka_unit_test(test_cpufreq),
                cmocka_unit_test(test_cpuinfo_mhz),
                cmocka_unit_test(test_task_stat),
                cmocka_unit_test(test_task_states),
                cmocka_unit_test(test_task_switches),
                cmocka_unit_test(test_task_schedstat),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
