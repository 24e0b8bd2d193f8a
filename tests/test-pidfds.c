/* SPDX-License-Identifier: MIT */
/*
 * The kept /proc/PID descriptors of Process and Thread (providers/common/
 * pidfds.h): the table's bookkeeping, and the two kernel behaviours the
 * provider's figures rest on: a pread from offset 0 of a kept file gives
 * the figures of now, a kept file of a reaped process fails, so that a
 * reused PID is never read through its predecessor's descriptors, and a
 * kept task/ directory lists the threads of now.
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
#include <dirent.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "pidfds.h"
#include "procfs.h"

static bool is_open(int fd)
{
        return fcntl(fd, F_GETFD) >= 0;
}

static void test_table(void **state)
{
        struct pidfds t = { 0 };
        struct pidfd_entry *a, *b;
        int fd;

        assert_int_equal(pidfds_init(&t, 2), 0);
        a = pidfds_get(&t, 10);
        assert_non_null(a);
        for (size_t k = 0; k < PIDFDS_FDS; k++)
                assert_int_equal(a->fd[k], -1);
        assert_ptr_equal(pidfds_get(&t, 10), a);
        b = pidfds_get(&t, 11);
        assert_non_null(b);
        assert_null(pidfds_get(&t, 12));        /* full: the caller reads it the old way */
        assert_null(pidfds_get(&t, 0));
        fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        b->fd[2] = fd;
        /* Both seen: both kept, unseen again for the next collection. */
        pidfds_sweep(&t);
        assert_int_equal(t.n, 2);
        assert_true(is_open(fd));
        a = pidfds_get(&t, 10);
        assert_non_null(a);
        /* 11 not seen: its descriptors closed, its slot free for 12. */
        pidfds_sweep(&t);
        assert_int_equal(t.n, 1);
        assert_false(is_open(fd));
        assert_non_null(pidfds_get(&t, 12));
        assert_int_equal(pidfds_get(&t, 10)->pid, 10);
        assert_int_equal(t.n, 2);
        pidfds_done(&t);
        pidfds_done(&t);                        /* a zeroed struct again */
}

static void test_many(void **state)
{
        struct pidfds t = { 0 };

        assert_int_equal(pidfds_init(&t, 5000), 0);
        for (uint32_t pid = 1; pid <= 5000; pid++)
                assert_non_null(pidfds_get(&t, pid * 7));
        assert_null(pidfds_get(&t, 1));
        pidfds_sweep(&t);
        /* Every other one seen: the rest leave, the seen ones are found again. */
        for (uint32_t pid = 2; pid <= 5000; pid += 2)
                assert_int_equal(pidfds_get(&t, pid * 7)->pid, pid * 7);
        pidfds_sweep(&t);
        assert_int_equal(t.n, 2500);
        for (uint32_t pid = 2; pid <= 5000; pid += 2)
                assert_int_equal(pidfds_get(&t, pid * 7)->pid, pid * 7);
        assert_int_equal(t.n, 2500);
        pidfds_done(&t);
}

/* A pread from 0 of a kept statm shows memory touched after the open. */
static void test_pread_is_now(void **state)
{
        struct pv_pid_statm before, after;
        size_t len = 64 << 20;
        char buf[256], *p;
        int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_true(pidfds_pread(fd, buf, sizeof(buf)) > 0);
        assert_int_equal(pv_pid_statm_parse(buf, &before), 0);
        p = malloc(len);
        assert_non_null(p);
        memset(p, 1, len);
        assert_true(pidfds_pread(fd, buf, sizeof(buf)) > 0);
        assert_int_equal(pv_pid_statm_parse(buf, &after), 0);
        assert_true(after.resident >= before.resident + (len / 2) / (size_t) getpagesize());
        free(p);
        assert_int_equal(pidfds_pread(fd, buf, 4), -ENOBUFS);
        close(fd);
}

/* A kept stat of a reaped child fails: the provider then opens the PID again. */
static void test_reaped(void **state)
{
        char path[64], buf[1024];
        pid_t pid = fork();
        int fd;

        assert_true(pid >= 0);
        if (pid == 0) {
                pause();
                _exit(0);
        }
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_true(pidfds_pread(fd, buf, sizeof(buf)) > 0);
        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        assert_int_equal(pidfds_pread(fd, buf, sizeof(buf)), -ESRCH);
        close(fd);
}

static int count_entry(const struct dirent64 *e, void *userdata)
{
        *(int *) userdata += e->d_name[0] >= '0' && e->d_name[0] <= '9';
        return 0;
}

static void *wait_for_close(void *arg)
{
        char c;

        (void) read(*(int *) arg, &c, 1);
        return NULL;
}

/* A kept task/ directory, walked again, lists the threads born since its open. */
static void test_task_dir_anew(void **state)
{
        int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), p[2], n = 0;
        pthread_t th;

        assert_true(fd >= 0);
        assert_int_equal(pv_dir_walk(fd, count_entry, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(pipe(p), 0);
        assert_int_equal(pthread_create(&th, NULL, wait_for_close, &p[0]), 0);
        n = 0;
        assert_int_equal(pv_dir_walk(fd, count_entry, &n), 0);
        assert_int_equal(n, 2);
        close(p[1]);
        assert_int_equal(pthread_join(th, NULL), 0);
        close(p[0]);
        close(fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_many),
                cmocka_unit_test(test_pread_is_now),
                cmocka_unit_test(test_reaped),
                cmocka_unit_test(test_task_dir_anew),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
