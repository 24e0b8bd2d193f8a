/* SPDX-License-Identifier: MIT */
/*
 * libpcq end to end: a real perflibd and a real provider process (started
 * unprivileged with private directories, as test-perflibd does), read
 * through the public pcq.h API only: enumeration and names, browsing,
 * wildcard expansion, errors that name the part of a path that failed,
 * PDH's #n numbering of duplicate instance names, the first-sample rule of
 * rate counters, _Total of the three aggregate types with each
 * AggregateFunc (and history), instances appearing and vanishing between
 * collects, rates of instances recreated in another order, replaced by
 * one of the same name, one of 1,000 vanishing and duplicate names
 * flipping (each against its own previous sample), "\*" and
 * parent/instance paths, the same values over TCP
 * (perflibd --listen-tcp) as over the Unix socket, the szMachine a
 * provider is told, and refused connections (--group).
 *
 * One file because every case shares one fixture, a running perflibd and
 * provider, which is the expensive part; the cases themselves are short.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>

#include "pcq.h"
#include "perflib.h"
#include "perflib-description.h"
#include "daemonutil.h"
#include "testutil.h"

#define G(n) { 0x7c0e0000 + n, 0x1, 0x2, { 1, 3, 5, 7, 9, 11, 13, 15 } }
static GUID prov = G(1), queue = G(2), pool = G(3), sys = G(4);
static GUID custom = G(9), agg_global = G(5), agg_multi = G(6), agg_history = G(7), tree = G(8);

#define NO CTRPP_NO_ID
static const struct ctrpp_counter_desc queue_ctrs[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Queue Length", "Items waiting" },
        { 2, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Items/sec", "Items processed" },
        { 3, PERF_AVERAGE_BULK, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          4, NO, NO, NO, 0, 0, NULL, NULL, "Avg. Bytes/Item", "Bytes per item" },
        { 4, PERF_AVERAGE_BASE, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Avg. Bytes/Item Base", "" },
};
static const struct ctrpp_counter_desc pool_ctrs[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, PERF_AGGREGATE_TOTAL,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Size", "Pool size" },
};
static const struct ctrpp_counter_desc sys_ctrs[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Threads", "Threads running" },
};
/* The same four counters, one per AggregateFunc, in each aggregate set. */
#define AGG(id, func, name) \
        { id, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, func, \
          NO, NO, NO, NO, 0, 0, NULL, NULL, name, name }
static const struct ctrpp_counter_desc agg_ctrs[] = {
        AGG(1, PERF_AGGREGATE_TOTAL, "Sum"), AGG(2, PERF_AGGREGATE_AVG, "Avg"),
        AGG(3, PERF_AGGREGATE_MIN, "Min"), AGG(4, PERF_AGGREGATE_MAX, "Max"),
};
static const struct ctrpp_counter_desc tree_ctrs[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Value", "A value" },
        { 2, PERF_AVERAGE_BULK, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          3, NO, NO, NO, 0, 0, NULL, NULL, "Mean", "An average" },
        { 3, PERF_AVERAGE_BASE, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Mean Base", "" },
};
static const struct ctrpp_counterset_desc csets[] = {
        { G(2), PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 4, queue_ctrs, NULL, NULL,
          "Worker Queue", "Per worker", "multiple" },
        { G(3), PERF_COUNTERSET_SINGLE_AGGREGATE, 0, 0, 1, pool_ctrs, NULL, NULL,
          "Pool", "Pools, totalled", "globalAggregate" },
        { G(4), PERF_COUNTERSET_SINGLE_INSTANCE, 0, 0, 1, sys_ctrs, NULL, NULL,
          "System Stats", "The system", "single" },
        { G(5), PERF_COUNTERSET_SINGLE_AGGREGATE, 0, 0, 4, agg_ctrs, NULL, NULL,
          "Agg Global", "globalAggregate", "globalAggregate" },
        { G(6), PERF_COUNTERSET_MULTI_AGGREGATE, 0, 0, 4, agg_ctrs, NULL, NULL,
          "Agg Multi", "multipleAggregate", "multipleAggregate" },
        { G(7), PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY, 0, 0, 4, agg_ctrs, NULL, NULL,
          "Agg History", "globalAggregateHistory", "globalAggregateHistory" },
        { G(8), PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 3, tree_ctrs, NULL, NULL,
          "Tree", "Instances with parents", "multiple" },
};
#define N_SETS (sizeof(csets) / sizeof(csets[0]))
static const GUID *const set_guids[N_SETS] = {
        &queue, &pool, &sys, &agg_global, &agg_multi, &agg_history, &tree,
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = G(1), .n_countersets = (uint32_t) N_SETS, .countersets = csets, .name = "PCQ Test",
};

static char sock[4096], registry[4096], plugins[4096], tcp[64];
static pid_t server;
static struct tu_child child = { .cmd_fd = -1, .ack_fd = -1 };
static struct tu_child churner = { .cmd_fd = -1, .ack_fd = -1 };
static void churn_child(int cmd_fd, int ack_fd);

static void add_set(HANDLE h, const GUID *pg, const GUID *g, const struct ctrpp_counterset_desc *d)
{
        ULONG sizes[8], size;
        PPERF_COUNTERSET_INFO t;

        for (uint32_t i = 0; i < d->n_counters; i++)
                sizes[i] = d->counters[i].size;
        t = tu_template(pg, g, d->instance_type, d->n_counters, sizes, &size);
        for (uint32_t i = 0; i < d->n_counters; i++) {
                ((PPERF_COUNTER_INFO) (t + 1))[i].Type = d->counters[i].type;
        }
        if (PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        free(t);
}

/* An instance with every counter of its set (all 4-byte here) set to v. */
static PPERF_COUNTERSET_INSTANCE make(HANDLE h, const GUID *g, const wchar_t *name, ULONG id,
                                      ULONG n_counters, ULONG v)
{
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, g, name, id);

        if (!i)
                _exit(3);
        for (ULONG c = 1; c <= n_counters; c++)
                PerfSetULongCounterValue(h, i, c, v);
        return i;
}

/*
 * Agg Global, Agg Multi, Agg History: a = 10, b = 20, c = 60 in each of
 * their four counters (*ret_a, *ret_c: a and c of the three sets).  Tree:
 * "p1/c1" = 1, "p1/c2" = 2, "p2/c1" = 3 (Value only).
 */
static void make_agg_and_tree(HANDLE h, PPERF_COUNTERSET_INSTANCE *ret_a,
                              PPERF_COUNTERSET_INSTANCE *ret_c)
{
        const GUID *sets[3] = { &agg_global, &agg_multi, &agg_history };

        for (int i = 0; i < 3; i++) {
                ret_a[i] = make(h, sets[i], L"a", 1, 4, 10);
                (void) make(h, sets[i], L"b", 2, 4, 20);
                ret_c[i] = make(h, sets[i], L"c", 3, 4, 60);
        }
        (void) make(h, &tree, L"p1/c1", 1, 1, 1);
        (void) make(h, &tree, L"p1/c2", 2, 1, 2);
        (void) make(h, &tree, L"p2/c1", 3, 1, 3);
}

/*
 * Worker Queue: w1 (id 7), w1 (id 8), w2 (id 9); Pool: p1 = 10, p2 = 20;
 * System Stats: 12 threads; the aggregate sets and Tree as above.
 * Commands: 'i' adds 100 items and 3 ops of 3000 bytes to w1#0, 'n'
 * creates w3, 'd' deletes w2, 'p' deletes p2, 'a' deletes a and c of the
 * three aggregate sets, 'l' creates Tree's "late" = 44.
 */
static void provider_child(int cmd_fd, int ack_fd)
{
        PPERF_COUNTERSET_INSTANCE w1, w1b, w2, p1, p2, s, w3 = NULL, agg_a[3], agg_c[3];
        HANDLE h;
        char c;

        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS)
                _exit(2);
        for (size_t i = 0; i < N_SETS; i++)
                add_set(h, &prov, set_guids[i], &csets[i]);
        if (pl_set_provider_description(h, &desc) != 0)
                _exit(2);
        make_agg_and_tree(h, agg_a, agg_c);
        w1 = PerfCreateInstance(h, &queue, L"w1", 7);
        w1b = PerfCreateInstance(h, &queue, L"w1", 8);
        w2 = PerfCreateInstance(h, &queue, L"w2", 9);
        p1 = PerfCreateInstance(h, &pool, L"p1", 1);
        p2 = PerfCreateInstance(h, &pool, L"p2", 2);
        s = PerfCreateInstance(h, &sys, L"", 0);
        if (!w1 || !w1b || !w2 || !p1 || !p2 || !s)
                _exit(3);
        PerfSetULongCounterValue(h, w1, 1, 5);
        PerfSetULongCounterValue(h, w1b, 1, 6);
        PerfSetULongCounterValue(h, w2, 1, 7);
        PerfSetULongLongCounterValue(h, w1, 2, 1000);
        PerfSetULongCounterValue(h, p1, 1, 10);
        PerfSetULongCounterValue(h, p2, 1, 20);
        PerfSetULongCounterValue(h, s, 1, 12);
        tu_ready(ack_fd);
        while ((c = tu_next_command(cmd_fd))) {
                if (c == 'i') {
                        PerfIncrementULongLongCounterValue(h, w1, 2, 100);
                        PerfIncrementULongLongCounterValue(h, w1, 3, 9000);
                        PerfIncrementULongCounterValue(h, w1, 4, 3);
                } else if (c == 'n') {
                        w3 = PerfCreateInstance(h, &queue, L"w3", 11);
                        PerfSetULongCounterValue(h, w3, 1, 33);
                } else if (c == 'd') {
                        PerfDeleteInstance(h, w2);
                } else if (c == 'p') {
                        PerfDeleteInstance(h, p2);
                } else if (c == 'a') {
                        for (int i = 0; i < 3; i++) {
                                PerfDeleteInstance(h, agg_a[i]);
                                PerfDeleteInstance(h, agg_c[i]);
                        }
                } else if (c == 'l') {
                        (void) make(h, &tree, L"late", 9, 1, 44);
                }
                tu_ready(ack_fd);
        }
        _exit(0);
}

