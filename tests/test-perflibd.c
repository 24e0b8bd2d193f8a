/* SPDX-License-Identifier: MIT */
/*
 * perflibd end to end: a real server process, real provider processes, and
 * the PerflibV2 client over the Unix socket.  A provider's counterset is
 * enumerated with its self-description, its instances listed, a query
 * opened and its values read twice; a provider that is killed is gone at
 * the next request; a provider started after the server is found; a
 * restarted server finds the providers still running; a caller without the
 * right gets ERROR_ACCESS_DENIED; SIGTERM ends the server cleanly.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "plugins/test-plugin.h"
#include "testutil.h"

static GUID prov = { 0xe2e0c001, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };
static GUID cset = { 0xe2e0c002, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };

static const struct ctrpp_counter_desc counters[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
          "Queue Length", "Items waiting" },
        { 2, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
          "Items/sec", "Items processed" },
};
static const struct ctrpp_counterset_desc csets[] = {
        { { 0xe2e0c002, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } },
          PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 2, counters, NULL, NULL,
          "Worker Queue", "Per worker", "multiple" },
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = { 0xe2e0c001, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } },
        .n_countersets = 1, .countersets = csets, .name = "E2E Provider",
};

static struct du_daemon srv;

/* A provider with instance "w1" (queue 5, items 1000) whose items grow by 1 per 'i'. */
static void provider_child(int cmd_fd, int ack_fd)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                              (const ULONG[]) { 4, 8 }, &size);
        PPERF_COUNTERSET_INSTANCE i;
        HANDLE h;
        char c;

        ((PPERF_COUNTER_INFO) (t + 1))[0].Type = PERF_COUNTER_RAWCOUNT;
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            pl_set_provider_description(h, &desc) != 0)
                _exit(2);
        i = PerfCreateInstance(h, &cset, L"w1", 7);
        if (!i)
                _exit(3);
        PerfSetULongCounterValue(h, i, 1, 5);
        PerfSetULongLongCounterValue(h, i, 2, 1000);
        tu_ready(ack_fd);
        while ((c = tu_next_command(cmd_fd))) {
                if (c == 'i')
                        PerfIncrementULongLongCounterValue(h, i, 2, 1);
                tu_ready(ack_fd);
        }
        _exit(0);
}

/* Runs perflibd, through a launcher (systemd-socket-activate ...) when given. */
static void start_server_with(const char *const *launcher)
{
        assert_int_equal(du_start(&srv, NULL, launcher), 0);
}

static void start_server(void)
{
        start_server_with(NULL);
}

static struct pv2_client *connect_client(void)
{
        struct pv2_client *c = NULL;

        if (du_connect(&srv, 5000, &c) < 0)
                fail_msg("perflibd did not answer on %s", srv.sock);
        return c;
}

static int stop_server(void)
{
        int status = du_stop(&srv);

        assert_true(status >= 0);
        return status;
}

static int setup(void **state)
{
        assert_int_equal(du_init(&srv, tu_runtime_setup()), 0);
        return 0;
}

static int teardown(void **state)
{
        if (srv.pid > 0)
                stop_server();
        tu_runtime_teardown();
        return 0;
}

static bool has_guid(struct pv2_client *c, const GUID *g)
{
        int r = du_listed(c, g);

        assert_true(r >= 0);
        return r;
}

static bool has_cset(struct pv2_client *c)
{
        return has_guid(c, &cset);
}

/* inotify events arrive asynchronously: wait (5 s at most) for g to be listed, or not. */
static bool becomes(struct pv2_client *c, const GUID *g, bool listed)
{
        return du_wait_listed(c, g, listed, 5000) == 0;
}

/* One identifier: counter id, instance name (UTF-16LE, NUL-terminated), padded to 8. */
static size_t identifier(uint8_t *buf, uint32_t counter, const char *instance)
{
        size_t n = strlen(instance) + 1, size = (40 + 2 * n + 7) & ~(size_t) 7;

        memset(buf, 0, size);
        memcpy(buf, &cset, 16);
        buf[20] = (uint8_t) size;
        memcpy(buf + 24, &counter, 4);
        memset(buf + 28, 0xFF, 4);                              /* InstanceId: any */
        for (size_t i = 0; i < n; i++)
                buf[40 + 2 * i] = (uint8_t) instance[i];
        return size;
}

