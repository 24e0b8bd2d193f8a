/* SPDX-License-Identifier: MIT */
/*
 * perflibd's namespace (server-glue/namespace/) over real segments: countersets
 * named from a provider's self-description, from the installed registry, or
 * by GUID and id when nothing names them; instances merged across two
 * providers of one counterset whose counters are laid out differently; a
 * provider that stops or is killed leaves at the next refresh; a custom
 * callback is told.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ns-live.h"
#include "testutil.h"

static GUID prov1 = { 0x5e550001, 0x1, 0x2, { 1, 1, 1, 1, 1, 1, 1, 1 } };
static GUID prov2 = { 0x5e550002, 0x1, 0x2, { 2, 2, 2, 2, 2, 2, 2, 2 } };
static GUID cset = { 0x5e55c001, 0x1, 0x2, { 3, 3, 3, 3, 3, 3, 3, 3 } };
static GUID cset_installed = { 0x5e55c002, 0x1, 0x2, { 4, 4, 4, 4, 4, 4, 4, 4 } };

static const struct ctrpp_counter_desc counters[] = {
        { 1, PERF_COUNTER_COUNTER, 0, 4, PERF_DETAIL_ADVANCED, -1, PERF_AGGREGATE_TOTAL,
          CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
          "Requests/sec", "Requests served per second" },
        { 2, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 2, CTRPP_NO_AGGREGATE,
          1, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL, "Bytes/sec", NULL },
};
static const struct ctrpp_counterset_desc csets[] = {
        { { 0x5e55c001, 0x1, 0x2, { 3, 3, 3, 3, 3, 3, 3, 3 } },
          PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 2, counters, NULL, NULL,
          "Web Service", "Per site", "multiple" },
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = { 0x5e550001, 0x1, 0x2, { 1, 1, 1, 1, 1, 1, 1, 1 } },
        .n_countersets = 1, .countersets = csets, .name = "Test Provider",
};
static const struct ctrpp_counterset_desc installed_csets[] = {
        { { 0x5e55c002, 0x1, 0x2, { 4, 4, 4, 4, 4, 4, 4, 4 } },
          PERF_COUNTERSET_SINGLE_INSTANCE, 0, 0, 2, counters, NULL, NULL,
          "Installed Only", "Nobody runs it", "single" },
};
static const struct ctrpp_provider_desc installed = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = { 0x5e550003, 0x1, 0x2, { 5, 5, 5, 5, 5, 5, 5, 5 } },
        .n_countersets = 1, .countersets = installed_csets, .name = "Installed Provider",
};

/* Counters 1 (4 bytes) and 2 (8 bytes), or the other way round with swap. */
static HANDLE start_provider(const GUID *pg, bool swap, PERFLIBREQUEST cb)
{
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx), .ControlCallback = cb };
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(pg, &cset, PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                              (const ULONG[]) { 4, 8 }, &size);
        PPERF_COUNTER_INFO c = (PPERF_COUNTER_INFO) (t + 1);
        HANDLE h = NULL;

        if (swap) {
                PERF_COUNTER_INFO x = c[0];

                c[0] = c[1];
                c[1] = x;
        }
        assert_int_equal(PerfStartProviderEx((LPGUID) pg, &ctx, &h), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        free(t);
        return h;
}

static struct ns *refreshed(struct ns *ns)
{
        if (!ns)
                assert_int_equal(ns_new(getenv("PERFLIB_RUNTIME_DIR"), &ns), 0);
        assert_int_equal(ns_refresh(ns), 0);
        return ns;
}

static void test_empty(void **state)
{
        struct ns *ns = refreshed(NULL);

        assert_int_equal(ns_count(ns), 0);
        assert_null(ns_find(ns, &cset));
        assert_null(ns_at(ns, 0));
        ns_free(ns);
}

