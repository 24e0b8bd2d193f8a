/* SPDX-License-Identifier: MIT */
/*
 * libpcq end to end: a real perflibd and a real provider process (started
 * unprivileged with private directories, as test-perflibd does), read
 * through the public pcq.h API only: enumeration and names, browsing,
 * wildcard expansion, errors that name the part of a path that failed,
 * PDH's #n numbering of duplicate instance names, the first-sample rule of
 * rate counters, _Total of an aggregate counterset, instances appearing
 * and vanishing between collects, and a refused connection.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "pcq.h"
#include "perflib.h"
#include "perflib-description.h"
#include "testutil.h"

#define G(n) { 0x7c0e0000 + n, 0x1, 0x2, { 1, 3, 5, 7, 9, 11, 13, 15 } }
static GUID prov = G(1), queue = G(2), pool = G(3), sys = G(4);

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
static const struct ctrpp_counterset_desc csets[] = {
        { G(2), PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 4, queue_ctrs, NULL, NULL,
          "Worker Queue", "Per worker", "multiple" },
        { G(3), PERF_COUNTERSET_SINGLE_AGGREGATE, 0, 0, 1, pool_ctrs, NULL, NULL,
          "Pool", "Pools, totalled", "globalAggregate" },
        { G(4), PERF_COUNTERSET_SINGLE_INSTANCE, 0, 0, 1, sys_ctrs, NULL, NULL,
          "System Stats", "The system", "single" },
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = G(1), .n_countersets = 3, .countersets = csets, .name = "PCQ Test",
};

static char sock[4096], registry[4096], plugins[4096];
static pid_t server;
static struct tu_child child = { .cmd_fd = -1, .ack_fd = -1 };

static void add_set(HANDLE h, const GUID *g, const struct ctrpp_counterset_desc *d)
{
        ULONG sizes[8], size;
        PPERF_COUNTERSET_INFO t;

        for (uint32_t i = 0; i < d->n_counters; i++)
                sizes[i] = d->counters[i].size;
        t = tu_template(&prov, g, d->instance_type, d->n_counters, sizes, &size);
        for (uint32_t i = 0; i < d->n_counters; i++) {
                ((PPERF_COUNTER_INFO) (t + 1))[i].Type = d->counters[i].type;
        }
        if (PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        free(t);
}

/*
 * Worker Queue: w1 (id 7), w1 (id 8), w2 (id 9); Pool: p1 = 10, p2 = 20;
 * System Stats: 12 threads.  Commands: 'i' adds 100 items and 3 ops of
 * 3000 bytes to w1#0, 'n' creates w3, 'd' deletes w2, 'p' deletes p2.
 */
static void provider_child(int cmd_fd, int ack_fd)
{
        PPERF_COUNTERSET_INSTANCE w1, w1b, w2, p1, p2, s, w3 = NULL;
        HANDLE h;
        char c;

        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS)
                _exit(2);
        add_set(h, &queue, &csets[0]);
        add_set(h, &pool, &csets[1]);
        add_set(h, &sys, &csets[2]);
        if (pl_set_provider_description(h, &desc) != 0)
                _exit(2);
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
                }
                tu_ready(ack_fd);
        }
        _exit(0);
}

static pcq_conn *connect_local(void)
{
        pcq_conn *c = NULL;

        /* The server is ready once its socket answers: bounded by 10 s. */
        for (int i = 0; i < 1000; i++) {
                if (pcq_connect(NULL, 5000, &c) == ERROR_SUCCESS)
                        return c;
                usleep(10000);
        }
        fail_msg("perflibd did not answer on %s", sock);
        return NULL;
}

/* Waits (5 s at most) until the provider's countersets are served. */
static void wait_for_provider(pcq_conn *c)
{
        for (int i = 0; i < 500; i++) {
                char **v = NULL;

                if (pcq_list_paths(c, "Worker Queue", false, &v) == ERROR_SUCCESS) {
                        pcq_strv_free(v);
                        return;
                }
                usleep(10000);
        }
        fail_msg("the provider's countersets never showed up");
}

static int setup(void **state)
{
        const char *run = tu_runtime_setup();
        char *bin;

        (void) state;
        snprintf(sock, sizeof(sock), "%s/perflibd.sock", run);
        snprintf(registry, sizeof(registry), "%s/registry", run);
        snprintf(plugins, sizeof(plugins), "%s/plugins", run);
        mkdir(registry, 0755);
        mkdir(plugins, 0755);
        unsetenv("PERFLIB_SOCKET");
        if (tu_child_start(&child, provider_child) < 0)
                return -1;
        if (asprintf(&bin, "%s/server-glue/perflibd", getenv("top_builddir")) < 0)
                return -1;
        server = fork();
        if (server == 0) {
                execl(bin, bin, "--registry-dir", registry, "--plugin-dir", plugins, (char *) NULL);
                _exit(127);
        }
        free(bin);
        return server > 0 ? 0 : -1;
}

static int teardown(void **state)
{
        int status;

        (void) state;
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
        /* Single-instance and aggregate sets. */
        assert_int_equal(pcq_list_paths(c, NULL, true, &v), ERROR_SUCCESS);
        assert_true(has(v, "\\System Stats\\Threads"));
        assert_true(has(v, "\\Pool(p1)\\Size"));
        assert_true(has(v, "\\Pool(_Total)\\Size"));
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
        assert_non_null(strstr(pcq_query_error(q), "'Worker Qeue'"));
        assert_int_equal(pcq_query_add(q, "\\Worker Queue(w1)\\Itemz/sec", &ctr),
                         PDH_CSTATUS_NO_COUNTER);
        assert_non_null(strstr(pcq_query_error(q), "'Itemz/sec'"));
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
        char path[4200];
        pcq_conn *c = (pcq_conn *) 1;

        (void) state;
        snprintf(path, sizeof(path), "unix:%s.nobody", sock);
        assert_int_equal(pcq_connect(path, 1000, &c), PDH_CANNOT_CONNECT_MACHINE);
        assert_true(c == (pcq_conn *) 1);                       /* not written */
        /* TCP on a port nothing listens on (the discard port, on loopback). */
        assert_int_equal(pcq_connect("\\\\127.0.0.1:9", 1000, &c), PDH_CANNOT_CONNECT_MACHINE);
        assert_int_equal(pcq_connect(NULL, -1, &c), PDH_INVALID_ARGUMENT);
        pcq_conn_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_enumerate_and_names),
                cmocka_unit_test(test_list_and_expand),
                cmocka_unit_test(test_errors_name_the_part),
                cmocka_unit_test(test_query_values),
                cmocka_unit_test(test_total_and_churn),
                cmocka_unit_test(test_connect_refused),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