static pcq_conn *connect_to(const char *host)
{
        pcq_conn *c = NULL;

        /* The server is ready once its socket answers: bounded by 10 s. */
        for (int i = 0; i < 1000; i++) {
                if (pcq_connect(host, 5000, &c) == ERROR_SUCCESS)
                        return c;
                usleep(10000);
        }
        fail_msg("perflibd did not answer on %s", host ? host : sock);
        return NULL;
}

static pcq_conn *connect_local(void)
{
        return connect_to(NULL);
}

/* Waits (5 s at most) until counterset name is served. */
static void wait_for_set(pcq_conn *c, const char *name)
{
        for (int i = 0; i < 500; i++) {
                char **v = NULL;

                if (pcq_list_paths(c, name, false, &v) == ERROR_SUCCESS) {
                        pcq_strv_free(v);
                        return;
                }
                usleep(10000);
        }
        fail_msg("counterset '%s' never showed up", name);
}

/* Waits until the provider's countersets are served. */
static void wait_for_provider(pcq_conn *c)
{
        wait_for_set(c, "Worker Queue");
}

/*
 * A TCP port on loopback that nothing listens on right now: the kernel
 * picks it for a socket bound to port 0, which is closed again for
 * perflibd to take.  0 on failure.
 */
static unsigned free_port(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unsigned port = 0;

        if (fd < 0)
                return 0;
        if (bind(fd, (struct sockaddr *) &a, sizeof(a)) == 0 &&
            getsockname(fd, (struct sockaddr *) &a, &len) == 0)
                port = ntohs(a.sin_port);
        close(fd);
        return port;
}

/* One account, alice, whose password is "Password" (MS-NLMP's example: its NT hash). */
static int write_accounts(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        static const char line[] = "alice:a4f49c406510bdcab6824ee7c30fd852:\n";
        bool ok = fd >= 0 && write(fd, line, sizeof(line) - 1) == (ssize_t) sizeof(line) - 1;

        if (fd >= 0)
                close(fd);
        return ok ? 0 : -1;
}

static int setup(void **state)
{
        const char *run = tu_runtime_setup();
        char listen[80], group[300], accounts[4200], *bin;
        unsigned port = free_port();
        struct group *gr = getgrgid(0);

        (void) state;
        snprintf(sock, sizeof(sock), "%s/perflibd.sock", run);
        snprintf(registry, sizeof(registry), "%s/registry", run);
        snprintf(plugins, sizeof(plugins), "%s/plugins", run);
        mkdir(registry, 0755);
        mkdir(plugins, 0755);
        unsetenv("PERFLIB_SOCKET");
        if (!port || !gr)
                return -1;
        /* Group 0 may query; test_access_denied is a user outside and inside it. */
        snprintf(group, sizeof(group), "--group=%s", gr->gr_name);
        snprintf(tcp, sizeof(tcp), "127.0.0.1:%u", port);
        snprintf(listen, sizeof(listen), "--listen-tcp=%s", tcp);
        /* TCP serves only accounts: libpcq logs on as PERFLIB_USER with PERFLIB_PASSWORD. */
        snprintf(accounts, sizeof(accounts), "--accounts=%s/accounts", run);
        if (write_accounts(accounts + strlen("--accounts=")) < 0)
                return -1;
        setenv("PERFLIB_USER", "alice", 1);
        setenv("PERFLIB_PASSWORD", "Password", 1);
        if (tu_child_start(&child, provider_child) < 0 ||
            tu_child_start(&churner, churn_child) < 0)
                return -1;
        if (asprintf(&bin, "%s/server-glue/perflibd", getenv("top_builddir")) < 0)
                return -1;
        server = fork();
        if (server == 0) {
                execl(bin, bin, "--registry-dir", registry, "--plugin-dir", plugins, listen,
                      group, accounts, (char *) NULL);
                _exit(127);
        }
        free(bin);
        return server > 0 ? 0 : -1;
}

static int teardown(void **state)
{
        int status;

        (void) state;
        tu_child_stop(&churner);
        tu_child_stop(&child);
        if (server > 0) {
                kill(server, SIGTERM);
                waitpid(server, &status, 0);
        }
        tu_runtime_teardown();
        return 0;
}

static bool has(char **v, const char *s)
{
        for (size_t i = 0; v && v[i]; i++)
                if (!strcmp(v[i], s))
                        return true;
        return false;
}

static size_t count(char **v)
{
        size_t n = 0;

        while (v && v[n])
                n++;
        return n;
}