static void test_described(void **state)
{
        HANDLE h = start_provider(&prov1, false, NULL);
        const struct ns_counterset *cs;
        struct ns *ns;

        assert_int_equal(pl_set_provider_description(h, &desc), 0);
        ns = refreshed(NULL);
        assert_int_equal(ns_count(ns), 1);
        cs = ns_find(ns, &cset);
        assert_non_null(cs);
        assert_ptr_equal(cs, ns_at(ns, 0));
        assert_true(cs->live);
        assert_false(cs->installed);
        assert_string_equal(cs->name, "Web Service");
        assert_string_equal(cs->description, "Per site");
        assert_string_equal(cs->provider_name, "Test Provider");
        assert_memory_equal(&cs->provider_guid, &prov1, sizeof(GUID));
        assert_int_equal(cs->instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
        assert_int_equal(cs->n_counters, 2);
        /* Types and sizes from the segment, the rest from the description. */
        assert_int_equal(cs->counters[0].id, 1);
        assert_int_equal(cs->counters[0].type, PERF_COUNTER_COUNTER);
        assert_string_equal(cs->counters[0].name, "Requests/sec");
        assert_int_equal(cs->counters[0].aggregate, PERF_AGGREGATE_TOTAL);
        assert_int_equal(cs->counters[1].base_id, 1);
        assert_int_equal(cs->counters[1].perf_time_id, NS_NO_ID);
        assert_int_equal(cs->counters[1].aggregate, PERF_AGGREGATE_UNDEFINED);
        assert_string_equal(cs->counters[1].description, "");
        assert_int_equal(cs->detail_level, PERF_DETAIL_NOVICE);
        ns_free(ns);
        PerfStopProvider(h);
}

static void test_undescribed(void **state)
{
        HANDLE h = start_provider(&prov1, false, NULL);
        struct ns *ns = refreshed(NULL);
        const struct ns_counterset *cs = ns_find(ns, &cset);

        assert_non_null(cs);
        assert_string_equal(cs->name, "{5e55c001-0001-0002-0303-030303030303}");
        assert_string_equal(cs->counters[0].name, "1");
        assert_string_equal(cs->counters[1].name, "2");
        assert_string_equal(cs->provider_name, "");
        assert_memory_equal(&cs->provider_guid, &prov1, sizeof(GUID));
        ns_free(ns);
        PerfStopProvider(h);
}

static void test_installed(void **state)
{
        const struct ctrpp_provider_desc *list[] = { &installed, &desc };
        struct ns_snapshot *s = NULL;
        const struct ns_counterset *cs;
        struct ns *ns = refreshed(NULL);
        HANDLE h;

        ns_set_installed(ns, list, NULL, 2);
        refreshed(ns);
        assert_int_equal(ns_count(ns), 2);
        cs = ns_find(ns, &cset_installed);
        assert_non_null(cs);
        assert_true(cs->installed);
        assert_false(cs->live);
        assert_string_equal(cs->name, "Installed Only");
        assert_string_equal(cs->provider_name, "Installed Provider");
        assert_int_equal(cs->counters[1].size, 8);
        assert_int_equal(cs->counters[1].default_scale, 2);
        assert_int_equal(ns_snapshot(ns, cs, 0, &s), 0);
        assert_int_equal(s->n_instances, 0);
        ns_snapshot_free(s);

        /* Installed and then started: one counterset, both flags. */
        h = start_provider(&prov1, false, NULL);
        ns_runtime_changed(ns);
        refreshed(ns);
        assert_int_equal(ns_count(ns), 2);
        cs = ns_find(ns, &cset);
        assert_true(cs->installed);
        assert_true(cs->live);
        assert_string_equal(cs->name, "Web Service");
        ns_free(ns);
        PerfStopProvider(h);
}

/* Counter order follows the first live provider's layout: look values up by id. */
static uint64_t value_of(const struct ns_counterset *cs, const struct ns_instance *in, uint32_t id)
{
        for (uint32_t c = 0; c < cs->n_counters; c++)
                if (cs->counters[c].id == id)
                        return in->values[c];
        fail_msg("counter %u missing", id);
        return 0;
}

static void expect_instance(const struct ns_counterset *cs, const struct ns_snapshot *s,
                            const wchar_t *name, uint64_t v1, uint64_t v2)
{
        for (uint32_t i = 0; i < s->n_instances; i++) {
                if (wcscmp(s->instances[i].name, name) != 0)
                        continue;
                assert_int_equal(s->instances[i].name_len, wcslen(name));
                assert_int_equal(value_of(cs, &s->instances[i], 1), v1);
                assert_true(value_of(cs, &s->instances[i], 2) == v2);
                return;
        }
        fail_msg("instance %ls missing", name);
}

/* Two providers of one counterset, the second with its counters swapped. */
static void test_merged(void **state)
{
        HANDLE h1 = start_provider(&prov1, false, NULL);
        HANDLE h2 = start_provider(&prov2, true, NULL);
        PPERF_COUNTERSET_INSTANCE a = PerfCreateInstance(h1, &cset, L"a", 1);
        PPERF_COUNTERSET_INSTANCE b = PerfCreateInstance(h2, &cset, L"b", 2);
        struct ns_snapshot *s = NULL;
        struct ns *ns;

        assert_non_null(a);
        assert_non_null(b);
        PerfSetULongCounterValue(h1, a, 1, 10);
        PerfSetULongLongCounterValue(h1, a, 2, UINT64_C(1) << 40);
        PerfSetULongCounterValue(h2, b, 1, 20);
        PerfSetULongLongCounterValue(h2, b, 2, 7);
        ns = refreshed(NULL);
        assert_int_equal(ns_count(ns), 1);
        assert_int_equal(ns_snapshot(ns, ns_at(ns, 0), NS_SNAPSHOT_COLLECT, &s), 0);
        assert_int_equal(s->n_instances, 2);
        assert_int_equal(s->n_counters, 2);
        expect_instance(ns_at(ns, 0), s, L"a", 10, UINT64_C(1) << 40);
        expect_instance(ns_at(ns, 0), s, L"b", 20, 7);
        ns_snapshot_free(s);

        /* The first provider stops: its instance leaves, the counterset stays. */
        PerfStopProvider(h1);
        refreshed(ns);
        assert_int_equal(ns_count(ns), 1);
        assert_int_equal(ns_providers(ns), 1);
        assert_int_equal(ns_snapshot(ns, ns_at(ns, 0), 0, &s), 0);
        assert_int_equal(s->n_instances, 1);
        expect_instance(ns_at(ns, 0), s, L"b", 20, 7);
        ns_snapshot_free(s);
        PerfStopProvider(h2);
        refreshed(ns);
        assert_int_equal(ns_count(ns), 0);
        ns_free(ns);
}

static void killed_child(int cmd_fd, int ack_fd)
{
        HANDLE h = start_provider(&prov2, false, NULL);

        assert_non_null(PerfCreateInstance(h, &cset, L"child", 0));
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                ;
}

static void test_killed(void **state)
{
        struct tu_child c;
        struct ns *ns;

        assert_int_equal(tu_child_start(&c, killed_child), 0);
        ns = refreshed(NULL);
        assert_int_equal(ns_count(ns), 1);
        kill(c.pid, SIGKILL);
        tu_child_stop(&c);
        refreshed(ns);
        assert_int_equal(ns_count(ns), 0);
        assert_int_equal(ns_providers(ns), 0);
        ns_free(ns);
}

static ULONG last_code, calls;
static ULONG WINAPI callback(ULONG code, PVOID buffer, ULONG size)
{
        last_code = code;
        calls++;
        return ERROR_SUCCESS;
}

static void test_notify(void **state)
{
        HANDLE h1 = start_provider(&prov1, false, callback);
        HANDLE h2 = start_provider(&prov2, false, NULL);
        struct ns *ns = refreshed(NULL);

        calls = 0;
        assert_int_equal(ns_notify(ns, ns_find(ns, &cset), PERF_COLLECT_START, NULL, 0), 0);
        /* Only the provider with a callback is asked. */
        assert_int_equal(calls, 1);
        assert_int_equal(last_code, PERF_COLLECT_START);
        ns_free(ns);
        PerfStopProvider(h1);
        PerfStopProvider(h2);
}

/* The name as a client receives it: UTF-16LE, NUL, zeros up to 8. */
static void expect_name16(const struct ns_instance *in, const uint16_t *u, size_t n)
{
        size_t size = (2 * (n + 1) + 7) & ~(size_t) 7;

        assert_non_null(in->name16);
        assert_int_equal(in->name16_size, size);
        for (size_t i = 0; i < size / 2; i++) {
                uint16_t want = i < n ? u[i] : 0;

                assert_int_equal(in->name16[2 * i], want & 0xFF);
                assert_int_equal(in->name16[2 * i + 1], want >> 8);
        }
}

/*
 * Names are kept per directory slot: an instance deleted and another made
 * in its place (same slot, same block: names of one length) under another
 * name is served its own name, while a snapshot taken before still holds
 * the old one.
 */
static void test_slot_reused(void **state)
{
        HANDLE h = start_provider(&prov1, false, NULL);
        PPERF_COUNTERSET_INSTANCE a = PerfCreateInstance(h, &cset, L"first", 1);
        struct ns_snapshot *s1 = NULL, *s2 = NULL, *s3 = NULL;
        const struct ns_counterset *cs;
        struct ns *ns = refreshed(NULL);

        assert_non_null(a);
        cs = ns_at(ns, 0);
        assert_int_equal(ns_snapshot(ns, cs, 0, &s1), 0);
        assert_int_equal(s1->n_instances, 1);
        expect_name16(&s1->instances[0], (const uint16_t[]) { 'f', 'i', 'r', 's', 't' }, 5);

        PerfDeleteInstance(h, a);
        a = PerfCreateInstance(h, &cset, L"other", 1);
        assert_non_null(a);
        assert_int_equal(ns_snapshot(ns, cs, 0, &s2), 0);
        assert_int_equal(s2->n_instances, 1);
        assert_int_equal(wcscmp(s2->instances[0].name, L"other"), 0);
        expect_name16(&s2->instances[0], (const uint16_t[]) { 'o', 't', 'h', 'e', 'r' }, 5);
        /* The first snapshot's name was retired, not freed. */
        assert_int_equal(wcscmp(s1->instances[0].name, L"first"), 0);
        expect_name16(&s1->instances[0], (const uint16_t[]) { 'f', 'i', 'r', 's', 't' }, 5);
        ns_snapshot_free(s1);
        ns_snapshot_free(s2);

        /* Beyond the BMP: a surrogate pair. */
        PerfDeleteInstance(h, a);
        a = PerfCreateInstance(h, &cset, L"x\U0001F600", 2);
        assert_non_null(a);
        assert_int_equal(ns_snapshot(ns, cs, 0, &s3), 0);
        assert_int_equal(s3->n_instances, 1);
        assert_int_equal(s3->instances[0].id, 2);
        expect_name16(&s3->instances[0], (const uint16_t[]) { 'x', 0xD83D, 0xDE00 }, 3);
        ns_snapshot_free(s3);
        PerfStopProvider(h);
        ns_free(ns);
}

/* Every instance of s named "<c><digit>" with that digit as its id. */
static void expect_churned(const struct ns_snapshot *s, wchar_t c)
{
        assert_int_equal(s->n_instances, 4);
        for (uint32_t i = 0; i < s->n_instances; i++) {
                const struct ns_instance *in = &s->instances[i];

                assert_int_equal(in->name_len, 2);
                assert_true(in->name[0] == L'a' || in->name[0] == L'b');
                assert_int_equal(in->name[1], L'0' + in->id);
                if (in->id < 2)
                        assert_int_equal(in->name[0], c);
                assert_int_equal(in->name16[0], (uint8_t) in->name[0]);
        }
}

/*
 * Two snapshots always overlapping, as two clients polling in turn, while
 * two of four instances are replaced (same slots, new names) every round:
 * the replaced names each snapshot may point at are kept while it lives,
 * and no longer, so what is parked stays within the churn of two rounds
 * instead of growing with every round.
 */
static void test_parked_bounded(void **state)
{
        HANDLE h = start_provider(&prov1, false, NULL);
        PPERF_COUNTERSET_INSTANCE in[4];
        struct ns_snapshot *old = NULL, *cur = NULL;
        const struct ns_counterset *cs;
        struct ns *ns;
        size_t most = 0;

        for (ULONG i = 0; i < 4; i++) {
                wchar_t name[3] = { i < 2 ? L'a' : L'b', (wchar_t) (L'0' + i), 0 };

                assert_non_null(in[i] = PerfCreateInstance(h, &cset, name, i));
        }
        ns = refreshed(NULL);
        cs = ns_at(ns, 0);
        assert_int_equal(ns_snapshot(ns, cs, 0, &old), 0);
        for (int round = 1; round <= 300; round++) {
                wchar_t c = round % 2 ? L'b' : L'a';
                wchar_t name[3] = { c, L'0', 0 };
                size_t parked;

                for (ULONG i = 0; i < 2; i++) {
                        PerfDeleteInstance(h, in[i]);
                        name[1] = (wchar_t) (L'0' + i);
                        assert_non_null(in[i] = PerfCreateInstance(h, &cset, name, i));
                }
                assert_int_equal(ns_snapshot(ns, cs, 0, &cur), 0);
                expect_churned(cur, c);
                /* The old snapshot's names were parked, not freed. */
                expect_churned(old, c == L'a' ? L'b' : L'a');
                ns_snapshot_free(old);
                old = cur;
                parked = ns_parked_names(ns);
                assert_true(parked <= 4);
                if (parked > most)
                        most = parked;
        }
        /* Names were parked at all: the test exercised the reclamation. */
        assert_true(most > 0);
        ns_snapshot_free(old);
        assert_int_equal(ns_parked_names(ns), 0);
        for (ULONG i = 0; i < 4; i++)
                PerfDeleteInstance(h, in[i]);
        PerfStopProvider(h);
        ns_free(ns);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(test_empty),
                TU_TEST(test_described),
                TU_TEST(test_undescribed),
                TU_TEST(test_installed),
                TU_TEST(test_merged),
                TU_TEST(test_slot_reused),
                TU_TEST(test_parked_bounded),
                TU_TEST(test_killed),
                TU_TEST(test_notify),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
