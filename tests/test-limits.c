/* SPDX-License-Identifier: MIT */
/*
 * perflibd's limits under attack (perflibd(8), LIMITS), each against a real
 * server started with small caps so that the test is quick: a connection
 * that never binds, and one that trickles bytes without ever completing a
 * PDU, are closed by the deadlines; one user cannot take every connection,
 * and root still gets in; sixteen clients streaming large requests do not
 * grow the server past the request budget; query handles and items per
 * handle stop at their caps with MS-PCQ's ERROR_OUTOFMEMORY, and so does
 * a query of more instances than the query memory holds, logged.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "testutil.h"

#define N_ATTACKERS     16
/* Generous: a loaded 2-core machine may be slow, never this slow. */
#define CLOSE_BOUND_S   10.0

static struct du_daemon srv;

static const GUID prov = { 0x1a2b0001, 0x15, 0x15, { 1, 5, 1, 5, 1, 5, 1, 5 } };
static const GUID cset = { 0x1a2b0002, 0x15, 0x15, { 1, 5, 1, 5, 1, 5, 1, 5 } };

/* ---- the server and raw connections ---- */

static int setup(void **state)
{
        assert_int_equal(du_init(&srv, tu_runtime_setup()), 0);
        return 0;
}

static int teardown(void **state)
{
        if (srv.pid > 0)
                assert_true(du_stop(&srv) >= 0);
        tu_runtime_teardown();
        return 0;
}

/* Starts perflibd with args and waits until it answers. */
static void start_server(const char *const *args)
{
        struct pv2_client *c = NULL;

        srv.args = args;
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        if (du_connect(&srv, 5000, &c) < 0)
                fail_msg("perflibd did not answer on %s", srv.sock);
        pv2_client_free(c);
}

static int raw_connect(void)
{
        int fd = du_raw_connect(&srv);

        assert_true(fd >= 0);
        return fd;
}

/* Seconds until the server closes fd, or -1 past bound_s. */
static double wait_closed(int fd, double bound_s)
{
        double t0 = tu_now();

        while (tu_now() - t0 < bound_s)
                if (du_closed(fd, 100))
                        return tu_now() - t0;
        return -1;
}

static void raw_bind(int fd)
{
        assert_int_equal(du_raw_bind(fd), 0);
}

/* ---- deadlines ---- */

static void test_bind_deadline(void **state)
{
        static const char *const args[] = { "--bind-timeout=1", "--idle-timeout=2", NULL };
        struct pv2_client *idle, *busy;
        struct pv2_out o = { 0 };
        double t;
        int fd;

        start_server(args);
        assert_int_equal(du_connect(&srv, 5000, &idle), 0);
        fd = raw_connect();
        /* Never binds: gone after about a second, not after 72 s or never. */
        t = wait_closed(fd, CLOSE_BOUND_S);
        close(fd);
        printf("# a connection that never binds: closed after %.1f s\n", t);
        assert_true(t >= 0.5);
        /* Requests every half second keep a connection past the idle deadline... */
        assert_int_equal(du_connect(&srv, 5000, &busy), 0);
        for (int i = 0; i < 8; i++) {
                assert_int_equal(pv2_enumerate_counterset(busy, NULL, 256, &o), ERROR_SUCCESS);
                pv2_out_done(&o);
                usleep(500000);
        }
        pv2_client_free(busy);
        /* ...while the one bound but silent for over 4 s is gone. */
        assert_int_equal(pv2_enumerate_counterset(idle, NULL, 256, &o),
                         PV2_ERROR_CONNECTION_ABORTED);
        pv2_client_free(idle);
}

/*
 * Sends a request header announcing a 4 KiB fragment one byte every 200 ms:
 * the fragment would take 13 minutes.  Seconds until closed, or -1.
 */
static double trickle(int fd)
{
        uint8_t h[24];
        double t0 = tu_now();

        du_request_header(h, 3, 4096, 0);
        for (size_t i = 0; tu_now() - t0 < CLOSE_BOUND_S; i++) {
                if (send(fd, h + i % sizeof(h), 1, MSG_NOSIGNAL) != 1 || du_closed(fd, 200))
                        return tu_now() - t0;
        }
        return -1;
}

