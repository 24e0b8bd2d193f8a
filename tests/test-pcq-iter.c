/* SPDX-License-Identifier: MIT */
/*
 * libpcq's iterators over hand-built MS-PCQ buffers (2.2.4): every item of
 * well-formed buffers, and for truncated, overlapping or lying sizes a
 * clean stop with ERROR_INVALID_DATA.  Every buffer handed to an iterator
 * is a heap copy of exactly its size, so that a read past its end is
 * caught by AddressSanitizer in the sanitizer build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pcq.h"
#include "perflib.h"            /* PERF_SINGLE_COUNTER ... block types */

/* ---- a little buffer builder ---- */

struct bb {
        uint8_t d[4096];
        uint32_t n;
};

static void u8(struct bb *b, uint8_t v)
{
        assert_true(b->n < sizeof(b->d));
        b->d[b->n++] = v;
}

static void u16(struct bb *b, uint16_t v)
{
        u8(b, (uint8_t) v);
        u8(b, (uint8_t) (v >> 8));
}

static void u32(struct bb *b, uint32_t v)
{
        u16(b, (uint16_t) v);
        u16(b, (uint16_t) (v >> 16));
}

static void u64(struct bb *b, uint64_t v)
{
        u32(b, (uint32_t) v);
        u32(b, (uint32_t) (v >> 32));
}

static void pad8(struct bb *b)
{
        while (b->n % 8)
                u8(b, 0);
}

/* An ASCII name as UTF-16LE with its NUL. */
static void name(struct bb *b, const char *s)
{
        do
                u16(b, (uint16_t) (unsigned char) *s);
        while (*s++);
}

static void patch32(struct bb *b, uint32_t at, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                b->d[at + i] = (uint8_t) (v >> (8 * i));
}

static const GUID g1 = { 0x11223344, 0x5566, 0x7788, { 1, 2, 3, 4, 5, 6, 7, 8 } };

static void guid(struct bb *b, const GUID *g)
{
        u32(b, g->Data1);
        u16(b, g->Data2);
        u16(b, g->Data3);
        for (int i = 0; i < 8; i++)
                u8(b, g->Data4[i]);
}

/* The first n bytes of b as an exactly sized heap buffer. */
static struct pcq_buf heap(const struct bb *b, uint32_t n)
{
        struct pcq_buf r = { .data = malloc(n ? n : 1), .size = n };

        assert_non_null(r.data);
        memcpy(r.data, b->d, n);
        return r;
}

/* ---- registration info ---- */

static void reg_counter(struct bb *b, uint32_t id, uint32_t type, uint32_t base)
{
        u32(b, id);
        u32(b, type);
        u64(b, 0x8);                    /* display as real */
        u32(b, 100);
        u32(b, (uint32_t) -2);          /* DefaultScale */
        u32(b, base);
        u32(b, 0xFFFFFFFF);
        u32(b, 0xFFFFFFFF);
        u32(b, 0xFFFFFFFF);
        u32(b, 2);                      /* average */
        u32(b, 0);
}

static void build_reg(struct bb *b, uint32_t n_claimed)
{
        guid(b, &g1);
        u32(b, 0);
        u32(b, 200);
        u32(b, n_claimed);
        u32(b, 2);
        reg_counter(b, 1, PERF_SAMPLE_FRACTION, 2);
        reg_counter(b, 2, PERF_SAMPLE_BASE, 0xFFFFFFFF);
}

static void test_reg(void **state)
{
        struct pcq_counterset_reg set;
        struct pcq_counter_reg c;
        struct bb b = { .n = 0 };
        struct pcq_buf buf;
        pcq_iter it;

        (void) state;
        build_reg(&b, 2);
        buf = heap(&b, b.n);
        assert_int_equal(pcq_reg_iter_begin(&it, &buf, &set), ERROR_SUCCESS);
        assert_memory_equal(&set.guid, &g1, sizeof(GUID));
        assert_int_equal(set.detail_level, 200);
        assert_int_equal(set.num_counters, 2);
        assert_int_equal(set.instance_type, 2);
        assert_true(pcq_reg_iter_next(&it, &c));
        assert_int_equal(c.id, 1);
        assert_int_equal(c.type, PERF_SAMPLE_FRACTION);
        assert_int_equal(c.attrib, 0x8);
        assert_int_equal(c.default_scale, -2);
        assert_int_equal(c.base_id, 2);
        assert_int_equal(c.perf_time_id, 0xFFFFFFFF);
        assert_int_equal(c.aggregate_func, 2);
        assert_true(pcq_reg_iter_next(&it, &c));
        assert_int_equal(c.id, 2);
        assert_false(pcq_reg_iter_next(&it, &c));
        assert_int_equal(pcq_iter_error(&it), ERROR_SUCCESS);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
        assert_null(buf.data);
        pcq_buf_done(&buf);                     /* done twice is harmless */
}

