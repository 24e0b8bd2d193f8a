/* SPDX-License-Identifier: MIT */
/*
 * perflibd's resource bounds, against a real server: out of descriptors
 * (a low RLIMIT_NOFILE and more clients than it allows), it neither spins
 * nor floods its log, and serves again once they leave; a provider whose
 * segment is over the per-segment cap is refused before mapping (the
 * server's address space does not grow by it) while its neighbour is
 * served; a provider over what is left of the total cap waits until
 * another leaves.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "testutil.h"

#define NOFILE_HARD     64      /* perflibd's descriptors in the EMFILE tests */
#define N_CLIENTS       150     /* more than that */

static struct du_daemon srv;
static char log_path[4096];
static const char *run_dir;

static const GUID prov_a = { 0x7e50c001, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID cset_a = { 0x7e50c002, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID prov_b = { 0x7e50c003, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID cset_b = { 0x7e50c004, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };

/* ---- the server, its log and its /proc figures ---- */

static int child_low_nofile(void)
{
        struct rlimit rl = { NOFILE_HARD, NOFILE_HARD };

        return setrlimit(RLIMIT_NOFILE, &rl);
}

static int setup(void **state)
{
        run_dir = tu_runtime_setup();
        assert_int_equal(du_init(&srv, run_dir), 0);
        /* perflibd's stderr goes to log_path, so the test counts its lines. */
        snprintf(log_path, sizeof(log_path), "%s/perflibd.log", run_dir);
        srv.log = log_path;
        srv.in_child = NULL;
        srv.args = NULL;
        return 0;
}

static int teardown(void **state)
{
        if (srv.pid > 0)
                assert_true(du_stop(&srv) >= 0);
        tu_runtime_teardown();
        return 0;
}

static struct pv2_client *connect_client(void)
{
        struct pv2_client *c = NULL;

        if (du_connect(&srv, 5000, &c) < 0)
                fail_msg("perflibd did not answer on %s", srv.sock);
        return c;
}

/* Lines of perflibd's log containing needle (every line for ""). */
static int log_lines(const char *needle)
{
        return du_count_lines(log_path, needle);
}

/* perflibd's CPU time (user + system), in seconds. */
static double cpu_seconds(pid_t pid)
{
        char path[64], buf[1024];
        unsigned long long ut, st;
        const char *p;
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "r");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* Fields 14 and 15, counted from the state after the command's ")". */
        p = strrchr(buf, ')');
        assert_non_null(p);
        assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                                &ut, &st), 2);
        return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
}

/* perflibd's address space (VmSize), in bytes. */
static uint64_t vm_size(pid_t pid)
{
        long kib = du_status_kib(pid, "VmSize");

        assert_true(kib > 0);
        return (uint64_t) kib * 1024u;
}

/* Waits up to timeout_ms for needle to appear in the log. */
static bool log_shows(const char *needle, int timeout_ms)
{
        for (int i = 0; i <= timeout_ms / 10; i++) {
                if (log_lines(needle) > 0)
                        return true;
                usleep(10000);
        }
        return false;
}

/* ---- out of descriptors ---- */

/* A client that connects and says nothing; -1 when the backlog is full. */
static int idle_client(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        assert_true(fd >= 0);
        assert_true(strlen(srv.sock) < sizeof(sa.sun_path));
        memcpy(sa.sun_path, srv.sock, strlen(srv.sock));
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                return fd;
        assert_int_equal(errno, EAGAIN);
        close(fd);
        return -1;
}

static void test_emfile(void **state)
{
        int fds[N_CLIENTS], n = 0;
        struct pv2_client *c;
        double cpu0, cpu1;
        int lines0, lines1;

        srv.in_child = child_low_nofile;
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        pv2_client_free(connect_client());
        for (int i = 0; i < N_CLIENTS; i++) {
                int fd = idle_client();

                if (fd >= 0)
                        fds[n++] = fd;
        }
        /* More than it has descriptors for: it must have run out. */
        assert_true(n > NOFILE_HARD);
        assert_true(log_shows("Too many open files", 5000));
        cpu0 = cpu_seconds(srv.pid);
        lines0 = log_lines("");
        sleep(2);
        cpu1 = cpu_seconds(srv.pid);
        lines1 = log_lines("");
        print_message("out of descriptors for 2 s: %.2f s of CPU, %d log lines (%d in all)\n",
                      cpu1 - cpu0, lines1 - lines0, lines1);
        assert_true(cpu1 - cpu0 < 0.3);
        assert_true(lines1 - lines0 < 20);
        assert_true(lines1 < 40);
        for (int i = 0; i < n; i++)
                close(fds[i]);
        /* The pause is 1 s at most: a new client is served soon after. */
        c = connect_client();
        assert_true(du_listed(c, &cset_a) == 0);
        pv2_client_free(c);
}

/* ---- segment caps ---- */

struct prov_arg {
        const GUID *prov, *cset;
        const char *segment_size;       /* $PERFLIB_SEGMENT_SIZE, NULL = the default */
};

