/* SPDX-License-Identifier: MIT */
/*
 * pl_set_provider_description and pl_reader_description: a description
 * published by a provider reads back field for field, every error of the
 * call, and a hand-built blob (fuzz-segment.h) read exactly and, corrupted
 * one field at a time, rejected with -EBADMSG.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fuzz-segment.h"
#include "testutil.h"

static GUID prov = { 0xde5c0001, 0x1111, 0x2222, { 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa } };
static GUID cset_a = { 0xde5c0002, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };

/* Every field distinct; NULL and non-ASCII strings among them. */
static const struct ctrpp_counter_desc counters_a[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0x2, 4, PERF_DETAIL_NOVICE, -1, CTRPP_NO_AGGREGATE,
          CTRPP_NO_ID, 11, 12, 13, 14, 15, "ctrA1", "urn:a1", "Requests", "Requests served" },
        { 2, PERF_COUNTER_LARGE_RAWCOUNT, 0x4, 8, PERF_DETAIL_ADVANCED, 3, PERF_AGGREGATE_TOTAL,
          21, 22, 23, 24, 25, 26, "ctrA2", NULL, "Gr\xc3\xb6\xc3\x9f" "e", NULL },
        { 3, PERF_COUNTER_BULK_COUNT, 0x8, 8, PERF_DETAIL_EXPERT, 0, PERF_AGGREGATE_MAX,
          31, 32, 33, 34, 35, 36, NULL, "urn:a3", "\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x93\x88",
          "" },
};
static const struct ctrpp_counter_desc counters_b[] = {
        { 7, PERF_COUNTER_COUNTER, 0x10, 4, PERF_DETAIL_WIZARD, -5, PERF_AGGREGATE_MIN,
          41, 42, 43, 44, 45, 46, "ctrB1", "urn:b1", "Bytes/sec", "Bytes per second" },
        { 9, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 10, PERF_AGGREGATE_AVG,
          51, 52, 53, 54, 55, 56, NULL, NULL, NULL, NULL },
};
static const struct ctrpp_counterset_desc csets[] = {
        { { 0xde5c0002, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } },
          PERF_COUNTERSET_MULTI_INSTANCES, 1002, 1003, 3, counters_a,
          "CsetA", "urn:cset-a", "Web S\xc3\xa9rvice", "Per site", "multiple" },
        { { 0xde5c0003, 0x1111, 0x2222, { 8, 7, 6, 5, 4, 3, 2, 1 } },
          PERF_COUNTERSET_SINGLE_INSTANCE, 2002, 2003, 2, counters_b,
          NULL, NULL, "Global", NULL, NULL },
};

static struct ctrpp_provider_desc make_desc(void)
{
        return (struct ctrpp_provider_desc) {
                .version = CTRPP_DESCRIPTION_VERSION,
                .size = sizeof(struct ctrpp_provider_desc),
                .guid = { 0xde5c0001, 0x1111, 0x2222,
                          { 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa } },
                .callback_custom = 1,
                .kernel_mode = 0,
                .resource_base = 1000,
                .n_countersets = 2,
                .countersets = csets,
                .name = "Test Provider \xe2\x84\xa2",
                .symbol = "TestProvider",
                .application_identity = NULL,
                .schema_version = "2.0",
                .manifest = "test.man",
        };
}

static HANDLE start(void)
{
        HANDLE h = NULL;

        assert_int_equal(PerfStartProvider(&prov, NULL, &h), ERROR_SUCCESS);
        return h;
}

static void expect_str(const char *want, const char *got)
{
        if (!want)
                assert_null(got);
        else
                assert_string_equal(got, want);
}

static void expect_counter(const struct ctrpp_counter_desc *w, const struct ctrpp_counter_desc *g)
{
        assert_int_equal(g->id, w->id);
        assert_int_equal(g->type, w->type);
        assert_int_equal(g->attrib, w->attrib);
        assert_int_equal(g->size, w->size);
        assert_int_equal(g->detail_level, w->detail_level);
        assert_int_equal(g->default_scale, w->default_scale);
        assert_int_equal(g->aggregate, w->aggregate);
        assert_int_equal(g->base_id, w->base_id);
        assert_int_equal(g->perf_time_id, w->perf_time_id);
        assert_int_equal(g->perf_freq_id, w->perf_freq_id);
        assert_int_equal(g->multi_counter_id, w->multi_counter_id);
        assert_int_equal(g->name_id, w->name_id);
        assert_int_equal(g->description_id, w->description_id);
        expect_str(w->symbol, g->symbol);
        expect_str(w->uri, g->uri);
        expect_str(w->name, g->name);
        expect_str(w->description, g->description);
}