static void test_reg_bad(void **state)
{
        struct pcq_counterset_reg set = { .num_counters = 77 };
        struct pcq_counter_reg c;
        struct bb b = { .n = 0 };
        struct pcq_buf buf;
        pcq_iter it;

        (void) state;
        /* NumCounters says 3, two are there. */
        build_reg(&b, 3);
        buf = heap(&b, b.n);
        assert_int_equal(pcq_reg_iter_begin(&it, &buf, &set), ERROR_SUCCESS);
        assert_true(pcq_reg_iter_next(&it, &c));
        assert_true(pcq_reg_iter_next(&it, &c));
        assert_false(pcq_reg_iter_next(&it, &c));
        assert_int_equal(pcq_iter_error(&it), ERROR_INVALID_DATA);
        assert_false(pcq_reg_iter_next(&it, &c));       /* stays stopped */
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
        /* Cut inside the second counter. */
        buf = heap(&b, b.n - 4);
        assert_int_equal(pcq_reg_iter_begin(&it, &buf, &set), ERROR_SUCCESS);
        assert_true(pcq_reg_iter_next(&it, &c));
        assert_false(pcq_reg_iter_next(&it, &c));
        assert_int_equal(pcq_iter_error(&it), ERROR_INVALID_DATA);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
        /* Shorter than the counterset header. */
        set.num_counters = 77;
        buf = heap(&b, 31);
        assert_int_equal(pcq_reg_iter_begin(&it, &buf, &set), ERROR_INVALID_DATA);
        assert_int_equal(set.num_counters, 77);         /* not written */
        assert_false(pcq_reg_iter_next(&it, &c));
        assert_int_equal(pcq_iter_error(&it), ERROR_INVALID_DATA);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
        /* No buffer at all. */
        assert_int_equal(pcq_reg_iter_begin(&it, &(struct pcq_buf){ 0 }, NULL), ERROR_INVALID_DATA);
        pcq_iter_done(&it);
}

/* ---- string blocks ---- */

/* Two counters, "ab" and "xyz", dwOffset from the end of the headers. */
static void build_strings(struct bb *b)
{
        u32(b, 0);                      /* dwSize, patched */
        u32(b, 2);
        u32(b, 10);
        u32(b, 0);
        u32(b, 20);
        u32(b, 6);
        name(b, "ab");
        name(b, "xyz");
        pad8(b);
        patch32(b, 0, b->n);
}

static void test_strings(void **state)
{
        struct pcq_string_item s;
        struct bb b = { .n = 0 };
        struct pcq_buf buf;
        pcq_iter it;

        (void) state;
        build_strings(&b);
        buf = heap(&b, b.n);
        assert_int_equal(pcq_string_iter_begin(&it, &buf), ERROR_SUCCESS);
        assert_true(pcq_string_iter_next(&it, &s));
        assert_int_equal(s.counter_id, 10);
        assert_string_equal(s.text, "ab");
        assert_true(pcq_string_iter_next(&it, &s));
        assert_int_equal(s.counter_id, 20);
        assert_string_equal(s.text, "xyz");
        assert_false(pcq_string_iter_next(&it, &s));
        assert_int_equal(pcq_iter_error(&it), ERROR_SUCCESS);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
}

static void check_strings_bad(struct bb *b, uint32_t size, bool begin_fails, int good_items)
{
        struct pcq_string_item s;
        struct pcq_buf buf = heap(b, size);
        pcq_iter it;

        assert_int_equal(pcq_string_iter_begin(&it, &buf),
                         begin_fails ? ERROR_INVALID_DATA : ERROR_SUCCESS);
        for (int i = 0; i < good_items; i++)
                assert_true(pcq_string_iter_next(&it, &s));
        assert_false(pcq_string_iter_next(&it, &s));
        assert_int_equal(pcq_iter_error(&it), ERROR_INVALID_DATA);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
}