/* A provider with one single-instance counterset, until killed. */
static void provider(void *userdata, int wfd)
{
        const struct prov_arg *a = userdata;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(a->prov, a->cset, PERF_COUNTERSET_SINGLE_INSTANCE,
                                              1, (const ULONG[]) { 4 }, &size);
        HANDLE h;

        /* Gone with the test, even one that failed half-way. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
                _exit(3);
        if (a->segment_size)
                setenv("PERFLIB_SEGMENT_SIZE", a->segment_size, 1);
        if (PerfStartProvider((GUID *) a->prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            !PerfCreateInstance(h, a->cset, L"_Total", 0))
                _exit(2);
        tu_ready(wfd);
        for (;;)
                pause();
}

static pid_t start_provider(const struct prov_arg *a)
{
        pid_t pid = tu_spawn(provider, (void *) a, NULL);

        assert_true(pid > 0);
        return pid;
}

static void kill_provider(pid_t pid)
{
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

/* A change in the runtime directory, then a request: the server rescans it. */
static void force_rescan(struct pv2_client *c)
{
        char path[4096];

        snprintf(path, sizeof(path), "%s/rescan", run_dir);
        assert_int_equal(mkdir(path, 0700), 0);
        assert_int_equal(rmdir(path), 0);
        usleep(100000);
        assert_true(du_listed(c, &cset_a) >= 0);
}

static void test_segment_over_cap(void **state)
{
        /* 4 GiB, over the default cap of 1 GiB; sparse, so free to make. */
        const struct prov_arg big = { &prov_a, &cset_a, "4G" }, normal = { &prov_b, &cset_b, NULL };
        struct pv2_client *c;
        uint64_t vm0, vm1;
        pid_t p_big, p_normal;

        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        c = connect_client();
        vm0 = vm_size(srv.pid);
        p_big = start_provider(&big);
        p_normal = start_provider(&normal);
        assert_int_equal(du_wait_listed(c, &cset_b, true, 5000), 0);
        vm1 = vm_size(srv.pid);
        print_message("VmSize grew by %llu MiB with a 4 GiB and a 256 MiB provider\n",
                      (unsigned long long) ((vm1 - vm0) >> 20));
        assert_int_equal(du_wait_listed(c, &cset_a, true, 1000), -ETIMEDOUT);
        assert_true(vm1 - vm0 < (UINT64_C(2) << 30));
        /* Refused again at every scan, logged once. */
        force_rescan(c);
        force_rescan(c);
        assert_int_equal(log_lines("the cap of 1073741824 bytes on one segment"), 1);
        assert_false(du_listed(c, &cset_a));
        pv2_client_free(c);
        kill_provider(p_big);
        kill_provider(p_normal);
}

/*
 * More providers than descriptors: those left out are counted in a warning,
 * not dropped silently, and served once descriptors are free again.
 */
static void test_providers_emfile(void **state)
{
        enum { N = NOFILE_HARD + 8, KEEP = NOFILE_HARD / 2 };
        static GUID provs[N], csets[N];
        static struct prov_arg args[N];
        struct pv2_client *c;
        pid_t pids[N];
        int listed = 0;

        srv.in_child = child_low_nofile;
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        c = connect_client();
        for (int i = 0; i < N; i++) {
                provs[i] = prov_a;
                csets[i] = cset_a;
                provs[i].Data1 += 0x1000u + (unsigned) i;
                csets[i].Data1 += 0x1000u + (unsigned) i;
                args[i] = (struct prov_arg){ &provs[i], &csets[i], "1M" };
                pids[i] = start_provider(&args[i]);
        }
        for (int i = 0; i < 500 && !log_lines("could not be opened for want of descriptors"); i++) {
                assert_true(du_listed(c, &cset_a) >= 0);
                usleep(10000);
        }
        assert_true(log_lines("could not be opened for want of descriptors") > 0);
        for (int i = 0; i < N; i++)
                listed += du_listed(c, &csets[i]) == 1;
        print_message("%d of %d providers served at %d descriptors\n", listed, N, NOFILE_HARD);
        assert_true(listed < N);
        /* Half of them leave: the rest fit, and are served without a change in the directory. */
        for (int i = KEEP; i < N; i++)
                kill_provider(pids[i]);
        for (int i = 0; i < KEEP; i++)
                assert_int_equal(du_wait_listed(c, &csets[i], true, 5000), 0);
        pv2_client_free(c);
        for (int i = 0; i < KEEP; i++)
                kill_provider(pids[i]);
}

static void test_total_cap(void **state)
{
        /* Room for one default segment (256 MiB), not two. */
        static const char *const args[] = { "--max-mapped=300M", NULL };
        const struct prov_arg a = { &prov_a, &cset_a, NULL }, b = { &prov_b, &cset_b, NULL };
        struct pv2_client *c;
        pid_t pa, pb;
        bool a_first;

        srv.args = args;
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        c = connect_client();
        pa = start_provider(&a);
        pb = start_provider(&b);
        for (int i = 0; i < 500 && du_listed(c, &cset_a) + du_listed(c, &cset_b) == 0; i++)
                usleep(10000);
        a_first = du_listed(c, &cset_a);
        force_rescan(c);
        assert_int_equal(du_listed(c, &cset_a) + du_listed(c, &cset_b), 1);
        assert_int_equal(log_lines("under the cap on all mapped segments"), 1);
        /* The one served leaves: the other fits now. */
        kill_provider(a_first ? pa : pb);
        assert_int_equal(du_wait_listed(c, a_first ? &cset_b : &cset_a, true, 5000), 0);
        pv2_client_free(c);
        kill_provider(a_first ? pb : pa);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_emfile, setup, teardown),
                cmocka_unit_test_setup_teardown(test_providers_emfile, setup, teardown),
                cmocka_unit_test_setup_teardown(test_segment_over_cap, setup, teardown),
                cmocka_unit_test_setup_teardown(test_total_cap, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