static void expect_cset(const struct ctrpp_counterset_desc *w, const struct ctrpp_counterset_desc *g)
{
        assert_memory_equal(&g->guid, &w->guid, sizeof(g->guid));
        assert_int_equal(g->instance_type, w->instance_type);
        assert_int_equal(g->name_id, w->name_id);
        assert_int_equal(g->description_id, w->description_id);
        assert_int_equal(g->n_counters, w->n_counters);
        expect_str(w->symbol, g->symbol);
        expect_str(w->uri, g->uri);
        expect_str(w->name, g->name);
        expect_str(w->description, g->description);
        expect_str(w->instances, g->instances);
        for (uint32_t i = 0; i < w->n_counters; i++)
                expect_counter(&w->counters[i], &g->counters[i]);
}

static void expect_desc(const struct ctrpp_provider_desc *w, const struct ctrpp_provider_desc *g)
{
        assert_int_equal(g->version, CTRPP_DESCRIPTION_VERSION);
        assert_int_equal(g->size, sizeof(*g));
        assert_memory_equal(&g->guid, &w->guid, sizeof(g->guid));
        assert_int_equal(g->callback_custom, w->callback_custom);
        assert_int_equal(g->kernel_mode, w->kernel_mode);
        assert_int_equal(g->resource_base, w->resource_base);
        assert_int_equal(g->n_countersets, w->n_countersets);
        expect_str(w->name, g->name);
        expect_str(w->symbol, g->symbol);
        expect_str(w->application_identity, g->application_identity);
        expect_str(w->schema_version, g->schema_version);
        expect_str(w->manifest, g->manifest);
        for (uint32_t i = 0; i < w->n_countersets; i++)
                expect_cset(&w->countersets[i], &g->countersets[i]);
}

/* ---- through a provider ---- */

static void round_trip(void **state)
{
        static const ULONG sizes[] = { 4, 8 };
        struct ctrpp_provider_desc d = make_desc();
        const struct ctrpp_provider_desc *got = NULL, *again = NULL;
        struct pl_reader *r = NULL;
        ULONG tsize;
        HANDLE h = start();

        (void) state;
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_description(r, &got), -ENODATA);
        assert_null(got);
        /* Countersets and the description coexist in the heap, in either order. */
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset_a, PERF_COUNTERSET_MULTI_INSTANCES,
                                              2, sizes, &tsize);
        assert_int_equal(PerfSetCounterSetInfo(h, t, tsize), ERROR_SUCCESS);
        free(t);
        assert_int_equal(pl_set_provider_description(h, &d), 0);
        /* A reader that saw none sees it once it is published. */
        assert_int_equal(pl_reader_description(r, &got), 0);
        expect_desc(&d, got);
        assert_ptr_not_equal(got->name, d.name);
        assert_int_equal(pl_reader_description(r, &again), 0);
        assert_ptr_equal(again, got);
        assert_int_equal(pl_reader_counterset_count(r), 1);
        pl_reader_close(r);
        /* A fresh reader parses it anew. */
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_description(r, &got), 0);
        expect_desc(&d, got);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
        /* The copy outlives the provider: it is the reader's. */
        expect_desc(&d, got);
        pl_reader_close(r);
}

static void empty_description(void **state)
{
        struct ctrpp_provider_desc d = make_desc();
        const struct ctrpp_provider_desc *got = NULL;
        struct pl_reader *r = NULL;
        HANDLE h = start();

        (void) state;
        d.n_countersets = 0;
        d.countersets = NULL;
        d.name = d.symbol = d.schema_version = d.manifest = NULL;
        assert_int_equal(pl_set_provider_description(h, &d), 0);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_description(r, &got), 0);
        expect_desc(&d, got);
        assert_null(got->countersets);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void expect_set(HANDLE h, const struct ctrpp_provider_desc *d, int want)
{
        assert_int_equal(pl_set_provider_description(h, d), want);
}