static void test_strings_bad(void **state)
{
        struct bb b = { .n = 0 };

        (void) state;
        build_strings(&b);
        /* dwSize larger than the buffer. */
        check_strings_bad(&b, b.n - 8, true, 0);
        /* dwCounters more than dwSize can hold. */
        patch32(&b, 4, 1000);
        check_strings_bad(&b, b.n, true, 0);
        patch32(&b, 4, 2);
        /* The second offset points past the end. */
        patch32(&b, 20, 1000);
        check_strings_bad(&b, b.n, false, 1);
        /* The second string has no NUL before the end. */
        patch32(&b, 20, 6);
        b.d[24 + 6 + 6] = 'z';
        b.d[24 + 6 + 7] = 0;
        for (uint32_t i = 24 + 6 + 6; i < b.n; i += 2)
                b.d[i] = 'q';
        check_strings_bad(&b, b.n, false, 1);
        /* Shorter than the header. */
        check_strings_bad(&b, 7, true, 0);
}

/* ---- instance lists ---- */

static void instance(struct bb *b, uint32_t id, const char *s)
{
        uint32_t at = b->n;

        u32(b, 0);
        u32(b, id);
        name(b, s);
        pad8(b);
        patch32(b, at, b->n - at);
}

static void test_instances(void **state)
{
        struct pcq_instance_item in;
        struct bb b = { .n = 0 };
        struct pcq_buf buf;
        pcq_iter it;

        (void) state;
        instance(&b, 7, "w1");
        instance(&b, 9, "worker two");
        buf = heap(&b, b.n);
        pcq_instance_iter_begin(&it, &buf);
        assert_true(pcq_instance_iter_next(&it, &in));
        assert_int_equal(in.id, 7);
        assert_string_equal(in.name, "w1");
        assert_true(pcq_instance_iter_next(&it, &in));
        assert_int_equal(in.id, 9);
        assert_string_equal(in.name, "worker two");
        assert_false(pcq_instance_iter_next(&it, &in));
        assert_int_equal(pcq_iter_error(&it), ERROR_SUCCESS);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
        /* An empty buffer is an empty list. */
        buf = heap(&b, 0);
        pcq_instance_iter_begin(&it, &buf);
        assert_false(pcq_instance_iter_next(&it, &in));
        assert_int_equal(pcq_iter_error(&it), ERROR_SUCCESS);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
}

static void check_instances_bad(struct bb *b, uint32_t size, int good_items)
{
        struct pcq_instance_item in;
        struct pcq_buf buf = heap(b, size);
        pcq_iter it;

        pcq_instance_iter_begin(&it, &buf);
        for (int i = 0; i < good_items; i++)
                assert_true(pcq_instance_iter_next(&it, &in));
        assert_false(pcq_instance_iter_next(&it, &in));
        assert_int_equal(pcq_iter_error(&it), ERROR_INVALID_DATA);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
}

static void test_instances_bad(void **state)
{
        struct bb b = { .n = 0 };

        (void) state;
        instance(&b, 7, "w1");
        instance(&b, 9, "worker two");
        check_instances_bad(&b, b.n - 8, 1);            /* the second runs past the end */
        check_instances_bad(&b, 16 + 4, 1);             /* 4 stray bytes: no header fits */
        patch32(&b, 16, 0);                             /* Size 0: would stand still */
        check_instances_bad(&b, b.n, 1);
        patch32(&b, 16, 4);                             /* smaller than its header */
        check_instances_bad(&b, b.n, 1);
        patch32(&b, 0, 10);                             /* Size cuts the name before its NUL */
        check_instances_bad(&b, b.n, 0);
}

/* ---- counter identifiers ---- */

static void ident(struct bb *b, uint32_t status, uint32_t counter, uint32_t index,
                  const char *inst)
{
        uint32_t at = b->n;

        guid(b, &g1);
        u32(b, status);
        u32(b, 0);
        u32(b, counter);
        u32(b, 0xFFFFFFFF);
        u32(b, index);
        u32(b, 0);
        if (inst)
                name(b, inst);
        pad8(b);
        patch32(b, at + 20, b->n - at);
}

