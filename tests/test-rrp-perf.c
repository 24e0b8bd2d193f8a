/* SPDX-License-Identifier: MIT */
/*
 * The Perflib V1 view MS-RRP clients read (server-glue/operations/rrp-perf.c)
 * over a scripted namespace: the Counter and Help texts and their title
 * indexes, the PERF_DATA_BLOCK of "Global" read back field by field as
 * winperf.h lays it out, the selections ("Costly", a list of indexes), the
 * refusals, and indexes that hold while countersets come and go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake-ns.h"
#include "ndr.h"
#include "rrp-perf.h"

#define NO NS_NO_ID

static const GUID g_a = { 0xa0, 0, 0, { 1 } }, g_b = { 0xb0, 0, 0, { 2 } },
                  g_c = { 0xc0, 0, 0, { 3 } }, g_prov = { 0x99, 0, 0, { 9 } };

/* A multi-instance set: a count, an average timer and its (nameless) base. */
static const struct ns_counter a_counters[] = {
        { .id = 1, .type = 0x00010000, .size = 4, .detail_level = 100, .default_scale = -1,
          .base_id = NO, .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Requests", .description = "Requests served" },
        { .id = 2, .type = 0x30020400, .size = 8, .detail_level = 200, .base_id = 3,
          .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Latency", .description = "Time a request" },
        { .id = 3, .type = 0x40030402, .size = 4, .detail_level = 200, .base_id = NO,
          .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO, .name = "", .description = "" },
};
/* A single-instance set: an elapsed time with its own PerfTime and PerfFreq. */
static const struct ns_counter b_counters[] = {
        { .id = 1, .type = 0x30240500, .size = 8, .detail_level = 100, .base_id = NO,
          .perf_time_id = 2, .perf_freq_id = 3, .multi_id = NO,
          .name = "Up", .description = "Time since start" },
        { .id = 2, .type = 0x00010100, .size = 8, .base_id = NO, .perf_time_id = NO,
          .perf_freq_id = NO, .multi_id = NO, .name = "", .description = "" },
        { .id = 3, .type = 0x00010100, .size = 8, .base_id = NO, .perf_time_id = NO,
          .perf_freq_id = NO, .multi_id = NO, .name = "", .description = "" },
};
static const struct ns_counterset cs_a = {
        .guid = g_a, .instance_type = 2, .detail_level = 100, .name = "Alpha",
        .description = "Alpha help", .provider_guid = g_prov, .provider_name = "P",
        .n_counters = 3, .counters = a_counters, .installed = true, .live = true,
};
static const struct ns_counterset cs_b = {
        .guid = g_b, .instance_type = 0, .detail_level = 100, .name = "Beta",
        .description = "Beta help", .provider_guid = g_prov, .provider_name = "P",
        .n_counters = 3, .counters = b_counters, .installed = true, .live = true,
};
static const struct ns_counterset cs_c = {
        .guid = g_c, .instance_type = 0, .detail_level = 100, .name = "Gamma",
        .description = "", .provider_guid = g_prov, .provider_name = "P",
        .n_counters = 1, .counters = a_counters, .installed = true, .live = true,
};

struct fx {
        struct ns *ns;
        struct rrp_titles *titles;
        struct rrp_perf_session s;
        struct rrp_value v;
};

static int setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));

        assert_non_null(fx);
        fx->ns = fake_ns_new();
        fake_ns_add(fx->ns, &cs_a);
        fake_ns_add(fx->ns, &cs_b);
        fake_ns_add_instance(fx->ns, &g_a, 0, L"a", (const uint64_t[]) { 5, 100, 4 });
        fake_ns_add_instance(fx->ns, &g_a, 1, L"bb", (const uint64_t[]) { 6, 200, 8 });
        fake_ns_add_instance(fx->ns, &g_b, 0, L"", (const uint64_t[]) { 1000, 5000, 10 });
        assert_int_equal(rrp_titles_new(&fx->titles), 0);
        fx->s = (struct rrp_perf_session) { fx->ns, fx->titles, true, "testhost" };
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        struct fx *fx = *state;

        rrp_perf_release(&fx->s, &fx->v);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
        rrp_titles_free(fx->titles);
        fake_ns_free(fx->ns);
        free(fx);
        return 0;
}

