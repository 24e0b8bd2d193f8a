/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static char runtime_dir[PATH_MAX];

const char *tu_runtime_setup(void)
{
        const char *base = getenv("PERFLIB_TEST_TMPDIR");

        if (!base || !*base)
                base = "/tmp";
        snprintf(runtime_dir, sizeof(runtime_dir), "%s/perflib-test.XXXXXX", base);
        /* A plugin host running as nobody (as root, test-plugins) must reach it. */
        if (!mkdtemp(runtime_dir) || chmod(runtime_dir, 0755) < 0 ||
            setenv("PERFLIB_RUNTIME_DIR", runtime_dir, 1) < 0) {
                perror("tu_runtime_setup");
                abort();
        }
        return runtime_dir;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st, (void) flag, (void) ftw;
        return remove(path) < 0 ? -errno : 0;
}

void tu_runtime_teardown(void)
{
        if (runtime_dir[0])
                (void) nftw(runtime_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        runtime_dir[0] = '\0';
}

int tu_fixture_setup(void **state)
{
        (void) state;
        tu_runtime_setup();
        return 0;
}

int tu_fixture_teardown(void **state)
{
        (void) state;
        tu_runtime_teardown();
        return 0;
}

double tu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

PPERF_COUNTERSET_INFO tu_template(const GUID *provider, const GUID *cset,
                                  ULONG instance_type, ULONG n,
                                  const ULONG *sizes, ULONG *ret_size)
{
        ULONG size = sizeof(PERF_COUNTERSET_INFO) + n * sizeof(PERF_COUNTER_INFO);
        PPERF_COUNTERSET_INFO t = calloc(1, size);
        PPERF_COUNTER_INFO c;

        if (!t)
                abort();
        t->CounterSetGuid = *cset;
        t->ProviderGuid = *provider;
        t->NumCounters = n;
        t->InstanceType = instance_type;
        c = (PPERF_COUNTER_INFO) (t + 1);
        for (ULONG i = 0; i < n; i++) {
                c[i].CounterId = i + 1;
                c[i].Size = sizes[i];
                c[i].Type = sizes[i] == 8 ? PERF_COUNTER_BULK_COUNT : PERF_COUNTER_COUNTER;
                c[i].DetailLevel = PERF_DETAIL_NOVICE;
        }
        *ret_size = size;
        return t;
}

pid_t tu_spawn(void (*fn)(void *arg, int wfd), void *arg, int *ret_rfd)
{
        int p[2];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid < 0) {
                close(p[0]);
                close(p[1]);
                return -1;
        }
        if (pid == 0) {
                close(p[0]);
                fn(arg, p[1]);
                _exit(0);
        }
        close(p[1]);
        if (tu_wait_ready(p[0]) < 0) {
                close(p[0]);
                (void) waitpid(pid, NULL, 0);
                return -1;
        }
        if (ret_rfd)
                *ret_rfd = p[0];
        else
                close(p[0]);
        return pid;
}

void tu_ready(int wfd)
{
        if (write(wfd, "r", 1) != 1)
                _exit(90);
}

int tu_wait_ready(int rfd)
{
        char c;
        ssize_t n;

        do
                n = read(rfd, &c, 1);
        while (n < 0 && errno == EINTR);
        return n == 1 ? 0 : -1;
}

int tu_child_start(struct tu_child *c, void (*fn)(int cmd_fd, int ack_fd))
{
        int cmd[2], ack[2];

        if (pipe2(cmd, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(ack, O_CLOEXEC) < 0) {
                close(cmd[0]);
                close(cmd[1]);
                return -errno;
        }
        pid_t parent = getpid();
        c->pid = fork();
        if (c->pid < 0) {
                int r = -errno;
                close(cmd[0]), close(cmd[1]), close(ack[0]), close(ack[1]);
                return r;
        }
        if (c->pid == 0) {
                /* A failed assertion skips the parent's cleanup: never outlive it. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(91);
                /* The child must not hold the parent's ends, or it never sees EOF. */
                close(cmd[1]);
                close(ack[0]);
                fn(cmd[0], ack[1]);
                _exit(0);
        }
        close(cmd[0]);
        close(ack[1]);
        c->cmd_fd = cmd[1];
        c->ack_fd = ack[0];
        /* The child acknowledges once its provider is up. */
        if (tu_wait_ready(c->ack_fd) < 0) {
                tu_child_stop(c);
                return -ECHILD;
        }
        return 0;
}

int tu_command(struct tu_child *c, char cmd)
{
        if (write(c->cmd_fd, &cmd, 1) != 1)
                return -EPIPE;
        return tu_wait_ready(c->ack_fd) < 0 ? -ECHILD : 0;
}

void tu_child_stop(struct tu_child *c)
{
        if (c->pid > 0) {
                (void) kill(c->pid, SIGKILL);
                (void) waitpid(c->pid, NULL, 0);
                c->pid = 0;
        }
        if (c->cmd_fd >= 0)
                close(c->cmd_fd);
        if (c->ack_fd >= 0)
                close(c->ack_fd);
        c->cmd_fd = c->ack_fd = -1;
}

char tu_next_command(int cmd_fd)
{
        char c;
        ssize_t n;

        do
                n = read(cmd_fd, &c, 1);
        while (n < 0 && errno == EINTR);
        return n == 1 ? c : 0;
}

static int keep_path(const char *path, void *userdata)
{
        char *out = userdata;

        if (out[0])
                return -EEXIST;
        snprintf(out, PATH_MAX, "%s", path);
        return 0;
}

int tu_open_only_provider(double timeout_s, struct pl_reader **ret)
{
        double end = tu_now() + timeout_s;
        char path[PATH_MAX];
        int r;

        do {
                path[0] = '\0';
                r = pl_scan(runtime_dir, keep_path, path, NULL);
                if (r < 0)
                        return r;
                if (path[0])
                        return pl_reader_open(path, ret);
                usleep(10000);
        } while (tu_now() < end);
        return -ENOENT;
}

static int count_one(const char *path, void *userdata)
{
        (void) path;
        ++*(int *) userdata;
        return 0;
}

int tu_count_providers(unsigned *ret_reclaimed)
{
        int n = 0;
        int r = pl_scan(runtime_dir, count_one, &n, ret_reclaimed);

        return r < 0 ? r : n;
}