static void test_idents(void **state)
{
        struct pcq_ident_item id;
        struct pcq_buf buf = { 0 }, copy;
        struct bb b = { .n = 0 };
        pcq_iter it;

        (void) state;
        ident(&b, 0, 1, 0, "*");
        ident(&b, ERROR_PATH_NOT_FOUND, 2, 1, NULL);
        ident(&b, 0, 3, 2, "");
        copy = heap(&b, b.n);
        pcq_ident_iter_begin(&it, &copy);
        assert_true(pcq_ident_iter_next(&it, &id));
        assert_memory_equal(&id.counterset, &g1, sizeof(GUID));
        assert_int_equal(id.counter_id, 1);
        assert_int_equal(id.instance_id, 0xFFFFFFFF);
        assert_string_equal(id.instance, "*");
        assert_true(pcq_ident_iter_next(&it, &id));
        assert_int_equal(id.status, ERROR_PATH_NOT_FOUND);
        assert_int_equal(id.index, 1);
        assert_null(id.instance);
        assert_true(pcq_ident_iter_next(&it, &id));
        assert_null(id.instance);                       /* L"" is no name */
        assert_false(pcq_ident_iter_next(&it, &id));
        assert_int_equal(pcq_iter_error(&it), ERROR_SUCCESS);
        pcq_iter_done(&it);

        /* pcq_ident_append writes the same bytes. */
        assert_int_equal(pcq_ident_append(&buf, &g1, 1, 0xFFFFFFFF, "*"), ERROR_SUCCESS);
        assert_int_equal(pcq_ident_append(&buf, &g1, 2, 0xFFFFFFFF, NULL), ERROR_SUCCESS);
        assert_int_equal(buf.size, 48 + 40);
        patch32(&b, 16 + 48, 0);                        /* Status, Index of the second */
        patch32(&b, 32 + 48, 0);
        assert_memory_equal(buf.data, b.d, 48 + 40);
        assert_int_equal(pcq_ident_append(&buf, &g1, 1, 0, "\xff"), PDH_INVALID_ARGUMENT);
        assert_int_equal(buf.size, 48 + 40);            /* unchanged on failure */
        pcq_buf_done(&buf);
        pcq_buf_done(&copy);
}

static void test_idents_bad(void **state)
{
        struct pcq_ident_item id;
        struct bb b = { .n = 0 };
        struct pcq_buf buf;
        pcq_iter it;

        (void) state;
        ident(&b, 0, 1, 0, "w1");
        ident(&b, 0, 2, 1, "w2");
        patch32(&b, 48 + 20, 32);                       /* second Size below 40 */
        buf = heap(&b, b.n);
        pcq_ident_iter_begin(&it, &buf);
        assert_true(pcq_ident_iter_next(&it, &id));
        assert_false(pcq_ident_iter_next(&it, &id));
        assert_int_equal(pcq_iter_error(&it), ERROR_INVALID_DATA);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
        patch32(&b, 48 + 20, 48);
        buf = heap(&b, b.n - 1);                        /* second runs past the end */
        pcq_ident_iter_begin(&it, &buf);
        assert_true(pcq_ident_iter_next(&it, &id));
        assert_false(pcq_ident_iter_next(&it, &id));
        assert_int_equal(pcq_iter_error(&it), ERROR_INVALID_DATA);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
}

/* ---- counter data ---- */

static uint32_t block_start(struct bb *b, uint32_t status, uint32_t type)
{
        uint32_t at = b->n;

        u32(b, status);
        u32(b, type);
        u32(b, 0);
        u32(b, 0);
        return at;
}

static void block_end(struct bb *b, uint32_t at)
{
        patch32(b, at + 8, b->n - at);
}

static void value(struct bb *b, uint32_t size, uint64_t v)
{
        u32(b, size);
        u32(b, 8 + (size ? 8 : 0));
        if (size == 4) {
                u32(b, (uint32_t) v);
                u32(b, 0);
        } else if (size == 8) {
                u64(b, v);
        }
}

static void counter_ids(struct bb *b, uint32_t n, uint32_t first)
{
        uint32_t at = b->n;

        u32(b, 0);
        u32(b, n);
        for (uint32_t i = 0; i < n; i++)
                u32(b, first + i);
        pad8(b);
        patch32(b, at, b->n - at);
}