/* The value of the single PERF_SINGLE_COUNTER block of a QueryCounterData answer. */
static uint64_t single_value(struct pv2_client *c, const struct pv2_handle *h)
{
        struct pv2_out o = { 0 };
        uint64_t v;

        assert_int_equal(pv2_query_counter_data(c, h, 1 << 16, &o), ERROR_SUCCESS);
        assert_true(o.out_size >= 48 + 16 + 8 + 8);
        assert_int_equal(du_le32(o.data + 4), 1);                  /* dwNumCounter */
        assert_int_equal(du_le32(o.data + 48), ERROR_SUCCESS);     /* dwStatus */
        assert_int_equal(du_le32(o.data + 52), 1);                 /* PERF_SINGLE_COUNTER */
        assert_int_equal(du_le32(o.data + 64), 8);                 /* dwDataSize */
        v = du_le64(o.data + 72);
        pv2_out_done(&o);
        return v;
}

/*
 * The first block of a QueryCounterData answer: ERROR_SUCCESS with its
 * value in *ret_value (PERF_SINGLE_COUNTER, 8 bytes), or its error status.
 */
static uint32_t block_status(struct pv2_client *c, const struct pv2_handle *h,
                             uint64_t *ret_value)
{
        struct pv2_out o = { 0 };
        uint32_t status;

        assert_int_equal(pv2_query_counter_data(c, h, 1 << 16, &o), ERROR_SUCCESS);
        assert_true(o.out_size >= 48 + 16);
        status = du_le32(o.data + 48);
        if (status == ERROR_SUCCESS) {
                assert_int_equal(du_le32(o.data + 52), 1);         /* PERF_SINGLE_COUNTER */
                *ret_value = du_le64(o.data + 72);
        }
        pv2_out_done(&o);
        return status;
}

/* Polls (3 s at most) until the first block's status is want; false if it never is. */
static bool status_becomes(struct pv2_client *c, const struct pv2_handle *h, uint32_t want)
{
        uint64_t v;

        for (int i = 0; i < 60; i++) {
                if (block_status(c, h, &v) == want)
                        return true;
                usleep(50000);
        }
        return false;
}

static void test_end_to_end(void **state)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pv2_out o = { 0 };
        struct pv2_handle h;
        struct pv2_client *c;
        uint8_t ids[64];
        size_t n;

        start_server();
        c = connect_client();
        assert_false(has_cset(c));
        /* Started after the server: found without a restart. */
        assert_int_equal(tu_child_start(&p, provider_child), 0);
        assert_true(has_cset(c));

        assert_int_equal(pv2_query_registration_info(c, NULL, &cset, 1, 0, 1 << 16, &o),
                         ERROR_SUCCESS);
        assert_int_equal(o.out_size, 32 + 2 * 48);              /* two counters */
        assert_int_equal(du_le32(o.data + 24), 2);                 /* NumCounters */
        pv2_out_done(&o);
        assert_int_equal(pv2_enumerate_instances(c, NULL, &cset, 1 << 16, &o), ERROR_SUCCESS);
        assert_int_equal(du_le32(o.data + 4), 7);                  /* InstanceId */
        assert_int_equal(o.data[8], 'w');
        pv2_out_done(&o);

        assert_int_equal(pv2_open_query(c, NULL, &h), ERROR_SUCCESS);
        n = identifier(ids, 2, "w1");
        assert_int_equal(pv2_validate_counters(c, &h, ids, (uint32_t) n, 1), ERROR_SUCCESS);
        assert_int_equal(du_le32(ids + 16), ERROR_SUCCESS);        /* Status */
        assert_true(single_value(c, &h) == 1000);
        assert_int_equal(tu_command(&p, 'i'), 0);
        assert_int_equal(tu_command(&p, 'i'), 0);
        assert_true(single_value(c, &h) == 1002);

        /* Killed: gone at the next request. */
        tu_child_stop(&p);
        assert_false(has_cset(c));
        assert_int_equal(pv2_close_query(c, &h), ERROR_SUCCESS);
        pv2_client_free(c);
        assert_int_equal(stop_server(), 0);
        assert_int_equal(access(srv.sock, F_OK), -1);               /* removed at exit */
}

