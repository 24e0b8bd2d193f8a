/* SPDX-License-Identifier: MIT */
/*
 * A provider in another process, as the server sees it: its countersets,
 * instances and values through the reader; instances created and deleted
 * while the reader is attached; a clean stop and a plain exit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>

#include "testutil.h"

static GUID prov = { 0x9a0c0001, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };
static GUID cset = { 0x9a0c0002, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };

/*
 * Commands: 'c' creates "c" (id 3), 'd' deletes "a", 'i' adds 10 to b's
 * first counter, 's' stops the provider and exits, 'x' exits without
 * stopping (the segment socket stays behind for pl_scan to reclaim).
 */
static void provider_child(int cmd_fd, int ack_fd)
{
        HANDLE h;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES,
                                              2, (const ULONG[]) { 4, 8 }, &size);
        PPERF_COUNTERSET_INSTANCE a, b;

        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        a = PerfCreateInstance(h, &cset, L"a", 1);
        b = PerfCreateInstance(h, &cset, L"b", 2);
        if (!a || !b)
                _exit(3);
        PerfSetULongCounterValue(h, a, 1, 11);
        PerfSetULongLongCounterValue(h, a, 2, 1ULL << 33);
        PerfSetULongCounterValue(h, b, 1, 21);
        PerfSetULongLongCounterValue(h, b, 2, 22);
        tu_ready(ack_fd);
        for (;;) {
                switch (tu_next_command(cmd_fd)) {
                case 'c':
                        if (!PerfCreateInstance(h, &cset, L"c", 3))
                                _exit(4);
                        break;
                case 'd':
                        if (PerfDeleteInstance(h, a) != ERROR_SUCCESS)
                                _exit(5);
                        break;
                case 'i':
                        PerfIncrementULongCounterValue(h, b, 1, 10);
                        break;
                case 's':
                        PerfStopProvider(h);
                        _exit(0);
                case 'x':
                default:
                        _exit(0);
                }
                tu_ready(ack_fd);
        }
}

struct fixture {
        struct tu_child child;
        struct pl_reader *r;
};

static int setup(void **state)
{
        static struct fixture f;

        tu_runtime_setup();
        f = (struct fixture) { .child = { .cmd_fd = -1, .ack_fd = -1 } };
        if (tu_child_start(&f.child, provider_child) < 0 || tu_open_only_provider(2.0, &f.r) < 0)
                return -1;
        *state = &f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        pl_reader_close(f->r);
        tu_child_stop(&f->child);
        tu_runtime_teardown();
        return 0;
}

static const struct pl_instance *find(const struct pl_snapshot *s, const wchar_t *name)
{
        for (uint32_t i = 0; i < s->n_instances; i++)
                if (wcscmp(s->instances[i].name, name) == 0)
                        return &s->instances[i];
        return NULL;
}

static void sees_provider_and_counterset(void **state)
{
        struct fixture *f = *state;
        const struct pl_counterset *c = NULL;
        GUID g;
        uint32_t pid;

        assert_int_equal(pl_reader_provider(f->r, &g, &pid), 0);
        assert_memory_equal(&g, &prov, sizeof(g));
        assert_int_equal(pid, f->child.pid);
        assert_int_equal(pl_reader_alive(f->r), 1);
        assert_int_equal(pl_reader_counterset_count(f->r), 1);
        assert_int_equal(pl_reader_find_counterset(f->r, &cset, &c), 0);
        assert_int_equal(c->num_counters, 2);
        assert_int_equal(c->instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
        assert_int_equal(c->counters[0].size, 4);
        assert_int_equal(c->counters[1].size, 8);
        assert_int_equal(pl_reader_find_counterset(f->r, &prov, &c), -ENOENT);
}

static void sees_instances_and_values(void **state)
{
        struct fixture *f = *state;
        struct pl_snapshot *s = NULL;
        const struct pl_instance *a, *b;

        assert_int_equal(pl_reader_snapshot(f->r, 0, 0, &s), 0);
        assert_int_equal(s->n_instances, 2);
        a = find(s, L"a");
        b = find(s, L"b");
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(a->instance_id, 1);
        assert_int_equal(a->values[0], 11);
        assert_true(a->values[1] == 1ULL << 33);
        assert_int_equal(b->instance_id, 2);
        assert_int_equal(b->values[0], 21);
        assert_int_equal(b->values[1], 22);
        pl_snapshot_free(s);

        assert_int_equal(tu_command(&f->child, 'i'), 0);
        assert_int_equal(pl_reader_snapshot(f->r, PL_ALL_COUNTERSETS, 0, &s), 0);
        assert_int_equal(find(s, L"b")->values[0], 31);
        pl_snapshot_free(s);
}

static void instances_come_and_go(void **state)
{
        struct fixture *f = *state;
        struct pl_snapshot *s = NULL;
        uint64_t gen;

        assert_int_equal(pl_reader_snapshot(f->r, 0, 0, &s), 0);
        gen = s->generation;
        pl_snapshot_free(s);

        assert_int_equal(tu_command(&f->child, 'c'), 0);
        assert_int_equal(pl_reader_snapshot(f->r, 0, 0, &s), 0);
        assert_int_equal(s->n_instances, 3);
        assert_non_null(find(s, L"c"));
        assert_true(s->generation > gen);
        gen = s->generation;
        pl_snapshot_free(s);

        assert_int_equal(tu_command(&f->child, 'd'), 0);
        assert_int_equal(pl_reader_snapshot(f->r, 0, 0, &s), 0);
        assert_int_equal(s->n_instances, 2);
        assert_null(find(s, L"a"));
        assert_non_null(find(s, L"b"));
        assert_non_null(find(s, L"c"));
        assert_true(s->generation > gen);
        pl_snapshot_free(s);
}

static void wait_gone(struct fixture *f)
{
        double end = tu_now() + 1.0;

        while (pl_reader_alive(f->r) == 1 && tu_now() < end)
                usleep(5000);
        assert_int_equal(pl_reader_alive(f->r), 0);
        assert_int_equal(waitpid(f->child.pid, NULL, 0), f->child.pid);
        f->child.pid = 0;
}

static void clean_stop_withdraws(void **state)
{
        struct fixture *f = *state;
        unsigned reclaimed = 99;

        assert_int_equal(write(f->child.cmd_fd, "s", 1), 1);
        wait_gone(f);
        assert_int_equal(tu_count_providers(&reclaimed), 0);
        assert_int_equal(reclaimed, 0);         /* the provider removed its own socket */
}

static void exit_without_stop_is_reclaimed(void **state)
{
        struct fixture *f = *state;
        unsigned reclaimed = 0;

        assert_int_equal(write(f->child.cmd_fd, "x", 1), 1);
        wait_gone(f);
        assert_int_equal(tu_count_providers(&reclaimed), 0);
        assert_int_equal(reclaimed, 1);
        assert_int_equal(tu_count_providers(&reclaimed), 0);
        assert_int_equal(reclaimed, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(sees_provider_and_counterset, setup, teardown),
                cmocka_unit_test_setup_teardown(sees_instances_and_values, setup, teardown),
                cmocka_unit_test_setup_teardown(instances_come_and_go, setup, teardown),
                cmocka_unit_test_setup_teardown(clean_stop_withdraws, setup, teardown),
                cmocka_unit_test_setup_teardown(exit_without_stop_is_reclaimed, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