static uint32_t multi_instances(struct bb *b, uint32_t n)
{
        uint32_t at = b->n;

        u32(b, 0);
        u32(b, n);
        return at;
}

/* Offsets of fields a test corrupts. */
struct layout {
        uint32_t block[5], minst3, inst3_2, value0;
};

/* A sample with one block of each type. */
static void build_data(struct bb *b, struct layout *l)
{
        uint32_t at;

        u32(b, 0);
        u32(b, 5);
        u64(b, 1000);
        u64(b, 132000000000000000ull);
        u64(b, 1000000000);
        for (int i = 0; i < 8; i++)
                u16(b, (uint16_t) (2024 + i));
        /* 0: PERF_SINGLE_COUNTER */
        l->block[0] = block_start(b, 0, PERF_SINGLE_COUNTER);
        l->value0 = b->n;
        value(b, 4, 42);
        block_end(b, l->block[0]);
        /* 1: PERF_MULTIPLE_COUNTERS, ids 5 and 6 */
        l->block[1] = block_start(b, 0, PERF_MULTIPLE_COUNTERS);
        counter_ids(b, 2, 5);
        value(b, 8, 500);
        value(b, 4, 600);
        block_end(b, l->block[1]);
        /* 2: PERF_ERROR_RETURN */
        l->block[2] = block_start(b, ERROR_WMI_INSTANCE_NOT_FOUND, PERF_ERROR_RETURN);
        block_end(b, l->block[2]);
        /* 3: PERF_MULTIPLE_INSTANCES, "a" and "bb" */
        l->block[3] = block_start(b, 0, PERF_MULTIPLE_INSTANCES);
        l->minst3 = at = multi_instances(b, 2);
        instance(b, 1, "a");
        value(b, 8, 11);
        l->inst3_2 = b->n;
        instance(b, 2, "bb");
        value(b, 8, 22);
        patch32(b, at, b->n - at);
        block_end(b, l->block[3]);
        /* 4: PERF_COUNTERSET, counters 7 and 8, one instance "c" */
        l->block[4] = block_start(b, 0, PERF_COUNTERSET);
        counter_ids(b, 2, 7);
        at = multi_instances(b, 1);
        instance(b, 3, "c");
        value(b, 4, 70);
        value(b, 0, 0);
        patch32(b, at, b->n - at);
        block_end(b, l->block[4]);
        patch32(b, 0, b->n);
}

static uint64_t num(const struct pcq_data_item *d)
{
        uint64_t v = 0;

        for (uint32_t i = 0; i < d->size && i < 8; i++)
                v |= (uint64_t) d->value[i] << (8 * i);
        return v;
}

static void expect(pcq_iter *it, uint32_t block, uint32_t type, uint32_t status, uint32_t counter,
                   const char *inst, uint32_t size, uint64_t v)
{
        struct pcq_data_item d;

        assert_true(pcq_data_iter_next(it, &d));
        assert_int_equal(d.block, block);
        assert_int_equal(d.block_type, type);
        assert_int_equal(d.status, status);
        assert_int_equal(d.counter_id, counter);
        if (inst)
                assert_string_equal(d.instance, inst);
        else
                assert_null(d.instance);
        assert_int_equal(d.size, size);
        if (size)
                assert_int_equal(num(&d), v);
}