static void test_restart(void **state)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pv2_client *c;

        assert_int_equal(tu_child_start(&p, provider_child), 0);
        start_server();
        c = connect_client();
        assert_true(has_cset(c));
        pv2_client_free(c);
        assert_int_equal(stop_server(), 0);
        /* The provider kept running; a new server finds it. */
        start_server();
        c = connect_client();
        assert_true(has_cset(c));
        pv2_client_free(c);
        tu_child_stop(&p);
}

static void test_access_denied(void **state)
{
        pid_t pid;
        int status;

        if (geteuid() != 0)
                skip();
        start_server();
        pv2_client_free(connect_client());
        /* A caller that is neither root, nor the server's user, nor in its group. */
        chmod(getenv("PERFLIB_RUNTIME_DIR"), 0755);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct pv2_client *c;
                struct pv2_out o = { 0 };

                if (setgid(65534) < 0 || setuid(65534) < 0 ||
                    pv2_client_connect_unix(srv.sock, 5000, &c) < 0)
                        _exit(2);
                _exit(pv2_enumerate_counterset(c, NULL, 256, &o) == ERROR_ACCESS_DENIED ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* The same caller, once the server names its group: allowed. */
static void test_group_allowed(void **state)
{
        pid_t pid;
        int status;

        if (geteuid() != 0)
                skip();
        setenv("PERFLIB_GROUP", "nogroup", 1);
        start_server();
        unsetenv("PERFLIB_GROUP");
        pv2_client_free(connect_client());
        chmod(getenv("PERFLIB_RUNTIME_DIR"), 0755);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct pv2_client *c;
                struct pv2_out o = { 0 };

                if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0 ||
                    pv2_client_connect_unix(srv.sock, 5000, &c) < 0)
                        _exit(2);
                _exit(pv2_enumerate_counterset(c, NULL, 256, &o) == ERROR_SUCCESS ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* Many clients at once, each with a query open, each answered. */
static void test_many_clients(void **state)
{
        enum { N = 64 };
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pv2_client *c[N];
        struct pv2_handle h[N];
        uint8_t ids[64];
        size_t n;

        assert_int_equal(tu_child_start(&p, provider_child), 0);
        start_server();
        for (int i = 0; i < N; i++) {
                c[i] = connect_client();
                assert_int_equal(pv2_open_query(c[i], NULL, &h[i]), ERROR_SUCCESS);
                n = identifier(ids, 2, "w1");
                assert_int_equal(pv2_validate_counters(c[i], &h[i], ids, (uint32_t) n, 1),
                                 ERROR_SUCCESS);
        }
        for (int i = 0; i < N; i++)
                assert_true(single_value(c[i], &h[i]) == 1000);
        /* Dropped with their queries open: the server frees them and goes on. */
        for (int i = 0; i < N; i++)
                pv2_client_free(c[i]);
        c[0] = connect_client();
        assert_true(has_cset(c[0]));
        pv2_client_free(c[0]);
        tu_child_stop(&p);
}

static void test_socket_in_use(void **state)
{
        pid_t first;
        int status;

        start_server();
        pv2_client_free(connect_client());
        first = srv.pid;
        /* A second server on the same socket refuses to start and leaves it alone. */
        start_server();
        assert_int_equal(waitpid(srv.pid, &status, 0), srv.pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
        srv.pid = first;
        pv2_client_free(connect_client());
}

/* lodctr and unlodctr while the server runs: no restart needed. */
static void test_registry_live(void **state)
{
        static const GUID spec = { 0xf72fdf55, 0xeaa6, 0x45ba,
                                   { 0xbf, 0x6d, 0x4c, 0x7c, 0xb0, 0xd6, 0xef, 0x73 } };
        const char *top = getenv("top_builddir"), *src = getenv("top_srcdir");
        struct pv2_out o = { 0 };
        struct pv2_client *c;

        start_server();
        c = connect_client();
        assert_false(has_guid(c, &spec));
        assert_int_equal(du_run("%s/server-glue/lodctr --registry-dir '%s' "
                             "/M:%s/tests/ctrpp/spec/example-usermode.man >/dev/null",
                             top, srv.registry, src), 0);
        assert_true(becomes(c, &spec, true));
        /* Installed, no provider running: its registration information is served. */
        assert_int_equal(pv2_query_registration_info(c, NULL, &spec, 1, 0, 1 << 16, &o),
                         ERROR_SUCCESS);
        assert_true(o.out_size > 32);
        pv2_out_done(&o);
        assert_int_equal(pv2_enumerate_instances(c, NULL, &spec, 1 << 16, &o),
                         0x1069);       /* ERROR_WMI_INSTANCE_NOT_FOUND */
        pv2_out_done(&o);
        assert_int_equal(du_run("%s/server-glue/unlodctr --registry-dir '%s' "
                             "/M:%s/tests/ctrpp/spec/example-usermode.man >/dev/null",
                             top, srv.registry, src), 0);
        assert_true(becomes(c, &spec, false));
        pv2_client_free(c);
}

/* A plugin dropped into the directory is loaded and served; removed, it is gone. */
static void test_plugin_live(void **state)
{
        static const GUID good = TP_CSET_GUID(1);
        const char *top = getenv("top_builddir");
        struct pv2_client *c;

        start_server();
        c = connect_client();
        assert_false(has_guid(c, &good));
        assert_int_equal(du_run("cp %s/tests/plugins/.libs/good.so '%s/.good.tmp' && "
                             "mv '%s/.good.tmp' '%s/good.so'", top, srv.plugins, srv.plugins,
                                srv.plugins), 0);
        assert_true(becomes(c, &good, true));
        assert_int_equal(du_run("rm '%s/good.so'", srv.plugins), 0);
        assert_true(becomes(c, &good, false));
        pv2_client_free(c);
}

/* A callback="custom" provider in another process, told what its clients do. */
static char codes_path[4096];

static ULONG WINAPI record(ULONG code, PVOID buffer, ULONG size)
{
        FILE *f = fopen(codes_path, "a");

        if (f) {
                fprintf(f, "%lu\n", (unsigned long) code);
                fclose(f);
        }
        return ERROR_SUCCESS;
}

static void custom_child(int cmd_fd, int ack_fd)
{
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx), .ControlCallback = record };
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                              (const ULONG[]) { 4, 8 }, &size);
        HANDLE h;

        if (PerfStartProviderEx(&prov, &ctx, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            !PerfCreateInstance(h, &cset, L"w1", 7))
                _exit(2);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

static char *codes(void)
{
        static char buf[256];
        FILE *f = fopen(codes_path, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

        if (f)
                fclose(f);
        buf[n] = '\0';
        for (char *p = buf; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        unlink(codes_path);
        return buf;
}

static void test_custom_callback(void **state)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pv2_out o = { 0 };
        struct pv2_handle h;
        struct pv2_client *c;
        uint8_t ids[64];
        size_t n;

        snprintf(codes_path, sizeof(codes_path), "%s/codes", getenv("PERFLIB_RUNTIME_DIR"));
        assert_int_equal(tu_child_start(&p, custom_child), 0);
        start_server();
        c = connect_client();
        assert_int_equal(pv2_enumerate_instances(c, NULL, &cset, 1 << 16, &o), ERROR_SUCCESS);
        pv2_out_done(&o);
        assert_string_equal(codes(), "3 ");             /* PERF_ENUMERATE_INSTANCES */
        assert_int_equal(pv2_open_query(c, NULL, &h), ERROR_SUCCESS);
        n = identifier(ids, 2, "w1");
        assert_int_equal(pv2_validate_counters(c, &h, ids, (uint32_t) n, 1), ERROR_SUCCESS);
        assert_string_equal(codes(), "1 ");             /* PERF_ADD_COUNTER */
        assert_int_equal(pv2_query_counter_data(c, &h, 1 << 16, &o), ERROR_SUCCESS);
        pv2_out_done(&o);
        assert_string_equal(codes(), "5 6 ");           /* PERF_COLLECT_START, _END */
        n = identifier(ids, 2, "w1");
        assert_int_equal(pv2_validate_counters(c, &h, ids, (uint32_t) n, 0), ERROR_SUCCESS);
        assert_string_equal(codes(), "2 ");             /* PERF_REMOVE_COUNTER */
        pv2_client_free(c);
        tu_child_stop(&p);
}

/* Stops a child and waits until it is stopped: kill() alone does not. */
static void freeze(pid_t pid)
{
        int status;

        assert_int_equal(kill(pid, SIGSTOP), 0);
        assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
        assert_true(WIFSTOPPED(status));
}

/* A provider with a by-reference counter (id 2) that the test can freeze. */
static ULONGLONG ref_value = 41;

static void ref_child(int cmd_fd, int ack_fd)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                              (const ULONG[]) { 4, 8 }, &size);
        PPERF_COUNTERSET_INSTANCE i;
        HANDLE h;

        ((PPERF_COUNTER_INFO) (t + 1))[1].Attrib = PERF_ATTRIB_BY_REFERENCE;
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        i = PerfCreateInstance(h, &cset, L"w1", 7);
        if (!i || PerfSetCounterRefValue(h, i, 2, &ref_value) != ERROR_SUCCESS)
                _exit(3);
        tu_ready(ack_fd);
        /* The collect thread reads the variable while this one writes it. */
        while (tu_next_command(cmd_fd)) {
                __atomic_add_fetch(&ref_value, 1, __ATOMIC_RELAXED);
                tu_ready(ack_fd);
        }
        _exit(0);
}

/*
 * A provider that stops answering (SIGSTOP) while a query needs it to
 * dereference its counters: its instance is no longer found, rather than
 * its last values served as fresh ones; it is still listed (stopped is not
 * dead), and once it runs again its values are served again.
 */
static void test_hung_provider(void **state)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pv2_handle h;
        struct pv2_client *c;
        uint8_t ids[64];
        size_t n;

        assert_int_equal(tu_child_start(&p, ref_child), 0);
        start_server();
        c = connect_client();
        assert_int_equal(pv2_open_query(c, NULL, &h), ERROR_SUCCESS);
        n = identifier(ids, 2, "w1");
        assert_int_equal(pv2_validate_counters(c, &h, ids, (uint32_t) n, 1), ERROR_SUCCESS);
        assert_true(single_value(c, &h) == 41);
        assert_int_equal(tu_command(&p, 'i'), 0);
        assert_true(single_value(c, &h) == 42);         /* dereferenced live */
        freeze(p.pid);
        assert_true(status_becomes(c, &h, ERROR_WMI_INSTANCE_NOT_FOUND));
        assert_true(has_cset(c));                       /* stopped is not dead */
        kill(p.pid, SIGCONT);
        assert_true(status_becomes(c, &h, ERROR_SUCCESS));
        assert_true(single_value(c, &h) == 42);
        pv2_client_free(c);
        tu_child_stop(&p);
}

/* A second provider, of another counterset: one instance "o1" with value 77. */
static GUID prov_other = { 0xe2e0c003, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };
static GUID cset_other = { 0xe2e0c004, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };

static void other_child(int cmd_fd, int ack_fd)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov_other, &cset_other,
                                              PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                              (const ULONG[]) { 4, 8 }, &size);
        PPERF_COUNTERSET_INSTANCE i;
        HANDLE h;

        if (PerfStartProvider(&prov_other, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            !(i = PerfCreateInstance(h, &cset_other, L"o1", 1)))
                _exit(2);
        PerfSetULongLongCounterValue(h, i, 2, 77);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

/*
 * A provider whose values live in its segment (nothing to dereference) is
 * stopped: within 3 s its instance is no longer served as a success, while
 * another provider's values are; once it runs again it is served again.
 * A query of it never waits on it meanwhile, even with a collect bound of
 * 10 s.
 */
static void test_stopped_provider(void **state)
{
        struct tu_child p1 = { .cmd_fd = -1, .ack_fd = -1 }, p2 = p1;
        struct pv2_handle ha, hb;
        struct pv2_client *c;
        uint8_t ids[64];
        uint64_t v = 0;
        size_t n;
        time_t t0;

        assert_int_equal(tu_child_start(&p1, provider_child), 0);
        assert_int_equal(tu_child_start(&p2, other_child), 0);
        setenv("PERFLIB_COLLECT_TIMEOUT_MS", "10000", 1);
        start_server();
        unsetenv("PERFLIB_COLLECT_TIMEOUT_MS");
        c = connect_client();
        assert_int_equal(pv2_open_query(c, NULL, &ha), ERROR_SUCCESS);
        n = identifier(ids, 2, "w1");
        assert_int_equal(pv2_validate_counters(c, &ha, ids, (uint32_t) n, 1), ERROR_SUCCESS);
        assert_true(single_value(c, &ha) == 1000);
        assert_int_equal(pv2_open_query(c, NULL, &hb), ERROR_SUCCESS);
        n = identifier(ids, 2, "o1");
        memcpy(ids, &cset_other, 16);
        assert_int_equal(pv2_validate_counters(c, &hb, ids, (uint32_t) n, 1), ERROR_SUCCESS);

        freeze(p1.pid);
        t0 = time(NULL);
        assert_true(status_becomes(c, &ha, ERROR_WMI_INSTANCE_NOT_FOUND));
        assert_true(time(NULL) - t0 < 5);
        assert_int_equal(block_status(c, &ha, &v), ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_true(single_value(c, &hb) == 77);
        kill(p1.pid, SIGCONT);
        assert_true(status_becomes(c, &ha, ERROR_SUCCESS));
        assert_int_equal(block_status(c, &ha, &v), ERROR_SUCCESS);
        assert_true(v == 1000);
        pv2_client_free(c);
        tu_child_stop(&p1);
        tu_child_stop(&p2);
}

/* A callback="custom" provider that takes 2 s over every collection. */
static ULONG WINAPI slow_collect(ULONG code, PVOID buffer, ULONG size)
{
        if (code == PERF_COLLECT_START)
                sleep(2);
        return ERROR_SUCCESS;
}

static void slow_child(int cmd_fd, int ack_fd)
{
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx), .ControlCallback = slow_collect };
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                              (const ULONG[]) { 4, 8 }, &size);
        PPERF_COUNTERSET_INSTANCE i;
        HANDLE h;

        if (PerfStartProviderEx(&prov, &ctx, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            !(i = PerfCreateInstance(h, &cset, L"w1", 7)))
                _exit(2);
        PerfSetULongLongCounterValue(h, i, 2, 41);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

struct pending {
        struct pv2_client *c;
        struct pv2_handle h;
        uint64_t value;
        bool done;
};

static void *pending_query(void *userdata)
{
        struct pending *p = userdata;

        p->value = single_value(p->c, &p->h);
        __atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
        return NULL;
}

/*
 * A query waiting on a provider that is running but slow (2 s in its
 * collect callback, within a collect bound of 10 s) holds up no other
 * client: a query of another provider is answered meanwhile, and the
 * first completes with its provider's value.  A stopped provider is not
 * waited on at all (test_stopped_provider); this is the case that is.
 */
static void test_slow_provider_isolated(void **state)
{
        struct tu_child p1 = { .cmd_fd = -1, .ack_fd = -1 }, p2 = p1;
        struct pending a = { 0 };
        struct pv2_handle hb;
        struct pv2_client *b;
        uint8_t ids[64];
        pthread_t t;
        size_t n;

        assert_int_equal(tu_child_start(&p1, slow_child), 0);
        assert_int_equal(tu_child_start(&p2, other_child), 0);
        setenv("PERFLIB_COLLECT_TIMEOUT_MS", "10000", 1);
        start_server();
        unsetenv("PERFLIB_COLLECT_TIMEOUT_MS");
        a.c = connect_client();
        assert_int_equal(pv2_open_query(a.c, NULL, &a.h), ERROR_SUCCESS);
        n = identifier(ids, 2, "w1");
        assert_int_equal(pv2_validate_counters(a.c, &a.h, ids, (uint32_t) n, 1), ERROR_SUCCESS);
        b = connect_client();
        assert_int_equal(pv2_open_query(b, NULL, &hb), ERROR_SUCCESS);
        n = identifier(ids, 2, "o1");
        memcpy(ids, &cset_other, 16);
        assert_int_equal(pv2_validate_counters(b, &hb, ids, (uint32_t) n, 1), ERROR_SUCCESS);
        assert_int_equal(pthread_create(&t, NULL, pending_query, &a), 0);
        usleep(300000);         /* let a's request reach the provider and wait */
        assert_true(single_value(b, &hb) == 77);
        assert_false(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE));
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_true(a.value == 41);
        pv2_client_free(a.c);
        pv2_client_free(b);
        tu_child_stop(&p1);
        tu_child_stop(&p2);
}