static void invalid_arguments(void **state)
{
        uint64_t not_a_provider[64] = { 0 };
        struct ctrpp_counterset_desc cs[2] = { csets[0], csets[1] };
        struct ctrpp_provider_desc d = make_desc();
        HANDLE h = start();

        (void) state;
        expect_set(NULL, &d, -EINVAL);
        expect_set(not_a_provider, &d, -EINVAL);
        expect_set(h, NULL, -EINVAL);
        d.version = CTRPP_DESCRIPTION_VERSION + 1;
        expect_set(h, &d, -EINVAL);
        d = make_desc();
        d.size = sizeof(d) - 8;
        expect_set(h, &d, -EINVAL);
        d.size = sizeof(d) + 8;
        expect_set(h, &d, -EINVAL);
        d = make_desc();
        d.guid.data1 ^= 1;
        expect_set(h, &d, -EINVAL);
        d = make_desc();
        d.countersets = NULL;
        expect_set(h, &d, -EINVAL);
        d = make_desc();
        d.countersets = cs;
        cs[1].counters = NULL;
        expect_set(h, &d, -EINVAL);
        cs[1] = csets[1];
        cs[1].uri = "bad \xc3\x28 utf-8";
        expect_set(h, &d, -EINVAL);
        cs[1] = csets[1];
        d.manifest = "overlong \xc0\xaf";
        expect_set(h, &d, -EINVAL);
        /* None of it was published. */
        d = make_desc();
        expect_set(h, &d, 0);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void too_big(void **state)
{
        struct ctrpp_counterset_desc cs = csets[0];
        struct ctrpp_provider_desc d = make_desc();
        size_t n = PL_SEG_MAX_DESC_SIZE + 1;
        char *huge = malloc(n + 1);
        HANDLE h = start();

        (void) state;
        assert_non_null(huge);
        d.n_countersets = PL_DESC_MAX_COUNTERSETS + 1;
        expect_set(h, &d, -E2BIG);
        d = make_desc();
        d.countersets = &cs;
        d.n_countersets = 1;
        cs.n_counters = PL_DESC_MAX_COUNTERS + 1;
        expect_set(h, &d, -E2BIG);
        cs = csets[0];
        memset(huge, 'x', n);
        huge[n] = '\0';
        d.name = huge;
        expect_set(h, &d, -E2BIG);
        /* Just under the limit as a string, over it with the records. */
        huge[PL_SEG_MAX_DESC_SIZE - 64] = '\0';
        expect_set(h, &d, -E2BIG);
        free(huge);
        d = make_desc();
        expect_set(h, &d, 0);
        expect_set(h, &d, -EEXIST);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void segment_full(void **state)
{
        struct ctrpp_provider_desc d = make_desc();
        const struct ctrpp_provider_desc *got = NULL;
        struct pl_reader *r = NULL;
        size_t n = 4u << 20;
        char *big = malloc(n + 1);
        HANDLE h;

        (void) state;
        assert_non_null(big);
        setenv("PERFLIB_SEGMENT_SIZE", "1M", 1);
        h = start();
        unsetenv("PERFLIB_SEGMENT_SIZE");
        memset(big, 'y', n);
        big[n] = '\0';
        d.application_identity = big;
        expect_set(h, &d, -ENOMEM);
        free(big);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_description(r, &got), -ENODATA);
        d = make_desc();
        expect_set(h, &d, 0);
        assert_int_equal(pl_reader_description(r, &got), 0);
        expect_desc(&d, got);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void no_description(void **state)
{
        const struct ctrpp_provider_desc *got = (const struct ctrpp_provider_desc *) 0x1;
        struct pl_reader *r = NULL;
        HANDLE h = start();

        (void) state;
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_description(r, &got), -ENODATA);
        assert_ptr_equal(got, (const struct ctrpp_provider_desc *) 0x1);
        assert_int_equal(pl_reader_description(NULL, &got), -EINVAL);
        assert_int_equal(pl_reader_description(r, NULL), -EINVAL);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- hand-built blobs ---- */

static struct fz_image img;

static int image_description(const struct ctrpp_provider_desc **ret)
{
        struct pl_reader *r = NULL;
        int k;

        assert_int_equal(pl_reader_open_memory(img.data, img.size, &r), 0);
        k = pl_reader_description(r, ret);
        if (k == 0) {
                /* Checked here: the tree goes with the reader. */
                assert_string_equal((*ret)->name, "provider");
                assert_int_equal((*ret)->countersets[0].n_counters, FZ_DESC_N_COUNTERS);
        }
        pl_reader_close(r);
        return k;
}

static void blob_valid(void **state)
{
        const struct ctrpp_provider_desc *d = NULL;
        struct pl_reader *r = NULL;

        (void) state;
        fz_build_image(&img);
        assert_int_equal(pl_reader_open_memory(img.data, img.size, &r), 0);
        assert_int_equal(pl_reader_description(r, &d), 0);
        assert_memory_equal(&d->guid, &fz_provider_guid, sizeof(GUID));
        assert_int_equal(d->resource_base, 1000);
        assert_string_equal(d->name, "provider");
        assert_null(d->symbol);
        assert_int_equal(d->n_countersets, 1);
        assert_memory_equal(&d->countersets[0].guid, &fz_cset_guid, sizeof(GUID));
        assert_string_equal(d->countersets[0].name, "counterset");
        assert_int_equal(d->countersets[0].name_id, 1002);
        assert_string_equal(d->countersets[0].counters[0].name, "first");
        assert_string_equal(d->countersets[0].counters[1].name, "zweite Z\xc3\xa4hler");
        assert_int_equal(d->countersets[0].counters[1].name_id, 1008);
        assert_int_equal(d->countersets[0].counters[1].aggregate, -1);
        pl_reader_close(r);
}

/* A width-sized field of the image set to v makes the description -EBADMSG. */
static void expect_bad(uint64_t off, unsigned width, uint64_t v)
{
        const struct ctrpp_provider_desc *d = (const struct ctrpp_provider_desc *) 0x1;

        fz_build_image(&img);
        memcpy(img.data + off, &v, width);
        assert_int_equal(image_description(&d), -EBADMSG);
        assert_ptr_equal(d, (const struct ctrpp_provider_desc *) 0x1);
}

static void blob_bad_placement(void **state)
{
        const struct ctrpp_provider_desc *d;

        (void) state;
        fz_build_image(&img);
        expect_bad(FZ_HDR_FIELD(desc_off), 8, FZ_SEG_SIZE);
        expect_bad(FZ_HDR_FIELD(desc_off), 8, img.desc_off + 4);
        expect_bad(FZ_HDR_FIELD(desc_off), 8, FZ_HEAP_OFF - 8);
        expect_bad(FZ_HDR_FIELD(desc_off), 8, FZ_SEG_SIZE - 64);
        expect_bad(FZ_HDR_FIELD(desc_off), 8, UINT64_MAX - 7);
        expect_bad(FZ_HDR_FIELD(desc_size), 8, FZ_SEG_SIZE);
        expect_bad(FZ_HDR_FIELD(desc_size), 8, UINT64_MAX);
        expect_bad(FZ_HDR_FIELD(desc_size), 8, (uint64_t) PL_SEG_MAX_DESC_SIZE + 8);
        expect_bad(FZ_HDR_FIELD(desc_size), 8, 8);
        expect_bad(FZ_HDR_FIELD(desc_size), 8, img.desc_size - 8);
        /* desc_size 0 is no description, whatever desc_off says. */
        fz_build_image(&img);
        fz_put64(&img, FZ_HDR_FIELD(desc_size), 0);
        fz_put64(&img, FZ_HDR_FIELD(desc_off), UINT64_MAX);
        assert_int_equal(image_description(&d), -ENODATA);
}

static void blob_bad_header(void **state)
{
        (void) state;
        fz_build_image(&img);
        expect_bad(FZ_DESC_FIELD(&img, magic), 4, PL_DESC_MAGIC ^ 1);
        expect_bad(FZ_DESC_FIELD(&img, version), 4, PL_DESC_VERSION + 1);
        expect_bad(FZ_DESC_FIELD(&img, header_size), 4, 8);
        expect_bad(FZ_DESC_FIELD(&img, header_size), 4, sizeof(struct pl_desc_header) + 4);
        expect_bad(FZ_DESC_FIELD(&img, header_size), 4, sizeof(struct pl_desc_header) + 8);
        expect_bad(FZ_DESC_FIELD(&img, blob_size), 4, img.desc_size + 8);
        expect_bad(FZ_DESC_FIELD(&img, n_countersets), 4, PL_DESC_MAX_COUNTERSETS + 1);
        expect_bad(FZ_DESC_FIELD(&img, n_countersets), 4, 2);
        expect_bad(FZ_DESC_FIELD(&img, n_countersets), 4, 0);
        expect_bad(FZ_DESC_FIELD(&img, n_counters), 4, UINT32_MAX);
        expect_bad(FZ_DESC_FIELD(&img, n_counters), 4, 3);
        expect_bad(FZ_DESC_FIELD(&img, n_counters), 4, 1);
        expect_bad(FZ_DESC_FIELD(&img, csets_off), 4, 0);
        expect_bad(FZ_DESC_FIELD(&img, csets_off), 4, FZ_DESC_CSETS_OFF + 4);
        expect_bad(FZ_DESC_FIELD(&img, counters_off), 4, FZ_DESC_CSETS_OFF);
        expect_bad(FZ_DESC_FIELD(&img, counters_off), 4, UINT32_MAX - 7);
        expect_bad(FZ_DESC_FIELD(&img, strings_off), 4, FZ_DESC_COUNTERS_OFF + 8);
        expect_bad(FZ_DESC_FIELD(&img, strings_off), 4, img.desc_size);
        expect_bad(FZ_DESC_FIELD(&img, strings_size), 4, FZ_DESC_STRINGS_SIZE + 8);
        expect_bad(FZ_DESC_FIELD(&img, strings_size), 4, UINT32_MAX);
}

static void blob_bad_strings(void **state)
{
        uint64_t table;

        (void) state;
        fz_build_image(&img);
        table = img.desc_off + FZ_DESC_STRINGS_OFF;
        /* Past the table, into the middle of a string, at the header. */
        expect_bad(FZ_DESC_FIELD(&img, name), 4, FZ_DESC_STR(FZ_DESC_STRINGS_SIZE));
        expect_bad(FZ_DESC_FIELD(&img, name), 4, UINT32_MAX);
        expect_bad(FZ_DESC_FIELD(&img, name), 4, FZ_DESC_STR(FZ_DESC_S_PROVIDER + 1));
        expect_bad(FZ_DESC_FIELD(&img, name), 4, 8);
        expect_bad(FZ_DESC_CSET_FIELD(&img, name), 4, FZ_DESC_STR(FZ_DESC_S_SECOND + 9));
        expect_bad(FZ_DESC_COUNTER_FIELD(&img, 1, name), 4, FZ_DESC_CSETS_OFF);
        expect_bad(FZ_DESC_COUNTER_FIELD(&img, 1, description), 4, img.desc_size);
        /* Not terminated: the table's padding (its last bytes) filled. */
        expect_bad(table + FZ_DESC_STRINGS_SIZE - 8, 8, UINT64_C(0x6161616161616161));
        /* Not UTF-8: a lone continuation byte, a truncated sequence, a surrogate. */
        expect_bad(table + FZ_DESC_S_FIRST, 1, 0x80);
        expect_bad(table + FZ_DESC_S_SECOND + 9, 1, 'x');
        expect_bad(table + FZ_DESC_S_SECOND + 8, 4, 0x6880A0ED);
}

static void blob_bad_countersets(void **state)
{
        (void) state;
        fz_build_image(&img);
        expect_bad(FZ_DESC_CSET_FIELD(&img, n_counters), 4, FZ_DESC_N_COUNTERS + 1);
        expect_bad(FZ_DESC_CSET_FIELD(&img, n_counters), 4, 1);
        expect_bad(FZ_DESC_CSET_FIELD(&img, n_counters), 4, UINT32_MAX);
        expect_bad(FZ_DESC_CSET_FIELD(&img, first_counter), 4, 1);
        expect_bad(FZ_DESC_CSET_FIELD(&img, first_counter), 4, UINT32_MAX);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(round_trip),
                TU_TEST(empty_description),
                TU_TEST(invalid_arguments),
                TU_TEST(too_big),
                TU_TEST(segment_full),
                TU_TEST(no_description),
                cmocka_unit_test(blob_valid),
                cmocka_unit_test(blob_bad_placement),
                cmocka_unit_test(blob_bad_header),
                cmocka_unit_test(blob_bad_strings),
                cmocka_unit_test(blob_bad_countersets),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
