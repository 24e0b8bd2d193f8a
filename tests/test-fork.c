/* SPDX-License-Identifier: MIT */
/*
 * A provider that forks keeps its liveness: the child of a fork() inherits
 * the collect service's descriptors, and must not keep the provider looking
 * alive once the provider itself dies.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "perflib.h"
#include "reader.h"

static GUID provider_guid = { 0x0f0f0001, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };

static int first_socket(const char *path, void *userdata)
{
        strncpy(userdata, path, 4095);
        return 1;
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The provider process: starts, forks a sleeper, reports both pids, waits. */
static void run_provider(int wfd)
{
        HANDLE h;
        pid_t pids[2];
        int g[2];
        char c;

        if (PerfStartProvider(&provider_guid, NULL, &h) != ERROR_SUCCESS || pipe(g) < 0)
                _exit(2);
        pids[0] = getpid();
        pids[1] = fork();
        if (pids[1] == 0) {
                /*
                 * The grandchild outlives the provider; it only sleeps.  Its
                 * fork() has returned, so perflib's handlers have run in it:
                 * say so, or the test could probe before they did.
                 */
                close(g[0]);
                if (write(g[1], "g", 1) != 1)
                        _exit(4);
                sleep(30);
                _exit(0);
        }
        close(g[1]);
        if (read(g[0], &c, 1) != 1 || write(wfd, pids, sizeof(pids)) != sizeof(pids))
                _exit(3);
        pause();
        _exit(0);
}

static void forked_child_does_not_keep_provider_alive(void **state)
{
        char dir[] = "/tmp/perflib-test-fork.XXXXXX";
        char sock[4096] = "";
        struct pl_reader *r = NULL;
        pid_t pids[2];
        int pfd[2];

        (void) state;
        assert_non_null(mkdtemp(dir));
        setenv("PERFLIB_RUNTIME_DIR", dir, 1);
        assert_int_equal(pipe(pfd), 0);
        pid_t prov = fork();
        assert_true(prov >= 0);
        if (prov == 0) {
                close(pfd[0]);
                run_provider(pfd[1]);
        }
        close(pfd[1]);
        assert_int_equal(read(pfd[0], pids, sizeof(pids)), (int) sizeof(pids));
        close(pfd[0]);
        assert_int_equal(pl_scan(dir, first_socket, sock, NULL), 1);
        assert_int_equal(pl_reader_open(sock, &r), 0);
        assert_int_equal(pl_reader_alive(r), 1);

        double t0 = now_s();
        assert_int_equal(kill(prov, SIGKILL), 0);
        while (pl_reader_alive(r) == 1 && now_s() - t0 < 2.0)
                usleep(10000);
        double seen = now_s() - t0;
        assert_int_equal(pl_reader_alive(r), 0);
        assert_true(seen < 1.0);

        unsigned reclaimed = 0;
        assert_int_equal(pl_scan(dir, first_socket, sock, &reclaimed), 0);
        /*
         * The dead provider's socket is gone afterwards.  Whether this scan
         * or an earlier reclaim removed it is a race (one run in seven under
         * ASan saw 0 here), so the count is only bounded.
         */
        assert_true(reclaimed <= 1);
        assert_int_equal(access(sock, F_OK), -1);

        pl_reader_close(r);
        waitpid(prov, NULL, 0);
        kill(pids[1], SIGKILL);
        rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(forked_child_does_not_keep_provider_alive),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