static void test_slow_writer(void **state)
{
        static const char *const args[] = { "--bind-timeout=1", "--idle-timeout=2", NULL };
        double t;
        int fd;

        start_server(args);
        /* Before the bind: the bind deadline, whatever the trickle. */
        fd = raw_connect();
        t = trickle(fd);
        close(fd);
        printf("# a slow writer before its bind: closed after %.1f s\n", t);
        assert_true(t >= 0.5);
        /* After it: the idle deadline counts complete requests, not bytes. */
        fd = raw_connect();
        raw_bind(fd);
        t = trickle(fd);
        close(fd);
        printf("# a slow writer after its bind: closed after %.1f s\n", t);
        assert_true(t >= 1.5);
}

/* ---- connections per user ---- */

/*
 * In a child running as uid: opens n connections, writes how many were
 * served to out_fd, holds them until hold_fd reaches EOF.
 */
static void connect_as(uid_t uid, int n, int out_fd, int hold_fd)
{
        struct pv2_client *c[64];
        uint8_t got = 0;
        char b;

        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
            setresuid(uid, uid, uid) < 0)
                _exit(2);
        for (int i = 0; i < n && i < 64; i++)
                if (pv2_client_connect_unix(srv.sock, 5000, &c[got]) == 0)
                        got++;
        if (write(out_fd, &got, 1) != 1)
                _exit(3);
        while (read(hold_fd, &b, 1) > 0)
                ;
        _exit(0);
}

struct holder {
        pid_t pid;
        int hold_fd;                    /* closing it lets the child go */
};

/* How many of n connections a child as uid was served; it keeps them. */
static int hold_as(uid_t uid, int n, struct holder *ret)
{
        int out[2], hold[2];
        uint8_t got = 0;
        pid_t pid;

        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(out[0]);
                close(hold[1]);
                connect_as(uid, n, out[1], hold[0]);
        }
        close(out[1]);
        close(hold[0]);
        assert_int_equal(read(out[0], &got, 1), 1);
        close(out[0]);
        *ret = (struct holder){ pid, hold[1] };
        return got;
}