/* Queries name (ASCII) under hive into fx->v; the Win32 status. */
static uint32_t q(struct fx *fx, enum rrp_hive hive, const char *name)
{
        uint8_t u[128];
        size_t n = strlen(name);

        assert_true(n * 2 <= sizeof(u));
        for (size_t i = 0; i < n; i++) {
                u[2 * i] = (uint8_t) name[i];
                u[2 * i + 1] = 0;
        }
        rrp_perf_release(&fx->s, &fx->v);
        return rrp_perf_query_value(&fx->s, hive, u, n, &fx->v);
}

/* The MULTI_SZ as one ASCII line, entries joined by '|'. */
static void text_of(const struct rrp_value *v, char *out, size_t size)
{
        size_t o = 0;

        assert_int_equal(v->type, RRP_REG_MULTI_SZ);
        assert_int_equal(v->len % 2, 0);
        assert_true(v->len >= 4);
        assert_int_equal(ndr_le16(v->data + v->len - 2), 0);
        assert_int_equal(ndr_le16(v->data + v->len - 4), 0);
        for (size_t i = 0; i + 2 < v->len; i += 2) {
                uint16_t u = ndr_le16(v->data + i);
                assert_true(o + 1 < size);
                out[o++] = u ? (char) u : '|';
        }
        out[o] = '\0';
}

static void counter_and_help(void **state)
{
        struct fx *fx = *state;
        char t[256];

        assert_int_equal(q(fx, RRP_HKPD, "Counter 009"), 0);
        text_of(&fx->v, t, sizeof(t));
        /* Alpha 2, its counters 4 and 6 (8, the base, has no name); Beta 10, Up 12; last 17. */
        assert_string_equal(t, "1|17|2|Alpha|4|Requests|6|Latency|10|Beta|12|Up|");
        assert_int_equal(q(fx, RRP_HKPD, "HELP 009"), 0);
        text_of(&fx->v, t, sizeof(t));
        assert_string_equal(t, "3|Alpha help|5|Requests served|7|Time a request|11|Beta help|"
                               "13|Time since start|");
        assert_int_equal(q(fx, RRP_HKPT, "Counter"), 0);
        text_of(&fx->v, t, sizeof(t));
        assert_string_equal(t, "1|17|2|Alpha|4|Requests|6|Latency|10|Beta|12|Up|");
        assert_int_equal(q(fx, RRP_HKPN, "help"), 0);
}

static void refusals(void **state)
{
        struct fx *fx = *state;

        assert_int_equal(q(fx, RRP_HKLM, "Counter 009"), 2);
        assert_int_equal(q(fx, RRP_HKPT, "Counter 009"), 2);
        assert_int_equal(q(fx, RRP_HKPD, "Counter 010"), 2);
        assert_int_equal(q(fx, RRP_HKPD, "12x"), 2);
        assert_int_equal(q(fx, RRP_HKPD, "4294967296"), 2);
        assert_null(fx->v.data);
        fx->s.allowed = false;
        assert_int_equal(q(fx, RRP_HKPD, "Global"), 5);
        assert_int_equal(q(fx, RRP_HKPT, "Counter"), 5);
        assert_null(fx->v.data);
}

