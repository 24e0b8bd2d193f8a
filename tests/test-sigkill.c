/* SPDX-License-Identifier: MIT */
/*
 * Liveness: a provider killed with SIGKILL is seen as gone within one
 * second and its socket reclaimed; a stopped (SIGSTOP) provider is not
 * mistaken for a dead one; a stale socket is judged by its listener, never
 * by a pid that may have been reused.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "testutil.h"

static GUID prov = { 0x5191c001, 0x1, 0x2, { 1, 1, 2, 3, 5, 8, 13, 21 } };
static GUID cset = { 0x5191c002, 0x1, 0x2, { 1, 1, 2, 3, 5, 8, 13, 21 } };
static const char *rundir;

static void provider_child(int cmd_fd, int ack_fd)
{
        HANDLE h;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES,
                                              1, (const ULONG[]) { 8 }, &size);
        static ULONGLONG ref = 7;

        ((PPERF_COUNTER_INFO) (t + 1))[0].Attrib = PERF_ATTRIB_BY_REFERENCE;
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &cset, L"k", 0);
        if (!i || PerfSetCounterRefValue(h, i, 1, &ref) != ERROR_SUCCESS)
                _exit(3);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

static int setup(void **state)
{
        static struct tu_child c;

        rundir = tu_runtime_setup();
        c = (struct tu_child) { .cmd_fd = -1, .ack_fd = -1 };
        if (tu_child_start(&c, provider_child) < 0)
                return -1;
        *state = &c;
        return 0;
}

static int teardown(void **state)
{
        tu_child_stop(*state);
        tu_runtime_teardown();
        return 0;
}

static void sigkill_seen_within_one_second(void **state)
{
        struct tu_child *c = *state;
        struct pl_reader *r = NULL;
        unsigned reclaimed = 0;
        double t0, gone = -1;

        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_alive(r), 1);
        t0 = tu_now();
        assert_int_equal(kill(c->pid, SIGKILL), 0);
        while (tu_now() - t0 < 2.0) {
                if (pl_reader_alive(r) == 0) {
                        gone = tu_now() - t0;
                        break;
                }
                usleep(1000);
        }
        print_message("SIGKILL seen after %.1f ms\n", gone * 1e3);
        assert_true(gone >= 0 && gone < 1.0);
        pl_reader_close(r);

        /* The socket is left behind by a SIGKILL; one scan reclaims it. */
        assert_int_equal(tu_count_providers(&reclaimed), 0);
        assert_int_equal(reclaimed, 1);
        assert_int_equal(tu_open_only_provider(0.05, &r), -ENOENT);
}

static void stopped_provider_is_alive_and_collect_is_bounded(void **state)
{
        struct tu_child *c = *state;
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;
        int status;
        double t0, took;

        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(kill(c->pid, SIGSTOP), 0);
        assert_int_equal(waitpid(c->pid, &status, WUNTRACED), c->pid);
        assert_true(WIFSTOPPED(status));

        assert_int_equal(pl_reader_alive(r), 1);
        assert_int_equal(tu_count_providers(NULL), 1);

        /* Its reference counters cannot be refreshed: the snapshot says so, in time. */
        t0 = tu_now();
        assert_int_equal(pl_reader_snapshot(r, 0, PL_SNAPSHOT_COLLECT, &s), 0);
        took = tu_now() - t0;
        assert_true(s->refs_stale);
        assert_int_equal(s->n_instances, 1);
        pl_snapshot_free(s);
        print_message("collect from a stopped provider gave up after %.1f ms (bound %d ms)\n",
                      took * 1e3, pl_collect_timeout_ms());
        assert_true(took < 5.0 * pl_collect_timeout_ms() / 1000.0);

        assert_int_equal(kill(c->pid, SIGCONT), 0);
        assert_int_equal(pl_reader_snapshot(r, 0, PL_SNAPSHOT_COLLECT, &s), 0);
        assert_false(s->refs_stale);
        assert_int_equal(s->instances[0].values[0], 7);
        pl_snapshot_free(s);
        pl_reader_close(r);
}

/*
 * A socket named after a live pid (ours) with nobody listening: a pid check
 * would call it alive; the listener check reclaims it.
 */
static void stale_socket_of_a_live_pid_is_reclaimed(void **state)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        unsigned reclaimed = 0;
        int fd;

        (void) state;
        snprintf(sa.sun_path, sizeof(sa.sun_path),
                 "%s/provider-%d-9-00000000-0000-0000-0000-000000000000.sock",
                 rundir, (int) getpid());
        fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);

        assert_int_equal(tu_count_providers(&reclaimed), 1);    /* the real child */
        assert_int_equal(reclaimed, 1);
        assert_int_equal(access(sa.sun_path, F_OK), -1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(sigkill_seen_within_one_second, setup, teardown),
                cmocka_unit_test_setup_teardown(stopped_provider_is_alive_and_collect_is_bounded,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(stale_socket_of_a_live_pid_is_reclaimed,
                                                setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