/*
 * A provider that does not answer when the server first scans (stopped
 * before the server starts) is picked up once it answers, within 2 s,
 * though nothing in the runtime directory changes meanwhile.
 */
static void test_late_provider(void **state)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct timespec a, b;
        struct pv2_client *c;
        int64_t ms;

        assert_int_equal(tu_child_start(&p, provider_child), 0);
        freeze(p.pid);
        start_server();
        c = connect_client();
        assert_false(has_cset(c));
        usleep(300000);
        assert_false(has_cset(c));
        kill(p.pid, SIGCONT);
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_true(becomes(c, &cset, true));
        clock_gettime(CLOCK_MONOTONIC, &b);
        ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
        print_message("late provider served %lld ms after it answered\n", (long long) ms);
        assert_true(ms <= 2000);
        pv2_client_free(c);
        tu_child_stop(&p);
}

/* A datagram socket standing in for systemd's notification socket. */
static int notify_socket(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", getenv("PERFLIB_RUNTIME_DIR"));
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        setenv("NOTIFY_SOCKET", sa.sun_path, 1);
        return fd;
}

/*
 * Whether a notification contains want, among those received so far or
 * within 5 s: in any order, since the status line is sent when it changes
 * (perhaps before READY) and not again.
 */
static char notes[1 << 16];
static size_t notes_len;