/* The PERF_DATA_BLOCK's objects, located: their offsets, at most 8. */
static size_t objects(const struct rrp_value *v, size_t at[8])
{
        const uint8_t *d = v->data;

        assert_int_equal(v->type, RRP_REG_BINARY);
        assert_memory_equal(d, "P\0E\0R\0F\0", 8);
        assert_int_equal(ndr_le32(d + 8), 1);           /* LittleEndian */
        assert_int_equal(ndr_le32(d + 12), 1);          /* Version */
        assert_int_equal(ndr_le32(d + 16), 1);          /* Revision */
        assert_int_equal(ndr_le32(d + 20), v->len);     /* TotalByteLength */
        assert_int_equal(ndr_le32(d + 24), 112);        /* HeaderLength: 88 + 18, to 8 */
        assert_int_equal(ndr_le32(d + 80), 18);         /* "testhost" and NUL */
        assert_int_equal(ndr_le32(d + 84), 88);
        assert_memory_equal(d + 88, "t\0e\0s\0t\0h\0o\0s\0t\0\0\0", 18);
        assert_int_equal(ndr_le16(d + 36) >= 2026, 1);  /* SystemTime.wYear */
        size_t n = ndr_le32(d + 28), off = ndr_le32(d + 24);
        assert_true(n <= 8);
        for (size_t i = 0; i < n; i++) {
                at[i] = off;
                assert_int_equal(ndr_le32(d + off) % 8, 0);
                off += ndr_le32(d + off);
                assert_true(off <= v->len);
        }
        assert_int_equal(off, v->len);
        return n;
}

/* Definition k of the object at o: name index, type, size, offset. */
static void expect_def(const uint8_t *o, size_t k, uint32_t index, uint32_t type, uint32_t size,
                       uint32_t offset)
{
        const uint8_t *d = o + 64 + 40 * k;

        assert_int_equal(ndr_le32(d), 40);
        assert_int_equal(ndr_le32(d + 4), index);
        assert_int_equal(ndr_le32(d + 12), index + 1);
        assert_int_equal(ndr_le32(d + 28), type);
        assert_int_equal(ndr_le32(d + 32), size);
        assert_int_equal(ndr_le32(d + 36), offset);
}

static void global_block(void **state)
{
        struct fx *fx = *state;
        size_t at[8];

        assert_int_equal(q(fx, RRP_HKPD, "Global"), 0);
        assert_int_equal(objects(&fx->v, at), 2);
        const uint8_t *a = fx->v.data + at[0], *b = fx->v.data + at[1];

        /* Alpha: three definitions, the base right after the average; two instances. */
        assert_int_equal(ndr_le32(a + 4), 64 + 3 * 40);         /* DefinitionLength */
        assert_int_equal(ndr_le32(a + 8), 64);                  /* HeaderLength */
        assert_int_equal(ndr_le32(a + 12), 2);                  /* ObjectNameTitleIndex */
        assert_int_equal(ndr_le32(a + 20), 3);
        assert_int_equal(ndr_le32(a + 32), 3);                  /* NumCounters */
        assert_int_equal(ndr_le32(a + 40), 2);                  /* NumInstances */
        expect_def(a, 0, 4, 0x00010000, 4, 8);
        expect_def(a, 1, 6, 0x30020400, 8, 16);
        expect_def(a, 2, 8, 0x40030402, 4, 24);
        assert_int_equal((int32_t) ndr_le32(a + 64 + 20), -1);  /* DefaultScale */
        /* Instance "a": its definition, its name, its counter block. */
        const uint8_t *i = a + 64 + 3 * 40;
        assert_int_equal(ndr_le32(i), 24 + 8);
        assert_int_equal(ndr_le32(i + 12), 0xFFFFFFFFu);        /* PERF_NO_UNIQUE_ID */
        assert_int_equal(ndr_le32(i + 16), 24);
        assert_int_equal(ndr_le32(i + 20), 4);
        assert_memory_equal(i + 24, "a\0\0\0", 4);
        const uint8_t *blk = i + 32;
        assert_int_equal(ndr_le32(blk), 8 + 3 * 8);
        assert_int_equal(ndr_le32(blk + 8), 5);
        assert_int_equal(ndr_le32(blk + 16), 100);
        assert_int_equal(ndr_le32(blk + 24), 4);
        /* Instance "bb" follows. */
        i = blk + 32;
        assert_memory_equal(i + 24, "b\0b\0\0\0", 6);
        assert_int_equal(ndr_le32(i + 32 + 16), 200);

        /* Beta: no instances, one counter block; PerfTime and PerfFreq its own. */
        assert_int_equal(ndr_le32(b + 12), 10);
        assert_int_equal(ndr_le32(b + 40), 0xFFFFFFFFu);        /* PERF_NO_INSTANCES */
        assert_int_equal(ndr_le32(b + 48), 5000);
        assert_int_equal(ndr_le32(b + 56), 10);
        assert_int_equal(ndr_le32(b + 32), 3);
        blk = b + 64 + 3 * 40;
        assert_int_equal(ndr_le32(blk), 8 + 3 * 8);
        assert_int_equal(ndr_le32(blk + 8), 1000);
        assert_int_equal(ndr_le32(b), 64 + 3 * 40 + 32);
}