static void test_data(void **state)
{
        struct pcq_data_header h;
        struct bb b = { .n = 0 };
        struct pcq_data_item d;
        struct layout l;
        struct pcq_buf buf;
        pcq_iter it;

        (void) state;
        build_data(&b, &l);
        buf = heap(&b, b.n);
        assert_int_equal(pcq_data_iter_begin(&it, &buf, &h), ERROR_SUCCESS);
        assert_int_equal(h.num_counters, 5);
        assert_int_equal(h.perf_time, 1000);
        assert_true(h.perf_time_100ns == 132000000000000000ull);
        assert_int_equal(h.perf_freq, 1000000000);
        assert_int_equal(h.system_time[0], 2024);
        assert_int_equal(h.system_time[7], 2031);
        expect(&it, 0, PERF_SINGLE_COUNTER, 0, 0xFFFFFFFF, NULL, 4, 42);
        expect(&it, 1, PERF_MULTIPLE_COUNTERS, 0, 5, NULL, 8, 500);
        expect(&it, 1, PERF_MULTIPLE_COUNTERS, 0, 6, NULL, 4, 600);
        expect(&it, 2, PERF_ERROR_RETURN, ERROR_WMI_INSTANCE_NOT_FOUND, 0xFFFFFFFF, NULL, 0, 0);
        expect(&it, 3, PERF_MULTIPLE_INSTANCES, 0, 0xFFFFFFFF, "a", 8, 11);
        expect(&it, 3, PERF_MULTIPLE_INSTANCES, 0, 0xFFFFFFFF, "bb", 8, 22);
        expect(&it, 4, PERF_COUNTERSET, 0, 7, "c", 4, 70);
        expect(&it, 4, PERF_COUNTERSET, 0, 8, "c", 0, 0);
        assert_false(pcq_data_iter_next(&it, &d));
        assert_int_equal(pcq_iter_error(&it), ERROR_SUCCESS);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
}

/* Walks b (size bytes) to the end; returns the items seen, checks the error. */
static int walk(const struct bb *b, uint32_t size, uint32_t begin, uint32_t error)
{
        struct pcq_buf buf = heap(b, size);
        struct pcq_data_item d;
        pcq_iter it;
        int n = 0;

        assert_int_equal(pcq_data_iter_begin(&it, &buf, NULL), begin);
        while (pcq_data_iter_next(&it, &d))
                n++;
        assert_int_equal(pcq_iter_error(&it), error);
        pcq_iter_done(&it);
        pcq_buf_done(&buf);
        return n;
}

static void test_data_bad(void **state)
{
        struct bb b = { .n = 0 }, c;
        struct layout l;

        (void) state;
        build_data(&b, &l);
        assert_int_equal(walk(&b, b.n, 0, 0), 8);
        /* dwTotalSize larger than the buffer, or smaller than the header. */
        assert_int_equal(walk(&b, b.n - 1, ERROR_INVALID_DATA, ERROR_INVALID_DATA), 0);
        assert_int_equal(walk(&b, 40, ERROR_INVALID_DATA, ERROR_INVALID_DATA), 0);
        c = b;
        patch32(&c, 0, 16);
        assert_int_equal(walk(&c, c.n, ERROR_INVALID_DATA, ERROR_INVALID_DATA), 0);
        /* More blocks announced than there are. */
        c = b;
        patch32(&c, 4, 6);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 8);
        /* A block whose dwSize is below its header, or past the end. */
        c = b;
        patch32(&c, l.block[1] + 8, 8);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 1);
        c = b;
        patch32(&c, l.block[1] + 8, 0x7FFFFFFF);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 1);
        /* A value whose dwDataSize exceeds its dwSize. */
        c = b;
        patch32(&c, l.value0, 9);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 0);
        /* A counter id array longer than its block. */
        c = b;
        patch32(&c, l.block[1] + 16 + 4, 0x40000000);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 1);
        /* More instances than _PERF_MULTI_INSTANCES holds. */
        c = b;
        patch32(&c, l.minst3 + 4, 3);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 6);
        /* An instance whose Size runs past its _PERF_MULTI_INSTANCES. */
        c = b;
        patch32(&c, l.inst3_2, 4096);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 5);
        /* An instance whose Size overlaps its own header. */
        c = b;
        patch32(&c, l.inst3_2, 0);
        assert_int_equal(walk(&c, c.n, 0, ERROR_INVALID_DATA), 5);
        /* Every truncation of a consistent buffer stops cleanly. */
        for (uint32_t n = 48; n < b.n; n++) {
                c = b;
                patch32(&c, 0, n);
                walk(&c, n, 0, ERROR_INVALID_DATA);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reg),
                cmocka_unit_test(test_reg_bad),
                cmocka_unit_test(test_strings),
                cmocka_unit_test(test_strings_bad),
                cmocka_unit_test(test_instances),
                cmocka_unit_test(test_instances_bad),
                cmocka_unit_test(test_idents),
                cmocka_unit_test(test_idents_bad),
                cmocka_unit_test(test_data),
                cmocka_unit_test(test_data_bad),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