static void test_enumerate_and_names(void **state)
{
        struct pcq_counterset_reg set;
        struct pcq_counter_reg reg;
        struct pcq_string_item s;
        struct pcq_buf b = { 0 };
        pcq_conn *c = connect_local();
        GUID *g = NULL;
        size_t n = 0;
        bool found = false;
        pcq_iter it;
        int names = 0;

        (void) state;
        wait_for_provider(c);
        assert_string_equal(pcq_conn_host(c), "");
        assert_int_equal(pcq_enum_countersets(c, &g, &n), ERROR_SUCCESS);
        for (size_t i = 0; i < n; i++)
                found = found || !memcmp(&g[i], &queue, sizeof(GUID));
        assert_true(found);
        free(g);

        assert_int_equal(pcq_registration_info(c, &queue, 1, 0, &b), ERROR_SUCCESS);
        assert_int_equal(pcq_reg_iter_begin(&it, &b, &set), ERROR_SUCCESS);
        assert_int_equal(set.num_counters, 4);
        assert_int_equal(set.instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
        while (pcq_reg_iter_next(&it, &reg))
                if (reg.id == 3)
                        assert_int_equal(reg.base_id, 4);
        assert_int_equal(pcq_iter_error(&it), ERROR_SUCCESS);
        pcq_iter_done(&it);
        pcq_buf_done(&b);

        assert_int_equal(pcq_registration_info(c, &queue, 10, 0, &b), ERROR_SUCCESS);
        assert_int_equal(pcq_string_iter_begin(&it, &b), ERROR_SUCCESS);
        while (pcq_string_iter_next(&it, &s))
                if (s.counter_id == 2 && !strcmp(s.text, "Items/sec"))
                        names++;
        assert_int_equal(names, 1);
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        pcq_conn_free(c);
}

static void test_list_and_expand(void **state)
{
        pcq_conn *c = connect_local();
        char **v = NULL;

        (void) state;
        wait_for_provider(c);
        /* Without instances: "(*)" for multi-instance sets; bases left out. */
        assert_int_equal(pcq_list_paths(c, "Worker Queue", false, &v), ERROR_SUCCESS);
        assert_int_equal(count(v), 3);
        assert_true(has(v, "\\Worker Queue(*)\\Items/sec"));
        assert_true(has(v, "\\Worker Queue(*)\\Avg. Bytes/Item"));
        assert_false(has(v, "\\Worker Queue(*)\\Avg. Bytes/Item Base"));
        pcq_strv_free(v);
        /* With instances: duplicates numbered as PDH does. */
        assert_int_equal(pcq_list_paths(c, "worker queue", true, &v), ERROR_SUCCESS);
        assert_int_equal(count(v), 9);
        assert_true(has(v, "\\Worker Queue(w1)\\Queue Length"));
        assert_true(has(v, "\\Worker Queue(w1#1)\\Queue Length"));
        assert_true(has(v, "\\Worker Queue(w2)\\Items/sec"));
        pcq_strv_free(v);
        /* Single-instance sets, and global aggregate ones listed as Windows does: alike. */
        assert_int_equal(pcq_list_paths(c, NULL, true, &v), ERROR_SUCCESS);
        assert_true(has(v, "\\System Stats\\Threads"));
        assert_true(has(v, "\\Pool\\Size"));
        assert_false(has(v, "\\Pool(p1)\\Size"));
        assert_false(has(v, "\\Pool(_Total)\\Size"));
        assert_true(has(v, "\\Agg History\\Sum"));
        assert_true(has(v, "\\Agg Multi(a)\\Sum"));
        assert_true(has(v, "\\Agg Multi(_Total)\\Sum"));
        pcq_strv_free(v);
        assert_int_equal(pcq_list_paths(c, "Nope", false, &v), PDH_CSTATUS_NO_OBJECT);

        assert_int_equal(pcq_expand_path(c, "\\Worker Queue(*)\\Queue Length", &v), ERROR_SUCCESS);
        assert_int_equal(count(v), 3);
        assert_string_equal(v[0], "\\Worker Queue(w1)\\Queue Length");
        assert_string_equal(v[1], "\\Worker Queue(w1#1)\\Queue Length");
        assert_string_equal(v[2], "\\Worker Queue(w2)\\Queue Length");
        pcq_strv_free(v);
        assert_int_equal(pcq_expand_path(c, "\\Worker Queue(w1)\\*", &v), ERROR_SUCCESS);
        assert_int_equal(count(v), 3);
        assert_true(has(v, "\\Worker Queue(w1)\\Avg. Bytes/Item"));
        pcq_strv_free(v);
        assert_int_equal(pcq_expand_path(c, "\\Worker Queue(w*)\\Items/sec", &v), ERROR_SUCCESS);
        assert_int_equal(count(v), 3);
        pcq_strv_free(v);
        assert_int_equal(pcq_expand_path(c, "\\Wroker Queue(*)\\Items/sec", &v),
                         PDH_CSTATUS_NO_OBJECT);
        pcq_conn_free(c);
}

static void test_errors_name_the_part(void **state)
{
        pcq_conn *c = connect_local();
        pcq_counter *ctr = NULL;
        const struct pcq_value *vals;
        pcq_query *q;
        size_t n;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        assert_int_equal(pcq_query_add(q, "\\Worker Qeue(w1)\\Items/sec", &ctr),
                         PDH_CSTATUS_NO_OBJECT);
        assert_string_equal(pcq_query_error(q), "no counterset named 'Worker Qeue' on the local "
                            "machine; did you mean 'Worker Queue'?");
        assert_int_equal(pcq_query_add(q, "\\Worker Queue(w1)\\Itemz/sec", &ctr),
                         PDH_CSTATUS_NO_COUNTER);
        assert_string_equal(pcq_query_error(q), "counterset 'Worker Queue' has no counter named "
                            "'Itemz/sec'; did you mean 'Items/sec'?");
        /* Nothing near: no suggestion. */
        assert_int_equal(pcq_query_add(q, "\\Nothing Like It\\Items/sec", &ctr),
                         PDH_CSTATUS_NO_OBJECT);
        assert_string_equal(pcq_query_error(q), "no counterset named 'Nothing Like It' on the "
                            "local machine");
        assert_int_equal(pcq_query_add(q, "Worker Queue\\Items/sec", &ctr),
                         PDH_CSTATUS_BAD_COUNTERNAME);
        assert_non_null(strstr(pcq_query_error(q), "byte 0"));
        assert_int_equal(pcq_query_add(q, "\\\\elsewhere\\Worker Queue(w1)\\Items/sec", &ctr),
                         PDH_CSTATUS_NO_MACHINE);
        assert_non_null(strstr(pcq_query_error(q), "'elsewhere'"));
        assert_null(ctr);
        /* A misspelled instance is accepted and reads as missing, with a message. */
        assert_int_equal(pcq_query_add(q, "\\Worker Queue(w9)\\Queue Length", &ctr),
                         ERROR_SUCCESS);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(ctr, 0, &vals, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_int_equal(vals[0].status, PDH_CSTATUS_NO_INSTANCE);
        assert_string_equal(vals[0].path, "\\Worker Queue(w9)\\Queue Length");
        assert_non_null(strstr(pcq_query_error(q), "'w9'"));
        pcq_query_free(q);
        pcq_conn_free(c);
}

/*
 * pcq_validate_path says what PdhValidatePath says, and pcq_conn_error
 * why, with the live instance, counter or counterset meant.
 */
static void test_validate_path(void **state)
{
        pcq_conn *c = connect_local();
        char **v = NULL;

        (void) state;
        wait_for_provider(c);
        assert_string_equal(pcq_conn_error(c), "");
        assert_int_equal(pcq_validate_path(c, "\\Worker Queue(w1)\\Queue Length"), ERROR_SUCCESS);
        assert_int_equal(pcq_validate_path(c, "\\Worker Queue(*)\\Queue Length"), ERROR_SUCCESS);
        assert_string_equal(pcq_conn_error(c), "");
        assert_int_equal(pcq_validate_path(c, "\\Worker Queue(ww1)\\Queue Length"),
                         PDH_CSTATUS_NO_INSTANCE);
        assert_string_equal(pcq_conn_error(c), "no instance 'ww1' of counterset 'Worker Queue' "
                            "is live; did you mean 'w1'?");
        /* The second w1 is w1#1: a third is one edit from it. */
        assert_int_equal(pcq_validate_path(c, "\\Worker Queue(w1#2)\\Queue Length"),
                         PDH_CSTATUS_NO_INSTANCE);
        assert_string_equal(pcq_conn_error(c), "no instance 'w1#2' of counterset 'Worker Queue' "
                            "is live; did you mean 'w1#1'?");
        assert_int_equal(pcq_validate_path(c, "\\Worker Queue(zzz*)\\Queue Length"),
                         PDH_CSTATUS_NO_INSTANCE);
        assert_string_equal(pcq_conn_error(c), "no live instance of counterset 'Worker Queue' "
                            "matches 'zzz*'");
        assert_int_equal(pcq_validate_path(c, "\\Worker Queue(w1)\\Queue Lenght"),
                         PDH_CSTATUS_NO_COUNTER);
        assert_string_equal(pcq_conn_error(c), "counterset 'Worker Queue' has no counter named "
                            "'Queue Lenght'; did you mean 'Queue Length'?");
        assert_int_equal(pcq_validate_path(c, "Worker Queue"), PDH_CSTATUS_BAD_COUNTERNAME);
        /* A success clears the last error; the listing and expansion say theirs. */
        assert_int_equal(pcq_validate_path(c, "\\Worker Queue(w1#1)\\Queue Length"), ERROR_SUCCESS);
        assert_string_equal(pcq_conn_error(c), "");
        assert_int_equal(pcq_list_paths(c, "Worker Qeueu", false, &v), PDH_CSTATUS_NO_OBJECT);
        assert_null(v);
        assert_string_equal(pcq_conn_error(c), "no counterset named 'Worker Qeueu' on the local "
                            "machine; did you mean 'Worker Queue'?");
        assert_int_equal(pcq_expand_path(c, "\\Worker Queue(*)\\Itemz/sec", &v),
                         PDH_CSTATUS_NO_COUNTER);
        assert_non_null(strstr(pcq_conn_error(c), "did you mean 'Items/sec'?"));
        assert_int_equal(pcq_validate_path(NULL, "\\A\\B"), PDH_INVALID_ARGUMENT);
        assert_string_equal(pcq_conn_error(NULL), "");
        pcq_conn_free(c);
}

static const struct pcq_value *find(const struct pcq_value *v, size_t n, const char *inst)
{
        for (size_t i = 0; i < n; i++)
                if (v[i].instance && !strcmp(v[i].instance, inst))
                        return &v[i];
        return NULL;
}

static void test_query_values(void **state)
{
        pcq_conn *c = connect_local();
        pcq_counter *len, *rate, *avg, *dup, *threads;
        const struct pcq_value *v;
        struct pcq_counter_desc d;
        pcq_query *q;
        size_t n;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        assert_int_equal(pcq_query_add(q, "\\Worker Queue(*)\\Queue Length", &len), 0);
        assert_int_equal(pcq_query_add(q, "\\Worker Queue(w1)\\Items/sec", &rate), 0);
        assert_int_equal(pcq_query_add(q, "\\Worker Queue(w1)\\Avg. Bytes/Item", &avg), 0);
        assert_int_equal(pcq_query_add(q, "\\worker queue(W1#1)\\queue length", &dup), 0);
        assert_int_equal(pcq_query_add(q, "\\System Stats\\Threads", &threads), 0);
        assert_int_equal(pcq_counter_values(len, 0, &v, &n), PDH_NO_DATA);
        pcq_counter_describe(rate, &d);
        assert_string_equal(d.object, "Worker Queue");
        assert_string_equal(d.counter, "Items/sec");
        assert_string_equal(d.help, "Items processed");
        assert_int_equal(d.type, PERF_COUNTER_BULK_COUNT);
        assert_int_equal(d.instance_type, PERF_COUNTERSET_MULTI_INSTANCES);

        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_true(pcq_query_sample_time(q) > 0);
        assert_int_equal(pcq_counter_values(len, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 3);
        assert_string_equal(v[0].path, "\\Worker Queue(w1)\\Queue Length");
        assert_string_equal(v[1].path, "\\Worker Queue(w1#1)\\Queue Length");
        assert_string_equal(v[1].instance, "w1#1");
        assert_true(v[0].status == 0 && v[0].value == 5);
        assert_true(v[1].status == 0 && v[1].value == 6);
        assert_true(v[2].status == 0 && v[2].value == 7);
        assert_int_equal(pcq_counter_values(dup, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_true(v[0].status == 0 && v[0].value == 6);
        assert_int_equal(pcq_counter_values(threads, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_null(v[0].instance);
        assert_string_equal(v[0].path, "\\System Stats\\Threads");
        assert_true(v[0].status == 0 && v[0].value == 12);
        /* A rate's first sample has no value; the second has one. */
        assert_int_equal(pcq_counter_values(rate, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].status, PDH_CSTATUS_INVALID_DATA);
        assert_int_equal(pcq_counter_values(avg, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(v[0].status, PDH_CSTATUS_INVALID_DATA);

        assert_int_equal(tu_command(&child, 'i'), 0);
        usleep(20000);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(rate, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(v[0].status, PDH_CSTATUS_VALID_DATA);
        assert_true(v[0].value > 0);
        assert_true(v[0].raw_first == 1100);
        /* The base companion was fetched: 9000 bytes over 3 operations. */
        assert_int_equal(pcq_counter_values(avg, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(v[0].status, PDH_CSTATUS_VALID_DATA);
        assert_true(v[0].value == 3000);
        pcq_query_free(q);
        pcq_conn_free(c);
}

static void test_total_and_churn(void **state)
{
        pcq_conn *c = connect_local();
        pcq_counter *all, *total, *len;
        const struct pcq_value *v;
        pcq_query *q;
        size_t n;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        assert_int_equal(pcq_query_add(q, "\\Pool(*)\\Size", &all), 0);
        assert_int_equal(pcq_query_add(q, "\\Pool(_Total)\\Size", &total), 0);
        assert_int_equal(pcq_query_add(q, "\\Worker Queue(*)\\Queue Length", &len), 0);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(all, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 3);
        assert_string_equal(v[2].instance, "_Total");           /* last */
        assert_string_equal(v[2].path, "\\Pool(_Total)\\Size");
        assert_true(v[2].status == 0 && v[2].value == 30);
        assert_int_equal(pcq_counter_values(total, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_true(v[0].status == 0 && v[0].value == 30);

        /* w3 appears, w2 vanishes, p2 goes: seen at the next collect. */
        assert_int_equal(tu_command(&child, 'n'), 0);
        assert_int_equal(tu_command(&child, 'd'), 0);
        assert_int_equal(tu_command(&child, 'p'), 0);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(len, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 3);
        assert_null(find(v, n, "w2"));
        assert_non_null(find(v, n, "w3"));
        assert_true(find(v, n, "w3")->value == 33);
        assert_int_equal(pcq_counter_values(total, 0, &v, &n), ERROR_SUCCESS);
        assert_true(v[0].status == 0 && v[0].value == 10);
        pcq_query_free(q);
        pcq_conn_free(c);
}

static void test_connect_refused(void **state)
{
        char path[4200], want[9000];
        pcq_conn *c = (pcq_conn *) 1;

        (void) state;
        snprintf(path, sizeof(path), "unix:%s.nobody", sock);
        assert_int_equal(pcq_connect(path, 1000, &c), PDH_CANNOT_CONNECT_MACHINE);
        assert_true(c == (pcq_conn *) 1);                       /* not written */
        /* What was tried, the system's error, what to do. */
        snprintf(want, sizeof(want), "cannot connect to perflibd at %s.nobody: No such file or "
                 "directory; start perflibd with --socket=%s.nobody, or name the socket the "
                 "running one uses", sock, sock);
        assert_string_equal(pcq_connect_error(), want);
        /* TCP on a port nothing listens on (the discard port, on loopback). */
        assert_int_equal(pcq_connect("\\\\127.0.0.1:9", 1000, &c), PDH_CANNOT_CONNECT_MACHINE);
        assert_string_equal(pcq_connect_error(), "cannot connect to perflibd on 127.0.0.1 port 9: "
                            "Connection refused; start perflibd there with --listen-tcp=ADDRESS:9 "
                            "(or PERFLIB_LISTEN_TCP), or give the port it listens on as HOST:PORT");
        assert_int_equal(pcq_connect("127.0.0.1:", 1000, &c), PDH_CSTATUS_NO_MACHINE);
        assert_string_equal(pcq_connect_error(), "cannot connect to '127.0.0.1:': a host is NAME, "
                            "NAME:PORT, [ADDRESS] or [ADDRESS]:PORT");
        assert_int_equal(pcq_connect(NULL, -1, &c), PDH_INVALID_ARGUMENT);
        assert_string_equal(pcq_connect_error(), "pcq_connect: invalid argument");
        /* The local server, found through $PERFLIB_RUNTIME_DIR; a success clears the text. */
        pcq_conn_free(connect_local());
        assert_string_equal(pcq_connect_error(), "");
        pcq_conn_free(NULL);
}

/*
 * With no socket where PERFLIB_RUNTIME_DIR points, the sentence names the
 * socket, the variable and what to do.
 */
static void test_connect_names_the_variable(void **state)
{
        const char *run = getenv("PERFLIB_RUNTIME_DIR");
        char *saved = strdup(run), empty[4200], want[9000];
        pcq_conn *c = NULL;

        (void) state;
        snprintf(empty, sizeof(empty), "%s/empty", saved);
        assert_int_equal(mkdir(empty, 0755), 0);
        setenv("PERFLIB_RUNTIME_DIR", empty, 1);
        assert_int_equal(pcq_connect(NULL, 1000, &c), PDH_CANNOT_CONNECT_MACHINE);
        snprintf(want, sizeof(want), "cannot connect to the local perflibd at %s/perflibd.sock "
                 "(in $PERFLIB_RUNTIME_DIR): No such file or directory; start perflibd with this "
                 "PERFLIB_RUNTIME_DIR, or set PERFLIB_RUNTIME_DIR to the runtime directory of the "
                 "running one (its --runtime-dir)", empty);
        assert_string_equal(pcq_connect_error(), want);
        /* $PERFLIB_SOCKET comes first. */
        setenv("PERFLIB_SOCKET", empty, 1);
        assert_int_equal(pcq_connect(NULL, 1000, &c), PDH_CANNOT_CONNECT_MACHINE);
        assert_non_null(strstr(pcq_connect_error(), "($PERFLIB_SOCKET)"));
        unsetenv("PERFLIB_SOCKET");
        setenv("PERFLIB_RUNTIME_DIR", saved, 1);
        assert_int_equal(rmdir(empty), 0);
        free(saved);
}

/* The valid value of the one item of ctr whose path is path. */
static double value_at(pcq_counter *ctr, const char *path)
{
        const struct pcq_value *v;
        size_t n;

        assert_int_equal(pcq_counter_values(ctr, 0, &v, &n), ERROR_SUCCESS);
        for (size_t i = 0; i < n; i++) {
                if (strcmp(v[i].path, path))
                        continue;
                assert_int_equal(v[i].status, PDH_CSTATUS_VALID_DATA);
                return v[i].value;
        }
        fail_msg("no item %s", path);
        return 0;
}

static size_t n_items(pcq_counter *ctr)
{
        const struct pcq_value *v;
        size_t n = 0;

        assert_int_equal(pcq_counter_values(ctr, 0, &v, &n), ERROR_SUCCESS);
        return n;
}

/*
 * One sample of paths over c, as "path=status:value\n" lines (the item
 * paths are the same over any transport when the paths name no host).
 */
static char *sample_text(pcq_conn *c, const char *const *paths, size_t n_paths)
{
        pcq_counter *ctr[8];
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        pcq_query *q;

        assert_non_null(f);
        assert_true(n_paths <= 8);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        for (size_t i = 0; i < n_paths; i++)
                assert_int_equal(pcq_query_add(q, paths[i], &ctr[i]), ERROR_SUCCESS);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        for (size_t i = 0; i < n_paths; i++) {
                const struct pcq_value *v;
                size_t n;

                assert_int_equal(pcq_counter_values(ctr[i], 0, &v, &n), ERROR_SUCCESS);
                for (size_t j = 0; j < n; j++)
                        fprintf(f, "%s=%x:%g\n", v[j].path, v[j].status, v[j].value);
        }
        pcq_query_free(q);
        fclose(f);
        return text;
}

/* The same counters over TCP (perflibd --listen-tcp) as over the Unix socket. */
static void test_tcp_matches_unix(void **state)
{
        static const char *const paths[] = {
                "\\Worker Queue(*)\\Queue Length", "\\System Stats\\Threads",
                "\\Pool(*)\\Size", "\\Agg Global(*)\\*", "\\Tree(*/*)\\Value",
        };
        pcq_conn *u = connect_local(), *t, *t2;
        char host[80], path[160], *a, *b, **v;
        pcq_counter *ctr;
        pcq_query *q;

        (void) state;
        wait_for_provider(u);
        t = connect_to(tcp);
        snprintf(host, sizeof(host), "\\\\%s", tcp);
        t2 = connect_to(host);
        assert_string_equal(pcq_conn_host(t), tcp);
        assert_string_equal(pcq_conn_host(t2), tcp);

        a = sample_text(u, paths, 5);
        b = sample_text(t, paths, 5);
        assert_non_null(strstr(a, "\\System Stats\\Threads=0:12\n"));
        assert_non_null(strstr(a, "\\Agg Global(_Total)\\Max=0:60\n"));
        assert_string_equal(a, b);
        free(b);
        b = sample_text(t2, paths, 5);
        assert_string_equal(a, b);
        free(a);
        free(b);

        /* A path naming the TCP host, on the TCP connection; listings name it. */
        snprintf(path, sizeof(path), "%s\\System Stats\\Threads", host);
        assert_int_equal(pcq_query_new(t, &q), ERROR_SUCCESS);
        assert_int_equal(pcq_query_add(q, path, &ctr), ERROR_SUCCESS);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_true(value_at(ctr, path) == 12);
        pcq_query_free(q);
        assert_int_equal(pcq_list_paths(t, "System Stats", false, &v), ERROR_SUCCESS);
        assert_int_equal(count(v), 1);
        assert_string_equal(v[0], path);
        pcq_strv_free(v);
        /* ... and the Unix connection refuses it. */
        assert_int_equal(pcq_query_new(u, &q), ERROR_SUCCESS);
        assert_int_equal(pcq_query_add(q, path, &ctr), PDH_CSTATUS_NO_MACHINE);
        pcq_query_free(q);
        pcq_conn_free(t2);
        pcq_conn_free(t);
        pcq_conn_free(u);
}

/* Adds path to q and returns its counter. */
static pcq_counter *add(pcq_query *q, const char *path)
{
        pcq_counter *ctr = NULL;

        assert_int_equal(pcq_query_add(q, path, &ctr), ERROR_SUCCESS);
        return ctr;
}

/* Checks the four _Total values (Sum, Avg, Min, Max) of "\set(_Total)\*". */
static void check_totals(pcq_counter *all, const char *set, double sum, double avg, double min,
                         double max)
{
        static const char *const names[] = { "Sum", "Avg", "Min", "Max" };
        const double want[] = { sum, avg, min, max };
        char path[100];

        for (int i = 0; i < 4; i++) {
                snprintf(path, sizeof(path), "\\%s(_Total)\\%s", set, names[i]);
                if (value_at(all, path) != want[i])
                        fail_msg("%s: %g, expected %g", path, value_at(all, path), want[i]);
        }
}

/*
 * On the wire the server still answers as MS-PCQ says for the type: every
 * instance, for the client to aggregate.  Each _PERF_INSTANCE_HEADER block
 * is Size (8 + the UTF-16LE name with its NUL, rounded up to 8: 16 for
 * "p1", never the 8 + 12 of the segment's UTF-32 name), InstanceId, the
 * name, zero padding.
 */
static void check_pool_on_the_wire(pcq_conn *c)
{
        static const uint8_t name[6] = { 'p', 0, '0', 0, 0, 0 };
        struct pcq_buf b = { 0 };

        assert_int_equal(pcq_enum_instances(c, &pool, &b), ERROR_SUCCESS);
        assert_int_equal(b.size, 32);
        for (uint32_t off = 0; off < b.size; off += 16) {
                uint32_t id = du_le32(b.data + off + 4);
                uint8_t want[6];

                memcpy(want, name, sizeof(want));
                want[2] = (uint8_t) ('0' + id);
                assert_int_equal(du_le32(b.data + off), 16);
                assert_true(id == 1 || id == 2);
                assert_memory_equal(b.data + off + 8, want, sizeof(want));
                assert_int_equal(b.data[off + 14] | b.data[off + 15], 0);
        }
        pcq_buf_done(&b);
}

/*
 * A globalAggregate set is single-instance to its readers, as Microsoft
 * documents it and Windows clients show it: listed with no instance part,
 * and read as one value, the aggregate over every instance the providers
 * created (Pool: p1 = 10, p2 = 20, Size summed).  Its instances stay
 * reachable by name, our extension.
 */
static void test_global_aggregate_single(void **state)
{
        pcq_conn *c = connect_local();
        const struct pcq_value *v;
        pcq_counter *size, *hist;
        pcq_query *q;
        char **paths;
        size_t n;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_list_paths(c, "Pool", false, &paths), ERROR_SUCCESS);
        assert_int_equal(count(paths), 1);
        assert_string_equal(paths[0], "\\Pool\\Size");
        pcq_strv_free(paths);
        assert_int_equal(pcq_list_paths(c, "Agg Global", true, &paths), ERROR_SUCCESS);
        assert_int_equal(count(paths), 4);
        assert_true(has(paths, "\\Agg Global\\Max"));
        pcq_strv_free(paths);
        assert_int_equal(pcq_validate_path(c, "\\Pool\\Size"), ERROR_SUCCESS);
        assert_int_equal(pcq_expand_path(c, "\\Pool\\Size", &paths), ERROR_SUCCESS);
        assert_int_equal(count(paths), 1);
        assert_string_equal(paths[0], "\\Pool\\Size");
        pcq_strv_free(paths);
        assert_int_equal(pcq_expand_path(c, "\\Pool(*)\\Size", &paths), ERROR_SUCCESS);
        assert_int_equal(count(paths), 3);                     /* p1, p2, _Total */
        pcq_strv_free(paths);
        check_pool_on_the_wire(c);

        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        size = add(q, "\\Pool\\Size");
        hist = add(q, "\\Agg History\\*");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(size, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_null(v[0].instance);
        assert_string_equal(v[0].path, "\\Pool\\Size");
        assert_true(v[0].status == PDH_CSTATUS_VALID_DATA && v[0].value == 30);
        assert_int_equal(n_items(hist), 4);
        assert_true(value_at(hist, "\\Agg History\\Sum") == 90);
        assert_true(value_at(hist, "\\Agg History\\Min") == 10);
        /* The same values one collect later, with the paths kept. */
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_true(value_at(size, "\\Pool\\Size") == 30);
        assert_true(value_at(hist, "\\Agg History\\Max") == 60);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/*
 * multipleAggregate: _Total is over the instances the query's paths of the
 * counterset name (b and c here), every instance when they name none; the
 * global types ignore what the query names.
 */
static void test_multi_aggregate_client_set(void **state)
{
        pcq_conn *c = connect_local();
        pcq_counter *named, *all, *glob, *pre, *pre_total;
        pcq_query *q, *q2;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        add(q, "\\Agg Multi(b)\\Sum");
        add(q, "\\Agg Multi(c)\\Max");
        named = add(q, "\\Agg Multi(_Total)\\*");
        add(q, "\\Agg Global(b)\\Sum");
        glob = add(q, "\\Agg Global(_Total)\\*");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(n_items(named), 4);
        check_totals(named, "Agg Multi", 80, 40, 20, 60);
        check_totals(glob, "Agg Global", 90, 30, 10, 60);
        pcq_query_free(q);

        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        all = add(q, "\\Agg Multi(_Total)\\*");
        assert_int_equal(pcq_query_new(c, &q2), ERROR_SUCCESS);
        pre = add(q2, "\\Agg Multi(b*)\\Sum");
        pre_total = add(q2, "\\Agg Multi(_Total)\\Sum");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_query_collect(q2), ERROR_SUCCESS);
        check_totals(all, "Agg Multi", 90, 30, 10, 60);
        assert_int_equal(n_items(pre), 1);                     /* b only, no _Total */
        assert_true(value_at(pre, "\\Agg Multi(b)\\Sum") == 20);
        assert_true(value_at(pre_total, "\\Agg Multi(_Total)\\Sum") == 20);
        pcq_query_free(q2);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/*
 * Every AggregateFunc of the three aggregate types, then a and c deleted:
 * globalAggregateHistory's _Total keeps their last values, the others drop
 * them.
 */
static void test_aggregate_history(void **state)
{
        pcq_conn *c = connect_local();
        pcq_counter *glob, *multi, *hist, *hist_sum;
        pcq_query *q;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        glob = add(q, "\\Agg Global(_Total)\\*");
        multi = add(q, "\\Agg Multi(_Total)\\*");
        hist = add(q, "\\Agg History(_Total)\\*");
        hist_sum = add(q, "\\Agg History(*)\\Sum");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        check_totals(glob, "Agg Global", 90, 30, 10, 60);
        check_totals(multi, "Agg Multi", 90, 30, 10, 60);
        check_totals(hist, "Agg History", 90, 30, 10, 60);
        assert_int_equal(n_items(hist_sum), 4);

        assert_int_equal(tu_command(&child, 'a'), 0);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        check_totals(glob, "Agg Global", 20, 20, 20, 20);
        check_totals(multi, "Agg Multi", 20, 20, 20, 20);
        check_totals(hist, "Agg History", 90, 30, 10, 60);
        /* The vanished instances are no items any more, only part of _Total. */
        assert_int_equal(n_items(hist_sum), 2);
        assert_true(value_at(hist_sum, "\\Agg History(b)\\Sum") == 20);
        assert_true(value_at(hist_sum, "\\Agg History(_Total)\\Sum") == 90);
        /* Still so one collect later. */
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        check_totals(hist, "Agg History", 90, 30, 10, 60);
        check_totals(glob, "Agg Global", 20, 20, 20, 20);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/* "\*": every listed counter of the set (bases left out), per instance. */
static void test_every_counter(void **state)
{
        pcq_conn *c = connect_local();
        pcq_counter *one, *all, *single;
        const struct pcq_value *v;
        struct pcq_counter_desc d;
        pcq_query *q;
        size_t n;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        one = add(q, "\\Tree(p1/c1)\\*");
        all = add(q, "\\Tree(*)\\*");
        single = add(q, "\\System Stats\\*");
        pcq_counter_describe(one, &d);
        assert_string_equal(d.counter, "*");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(one, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 2);
        assert_string_equal(v[0].path, "\\Tree(p1/c1)\\Value");
        assert_true(v[0].status == 0 && v[0].value == 1);
        assert_string_equal(v[1].path, "\\Tree(p1/c1)\\Mean");
        assert_int_equal(v[1].status, PDH_CSTATUS_INVALID_DATA);       /* first sample */
        assert_int_equal(n_items(all), 6);
        assert_true(value_at(all, "\\Tree(p2/c1)\\Value") == 3);
        assert_int_equal(n_items(single), 1);
        assert_true(value_at(single, "\\System Stats\\Threads") == 12);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/* Parent/instance paths with wildcards in either part, and #* for every occurrence. */
static void test_parent_paths(void **state)
{
        pcq_conn *c = connect_local();
        pcq_counter *c1, *exact, *missing, *none;
        const struct pcq_value *v;
        pcq_query *q;
        char **p;
        size_t n;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_expand_path(c, "\\Tree(p1/*)\\Value", &p), ERROR_SUCCESS);
        assert_int_equal(count(p), 2);
        assert_string_equal(p[0], "\\Tree(p1/c1)\\Value");
        assert_string_equal(p[1], "\\Tree(p1/c2)\\Value");
        pcq_strv_free(p);
        assert_int_equal(pcq_expand_path(c, "\\Tree(*/c1)\\Value", &p), ERROR_SUCCESS);
        assert_int_equal(count(p), 2);
        assert_string_equal(p[0], "\\Tree(p1/c1)\\Value");
        assert_string_equal(p[1], "\\Tree(p2/c1)\\Value");
        pcq_strv_free(p);
        assert_int_equal(pcq_expand_path(c, "\\Tree(*/*)\\Value", &p), ERROR_SUCCESS);
        assert_int_equal(count(p), 3);
        pcq_strv_free(p);
        assert_int_equal(pcq_expand_path(c, "\\Tree(P2/C1)\\Value", &p), ERROR_SUCCESS);
        assert_int_equal(count(p), 1);
        assert_string_equal(p[0], "\\Tree(p2/c1)\\Value");
        pcq_strv_free(p);
        assert_int_equal(pcq_expand_path(c, "\\Worker Queue(w1#*)\\Queue Length", &p),
                         ERROR_SUCCESS);
        assert_int_equal(count(p), 2);
        assert_string_equal(p[1], "\\Worker Queue(w1#1)\\Queue Length");
        pcq_strv_free(p);

        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        c1 = add(q, "\\Tree(*/c1)\\Value");
        exact = add(q, "\\Tree(p1/c2)\\Value");
        missing = add(q, "\\Tree(p9/c9)\\Value");
        none = add(q, "\\Tree(*/c9)\\Value");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(n_items(c1), 2);
        assert_true(value_at(c1, "\\Tree(p1/c1)\\Value") == 1);
        assert_true(value_at(c1, "\\Tree(p2/c1)\\Value") == 3);
        assert_int_equal(pcq_counter_values(exact, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_string_equal(v[0].instance, "p1/c2");
        assert_true(v[0].status == 0 && v[0].value == 2);
        assert_int_equal(pcq_counter_values(missing, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].status, PDH_CSTATUS_NO_INSTANCE);
        assert_string_equal(v[0].path, "\\Tree(p9/c9)\\Value");
        /* A wildcard that matches nothing is no item, not a missing one. */
        assert_int_equal(n_items(none), 0);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/*
 * A named instance that does not exist yet: pcq_expand_path lists only
 * what matches (nothing, as PdhExpandWildCardPath), a query reads it as
 * PDH_CSTATUS_NO_INSTANCE and gets its value once it appears.
 */
static void test_late_instance(void **state)
{
        pcq_conn *c = connect_local();
        const struct pcq_value *v;
        pcq_counter *late;
        pcq_query *q;
        char **p;
        size_t n;

        (void) state;
        wait_for_provider(c);
        assert_int_equal(pcq_expand_path(c, "\\Tree(late)\\Value", &p), ERROR_SUCCESS);
        assert_int_equal(count(p), 0);
        pcq_strv_free(p);
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        late = add(q, "\\Tree(late)\\Value");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(late, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].status, PDH_CSTATUS_NO_INSTANCE);

        assert_int_equal(tu_command(&child, 'l'), 0);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(late, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_string_equal(v[0].path, "\\Tree(late)\\Value");
        assert_true(v[0].status == 0 && v[0].value == 44);
        assert_int_equal(pcq_expand_path(c, "\\Tree(late)\\Value", &p), ERROR_SUCCESS);
        assert_int_equal(count(p), 1);
        pcq_strv_free(p);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/*
 * pcq_connect as user nobody (gid nobody) with the supplementary groups
 * given, in a child: ERROR_SUCCESS, ERROR_ACCESS_DENIED (with the sentence
 * that says who may query), or PDH_CANNOT_CONNECT_MACHINE for any other
 * code; 0xFFFF when the child could not become nobody, 0xFFFE when a
 * refused connect wrote *ret.
 */
static unsigned connect_as_nobody(size_t n_groups, const gid_t *groups)
{
        pid_t pid = fork();
        int status;

        assert_true(pid >= 0);
        if (pid == 0) {
                pcq_conn *c = (pcq_conn *) 1;
                uint32_t e;

                if (setgroups(n_groups, groups) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(0xFF);
                e = pcq_connect(NULL, 5000, &c);
                if (e && c != (pcq_conn *) 1)
                        _exit(0xFE);
                /* A refusal says who may query and what to do. */
                if (e == ERROR_ACCESS_DENIED &&
                    (!strstr(pcq_connect_error(), ": Access is denied; perflibd answers only "
                             "root, the user it runs as (") ||
                     !strstr(pcq_connect_error(), "members of its --group: run as one of them")))
                        _exit(3);
                /* An exit status holds 8 bits: the codes that matter, mapped. */
                _exit(e == ERROR_ACCESS_DENIED ? 1 : e ? 2 : 0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        switch (WEXITSTATUS(status)) {
        case 0: return ERROR_SUCCESS;
        case 1: return ERROR_ACCESS_DENIED;
        case 0xFF: return 0xFFFF;
        case 0xFE: return 0xFFFE;
        default: return PDH_CANNOT_CONNECT_MACHINE;
        }
}

/*
 * perflibd runs with --group of gid 0: a user who is neither root, nor
 * perflibd's user, nor in that group is refused at pcq_connect; the same
 * user with the group as a supplementary one is let in.  Needs root to
 * become nobody.
 */
static void test_access_denied(void **state)
{
        const gid_t in_group = 0;

        (void) state;
        if (geteuid() != 0)
                skip();
        pcq_conn_free(connect_local());
        assert_int_equal(chmod(getenv("PERFLIB_RUNTIME_DIR"), 0755), 0);
        assert_int_equal(connect_as_nobody(0, NULL), ERROR_ACCESS_DENIED);
        assert_int_equal(connect_as_nobody(1, &in_group), ERROR_SUCCESS);
}

/* A provider with a ControlCallback that writes the szMachine of each EnumerateInstances. */
static char machines[4200];

static ULONG WINAPI record_machine(ULONG code, PVOID buffer, ULONG size)
{
        FILE *f;

        if (code != PERF_ENUMERATE_INSTANCES || !(f = fopen(machines, "w")))
                return ERROR_SUCCESS;
        if (buffer && size >= sizeof(wchar_t))
                fprintf(f, "%ls", (const wchar_t *) buffer);
        fclose(f);
        return ERROR_SUCCESS;
}

static void custom_child(int cmd_fd, int ack_fd)
{
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx), .ControlCallback = record_machine };
        static const GUID cprov = G(10);
        ULONG size, sizes[1] = { 4 };
        PPERF_COUNTERSET_INFO t = tu_template(&cprov, &custom, PERF_COUNTERSET_MULTI_INSTANCES,
                                              1, sizes, &size);
        HANDLE h;

        if (PerfStartProviderEx((LPGUID) &cprov, &ctx, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
            !PerfCreateInstance(h, &custom, L"x", 1))
                _exit(2);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

/* The szMachine the provider saw for one EnumerateInstances over c (static). */
static const char *machine_seen(pcq_conn *c)
{
        static char buf[256];
        struct pcq_buf b = { 0 };
        size_t n;
        FILE *f;

        unlink(machines);
        assert_int_equal(pcq_enum_instances(c, &custom, &b), ERROR_SUCCESS);
        pcq_buf_done(&b);
        f = fopen(machines, "r");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* Over TCP the server is told the host's name without the port, locally none. */
static void test_machine_name(void **state)
{
        struct tu_child p = { .cmd_fd = -1, .ack_fd = -1 };
        struct pcq_buf b = { 0 };
        pcq_conn *u = connect_local(), *t = connect_to(tcp);
        char path[4200];
        pcq_conn *x;
        int i;

        (void) state;
        snprintf(machines, sizeof(machines), "%s/machines", getenv("PERFLIB_RUNTIME_DIR"));
        assert_int_equal(tu_child_start(&p, custom_child), 0);
        for (i = 0; i < 500 && pcq_enum_instances(u, &custom, &b) != ERROR_SUCCESS; i++)
                usleep(10000);
        pcq_buf_done(&b);
        assert_true(i < 500);
        assert_string_equal(machine_seen(u), "");
        assert_string_equal(machine_seen(t), "127.0.0.1");
        snprintf(path, sizeof(path), "unix:%s", sock);
        assert_int_equal(pcq_connect(path, 5000, &x), ERROR_SUCCESS);
        assert_string_equal(machine_seen(x), "");
        pcq_conn_free(x);
        pcq_conn_free(t);
        pcq_conn_free(u);
        tu_child_stop(&p);
}

/*
 * Churn, served by its own provider process: a delta counter (exact
 * values without timing) and each instance's id as a raw count, to tell
 * which instance a path read.  Groups by name prefix, one per test:
 * a1..a4 (ids 1..4), b1..b3 (ids 11..13), c0000..c0999 (ids 1000..1999),
 * w, w (ids 31, 32).
 */
static const struct ctrpp_counter_desc churn_ctrs[] = {
        { 1, PERF_COUNTER_LARGE_DELTA, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Delta", "Change since the last sample" },
        { 2, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          NO, NO, NO, NO, 0, 0, NULL, NULL, "Tag", "The instance's id" },
};
static const struct ctrpp_counterset_desc churn_set[] = {
        { G(12), PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 2, churn_ctrs, NULL, NULL,
          "Churn", "Instances deleted and recreated", "multiple" },
};
static const GUID churn_prov = G(11), churn = G(12);
static const struct ctrpp_provider_desc churn_desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = G(11), .n_countersets = 1, .countersets = churn_set, .name = "PCQ Churn",
};

#define N_C 1000
struct churn_inst {
        wchar_t name[8];
        ULONG id;
        ULONGLONG v;
        PPERF_COUNTERSET_INSTANCE p;
};

static void churn_create(HANDLE h, struct churn_inst *x)
{
        x->p = PerfCreateInstance(h, &churn, x->name, x->id);
        if (!x->p) {
                fprintf(stderr, "churn: creating %ls (id %lu) failed\n", x->name,
                        (unsigned long) x->id);
                _exit(3);
        }
        PerfSetULongLongCounterValue(h, x->p, 1, x->v);
        PerfSetULongCounterValue(h, x->p, 2, x->id);
}

/*
 * Deletes the n instances of g, adds 1000 * (id % 100) to each value and
 * creates them again in the reverse order.  The segment reuses the slot
 * freed last first, so deleting in the reverse order too makes the server
 * return them reversed.  An instance with id from comes back as id to (a
 * provider restart: same name, another instance, value 777).
 */
static void churn_flip(HANDLE h, struct churn_inst *g, size_t n, ULONG from, ULONG to)
{
        struct churn_inst t;

        for (size_t i = n; i-- > 0;) {
                PerfDeleteInstance(h, g[i].p);
                g[i].v += 1000 * (g[i].id % 100);
                if (from && g[i].id == from) {
                        g[i].id = to;
                        g[i].v = 777;
                }
        }
        for (size_t i = 0; i < n / 2; i++) {
                t = g[i];
                g[i] = g[n - 1 - i];
                g[n - 1 - i] = t;
        }
        for (size_t i = 0; i < n; i++)
                churn_create(h, &g[i]);
}

/*
 * Commands: 'a' flips a1..a4; 'b' flips b1..b3 with b2 recreated as id
 * 22; 'c' adds i + 1 to c<i> in place and deletes c0500; 'w' flips w, w.
 */
static void churn_child(int cmd_fd, int ack_fd)
{
        static struct churn_inst a[4], b[3], cs[N_C], w[2];
        HANDLE h;
        char c;

        if (PerfStartProvider((LPGUID) &churn_prov, NULL, &h) != ERROR_SUCCESS)
                _exit(2);
        add_set(h, &churn_prov, &churn, &churn_set[0]);
        if (pl_set_provider_description(h, &churn_desc) != 0) {
                fprintf(stderr, "churn: no description\n");
                _exit(2);
        }
        for (size_t i = 0; i < 4; i++) {
                a[i] = (struct churn_inst){ .id = 1 + (ULONG) i, .v = 100000 * (i + 1) };
                swprintf(a[i].name, 8, L"a%zu", i + 1);
                churn_create(h, &a[i]);
        }
        for (size_t i = 0; i < 3; i++) {
                b[i] = (struct churn_inst){ .id = 11 + (ULONG) i, .v = 100000 * (i + 11) };
                swprintf(b[i].name, 8, L"b%zu", i + 1);
                churn_create(h, &b[i]);
        }
        for (size_t i = 0; i < N_C; i++) {
                cs[i] = (struct churn_inst){ .id = 1000 + (ULONG) i, .v = 100000 * (i + 1) };
                swprintf(cs[i].name, 8, L"c%04zu", i);
                churn_create(h, &cs[i]);
        }
        for (size_t i = 0; i < 2; i++) {
                w[i] = (struct churn_inst){ .id = 31 + (ULONG) i, .v = 100000 * (i + 31) };
                swprintf(w[i].name, 8, L"w");
                churn_create(h, &w[i]);
        }
        tu_ready(ack_fd);
        while ((c = tu_next_command(cmd_fd))) {
                if (c == 'a') {
                        churn_flip(h, a, 4, 0, 0);
                } else if (c == 'b') {
                        churn_flip(h, b, 3, 12, 22);
                } else if (c == 'c') {
                        for (size_t i = 0; i < N_C; i++) {
                                cs[i].v += i + 1;
                                PerfSetULongLongCounterValue(h, cs[i].p, 1, cs[i].v);
                        }
                        PerfDeleteInstance(h, cs[500].p);
                } else if (c == 'w') {
                        churn_flip(h, w, 2, 0, 0);
                }
                tu_ready(ack_fd);
        }
        _exit(0);
}

/* A connection once Churn is served. */
static pcq_conn *connect_churn(void)
{
        pcq_conn *c = connect_local();

        wait_for_set(c, "Churn");
        return c;
}

/* The item of ctr for instance inst: its status, and its value when valid. */
static uint32_t item_of(pcq_counter *ctr, const char *inst, double *ret)
{
        const struct pcq_value *v, *x;
        size_t n;

        assert_int_equal(pcq_counter_values(ctr, 0, &v, &n), ERROR_SUCCESS);
        x = find(v, n, inst);
        if (!x)
                fail_msg("no item for instance %s", inst);
        *ret = x->value;
        return x->status;
}

/* Asserts that ctr's item for inst is valid with value want. */
static void assert_item(pcq_counter *ctr, const char *inst, double want)
{
        double got = -1;
        uint32_t st = item_of(ctr, inst, &got);

        if (st != PDH_CSTATUS_VALID_DATA || got != want)
                fail_msg("%s: status 0x%x value %g, expected %g", inst, st, got, want);
}

/* The instance names of ctr's items, in order, joined by ',' (static). */
static const char *order_of(pcq_counter *ctr)
{
        static char buf[256];
        const struct pcq_value *v;
        size_t n, at = 0;

        assert_int_equal(pcq_counter_values(ctr, 0, &v, &n), ERROR_SUCCESS);
        buf[0] = '\0';
        for (size_t i = 0; i < n && at < sizeof(buf); i++)
                at += (size_t) snprintf(buf + at, sizeof(buf) - at, "%s%s", i ? "," : "",
                                        v[i].instance);
        return buf;
}

/*
 * Instances deleted and recreated in the reverse order: each delta is
 * against the instance's own previous sample (1000 * id per flip), both
 * by wildcard and by exact name.
 */
static void test_reordered_instances(void **state)
{
        pcq_conn *c = connect_churn();
        pcq_counter *all, *tags, *a3;
        const struct pcq_value *v;
        pcq_query *q;
        double x;
        size_t n;

        (void) state;
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        all = add(q, "\\Churn(a*)\\Delta");
        tags = add(q, "\\Churn(a*)\\Tag");
        a3 = add(q, "\\Churn(A3)\\Delta");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_string_equal(order_of(all), "a1,a2,a3,a4");
        assert_int_equal(item_of(all, "a2", &x), PDH_CSTATUS_INVALID_DATA);
        for (int round = 0; round < 3; round++) {
                assert_int_equal(tu_command(&churner, 'a'), 0);
                assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
                /* The server's order really flipped: the test tests something. */
                assert_string_equal(order_of(tags), round % 2 ? "a1,a2,a3,a4" : "a4,a3,a2,a1");
                assert_item(tags, "a1", 1);
                assert_item(tags, "a4", 4);
                for (int k = 1; k <= 4; k++) {
                        char inst[8];

                        snprintf(inst, sizeof(inst), "a%d", k);
                        assert_item(all, inst, 1000.0 * k);
                }
                assert_int_equal(pcq_counter_values(a3, 0, &v, &n), ERROR_SUCCESS);
                assert_int_equal(n, 1);
                assert_true(v[0].status == 0 && v[0].value == 3000);
        }
        pcq_query_free(q);
        pcq_conn_free(c);
}

/*
 * b2 replaced by another instance of the same name (id 12 -> 22): its
 * first sample is no delta against the old b2; the next flip's is.
 */
static void test_replaced_instance(void **state)
{
        pcq_conn *c = connect_churn();
        pcq_counter *all, *b2, *tag;
        pcq_query *q;
        double x;

        (void) state;
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        all = add(q, "\\Churn(b*)\\Delta");
        b2 = add(q, "\\Churn(b2)\\Delta");
        tag = add(q, "\\Churn(b2)\\Tag");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_item(tag, "b2", 12);
        assert_int_equal(tu_command(&churner, 'b'), 0);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_item(tag, "b2", 22);
        assert_int_equal(item_of(all, "b2", &x), PDH_CSTATUS_INVALID_DATA);
        assert_int_equal(item_of(b2, "b2", &x), PDH_CSTATUS_INVALID_DATA);
        assert_item(all, "b1", 11000);
        assert_item(all, "b3", 13000);
        assert_int_equal(n_items(all), 3);

        assert_int_equal(tu_command(&churner, 'b'), 0);     /* b2 is id 22 already */
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_item(all, "b2", 22000);
        assert_item(b2, "b2", 22000);
        assert_item(all, "b1", 11000);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/* 1,000 instances, c0500 vanishes: every other one keeps its own delta (i + 1). */
static void test_one_of_many_vanishes(void **state)
{
        pcq_conn *c = connect_churn();
        const struct pcq_value *v;
        pcq_counter *all, *gone;
        char want[16];
        pcq_query *q;
        size_t n;

        (void) state;
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        all = add(q, "\\Churn(c*)\\Delta");
        gone = add(q, "\\Churn(c0500)\\Delta");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(n_items(all), N_C);
        assert_int_equal(tu_command(&churner, 'c'), 0);
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_int_equal(pcq_counter_values(all, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, N_C - 1);
        for (size_t i = 0, k = 0; i < n; i++, k++) {
                if (k == 500)
                        k++;
                snprintf(want, sizeof(want), "c%04zu", k);
                if (strcmp(v[i].instance, want) || v[i].status != PDH_CSTATUS_VALID_DATA ||
                    v[i].value != (double) (k + 1))
                        fail_msg("item %zu: %s 0x%x %g, expected %s %zu", i, v[i].instance,
                                 v[i].status, v[i].value, want, k + 1);
        }
        assert_null(find(v, n, "c0500"));
        assert_int_equal(pcq_counter_values(gone, 0, &v, &n), ERROR_SUCCESS);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].status, PDH_CSTATUS_NO_INSTANCE);
        pcq_query_free(q);
        pcq_conn_free(c);
}

/*
 * Two instances named w (ids 31, 32) read as w and w#1; when their order
 * flips, the names follow the order and each delta its own instance.
 */
static void test_duplicate_names_flip(void **state)
{
        pcq_conn *c = connect_churn();
        pcq_counter *all, *tags, *first, *second;
        pcq_query *q;

        (void) state;
        assert_int_equal(pcq_query_new(c, &q), ERROR_SUCCESS);
        all = add(q, "\\Churn(w*)\\Delta");
        tags = add(q, "\\Churn(w*)\\Tag");
        first = add(q, "\\Churn(w)\\Delta");
        second = add(q, "\\Churn(w#1)\\Delta");
        assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
        assert_string_equal(order_of(all), "w,w#1");
        assert_item(tags, "w", 31);
        assert_item(tags, "w#1", 32);
        for (int round = 0; round < 2; round++) {
                double w = round ? 31000 : 32000, w1 = round ? 32000 : 31000;

                assert_int_equal(tu_command(&churner, 'w'), 0);
                assert_int_equal(pcq_query_collect(q), ERROR_SUCCESS);
                assert_item(tags, "w", round ? 31 : 32);
                assert_item(tags, "w#1", round ? 32 : 31);
                assert_item(all, "w", w);
                assert_item(all, "w#1", w1);
                assert_item(first, "w", w);
                assert_item(second, "w#1", w1);
        }
        pcq_query_free(q);
        pcq_conn_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_enumerate_and_names),
                cmocka_unit_test(test_list_and_expand),
                cmocka_unit_test(test_global_aggregate_single),
                cmocka_unit_test(test_errors_name_the_part),
                cmocka_unit_test(test_query_values),
                cmocka_unit_test(test_total_and_churn),
                cmocka_unit_test(test_connect_refused),
                cmocka_unit_test(test_connect_names_the_variable),
                cmocka_unit_test(test_validate_path),
                cmocka_unit_test(test_tcp_matches_unix),
                cmocka_unit_test(test_multi_aggregate_client_set),
                cmocka_unit_test(test_aggregate_history),
                cmocka_unit_test(test_every_counter),
                cmocka_unit_test(test_parent_paths),
                cmocka_unit_test(test_late_instance),
                cmocka_unit_test(test_reordered_instances),
                cmocka_unit_test(test_replaced_instance),
                cmocka_unit_test(test_one_of_many_vanishes),
                cmocka_unit_test(test_duplicate_names_flip),
                cmocka_unit_test(test_access_denied),
                cmocka_unit_test(test_machine_name),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