static void selections(void **state)
{
        struct fx *fx = *state;
        size_t at[8];

        assert_int_equal(q(fx, RRP_HKPD, "10"), 0);
        assert_int_equal(objects(&fx->v, at), 1);
        assert_int_equal(ndr_le32(fx->v.data + at[0] + 12), 10);
        assert_int_equal(q(fx, RRP_HKPD, " 2  10 "), 0);
        assert_int_equal(objects(&fx->v, at), 2);
        assert_int_equal(q(fx, RRP_HKPD, "Costly"), 0);
        assert_int_equal(objects(&fx->v, at), 0);
        assert_int_equal(q(fx, RRP_HKPD, ""), 0);
        assert_int_equal(objects(&fx->v, at), 2);
        /* A single-instance set with no live instance shows no object. */
        assert_true(fake_ns_remove_instance(fx->ns, &g_b, 0, L""));
        assert_int_equal(q(fx, RRP_HKPD, "Global"), 0);
        assert_int_equal(objects(&fx->v, at), 1);
}

/* A value is paid from the query memory while held: past the cap, refused and nothing held. */
static void query_memory(void **state)
{
        struct fx *fx = *state;
        size_t len;

        assert_int_equal(q(fx, RRP_HKPD, "Global"), 0);
        len = fx->v.len;
        assert_int_equal(fake_ns_memory_used(fx->ns), len);
        rrp_perf_release(&fx->s, &fx->v);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
        fake_ns_set_memory(fx->ns, len - 1);
        assert_int_equal(q(fx, RRP_HKPD, "Global"), 8);        /* ERROR_NOT_ENOUGH_MEMORY */
        assert_null(fx->v.data);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
        fake_ns_set_memory(fx->ns, len);
        assert_int_equal(q(fx, RRP_HKPD, "Global"), 0);
}

/* Indexes hold while countersets come and go; a newcomer gets the next ones. */
static void stable_indexes(void **state)
{
        struct fx *fx = *state;
        char t[256];

        assert_int_equal(q(fx, RRP_HKPD, "Counter 009"), 0);
        fake_ns_remove(fx->ns, &g_a);
        fake_ns_add(fx->ns, &cs_c);
        assert_int_equal(q(fx, RRP_HKPD, "Counter 009"), 0);
        text_of(&fx->v, t, sizeof(t));
        assert_string_equal(t, "1|21|10|Beta|12|Up|18|Gamma|20|Requests|");
        fake_ns_add(fx->ns, &cs_a);
        assert_int_equal(q(fx, RRP_HKPD, "Counter 009"), 0);
        text_of(&fx->v, t, sizeof(t));
        assert_string_equal(t, "1|21|10|Beta|12|Up|18|Gamma|20|Requests|2|Alpha|4|Requests|"
                               "6|Latency|");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(counter_and_help, setup, teardown),
                cmocka_unit_test_setup_teardown(refusals, setup, teardown),
                cmocka_unit_test_setup_teardown(global_block, setup, teardown),
                cmocka_unit_test_setup_teardown(selections, setup, teardown),
                cmocka_unit_test_setup_teardown(stable_indexes, setup, teardown),
                cmocka_unit_test_setup_teardown(query_memory, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
