/* SPDX-License-Identifier: MIT */
/*
 * Provider discovery off the request path (issue 15, "no provider slows
 * another"): a real perflibd with sockets in its runtime directory that
 * listen and never answer, and the directory changing before every
 * request.  Each request still completes well within a bound (the target
 * is 100 ms; 300 ms leaves room for a loaded machine), a real provider
 * started after the hung sockets is listed within 2 s, and the server's
 * event loop keeps petting the watchdog.  10 hung sockets, or 350 with
 * PERFLIB_LONG_TESTS=1.
 *
 * A dead provider's leftovers (issue 22): the socket of a provider killed
 * while served, and that of one that stopped answering and then died, are
 * removed without the directory changing otherwise, in one logged line
 * each; a symlink and a regular file named like provider sockets are not.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "testutil.h"

#define REQUEST_MAX_S   0.3     /* per request; the target is 0.1 */
#define APPEAR_MAX_S    2.0     /* a new provider is listed within this */
#define WATCHDOG_S      2       /* WATCHDOG_USEC given to perflibd, in seconds */
#define MAX_HUNG        350

static GUID prov = { 0xd15c0001, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static GUID cset = { 0xd15c0002, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } };

static const struct ctrpp_counter_desc counters[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
          "Depth", "How deep" },
};
static const struct ctrpp_counterset_desc csets[] = {
        { { 0xd15c0002, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } },
          PERF_COUNTERSET_SINGLE_INSTANCE, 0, 0, 1, counters, NULL, NULL,
          "Discovery", "Found despite hung sockets", "single" },
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = { 0xd15c0001, 0x1, 0x2, { 1, 2, 3, 4, 5, 6, 7, 8 } },
        .n_countersets = 1, .countersets = csets, .name = "Discovery Provider",
};

#define GONE_MAX_S      4.0     /* a dead provider's socket is removed within this */

static struct du_daemon srv;
static int hung[MAX_HUNG];
static size_t n_hung;
static char log_path[4200];

/* A provider publishing cset until the parent goes away. */
static void provider_child(int cmd_fd, int ack_fd)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_SINGLE_INSTANCE, 1,
                                              (const ULONG[]) { 4 }, &size);
        HANDLE h;

        ((PPERF_COUNTER_INFO) (t + 1))[0].Type = PERF_COUNTER_RAWCOUNT;
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            pl_set_provider_description(h, &desc) != 0 ||
            !PerfCreateInstance(h, &cset, L"_Total", 0))
                _exit(2);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

/*
 * A socket named like a provider's that listens and never accepts:
 * connecting works, HELLO never comes.  Renamed into place once it listens,
 * as the SDK does: bound and not listening yet, perflibd would take it for
 * a dead provider's and remove it.
 */
static int hung_socket(const char *dir, size_t i)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        char path[4200];

        assert_true(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.hung%zu.tmp", dir, i);
        snprintf(path, sizeof(path), "%s/provider-hung%zu.sock", dir, i);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(fd, 16), 0);
        assert_int_equal(rename(sa.sun_path, path), 0);
        return fd;
}

/* Changes the runtime directory, as a provider coming or going would. */
static void churn(const char *dir)
{
        static unsigned n;
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/churn-%u", dir, n++);
        f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
}

/* A datagram socket standing in for systemd's, stamping each notification as it arrives. */
static int notify_socket(const char *dir)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), on = 1;

        assert_true(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)), 0);
        setenv("NOTIFY_SOCKET", sa.sun_path, 1);
        return fd;
}

static double realtime_s(const struct timespec *ts)
{
        return (double) ts->tv_sec + ts->tv_nsec / 1e9;
}

static double realtime_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return realtime_s(&ts);
}

/*
 * One queued notification: its arrival time (CLOCK_REALTIME s) when it is
 * a watchdog ping, 0 when it is something else, -1 when none is left.
 */
static double next_ping(int fd)
{
        char buf[4096], control[CMSG_SPACE(sizeof(struct timespec))];
        struct iovec iov = { buf, sizeof(buf) - 1 };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
                            .msg_control = control, .msg_controllen = sizeof(control) };
        ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);
        double at = 0;

        if (n < 0)
                return -1;
        buf[n] = '\0';
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS)
                        at = realtime_s((const struct timespec *) (void *) CMSG_DATA(c));
        return strstr(buf, "WATCHDOG=1") ? at : 0;
}

/* The longest time without a watchdog ping from since to until; *ret_n pings. */
static double watchdog_gap(int fd, double since, double until, int *ret_n)
{
        double last = since, gap = 0, at;

        *ret_n = 0;
        while ((at = next_ping(fd)) >= 0) {
                if (at < since)
                        continue;
                gap = at - last > gap ? at - last : gap;
                last = at;
                ++*ret_n;
        }
        return until - last > gap ? until - last : gap;
}

/* One request after the directory changed: whether cset is listed; asserts its time. */
static bool timed_listed(struct pv2_client *c, const char *dir, double *worst)
{
        double t;
        int r;

        churn(dir);
        t = tu_now();
        r = du_listed(c, &cset);
        t = tu_now() - t;
        assert_true(r >= 0);
        *worst = t > *worst ? t : *worst;
        if (t > REQUEST_MAX_S)
                fail_msg("a request took %.3f s with %zu hung sockets", t, n_hung);
        return r == 1;
}

static size_t hung_count(void)
{
        const char *v = getenv("PERFLIB_LONG_TESTS");

        return v && strcmp(v, "1") == 0 ? MAX_HUNG : 10;
}