static void release(struct holder *h)
{
        int status;

        close(h->hold_fd);
        assert_int_equal(waitpid(h->pid, &status, 0), h->pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_per_user(void **state)
{
        static const char *const args[] = { "--max-clients-per-user=4", "--max-clients=6",
                                            NULL };
        struct pv2_client *root[8];
        struct holder a, b;
        struct pv2_out o = { 0 };

        if (geteuid() != 0) {
                print_message("test_per_user: skipped, needs root to connect as other users\n");
                skip();
        }
        start_server(args);
        assert_int_equal(chmod(getenv("PERFLIB_RUNTIME_DIR"), 0755), 0);
        /* nobody gets its 4 and no more; another user the 2 left of 6. */
        assert_int_equal(hold_as(65534, 8, &a), 4);
        assert_int_equal(hold_as(65533, 8, &b), 2);
        /* The server is full for others; root still gets in, past both caps, and queries. */
        for (int i = 0; i < 8; i++) {
                assert_int_equal(du_connect(&srv, 5000, &root[i]), 0);
                assert_int_equal(pv2_enumerate_counterset(root[i], NULL, 256, &o),
                                 ERROR_SUCCESS);
                pv2_out_done(&o);
        }
        for (int i = 0; i < 8; i++)
                pv2_client_free(root[i]);
        /* b inherited a's end of the pipe that holds a: b goes first. */
        release(&b);
        release(&a);
}

/* ---- request memory ---- */

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#endif
/*
 * What 16 clients may grow the server by: the 4 MiB budget, 16 free shares
 * of 64 KiB, their receive buffers.  ASan shadows every byte and keeps
 * freed blocks (quarantine, turned off for the server below, and caches):
 * twice that.  Without the budget, 16 MiB of requests alone.
 */
#ifdef __SANITIZE_ADDRESS__
#define RSS_BOUND_KIB   (24 * 1024)
#else
#define RSS_BOUND_KIB   (12 * 1024)
#endif


/* 16 clients stream almost 1 MiB each and hold it: how many were refused. */
static int stream_all(int fds[N_ATTACKERS])
{
        uint8_t *pdu = calloc(1, 24 + DU_FLOOD_STUB);
        bool refused[N_ATTACKERS] = { false };
        int n_refused = 0;

        assert_non_null(pdu);
        for (unsigned f = 0; f < DU_FLOOD_FRAGS; f++)
                for (int i = 0; i < N_ATTACKERS; i++)
                        if (!refused[i] && du_flood_fragment(fds[i], f, pdu) < 0) {
                                refused[i] = true;
                                n_refused++;
                        }
        /* The last fragments in: refusals the server sent since. */
        for (int i = 0; i < N_ATTACKERS; i++)
                if (!refused[i] && du_closed(fds[i], 200))
                        n_refused++;
        free(pdu);
        return n_refused;
}

static void test_request_memory(void **state)
{
        static const char *const args[] = { "--max-request=1M", "--request-memory=4M", NULL };
        int fds[N_ATTACKERS];
        long before, after;
        int refused;

#ifdef __SANITIZE_ADDRESS__
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[1024];

        snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=0", asan ? asan : "",
                 asan && *asan ? ":" : "");
        assert_int_equal(setenv("ASAN_OPTIONS", opts, 1), 0);
#endif
        start_server(args);
        /* Threads and arenas of 16 connections exist before the baseline. */
        for (int i = 0; i < N_ATTACKERS; i++)
                fds[i] = raw_connect();
        for (int i = 0; i < N_ATTACKERS; i++) {
                raw_bind(fds[i]);
                close(fds[i]);
        }
        before = du_status_kib(srv.pid, "VmRSS");
        assert_true(before > 0);
        for (int i = 0; i < N_ATTACKERS; i++) {
                fds[i] = raw_connect();
                raw_bind(fds[i]);
        }
        refused = stream_all(fds);
        after = du_status_kib(srv.pid, "VmRSS");
        assert_true(after > 0);
        printf("# 16 clients streaming 975,000-byte requests: %d refused, "
               "RSS %ld -> %ld KiB\n", refused, before, after);
        /* 4 MiB of budget holds four such requests: the others are refused. */
        assert_true(refused >= N_ATTACKERS - 6);
        assert_true(after - before < RSS_BOUND_KIB);
        for (int i = 0; i < N_ATTACKERS; i++)
                close(fds[i]);
}

/* ---- query handles and items ---- */

static void provider_child(int cmd_fd, int ack_fd)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 1,
                                              (const ULONG[]) { 4 }, &size);
        HANDLE h;

        if (PerfStartProvider((GUID *) &prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            !PerfCreateInstance(h, &cset, L"i0", 0))
                _exit(2);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

/* Identifiers of counter 1, instance "*", InstanceId first..first+n-1: distinct items. */
static size_t identifiers(uint8_t *buf, uint32_t first, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                uint8_t *p = buf + 48 * i;
                uint32_t id = first + i;

                memset(p, 0, 48);
                memcpy(p, &cset, 16);
                p[20] = 48;                             /* Size */
                p[24] = 1;                              /* CounterId */
                memcpy(p + 28, &id, 4);
                p[40] = '*';
        }
        return 48 * n;
}

static void test_handles_and_items(void **state)
{
        static const char *const args[] = { "--max-queries=4", "--max-query-items=8", NULL };
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pv2_handle h[5];
        struct pv2_client *c;
        uint8_t ids[48 * 9];

        start_server(args);
        assert_int_equal(du_connect(&srv, 5000, &c), 0);
        assert_int_equal(tu_child_start(&p, provider_child), 0);
        assert_int_equal(du_wait_listed(c, &cset, true, 10000), 0);
        for (int i = 0; i < 4; i++)
                assert_int_equal(pv2_open_query(c, NULL, &h[i]), ERROR_SUCCESS);
        assert_int_equal(pv2_open_query(c, NULL, &h[4]), ERROR_OUTOFMEMORY);
        assert_int_equal(pv2_close_query(c, &h[3]), ERROR_SUCCESS);
        assert_int_equal(pv2_open_query(c, NULL, &h[3]), ERROR_SUCCESS);

        /* Nine items into a query that holds eight: the ninth's Status says so. */
        assert_int_equal(pv2_validate_counters(c, &h[0], ids, (uint32_t) identifiers(ids, 0, 9),
                                               1), ERROR_SUCCESS);
        for (int i = 0; i < 8; i++)
                assert_int_equal(du_le32(ids + 48 * i + 16), ERROR_SUCCESS);
        assert_int_equal(du_le32(ids + 48 * 8 + 16), ERROR_OUTOFMEMORY);
        /* One removed, the ninth fits. */
        assert_int_equal(pv2_validate_counters(c, &h[0], ids, (uint32_t) identifiers(ids, 0, 1),
                                               0), ERROR_SUCCESS);
        assert_int_equal(du_le32(ids + 16), ERROR_SUCCESS);
        assert_int_equal(pv2_validate_counters(c, &h[0], ids, (uint32_t) identifiers(ids, 8, 1),
                                               1), ERROR_SUCCESS);
        assert_int_equal(du_le32(ids + 16), ERROR_SUCCESS);
        pv2_client_free(c);
        tu_child_stop(&p);
}

