/* SPDX-License-Identifier: MIT */
/*
 * A provider whose process ends without PerfStopProvider removes its socket
 * itself: on exit(), and on SIGTERM, SIGINT and SIGHUP left at their default
 * action, ending with the same wait status as without us.  A handler the
 * application installed first is left alone; a forked child never removes
 * its parent's socket.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "testutil.h"

static GUID prov = { 0x1ef70001, 0x1, 0x2, { 3, 1, 4, 1, 5, 9, 2, 6 } };
static GUID cset = { 0x1ef70002, 0x1, 0x2, { 3, 1, 4, 1, 5, 9, 2, 6 } };

/* Every socket file in the runtime directory, live or not. */
static unsigned count_sockets(void)
{
        DIR *d = opendir(getenv("PERFLIB_RUNTIME_DIR"));
        struct dirent *de;
        unsigned n = 0;

        assert_non_null(d);
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);

                n += len > 5 && strcmp(de->d_name + len - 5, ".sock") == 0;
        }
        closedir(d);
        return n;
}

/* What these tests are about; nohup or a CI runner may have left SIGHUP ignored. */
static void default_signals(void)
{
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
}

static void start_provider(void)
{
        HANDLE h;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_SINGLE_INSTANCE,
                                              1, (const ULONG[]) { 4 }, &size);

        if (!t || PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        free(t);
}

static void provider_until_killed(void *arg, int wfd)
{
        (void) arg;
        default_signals();
        start_provider();
        tu_ready(wfd);
        for (;;)
                pause();
}

static int wait_status(pid_t pid)
{
        int status = -1;

        assert_int_equal(waitpid(pid, &status, 0), pid);
        return status;
}

static void default_signals_remove_the_socket(void **state)
{
        static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };

        (void) state;
        for (unsigned i = 0; i < 3; i++) {
                pid_t pid = tu_spawn(provider_until_killed, NULL, NULL);

                assert_true(pid > 0);
                assert_int_equal(count_sockets(), 1);
                assert_int_equal(kill(pid, sigs[i]), 0);
                int status = wait_status(pid);
                /* Ended by the signal itself, as without the SDK's handler. */
                assert_true(WIFSIGNALED(status));
                assert_int_equal(WTERMSIG(status), sigs[i]);
                assert_int_equal(count_sockets(), 0);
        }
}

static void provider_then_exit(void *arg, int wfd)
{
        (void) arg;
        start_provider();
        tu_ready(wfd);
        exit(3);
}

static void exit_removes_the_socket(void **state)
{
        int rfd;
        pid_t pid = tu_spawn(provider_then_exit, NULL, &rfd);

        (void) state;
        assert_true(pid > 0);
        int status = wait_status(pid);
        close(rfd);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 3);
        assert_int_equal(count_sockets(), 0);
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
        (void) sig;
        got_term = 1;
}

/* The application's handler runs, not ours; its exit() then removes the socket. */
static void provider_with_own_handler(void *arg, int wfd)
{
        bool use_exit = arg != NULL;

        signal(SIGTERM, on_term);
        start_provider();
        tu_ready(wfd);
        while (!got_term)
                pause();
        if (use_exit)
                exit(5);
        _exit(6);
}

static void own_handler_is_left_alone(void **state)
{
        pid_t pid;
        int status;

        (void) state;
        /* _exit() skips atexit: the socket stays, proof that no handler of ours ran. */
        pid = tu_spawn(provider_with_own_handler, NULL, NULL);
        assert_true(pid > 0);
        assert_int_equal(kill(pid, SIGTERM), 0);
        status = wait_status(pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 6);
        assert_int_equal(count_sockets(), 1);
        assert_int_equal(tu_count_providers(NULL), 0);  /* and the next scan reclaims it */
        assert_int_equal(count_sockets(), 0);

        pid = tu_spawn(provider_with_own_handler, (void *) 1, NULL);
        assert_true(pid > 0);
        assert_int_equal(kill(pid, SIGTERM), 0);
        status = wait_status(pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 5);
        assert_int_equal(count_sockets(), 0);
}

static void provider_with_dying_child(void *arg, int wfd)
{
        int status;

        (void) arg;
        default_signals();
        start_provider();
        pid_t child = fork();
        if (child == 0) {
                raise(SIGTERM);
                _exit(9);
        }
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFSIGNALED(status) ||
            WTERMSIG(status) != SIGTERM)
                _exit(4);
        tu_ready(wfd);
        for (;;)
                pause();
}

static void forked_child_keeps_parents_socket(void **state)
{
        pid_t pid = tu_spawn(provider_with_dying_child, NULL, NULL);

        (void) state;
        assert_true(pid > 0);
        assert_int_equal(count_sockets(), 1);
        assert_int_equal(tu_count_providers(NULL), 1);
        assert_int_equal(kill(pid, SIGTERM), 0);
        int status = wait_status(pid);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(count_sockets(), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(default_signals_remove_the_socket),
                TU_TEST(exit_removes_the_socket),
                TU_TEST(own_handler_is_left_alone),
                TU_TEST(forked_child_keeps_parents_socket),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