static void start_server(const char *dir, int *ret_notify)
{
        char usec[32];

        *ret_notify = notify_socket(dir);
        snprintf(usec, sizeof(usec), "%d", WATCHDOG_S * 1000000);
        setenv("WATCHDOG_USEC", usec, 1);
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
}

static void test_hung_sockets(void **state)
{
        const char *dir = getenv("PERFLIB_RUNTIME_DIR");
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        double worst = 0, since, started, appeared, gap;
        struct pv2_client *c = NULL;
        int notify, pings;

        start_server(dir, &notify);
        assert_int_equal(du_connect(&srv, 5000, &c), 0);
        since = realtime_now();
        for (size_t want = hung_count(); n_hung < want; n_hung++)
                hung[n_hung] = hung_socket(dir, n_hung);
        for (int i = 0; i < 10; i++)
                assert_false(timed_listed(c, dir, &worst));
        assert_int_equal(tu_child_start(&p, provider_child), 0);
        started = tu_now();
        while (!timed_listed(c, dir, &worst) && tu_now() - started <= APPEAR_MAX_S)
                usleep(20000);
        appeared = tu_now() - started;
        print_message("%zu hung sockets: slowest request %.3f s, provider listed after %.3f s\n",
                      n_hung, worst, appeared);
        assert_true(appeared <= APPEAR_MAX_S);
        /* Long enough for the watchdog to be petted twice (at half its period, or later). */
        while (realtime_now() - since < 2.5 * WATCHDOG_S)
                (void) timed_listed(c, dir, &worst);
        gap = watchdog_gap(notify, since, realtime_now(), &pings);
        print_message("watchdog: %d pings, longest gap %.3f s\n", pings, gap);
        assert_true(pings >= 2);
        assert_true(gap < WATCHDOG_S);
        pv2_client_free(c);
        tu_child_stop(&p);
        close(notify);
}

/* ---- a dead provider's leftovers ---- */

static bool exists(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0;
}

/* The path of the one provider socket in dir but the hung ones, into buf. */
static int keep_first(const char *path, void *userdata)
{
        if (!strstr(path, "provider-hung"))
                snprintf(userdata, 4096, "%s", path);
        return 0;
}

/* Requests (perflibd refreshes) until path is gone or GONE_MAX_S passed: how long that took. */
static double wait_gone(struct pv2_client *c, const char *path)
{
        double t = tu_now();

        while (exists(path) && tu_now() - t < GONE_MAX_S) {
                assert_true(du_listed(c, &cset) >= 0);
                usleep(20000);
        }
        return tu_now() - t;
}

static void test_dead_leftovers(void **state)
{
        const char *dir = getenv("PERFLIB_RUNTIME_DIR");
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        char sock[4096] = "", planted[2][4200], hung_path[4200];
        struct pv2_client *c = NULL;
        double gone;

        srv.log = log_path;
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        assert_int_equal(du_connect(&srv, 5000, &c), 0);
        snprintf(planted[0], sizeof(planted[0]), "%s/provider-link.sock", dir);
        snprintf(planted[1], sizeof(planted[1]), "%s/provider-file.sock", dir);
        assert_int_equal(symlink("/nonexistent", planted[0]), 0);
        assert_int_equal(du_run("touch '%s'", planted[1]), 0);

        /* Served, then killed: its socket stays behind until perflibd removes it. */
        assert_int_equal(tu_child_start(&p, provider_child), 0);
        assert_int_equal(du_wait_listed(c, &cset, true, 5000), 0);
        assert_int_equal(pl_scan(dir, keep_first, sock, NULL), 0);
        assert_true(sock[0] != '\0');
        /* Past the 50 ms within which perflibd takes the directory for changed, and scans. */
        usleep(100000);
        assert_int_equal(du_listed(c, &cset), 1);
        tu_child_stop(&p);
        assert_true(exists(sock));
        gone = wait_gone(c, sock);
        print_message("a killed provider's socket removed after %.3f s\n", gone);
        assert_false(exists(sock));

        /* One that never answered, tried, then closed: refused at its retry, then removed. */
        hung[n_hung++] = hung_socket(dir, 0);
        snprintf(hung_path, sizeof(hung_path), "%s/provider-hung0.sock", dir);
        churn(dir);
        for (int i = 0; i < 10; i++)
                assert_true(du_listed(c, &cset) >= 0);
        /* Tried (a collect timeout, 100 ms) and pending; the change is past too. */
        usleep(150000);
        assert_true(du_listed(c, &cset) >= 0);
        close(hung[--n_hung]);
        gone = wait_gone(c, hung_path);
        print_message("a hung socket closed removed after %.3f s\n", gone);
        assert_false(exists(hung_path));

        assert_int_equal(du_count_lines(log_path, "socket(s) of dead providers"), 2);
        assert_true(exists(planted[0]) && exists(planted[1]));
        pv2_client_free(c);
}

static int setup(void **state)
{
        const char *run = tu_runtime_setup();

        assert_int_equal(du_init(&srv, run), 0);
        snprintf(log_path, sizeof(log_path), "%s/perflibd.log", run);
        srv.log = NULL;
        return 0;
}

static int teardown(void **state)
{
        if (srv.pid > 0)
                assert_true(du_stop(&srv) >= 0);
        while (n_hung > 0)
                close(hung[--n_hung]);
        tu_runtime_teardown();
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_hung_sockets, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dead_leftovers, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