/* ---- query memory ---- */

#define MANY 30000
#define FEW 10

static char log_path[4096];

/* MANY instances of one 4-byte counter; 'd' deletes all but FEW of them. */
static void many_child(int cmd_fd, int ack_fd)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 1,
                                              (const ULONG[]) { 4 }, &size);
        PPERF_COUNTERSET_INSTANCE *in = calloc(MANY, sizeof(*in));
        HANDLE h;

        if (!in || PerfStartProvider((GUID *) &prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        for (unsigned i = 0; i < MANY; i++) {
                char name[16];

                snprintf(name, sizeof(name), "i%u", i);
                if (!(in[i] = PerfCreateInstanceUtf8(h, &cset, name, i)))
                        _exit(3);
        }
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd)) {
                for (unsigned i = FEW; i < MANY; i++)
                        (void) PerfDeleteInstance(h, in[i]);
                tu_ready(ack_fd);
        }
        _exit(0);
}

/*
 * 30,000 instances take more than 1 MiB to snapshot: with --query-memory=1M
 * the query is refused with ERROR_OUTOFMEMORY and the refusal logged; the
 * same query of the 10 left afterwards is answered.
 */
static void test_query_memory(void **state)
{
        static const char *const args[] = { "--query-memory=1M", NULL };
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pv2_out o = { 0 };
        struct pv2_handle h;
        struct pv2_client *c;
        uint8_t id[48];

        snprintf(log_path, sizeof(log_path), "%s/perflibd.log", getenv("PERFLIB_RUNTIME_DIR"));
        srv.log = log_path;
        start_server(args);
        assert_int_equal(du_connect(&srv, 5000, &c), 0);
        assert_int_equal(tu_child_start(&p, many_child), 0);
        assert_int_equal(du_wait_listed(c, &cset, true, 10000), 0);
        assert_int_equal(pv2_open_query(c, NULL, &h), ERROR_SUCCESS);
        assert_int_equal(pv2_validate_counters(c, &h, id, (uint32_t) identifiers(id, 0xFFFFFFFFu, 1),
                                               1), ERROR_SUCCESS);
        assert_int_equal(du_le32(id + 16), ERROR_SUCCESS);

        assert_int_equal(pv2_query_counter_data(c, &h, 1u << 24, &o), ERROR_OUTOFMEMORY);
        assert_int_equal(o.out_size, 0);
        pv2_out_done(&o);
        assert_int_equal(du_count_lines(log_path, "refusing a query"), 1);

        assert_int_equal(tu_command(&p, 'd'), 0);
        assert_int_equal(pv2_query_counter_data(c, &h, 1u << 24, &o), ERROR_SUCCESS);
        /* One _PERF_MULTI_INSTANCES block of the FEW instances left. */
        assert_true(o.out_size > 48 + 16 + 8);
        assert_int_equal(du_le32(o.data + 48), ERROR_SUCCESS);
        assert_int_equal(du_le32(o.data + 48 + 16 + 4), FEW);
        pv2_out_done(&o);
        pv2_client_free(c);
        tu_child_stop(&p);
        srv.log = NULL;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_bind_deadline, setup, teardown),
                cmocka_unit_test_setup_teardown(test_slow_writer, setup, teardown),
                cmocka_unit_test_setup_teardown(test_per_user, setup, teardown),
                cmocka_unit_test_setup_teardown(test_request_memory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_handles_and_items, setup, teardown),
                cmocka_unit_test_setup_teardown(test_query_memory, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
