/* SPDX-License-Identifier: MIT */
/*
 * The namespace's discovery threads (server-glue/namespace/ns-disc.c) in
 * this process, which is short of descriptors exactly when a provider
 * appears: with one descriptor left the scan can open the runtime
 * directory but not probe the socket in it; with none it cannot open the
 * directory.  Either way the shortage is logged and, once descriptors are
 * back, the provider is served without the directory changing again: a
 * scan that ran short is never taken for a scan that found nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "ns-live.h"
#include "testutil.h"

#define FILL_MAX        256     /* the soft limit while short, so filling is cheap */
#define LOG_WAIT_S      3.0     /* the shortage is logged within this */
#define SERVE_WAIT_S    3.0     /* served this long after descriptors are back (1 s retry) */

static GUID prov = { 0xd15c1001, 0x1, 0x2, { 9, 9, 9, 9, 9, 9, 9, 9 } };
static GUID cset = { 0xd15c1002, 0x1, 0x2, { 9, 9, 9, 9, 9, 9, 9, 9 } };

static int shortages;           /* log lines about a shortage, from the discovery threads */
static int fill[FILL_MAX];
static int n_fill;
static struct rlimit saved;

static void capture_log(void *userdata, int priority, const char *format, va_list ap)
{
        char line[1024];

        vsnprintf(line, sizeof(line), format, ap);
        if (strstr(line, "for want of descriptors"))
                __atomic_add_fetch(&shortages, 1, __ATOMIC_SEQ_CST);
}

/* A provider that starts publishing on the first command, until the parent goes away. */
static void provider_child(int cmd_fd, int ack_fd)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_SINGLE_INSTANCE, 1,
                                              (const ULONG[]) { 4 }, &size);
        HANDLE h;

        tu_ready(ack_fd);
        if (!tu_next_command(cmd_fd))
                _exit(0);
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            !PerfCreateInstance(h, &cset, L"_Total", 0))
                _exit(2);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

/* Leaves this process exactly left descriptors under a lowered soft limit. */
static void run_short(int left)
{
        struct rlimit low;
        int fd;

        assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
        low = saved;
        if (low.rlim_cur > FILL_MAX)
                low.rlim_cur = FILL_MAX;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        while (n_fill < FILL_MAX && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
                fill[n_fill++] = fd;
        assert_int_equal(errno, EMFILE);
        assert_true(n_fill > left);
        while (left-- > 0)
                close(fill[--n_fill]);
}

static void run_free(void)
{
        while (n_fill > 0)
                close(fill[--n_fill]);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

static bool served(struct ns *ns)
{
        bool found;

        ns_lock(ns);
        assert_int_equal(ns_refresh(ns), 0);
        found = ns_find(ns, &cset) != NULL;
        ns_unlock(ns);
        return found;
}

static void short_when_announced(int left)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct ns *ns;
        double t;

        /* Forked before the namespace's threads exist. */
        assert_int_equal(tu_child_start(&p, provider_child), 0);
        assert_int_equal(ns_new(getenv("PERFLIB_RUNTIME_DIR"), &ns), 0);
        ns_set_log(ns, capture_log, NULL);
        ns_set_threaded(ns);
        assert_int_equal(ns_start_discovery(ns), 0);
        assert_false(served(ns));
        shortages = 0;

        run_short(left);
        assert_int_equal(tu_command(&p, 's'), 0);
        ns_lock(ns);
        ns_runtime_changed(ns);
        ns_unlock(ns);
        for (t = tu_now(); !__atomic_load_n(&shortages, __ATOMIC_SEQ_CST) &&
                           tu_now() - t < LOG_WAIT_S;)
                usleep(10000);
        /* Past the 50 ms within which a refresh takes the directory for changed. */
        usleep(100000);
        assert_false(served(ns));
        run_free();
        assert_true(shortages > 0);

        /* Nothing changes in the directory from here on: only the retry finds it. */
        for (t = tu_now(); !served(ns) && tu_now() - t < SERVE_WAIT_S;)
                usleep(10000);
        print_message("%d descriptor(s) left: %d shortage line(s), served %.2f s after\n",
                      left, shortages, tu_now() - t);
        assert_true(served(ns));
        ns_free(ns);
        tu_child_stop(&p);
}

/* The directory opens, the probe of the socket does not. */
static void test_probe_short(void **state)
{
        short_when_announced(1);
}

/* The directory itself does not open. */
static void test_dir_short(void **state)
{
        short_when_announced(0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(test_probe_short),
                TU_TEST(test_dir_short),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