static bool notified(int fd, const char *want)
{
        for (int i = 0; i < 50; i++) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char buf[4096];
                ssize_t n;

                if (memmem(notes, notes_len, want, strlen(want)))
                        return true;
                if (poll(&p, 1, 100) <= 0)
                        continue;
                n = recv(fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0 || notes_len + (size_t) n + 1 > sizeof(notes))
                        continue;
                memcpy(notes + notes_len, buf, (size_t) n);
                notes_len += (size_t) n;
                notes[notes_len++] = '\n';
        }
        return memmem(notes, notes_len, want, strlen(want)) != NULL;
}

static void test_sd_notify(void **state)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        int fd = notify_socket();

        notes_len = 0;
        assert_int_equal(tu_child_start(&p, provider_child), 0);
        setenv("WATCHDOG_USEC", "200000", 1);
        start_server();
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
        assert_true(notified(fd, "READY=1"));
        /* With a watchdog configured the server pets it (sd-event, at half the period). */
        assert_true(notified(fd, "WATCHDOG=1"));
        /* The status line counts what is served: one counterset, one provider. */
        assert_true(notified(fd, "STATUS=1 countersets, 1 providers, 0 plugins running "
                                 "(0 restarting, 0 given up)"));
        kill(srv.pid, SIGTERM);
        assert_true(notified(fd, "STOPPING=1"));
        close(fd);
        tu_child_stop(&p);
}

static void test_socket_activation(void **state)
{
        const char *launcher[] = { "systemd-socket-activate", "-l", srv.sock,
                                   "-E", "PERFLIB_RUNTIME_DIR", NULL };
        struct pv2_client *c;

        if (system("command -v systemd-socket-activate >/dev/null 2>&1") != 0)
                skip();
        start_server_with(launcher);
        c = connect_client();
        assert_false(has_cset(c));
        pv2_client_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_end_to_end, setup, teardown),
                cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
                cmocka_unit_test_setup_teardown(test_access_denied, setup, teardown),
                cmocka_unit_test_setup_teardown(test_group_allowed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_many_clients, setup, teardown),
                cmocka_unit_test_setup_teardown(test_socket_in_use, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sd_notify, setup, teardown),
                cmocka_unit_test_setup_teardown(test_socket_activation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_registry_live, setup, teardown),
                cmocka_unit_test_setup_teardown(test_plugin_live, setup, teardown),
                cmocka_unit_test_setup_teardown(test_custom_callback, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hung_provider, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stopped_provider, setup, teardown),
                cmocka_unit_test_setup_teardown(test_late_provider, setup, teardown),
                cmocka_unit_test_setup_teardown(test_slow_provider_isolated, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
