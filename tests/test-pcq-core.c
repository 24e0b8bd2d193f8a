/* SPDX-License-Identifier: MIT */
/*
 * The PerflibV2 core (server-glue/operations/) against a scripted namespace
 * (fake-ns.c): every buffer is compared byte for byte with one built here
 * by hand, field by field, from MS-PCQ 2.2.4 and 3.1.4.1 (little-endian,
 * structures on 8-byte boundaries, UTF-16LE strings from u"" literals, zero
 * padding), together with the Win32 codes, the pdwRtnSize rule and the
 * notifications the providers receive.
 *
 * One file: every case runs on the same scripted namespace and builds its
 * expected buffers with the same field writers; most of its length is
 * those buffers written out by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uchar.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>

#include "fake-ns.h"
#include "pcq-buf.h"
#include "pcq-core.h"
#include "pcq-query.h"
#include "pcq-reply.h"

static const struct pv2_handlers *H = &pcq_core_handlers;

static const GUID g_prov = { 0x11111111, 0x2222, 0x3333,
                             { 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb } };
static const GUID g_multi = { 0xa0000001, 0x0102, 0x0304, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID g_single = { 0xa0000002, 0x0102, 0x0304, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID g_installed = { 0xa0000003, 0x0102, 0x0304, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID g_global = { 0xa0000004, 0x0102, 0x0304, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID g_unknown = { 0xdeadbeef, 0, 0, { 0 } };

#define NO NS_NO_ID
#define ANY 0xFFFFFFFFu
#define WILD 0xFFFFFFFFu

static const struct ns_counter multi_counters[] = {
        { .id = 1, .type = 0x00010000, .size = 4, .detail_level = 100, .default_scale = -2,
          .base_id = NO, .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Reads", .description = "Read operations" },
        { .id = 2, .type = 0x00010100, .attrib = 0x11, .size = 8, .detail_level = 200,
          .default_scale = 3, .base_id = 5, .perf_time_id = NO, .perf_freq_id = NO,
          .multi_id = NO, .aggregate = 1, .name = "Bytes \xc3\xa9", .description = "" },
        { .id = 5, .type = 0x40030403, .size = 4, .detail_level = 200,
          .base_id = NO, .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Clef \xf0\x9d\x84\x9e", .description = "bad \xff utf8" },
};

static const struct ns_counter single_counters[] = {
        { .id = 1, .type = 0x00010100, .size = 8, .detail_level = 100,
          .base_id = NO, .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Big", .description = "A big one" },
        { .id = 2, .type = 0x00010000, .size = 4, .detail_level = 100,
          .base_id = NO, .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Small", .description = "A small one" },
};

/* A 4-byte counter and a zero-size one. */
static const struct ns_counter global_counters[] = {
        { .id = 1, .type = 0x00010000, .size = 4, .detail_level = 100,
          .base_id = NO, .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Total", .description = "" },
        { .id = 2, .type = 0x40000200, .size = 0, .detail_level = 100,
          .base_id = NO, .perf_time_id = NO, .perf_freq_id = NO, .multi_id = NO,
          .name = "Nothing", .description = "" },
};

static const struct ns_counterset cs_multi = {
        .guid = g_multi, .instance_type = 2, .detail_level = 100,
        .name = "Alpha Set", .description = "Alpha help",
        .provider_guid = g_prov, .provider_name = "Test Provider",
        .n_counters = 3, .counters = multi_counters, .installed = true, .live = true,
};
static const struct ns_counterset cs_single = {
        .guid = g_single, .instance_type = 0, .detail_level = 100,
        .name = "Single Set", .description = "",
        .provider_guid = g_prov, .provider_name = "Test Provider",
        .n_counters = 2, .counters = single_counters, .installed = true, .live = true,
};
static const struct ns_counterset cs_installed = {
        .guid = g_installed, .instance_type = 2, .detail_level = 200,
        .name = "Installed", .description = "Not running",
        .provider_guid = g_prov, .provider_name = "Test Provider",
        .n_counters = 1, .counters = single_counters, .installed = true, .live = false,
};
static const struct ns_counterset cs_global = {
        .guid = g_global, .instance_type = 4, .detail_level = 100,
        .name = "Global", .description = "",
        .provider_name = "",
        .n_counters = 2, .counters = global_counters, .installed = false, .live = true,
};

static const uint64_t alpha_values[] = { 10, 0x1122334455667788ull, 7 };
static const uint64_t beta_values[] = { 20, 2, 8 };
static const uint64_t smile_values[] = { 30, 3, 9 };
static const uint64_t single_values[] = { 0xAABBCCDDEEFF0011ull, 42 };
static const uint64_t p1_values[] = { 100, 0 };
static const uint64_t p2_values[] = { 200, 0 };
static const wchar_t smile_name[] = { 0x1F600, L'x', 0 };

struct fx {
        struct ns *ns;
        struct pcq_session s;
        void *q;
};
static struct pcq_session *current;     /* the fixture's, for out_done; NULL outside one */

static int setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));

        assert_non_null(fx);
        fx->ns = fake_ns_new();
        fake_ns_add(fx->ns, &cs_multi);
        fake_ns_add(fx->ns, &cs_single);
        fake_ns_add(fx->ns, &cs_installed);
        fake_ns_add(fx->ns, &cs_global);
        fake_ns_add_instance(fx->ns, &g_multi, 0, L"alpha", alpha_values);
        fake_ns_add_instance(fx->ns, &g_multi, 1, L"beta", beta_values);
        fake_ns_add_instance(fx->ns, &g_multi, 7, smile_name, smile_values);
        fake_ns_add_instance(fx->ns, &g_single, 0, L"", single_values);
        fake_ns_add_instance(fx->ns, &g_global, 0, L"p1", p1_values);
        fake_ns_add_instance(fx->ns, &g_global, 0, L"p2", p2_values);
        fx->s = (struct pcq_session){ .ns = fx->ns, .allowed = true };
        current = &fx->s;
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        struct fx *fx = *state;

        fx->s.allowed = true;
        if (fx->q)
                assert_int_equal(H->close_query(&fx->s, fx->q), ERROR_SUCCESS);
        pcq_session_trim(&fx->s);
        /* Every test: whatever replies were paid from the query memory came back. */
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
        current = NULL;
        fake_ns_free(fx->ns);
        free(fx);
        return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ---- expected buffers ---- */

struct exp {
        uint8_t d[16384];
        size_t n;
};

static void x8(struct exp *e, uint8_t v)
{
        assert_true(e->n < sizeof(e->d));
        e->d[e->n++] = v;
}

static void x16(struct exp *e, uint16_t v)
{
        x8(e, (uint8_t) v);
        x8(e, (uint8_t) (v >> 8));
}

static void x32(struct exp *e, uint32_t v)
{
        x16(e, (uint16_t) v);
        x16(e, (uint16_t) (v >> 16));
}

static void x64(struct exp *e, uint64_t v)
{
        x32(e, (uint32_t) v);
        x32(e, (uint32_t) (v >> 32));
}

static void xguid(struct exp *e, const GUID *g)
{
        x32(e, g->Data1);
        x16(e, g->Data2);
        x16(e, g->Data3);
        for (int i = 0; i < 8; i++)
                x8(e, g->Data4[i]);
}

/* A UTF-16LE string and its NUL. */
static void xstr(struct exp *e, const char16_t *s)
{
        do
                x16(e, *s);
        while (*s++);
}

static void xpad8(struct exp *e)
{
        while (e->n % 8)
                x8(e, 0);
}

static size_t str16len(const char16_t *s)
{
        size_t n = 0;

        while (s[n])
                n++;
        return n;
}

/*
 * A _PERF_COUNTER_IDENTIFIER block; name NULL for none.  size 0 means the
 * right one (40 + name, padded to 8).
 */
static void xident(struct exp *e, const GUID *g, uint32_t counter, uint32_t inst,
                   const char16_t *name, uint32_t status, uint32_t index, uint32_t size)
{
        size_t start = e->n;

        if (!size)
                size = (uint32_t) ((40 + (name ? 2 * (str16len(name) + 1) : 0) + 7) / 8 * 8);
        xguid(e, g);
        x32(e, status);
        x32(e, size);
        x32(e, counter);
        x32(e, inst);
        x32(e, index);
        x32(e, 0);
        if (name)
                xstr(e, name);
        while (e->n - start < size)
                x8(e, 0);
}

/* _PERF_INSTANCE_HEADER block. */
static void xinstance(struct exp *e, uint32_t id, const char16_t *name)
{
        x32(e, (uint32_t) ((8 + 2 * (str16len(name) + 1) + 7) / 8 * 8));
        x32(e, id);
        xstr(e, name);
        xpad8(e);
}

/* _PERF_COUNTER_DATA block of a 4- or 8-byte (or 0-byte) value. */
static void xvalue(struct exp *e, uint32_t size, uint64_t v)
{
        x32(e, size);
        x32(e, size ? 16 : 8);
        if (size == 4)
                x32(e, (uint32_t) v);
        else if (size == 8)
                x64(e, v);
        xpad8(e);
}

/* Frees what a handler returned (the stubs' job in perflibd). */
/* Gives an lpData back as the transport does: through release_out (the reply buffer is reused). */
static void out_done(struct pv2_out *o)
{
        H->release_out(current, o->data);
        *o = (struct pv2_out){ 0 };
}

/* A _PERF_COUNTER_HEADER with status 0: dwType and dwSize. */
static void xheader(struct exp *e, uint32_t type, uint32_t size)
{
        x32(e, 0);
        x32(e, type);
        x32(e, size);
        x32(e, 0);
}

static void assert_out(const struct pv2_out *o, const struct exp *e)
{
        assert_int_equal(o->out_size, e->n);
        assert_int_equal(o->rtn_size, e->n);
        if (e->n)
                assert_memory_equal(o->data, e->d, e->n);
        else
                assert_null(o->data);
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
        return get32(p) | (uint64_t) get32(p + 4) << 32;
}

/* ---- calls ---- */

static uint32_t reginfo(struct fx *fx, const GUID *g, uint32_t code, uint32_t lcid,
                        uint32_t in_size, struct pv2_out *o)
{
        return H->query_registration_info(&fx->s, NULL, g, code, lcid, in_size, o);
}

/* Calls reginfo with a big buffer and checks it against e, then the sizing rule. */
static void check_reginfo(struct fx *fx, const GUID *g, uint32_t code, uint32_t lcid,
                          const struct exp *e)
{
        struct pv2_out o;

        assert_int_equal(reginfo(fx, g, code, lcid, 1u << 20, &o), ERROR_SUCCESS);
        assert_out(&o, e);
        out_done(&o);
        assert_int_equal(reginfo(fx, g, code, lcid, (uint32_t) e->n, &o), ERROR_SUCCESS);
        assert_out(&o, e);
        out_done(&o);
        assert_int_equal(reginfo(fx, g, code, lcid, (uint32_t) e->n - 1, &o),
                         ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, e->n);
        assert_null(o.data);
}

static void open_query(struct fx *fx, const char16_t *machine)
{
        assert_int_equal(H->open_query(&fx->s, (const uint16_t *) machine, &fx->q),
                         ERROR_SUCCESS);
        assert_non_null(fx->q);
}

/* ValidateCounters over e's bytes (updated in place); returns the call's code. */
static uint32_t validate(struct fx *fx, struct exp *e, bool add)
{
        return H->validate_counters(&fx->s, fx->q, e->d, (uint32_t) e->n, add);
}

/* Adds one identifier and returns its Status. */
static uint32_t add1(struct fx *fx, const GUID *g, uint32_t counter, uint32_t inst,
                     const char16_t *name)
{
        struct exp e = { .n = 0 };

        xident(&e, g, counter, inst, name, 0, 0, 0);
        assert_int_equal(validate(fx, &e, true), ERROR_SUCCESS);
        return get32(e.d + 16);
}

static uint32_t remove1(struct fx *fx, const GUID *g, uint32_t counter, uint32_t inst,
                        const char16_t *name)
{
        struct exp e = { .n = 0 };

        xident(&e, g, counter, inst, name, 0, 0, 0);
        assert_int_equal(validate(fx, &e, false), ERROR_SUCCESS);
        return get32(e.d + 16);
}

/* The Status of each identifier in a buffer of identifiers. */
static void assert_statuses(const struct exp *e, const uint32_t *want, size_t n)
{
        size_t off = 0;

        for (size_t i = 0; i < n; i++) {
                assert_true(off + 40 <= e->n);
                assert_int_equal(get32(e->d + off + 16), want[i]);
                off += get32(e->d + off + 20);
        }
}

/*
 * QueryCounterData: checks the _PERF_DATA_HEADER (sizes, count, clocks)
 * and compares the blocks after it with e.
 */
static void check_data(struct fx *fx, uint32_t n_blocks, const struct exp *blocks)
{
        struct pv2_out o;
        struct timespec before, after;
        struct tm tm = { 0 };
        uint64_t t100, stamp;
        time_t sec;
        const uint8_t *d;

        clock_gettime(CLOCK_REALTIME, &before);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 20, &o), ERROR_SUCCESS);
        clock_gettime(CLOCK_REALTIME, &after);
        d = o.data;
        assert_int_equal(o.out_size, 48 + blocks->n);
        assert_int_equal(o.rtn_size, o.out_size);
        assert_int_equal(get32(d), o.out_size);
        assert_int_equal(get32(d + 4), n_blocks);
        stamp = get64(d + 8);
        assert_true(stamp > 0);
        assert_int_equal(get64(d + 24), 1000000000u);
        /* PerfTime100NSec: 100 ns units since 1601-01-01 UTC, read in between. */
        t100 = get64(d + 16);
        assert_true(t100 >= ((uint64_t) before.tv_sec + 11644473600u) * 10000000u);
        assert_true(t100 <= ((uint64_t) after.tv_sec + 11644473601u) * 10000000u);
        /* SystemTime: the same instant, broken down in UTC. */
        tm.tm_year = (d[32] | d[33] << 8) - 1900;
        tm.tm_mon = (d[34] | d[35] << 8) - 1;
        tm.tm_mday = d[38] | d[39] << 8;
        tm.tm_hour = d[40] | d[41] << 8;
        tm.tm_min = d[42] | d[43] << 8;
        tm.tm_sec = d[44] | d[45] << 8;
        sec = timegm(&tm);
        assert_int_equal((uint64_t) sec, t100 / 10000000u - 11644473600u);
        assert_int_equal(d[36] | d[37] << 8, tm.tm_wday);
        assert_int_equal(d[46] | d[47] << 8, (t100 / 10000u) % 1000u);
        if (blocks->n)
                assert_memory_equal(d + 48, blocks->d, blocks->n);
        out_done(&o);
}

/* ---- tests ---- */

static void access_denied(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o = { .data = (uint8_t *) 1, .out_size = 9, .rtn_size = 9 };
        struct exp e = { .n = 0 }, copy;
        void *q = (void *) 0x1;

        open_query(fx, NULL);
        xident(&e, &g_multi, 1, ANY, u"alpha", 0, 0, 0);
        copy = e;
        fx->s.allowed = false;
        assert_int_equal(H->enumerate_counterset(&fx->s, NULL, 256, &o), ERROR_ACCESS_DENIED);
        assert_null(o.data);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 0);
        assert_int_equal(reginfo(fx, &g_multi, 1, 0, 4096, &o), ERROR_ACCESS_DENIED);
        assert_null(o.data);
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_multi, 4096, &o),
                         ERROR_ACCESS_DENIED);
        assert_null(o.data);
        assert_int_equal(H->open_query(&fx->s, NULL, &q), ERROR_ACCESS_DENIED);
        assert_ptr_equal(q, (void *) 0x1);
        assert_int_equal(validate(fx, &e, true), ERROR_ACCESS_DENIED);
        assert_memory_equal(e.d, copy.d, e.n);
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, 4096, &o), ERROR_ACCESS_DENIED);
        assert_null(o.data);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 4096, &o), ERROR_ACCESS_DENIED);
        assert_null(o.data);
        /* The handle stays open (MS-PCQ 3.1.4.1.8); teardown closes it. */
        assert_int_equal(H->close_query(&fx->s, fx->q), ERROR_ACCESS_DENIED);
        /* Nothing reached the providers. */
        assert_int_equal(fake_ns_events(fx->ns, &(const struct fake_event *){ NULL }), 0);
        /* A NULL session is denied too. */
        assert_int_equal(H->enumerate_counterset(NULL, NULL, 256, &o), ERROR_ACCESS_DENIED);
}

static void enumerate_counterset(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };
        struct pv2_out o;
        struct ns *empty = fake_ns_new();
        struct pcq_session s = { .ns = empty, .allowed = true };

        xguid(&e, &g_multi);
        xguid(&e, &g_single);
        xguid(&e, &g_installed);
        xguid(&e, &g_global);
        assert_int_equal(H->enumerate_counterset(&fx->s, NULL, 4, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 4);
        assert_int_equal(o.rtn_size, 4);
        assert_memory_equal(o.data, e.d, e.n);
        out_done(&o);
        assert_int_equal(H->enumerate_counterset(&fx->s, NULL, 256, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 4);
        assert_memory_equal(o.data, e.d, e.n);
        out_done(&o);
        /* Counted in GUIDs: pdwOutSize 0 when dwInSize is below the total. */
        assert_int_equal(H->enumerate_counterset(&fx->s, NULL, 3, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 4);
        assert_null(o.data);
        assert_int_equal(H->enumerate_counterset(&fx->s, NULL, 0, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.rtn_size, 4);
        /* No countersets at all. */
        assert_int_equal(H->enumerate_counterset(&s, NULL, 0, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 0);
        assert_null(o.data);
        fake_ns_free(empty);
}

static void xcounter_reg(struct exp *e, uint32_t id, uint32_t type, uint64_t attrib,
                         uint32_t detail, int32_t scale, uint32_t base, uint32_t aggregate)
{
        x32(e, id);
        x32(e, type);
        x64(e, attrib);
        x32(e, detail);
        x32(e, (uint32_t) scale);
        x32(e, base);
        x32(e, 0xFFFFFFFF);             /* PerfTimeId */
        x32(e, 0xFFFFFFFF);             /* PerfFreqId */
        x32(e, 0xFFFFFFFF);             /* MultiId */
        x32(e, aggregate);
        x32(e, 0);                      /* Reserved */
}

static void reginfo_counterset(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };

        xguid(&e, &g_multi);
        x32(&e, 0);                     /* CounterSetType */
        x32(&e, 100);
        x32(&e, 3);
        x32(&e, 2);
        xcounter_reg(&e, 1, 0x00010000, 0, 100, -2, 0xFFFFFFFF, 0);
        xcounter_reg(&e, 2, 0x00010100, 0x11, 200, 3, 5, 1);
        xcounter_reg(&e, 5, 0x40030403, 0, 200, 0, 0xFFFFFFFF, 0);
        assert_int_equal(e.n, 32 + 3 * 48);
        check_reginfo(fx, &g_multi, 1, 0, &e);
        /* RequestLCID is ignored for this code. */
        check_reginfo(fx, &g_multi, 1, 0x407, &e);

        /* An installed counterset with no live provider is served too. */
        e.n = 0;
        xguid(&e, &g_installed);
        x32(&e, 0);
        x32(&e, 200);
        x32(&e, 1);
        x32(&e, 2);
        xcounter_reg(&e, 1, 0x00010100, 0, 100, 0, 0xFFFFFFFF, 0);
        check_reginfo(fx, &g_installed, 1, 0, &e);
}

static void reginfo_counter(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };
        struct pv2_out o;

        xcounter_reg(&e, 2, 0x00010100, 0x11, 200, 3, 5, 1);
        check_reginfo(fx, &g_multi, 2, 2, &e);
        e.n = 0;
        xcounter_reg(&e, 5, 0x40030403, 0, 200, 0, 0xFFFFFFFF, 0);
        check_reginfo(fx, &g_multi, 2, 5, &e);
        /* RequestLCID is the counter id: one the set does not have. */
        assert_int_equal(reginfo(fx, &g_multi, 2, 3, 4096, &o), ERROR_WMI_ITEMID_NOT_FOUND);
        assert_int_equal(o.out_size, 0);
        assert_null(o.data);
        assert_int_equal(reginfo(fx, &g_multi, 2, 0, 4096, &o), ERROR_WMI_ITEMID_NOT_FOUND);
}

static void reginfo_strings(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };

        xstr(&e, u"Alpha Set");
        assert_int_equal(e.n, 20);
        check_reginfo(fx, &g_multi, 3, 0, &e);
        check_reginfo(fx, &g_multi, 3, 0x409, &e);
        check_reginfo(fx, &g_multi, 9, 0, &e);
        e.n = 0;
        xstr(&e, u"Alpha help");
        check_reginfo(fx, &g_multi, 4, 0x409, &e);
        e.n = 0;
        xstr(&e, u"Test Provider");
        check_reginfo(fx, &g_multi, 7, 0, &e);
        e.n = 0;
        xguid(&e, &g_prov);
        check_reginfo(fx, &g_multi, 8, 0, &e);
        /* An empty description is one NUL. */
        e.n = 0;
        xstr(&e, u"");
        check_reginfo(fx, &g_single, 4, 0, &e);
}

static void reginfo_string_blocks(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };

        /* Names: the offsets count from the end of the header set (MS-PCQ
         * 2.2.4.4), the strings follow each other, the block is padded. */
        x32(&e, 80);
        x32(&e, 3);
        x32(&e, 1);
        x32(&e, 0);
        x32(&e, 2);
        x32(&e, 12);
        x32(&e, 5);
        x32(&e, 28);
        xstr(&e, u"Reads");
        xstr(&e, u"Bytes \u00e9");
        xstr(&e, u"Clef \U0001D11E");       /* a surrogate pair */
        xpad8(&e);
        assert_int_equal(e.n, 80);
        check_reginfo(fx, &g_multi, 5, 0, &e);
        check_reginfo(fx, &g_multi, 10, 0, &e);

        /* Descriptions: an empty one, and invalid UTF-8 made U+FFFD. */
        e.n = 0;
        x32(&e, 88);
        x32(&e, 3);
        x32(&e, 1);
        x32(&e, 0);
        x32(&e, 2);
        x32(&e, 32);
        x32(&e, 5);
        x32(&e, 34);
        xstr(&e, u"Read operations");
        xstr(&e, u"");
        xstr(&e, u"bad \uFFFD utf8");
        xpad8(&e);
        assert_int_equal(e.n, 88);
        check_reginfo(fx, &g_multi, 6, 0x409, &e);
}

static void reginfo_errors(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o;

        /* RequestCode outside 1..10, checked before the counterset. */
        assert_int_equal(reginfo(fx, &g_multi, 0, 0, 4096, &o), ERROR_INVALID_PARAMETER);
        assert_int_equal(reginfo(fx, &g_multi, 11, 0, 4096, &o), ERROR_INVALID_PARAMETER);
        assert_int_equal(reginfo(fx, &g_unknown, 0xFFFFFFFF, 0, 4096, &o),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 0);
        for (uint32_t code = 1; code <= 10; code++)
                assert_int_equal(reginfo(fx, &g_unknown, code, 0, 4096, &o),
                                 ERROR_WMI_GUID_NOT_FOUND);
        /* Localized codes: only the default and English are installed. */
        for (uint32_t code = 3; code <= 6; code++) {
                assert_int_equal(reginfo(fx, &g_multi, code, 0x407, 4096, &o),
                                 ERROR_RESOURCE_LANG_NOT_FOUND);
                assert_null(o.data);
        }
        assert_int_equal(reginfo(fx, &g_multi, 7, 0x407, 4096, &o), ERROR_SUCCESS);
        out_done(&o);
        assert_int_equal(reginfo(fx, &g_multi, 9, 0x407, 4096, &o), ERROR_SUCCESS);
        out_done(&o);
        assert_int_equal(reginfo(fx, &g_multi, 10, 0x407, 4096, &o), ERROR_SUCCESS);
        out_done(&o);
        /* A counterset whose provider GUID is unknown. */
        assert_int_equal(reginfo(fx, &g_global, 8, 0, 4096, &o), ERROR_WMI_GUID_NOT_FOUND);
        /* A too-small buffer is judged only once the request is valid. */
        assert_int_equal(reginfo(fx, &g_multi, 12, 0, 0, &o), ERROR_INVALID_PARAMETER);
        assert_int_equal(reginfo(fx, &g_multi, 1, 0, 0, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.rtn_size, 176);
}

static void enumerate_instances(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };
        const struct fake_event *ev;
        struct pv2_out o;
        static const wchar_t empty[] = L"";

        xinstance(&e, 0, u"alpha");
        xinstance(&e, 1, u"beta");
        xinstance(&e, 7, u"\U0001F600x");
        assert_int_equal(e.n, 64);
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_multi, 64, &o), ERROR_SUCCESS);
        assert_out(&o, &e);
        out_done(&o);
        /* PERF_ENUMERATE_INSTANCES went first, with the machine name (none: L""). */
        assert_int_equal(fake_ns_events(fx->ns, &ev), 2);
        assert_int_equal(ev[0].kind, FAKE_NOTIFY);
        assert_int_equal(ev[0].code, PERF_ENUMERATE_INSTANCES);
        assert_memory_equal(&ev[0].cs, &g_multi, sizeof(GUID));
        assert_int_equal(ev[0].size, sizeof(wchar_t));
        assert_memory_equal(ev[0].buffer, empty, sizeof(wchar_t));
        assert_int_equal(ev[1].kind, FAKE_SNAPSHOT);
        assert_int_equal(ev[1].code, 0);        /* names only: no collect */
        fake_ns_clear_events(fx->ns);

        assert_int_equal(H->enumerate_instances(&fx->s, (const uint16_t *) u"host", &g_multi,
                                                63, &o),
                         ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 64);
        assert_null(o.data);
        assert_int_equal(fake_ns_events(fx->ns, &ev), 2);
        assert_int_equal(ev[0].size, 5 * sizeof(wchar_t));
        assert_memory_equal(ev[0].buffer, L"host", 5 * sizeof(wchar_t));

        /* The single-instance set: one unnamed instance. */
        e.n = 0;
        xinstance(&e, 0, u"");
        assert_int_equal(e.n, 16);
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_single, 4096, &o),
                         ERROR_SUCCESS);
        assert_out(&o, &e);
        out_done(&o);
}

static void enumerate_instances_errors(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o;

        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_unknown, 4096, &o),
                         ERROR_WMI_GUID_NOT_FOUND);
        assert_int_equal(fake_ns_count(fx->ns, FAKE_NOTIFY, PERF_ENUMERATE_INSTANCES), 0);
        /* Installed but not live: no active instance. */
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_installed, 4096, &o),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 0);
        assert_null(o.data);
        /* A single-instance set that two instances claim. */
        fake_ns_add_instance(fx->ns, &g_single, 1, L"other", single_values);
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_single, 4096, &o),
                         ERROR_WMI_INVALID_REGINFO);
        /* The namespace failing. */
        fake_ns_fail_snapshots(fx->ns, -ENOMEM);
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_multi, 4096, &o),
                         ERROR_OUTOFMEMORY);
        assert_null(o.data);
}

static void instance_names_unicode(void **state)
{
        struct fx *fx = *state;
        static const wchar_t bad[] = { 0xD800, 0x110000, L'a', 0 };
        static const uint64_t v[] = { 1, 2, 3 };
        struct exp e = { .n = 0 };
        struct pv2_out o;

        fake_ns_remove_instance(fx->ns, &g_multi, 0, L"alpha");
        fake_ns_remove_instance(fx->ns, &g_multi, 1, L"beta");
        fake_ns_remove_instance(fx->ns, &g_multi, 7, smile_name);
        fake_ns_add_instance(fx->ns, &g_multi, 3, bad, v);
        xinstance(&e, 3, u"\uFFFD\uFFFDa");
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_multi, 4096, &o), ERROR_SUCCESS);
        assert_out(&o, &e);
        out_done(&o);
}

static void validate_add(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 }, want;
        size_t odd;
        static const uint32_t statuses[] = {
                0, ERROR_WMI_GUID_NOT_FOUND, ERROR_WMI_ITEMID_NOT_FOUND, ERROR_PATH_NOT_FOUND,
                ERROR_ALREADY_EXISTS, 0, ERROR_INVALID_PARAMETER, 0, ERROR_ALREADY_EXISTS,
                ERROR_PATH_NOT_FOUND, 0, ERROR_INVALID_PARAMETER, 0, ERROR_INVALID_PARAMETER,
                0,
        };

        open_query(fx, NULL);
        xident(&e, &g_multi, 1, ANY, u"alpha", 0, 0, 0);
        xident(&e, &g_unknown, 1, ANY, u"alpha", 0, 0, 0);
        xident(&e, &g_multi, 9, ANY, u"alpha", 0, 0, 0);
        xident(&e, &g_multi, 1, ANY, u"gamma", 0, 0, 0);        /* no such live instance */
        xident(&e, &g_multi, 1, ANY, u"alpha", 0, 0, 0);        /* duplicate */
        xident(&e, &g_multi, WILD, ANY, u"*", 0, 0, 0);
        xident(&e, &g_multi, 2, ANY, NULL, 0, 0, 0);            /* multi-instance, no name */
        xident(&e, &g_single, 1, ANY, NULL, 0, 0, 0);
        xident(&e, &g_single, 1, 0, u"whatever", 0, 0, 0);      /* the same single counter */
        xident(&e, &g_multi, 2, 1, u"alpha", 0, 0, 0);          /* alpha's id is 0 */
        xident(&e, &g_multi, 2, 1, u"beta", 0, 0, 0);
        /* A name with no NUL inside Size. */
        xident(&e, &g_multi, 5, ANY, NULL, 0, 0, 48);
        memcpy(e.d + e.n - 8, "a\0b\0c\0d\0", 8);
        xident(&e, &g_installed, WILD, ANY, u"*", 0, 0, 0);     /* installed-only is fine */
        /* Size not a multiple of 8: corrupt, and the next one follows it directly. */
        odd = e.n;
        xident(&e, &g_multi, 5, ANY, u"a", 0, 0, 44);
        xident(&e, &g_global, 1, ANY, NULL, 0, 0, 0);
        assert_int_equal(e.n - odd, 44 + 40);
        want = e;
        assert_int_equal(validate(fx, &e, true), ERROR_SUCCESS);
        assert_statuses(&e, statuses, sizeof(statuses) / sizeof(statuses[0]));
        /* Only the Status fields changed. */
        for (size_t off = 0, i = 0; off < e.n; off += get32(want.d + off + 20), i++) {
                want.d[off + 16] = (uint8_t) statuses[i];
                want.d[off + 17] = (uint8_t) (statuses[i] >> 8);
        }
        assert_memory_equal(e.d, want.d, e.n);
        assert_int_equal(fake_ns_count(fx->ns, FAKE_NOTIFY, PERF_ADD_COUNTER), 6);
}

static void counter_info(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };
        struct pv2_out o;

        open_query(fx, NULL);
        /* An empty query has nothing to say. */
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, 0, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 0);
        assert_null(o.data);
        assert_int_equal(add1(fx, &g_multi, 1, ANY, u"alpha"), 0);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"*"), 0);
        assert_int_equal(add1(fx, &g_single, 1, ANY, u"ignored"), 0);
        assert_int_equal(add1(fx, &g_multi, 2, 1, u"beta"), 0);
        assert_int_equal(add1(fx, &g_global, 1, 5, NULL), 0);
        /* Status 0, Index the position, a name (L"" when none), padding zeroed. */
        xident(&e, &g_multi, 1, ANY, u"alpha", 0, 0, 56);
        xident(&e, &g_multi, WILD, ANY, u"*", 0, 1, 48);
        xident(&e, &g_single, 1, ANY, u"", 0, 2, 48);
        xident(&e, &g_multi, 2, 1, u"beta", 0, 3, 56);
        xident(&e, &g_global, 1, 5, u"", 0, 4, 48);
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, (uint32_t) e.n, &o), ERROR_SUCCESS);
        assert_out(&o, &e);
        out_done(&o);
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, (uint32_t) e.n - 1, &o),
                         ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, e.n);
        assert_null(o.data);

        /* Removing the second shifts the indexes after it. */
        assert_int_equal(remove1(fx, &g_multi, WILD, ANY, u"*"), 0);
        e.n = 0;
        xident(&e, &g_multi, 1, ANY, u"alpha", 0, 0, 56);
        xident(&e, &g_single, 1, ANY, u"", 0, 1, 48);
        xident(&e, &g_multi, 2, 1, u"beta", 0, 2, 56);
        xident(&e, &g_global, 1, 5, u"", 0, 3, 48);
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, 4096, &o), ERROR_SUCCESS);
        assert_out(&o, &e);
        out_done(&o);
}

static void validate_remove(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 };
        struct pv2_out o;

        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, 1, ANY, u"alpha"), 0);
        assert_int_equal(add1(fx, &g_single, 2, ANY, NULL), 0);
        assert_int_equal(add1(fx, &g_installed, 1, ANY, u"*"), 0);
        assert_int_equal(remove1(fx, &g_multi, 1, ANY, u"alpha"), 0);
        /* Not (or no longer) in the query. */
        assert_int_equal(remove1(fx, &g_multi, 1, ANY, u"alpha"), ERROR_INVALID_PARAMETER);
        assert_int_equal(remove1(fx, &g_multi, 1, 0, u"beta"), ERROR_INVALID_PARAMETER);
        assert_int_equal(remove1(fx, &g_unknown, 1, ANY, u"alpha"), ERROR_INVALID_PARAMETER);
        /* The single counter, named however the client likes. */
        assert_int_equal(remove1(fx, &g_single, 2, 0, u"x"), 0);
        assert_int_equal(fake_ns_count(fx->ns, FAKE_NOTIFY, PERF_REMOVE_COUNTER), 2);
        /* A counterset that went away can still be removed from the query. */
        fake_ns_remove(fx->ns, &g_installed);
        assert_int_equal(remove1(fx, &g_installed, 1, ANY, u"*"), 0);
        assert_int_equal(fake_ns_count(fx->ns, FAKE_NOTIFY, PERF_REMOVE_COUNTER), 2);
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, 4096, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 0);
        /* A corrupt identifier. */
        xident(&e, &g_multi, 1, ANY, NULL, 0, 0, 48);
        memset(e.d + 40, 'z', 8);
        assert_int_equal(validate(fx, &e, false), ERROR_SUCCESS);
        assert_int_equal(get32(e.d + 16), ERROR_INVALID_PARAMETER);
}

static void validate_whole_call_errors(void **state)
{
        struct fx *fx = *state;
        struct exp e = { .n = 0 }, copy;
        struct pv2_out o;

        open_query(fx, NULL);
        xident(&e, &g_multi, 1, ANY, u"alpha", 0, 0, 0);
        /* dwInSize below one identifier. */
        assert_int_equal(H->validate_counters(&fx->s, fx->q, e.d, 39, true),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(H->validate_counters(&fx->s, fx->q, NULL, 0, true),
                         ERROR_INVALID_PARAMETER);
        /* An identifier's Size below the structure's size. */
        xident(&e, &g_multi, 2, ANY, u"beta", 0, 0, 0);
        e.d[56 + 20] = 32;
        copy = e;
        assert_int_equal(validate(fx, &e, true), ERROR_INVALID_PARAMETER);
        assert_memory_equal(e.d, copy.d, e.n);
        /* An identifier running past the buffer. */
        e.d[56 + 20] = 0;
        e.d[56 + 21] = 4;
        copy = e;
        assert_int_equal(validate(fx, &e, true), ERROR_INVALID_PARAMETER);
        assert_memory_equal(e.d, copy.d, e.n);
        /* Nothing was added by either. */
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, 4096, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(fake_ns_count(fx->ns, FAKE_NOTIFY, PERF_ADD_COUNTER), 0);
        /* Trailing bytes too few for an identifier are ignored. */
        e.n = 56;
        for (int i = 0; i < 39; i++)
                x8(&e, 0xEE);
        assert_int_equal(validate(fx, &e, true), ERROR_SUCCESS);
        assert_int_equal(get32(e.d + 16), 0);
        assert_int_equal(e.d[56], 0xEE);
}

/* The buffer the providers get for PERF_ADD_COUNTER and PERF_REMOVE_COUNTER. */
static void counter_identity(void **state)
{
        struct fx *fx = *state;
        const struct fake_event *ev;
        uint8_t want[128];
        PERF_COUNTER_IDENTITY id = {
                .CounterSetGuid = g_multi,
                .BufferSize = 40 + 4 * 4 + 5 * 4,
                .CounterId = 2,
                .InstanceId = 1,
                .MachineOffset = 40,
                .NameOffset = 56,
        };
        size_t n;

        open_query(fx, u"box");
        memcpy(want, &id, 40);
        memcpy(want + 40, L"box", 16);
        memcpy(want + 56, L"beta", 20);
        assert_int_equal(add1(fx, &g_multi, 2, 1, u"beta"), 0);
        n = fake_ns_events(fx->ns, &ev);
        assert_int_equal(ev[n - 1].kind, FAKE_NOTIFY);
        assert_int_equal(ev[n - 1].code, PERF_ADD_COUNTER);
        assert_memory_equal(&ev[n - 1].cs, &g_multi, sizeof(GUID));
        assert_int_equal(ev[n - 1].size, 76);
        assert_memory_equal(ev[n - 1].buffer, want, 76);
        assert_int_equal(remove1(fx, &g_multi, 2, 1, u"beta"), 0);
        n = fake_ns_events(fx->ns, &ev);
        assert_int_equal(ev[n - 1].code, PERF_REMOVE_COUNTER);
        assert_int_equal(ev[n - 1].size, 76);
        assert_memory_equal(ev[n - 1].buffer, want, 76);

        /* Wildcards as they are; an unnamed item has an empty name. */
        assert_int_equal(add1(fx, &g_single, WILD, ANY, NULL), 0);
        id = (PERF_COUNTER_IDENTITY){
                .CounterSetGuid = g_single,
                .BufferSize = 40 + 16 + 4,
                .CounterId = WILD,
                .InstanceId = ANY,
                .MachineOffset = 40,
                .NameOffset = 56,
        };
        memcpy(want, &id, 40);
        memset(want + 56, 0, 4);
        n = fake_ns_events(fx->ns, &ev);
        assert_int_equal(ev[n - 1].size, 60);
        assert_memory_equal(ev[n - 1].buffer, want, 60);
}

static void data_block_types(void **state)
{
        struct fx *fx = *state;
        struct exp b = { .n = 0 };

        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_single, 1, ANY, NULL), 0);
        assert_int_equal(add1(fx, &g_single, WILD, ANY, NULL), 0);
        assert_int_equal(add1(fx, &g_multi, 2, ANY, u"*"), 0);
        assert_int_equal(add1(fx, &g_multi, WILD, 1, u"*"), 0);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"alpha"), 0);
        assert_int_equal(add1(fx, &g_multi, 5, ANY, u"beta"), 0);

        /* PERF_SINGLE_COUNTER: an 8-byte value. */
        xheader(&b, 1, 32);
        xvalue(&b, 8, 0xAABBCCDDEEFF0011ull);
        /* PERF_MULTIPLE_COUNTERS of the single instance. */
        xheader(&b, 2, 64);
        x32(&b, 16);
        x32(&b, 2);
        x32(&b, 1);
        x32(&b, 2);
        xvalue(&b, 8, 0xAABBCCDDEEFF0011ull);
        xvalue(&b, 4, 42);
        /* PERF_MULTIPLE_INSTANCES: counter 2 of every instance. */
        xheader(&b, 4, 136);
        x32(&b, 120);
        x32(&b, 3);
        xinstance(&b, 0, u"alpha");
        xvalue(&b, 8, 0x1122334455667788ull);
        xinstance(&b, 1, u"beta");
        xvalue(&b, 8, 2);
        xinstance(&b, 7, u"\U0001F600x");
        xvalue(&b, 8, 3);
        /* PERF_COUNTERSET: "*" filtered to instance id 1; odd id count padded. */
        xheader(&b, 6, 120);
        x32(&b, 24);
        x32(&b, 3);
        x32(&b, 1);
        x32(&b, 2);
        x32(&b, 5);
        x32(&b, 0);
        x32(&b, 80);
        x32(&b, 1);
        xinstance(&b, 1, u"beta");
        xvalue(&b, 4, 20);
        xvalue(&b, 8, 2);
        xvalue(&b, 4, 8);
        /* PERF_MULTIPLE_COUNTERS of a named instance. */
        xheader(&b, 2, 88);
        x32(&b, 24);
        x32(&b, 3);
        x32(&b, 1);
        x32(&b, 2);
        x32(&b, 5);
        x32(&b, 0);
        xvalue(&b, 4, 10);
        xvalue(&b, 8, 0x1122334455667788ull);
        xvalue(&b, 4, 7);
        /* PERF_SINGLE_COUNTER of a named instance, a 4-byte value. */
        xheader(&b, 1, 32);
        xvalue(&b, 4, 8);
        check_data(fx, 6, &b);
}

static void data_global_and_zero_size(void **state)
{
        struct fx *fx = *state;
        struct exp b = { .n = 0 };

        open_query(fx, NULL);
        /* A global aggregate: every provider's instance, for the client to sum. */
        assert_int_equal(add1(fx, &g_global, 1, ANY, NULL), 0);
        assert_int_equal(add1(fx, &g_global, WILD, ANY, u"p1"), 0);
        xheader(&b, 4, 16 + 8 + 2 * (16 + 16));
        x32(&b, 8 + 2 * (16 + 16));
        x32(&b, 2);
        xinstance(&b, 0, u"p1");
        xvalue(&b, 4, 100);
        xinstance(&b, 0, u"p2");
        xvalue(&b, 4, 200);
        /* The name was dropped: both instances, and a zero-size counter. */
        xheader(&b, 6, 16 + 16 + 8 + 2 * (16 + 16 + 8));
        x32(&b, 16);
        x32(&b, 2);
        x32(&b, 1);
        x32(&b, 2);
        x32(&b, 8 + 2 * (16 + 16 + 8));
        x32(&b, 2);
        xinstance(&b, 0, u"p1");
        xvalue(&b, 4, 100);
        xvalue(&b, 0, 0);
        xinstance(&b, 0, u"p2");
        xvalue(&b, 4, 200);
        xvalue(&b, 0, 0);
        check_data(fx, 2, &b);
}

/* One PERF_ERROR_RETURN block. */
static void xerror(struct exp *e, uint32_t status)
{
        x32(e, status);
        x32(e, 0);
        x32(e, 16);
        x32(e, 0);
}

static void data_errors(void **state)
{
        struct fx *fx = *state;
        struct exp b = { .n = 0 };
        static const struct ns_counterset fewer = {
                .guid = g_multi, .instance_type = 2, .detail_level = 100,
                .name = "Alpha Set", .description = "", .provider_name = "",
                .n_counters = 1, .counters = multi_counters, .live = true,
        };

        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, 1, ANY, u"alpha"), 0);
        assert_int_equal(add1(fx, &g_multi, 2, ANY, u"beta"), 0);
        assert_int_equal(add1(fx, &g_single, 2, ANY, NULL), 0);
        assert_int_equal(add1(fx, &g_installed, 1, ANY, u"*"), 0);

        /* The named instance went away: only its block fails. */
        assert_true(fake_ns_remove_instance(fx->ns, &g_multi, 0, L"alpha"));
        xerror(&b, ERROR_WMI_INSTANCE_NOT_FOUND);
        xheader(&b, 1, 32);
        xvalue(&b, 8, 2);
        xheader(&b, 1, 32);
        xvalue(&b, 4, 42);
        /* Installed only: "*" over no instance is an empty list. */
        xheader(&b, 4, 24);
        x32(&b, 8);
        x32(&b, 0);
        check_data(fx, 4, &b);

        /* The single instance gone; the counterset gone; a counter gone. */
        assert_true(fake_ns_remove_instance(fx->ns, &g_single, 0, L""));
        fake_ns_remove(fx->ns, &g_installed);
        fake_ns_remove(fx->ns, &g_multi);
        fake_ns_add(fx->ns, &fewer);
        fake_ns_add_instance(fx->ns, &g_multi, 0, L"alpha", alpha_values);
        fake_ns_add_instance(fx->ns, &g_multi, 1, L"beta", beta_values);
        b.n = 0;
        xheader(&b, 1, 32);
        xvalue(&b, 4, 10);
        xerror(&b, ERROR_WMI_ITEMID_NOT_FOUND);
        xerror(&b, ERROR_WMI_INSTANCE_NOT_FOUND);
        xerror(&b, ERROR_WMI_GUID_NOT_FOUND);
        check_data(fx, 4, &b);

        /* A single-instance set that two instances claim. */
        fake_ns_add_instance(fx->ns, &g_single, 0, L"a", single_values);
        fake_ns_add_instance(fx->ns, &g_single, 1, L"b", single_values);
        b.n = 0;
        xheader(&b, 1, 32);
        xvalue(&b, 4, 10);
        xerror(&b, ERROR_WMI_ITEMID_NOT_FOUND);
        xerror(&b, ERROR_WMI_INVALID_REGINFO);
        xerror(&b, ERROR_WMI_GUID_NOT_FOUND);
        check_data(fx, 4, &b);

        /* Snapshots that do not fit their countersets. */
        fake_ns_short_snapshots(fx->ns, true);
        b.n = 0;
        for (int i = 0; i < 3; i++)
                xerror(&b, ERROR_WMI_INVALID_REGINFO);
        xerror(&b, ERROR_WMI_GUID_NOT_FOUND);
        check_data(fx, 4, &b);
        fake_ns_short_snapshots(fx->ns, false);

        /* The namespace failing to collect. */
        fake_ns_fail_snapshots(fx->ns, -ETIMEDOUT);
        b.n = 0;
        for (int i = 0; i < 3; i++)
                xerror(&b, ERROR_TIMEOUT);
        xerror(&b, ERROR_WMI_GUID_NOT_FOUND);
        check_data(fx, 4, &b);
}

/* One snapshot per counterset per call, between PERF_COLLECT_START and _END. */
static void data_one_snapshot_per_counterset(void **state)
{
        struct fx *fx = *state;
        const struct fake_event *ev;
        struct exp b = { .n = 0 };
        size_t n;

        open_query(fx, u"m");
        assert_int_equal(add1(fx, &g_multi, 1, ANY, u"beta"), 0);
        assert_int_equal(add1(fx, &g_single, 2, ANY, NULL), 0);
        assert_int_equal(add1(fx, &g_multi, 1, 1, u"*"), 0);
        fake_ns_clear_events(fx->ns);
        /* Every snapshot moves every value on: blocks cut from different
         * snapshots of the same counterset would disagree. */
        fake_ns_bump_on_snapshot(fx->ns, true);
        for (uint64_t round = 0; round < 2; round++) {
                b.n = 0;
                xheader(&b, 1, 32);
                xvalue(&b, 4, 20 + round);
                xheader(&b, 1, 32);
                xvalue(&b, 4, 42 + round);
                xheader(&b, 4, 64);
                x32(&b, 48);
                x32(&b, 1);
                xinstance(&b, 1, u"beta");
                xvalue(&b, 4, 20 + round);
                check_data(fx, 3, &b);
        }
        n = fake_ns_events(fx->ns, &ev);
        assert_int_equal(n, 12);
        for (size_t i = 0; i < n; i += 3) {
                const GUID *g = (i / 3) % 2 ? &g_single : &g_multi;

                assert_int_equal(ev[i].kind, FAKE_NOTIFY);
                assert_int_equal(ev[i].code, PERF_COLLECT_START);
                assert_memory_equal(&ev[i].cs, g, sizeof(GUID));
                assert_int_equal(ev[i].size, 2 * sizeof(wchar_t));
                assert_memory_equal(ev[i].buffer, L"m", 2 * sizeof(wchar_t));
                assert_int_equal(ev[i + 1].kind, FAKE_SNAPSHOT);
                assert_int_equal(ev[i + 1].code, NS_SNAPSHOT_COLLECT);
                assert_memory_equal(&ev[i + 1].cs, g, sizeof(GUID));
                assert_int_equal(ev[i + 2].kind, FAKE_NOTIFY);
                assert_int_equal(ev[i + 2].code, PERF_COLLECT_END);
                assert_memory_equal(&ev[i + 2].cs, g, sizeof(GUID));
        }
}

/* Instances are found by name on every call, as they come and go. */
static void data_reresolves_instances(void **state)
{
        struct fx *fx = *state;
        static const uint64_t v[] = { 99, 0, 0 };
        struct exp b = { .n = 0 };

        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, 1, ANY, u"beta"), 0);
        assert_int_equal(add1(fx, &g_multi, 1, ANY, u"*"), 0);
        assert_true(fake_ns_remove_instance(fx->ns, &g_multi, 1, L"beta"));
        assert_true(fake_ns_remove_instance(fx->ns, &g_multi, 7, smile_name));
        fake_ns_add_instance(fx->ns, &g_multi, 9, L"beta", v);
        fake_ns_add_instance(fx->ns, &g_multi, 3, L"gamma", v);
        xheader(&b, 1, 32);
        xvalue(&b, 4, 99);
        xheader(&b, 4, 16 + 8 + 3 * 40);
        x32(&b, 8 + 3 * 40);
        x32(&b, 3);
        xinstance(&b, 0, u"alpha");
        xvalue(&b, 4, 10);
        xinstance(&b, 9, u"beta");
        xvalue(&b, 4, 99);
        xinstance(&b, 3, u"gamma");
        xvalue(&b, 4, 99);
        check_data(fx, 2, &b);
}

static void data_sizing(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o;
        struct exp b = { .n = 0 };

        open_query(fx, NULL);
        /* An empty query: the header alone. */
        check_data(fx, 0, &b);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"*"), 0);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.out_size, 0);
        assert_null(o.data);
        /* 48 + header 16 + ids 24 + instances 8 + 2 * (24 + 48) + (16 + 48) */
        assert_int_equal(o.rtn_size, 48 + 16 + 24 + 8 + 2 * 72 + 64);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, o.rtn_size, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 48 + 16 + 24 + 8 + 2 * 72 + 64);
        out_done(&o);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 0, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.rtn_size, 48 + 16 + 24 + 8 + 2 * 72 + 64);
}

/* Snapshots taken for QueryCounterData since the last fake_ns_clear_events. */
static size_t collections(const struct fx *fx)
{
        return fake_ns_count(fx->ns, FAKE_SNAPSHOT, NS_SNAPSHOT_COLLECT);
}

/*
 * The sizing call collects; the call that follows with the size it was
 * told is answered from that one sample (the values do not move though
 * every snapshot bumps them), with exactly that size.  Another call on the
 * handle, or waiting past the window, makes the next call collect again.
 */
static void data_sizing_collects_once(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o, again;
        uint32_t need;

        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"*"), 0);
        fake_ns_bump_on_snapshot(fx->ns, true);
        fake_ns_clear_events(fx->ns);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        need = o.rtn_size;
        assert_int_equal(collections(fx), 1);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, need, &o), ERROR_SUCCESS);
        assert_int_equal(collections(fx), 1);
        assert_int_equal(o.out_size, need);
        assert_int_equal(o.rtn_size, need);
        /* alpha's first counter as it was before the one snapshot bumped it */
        assert_int_equal(get32(o.data + 48 + 16 + 24 + 8 + 24 + 8), alpha_values[0]);
        out_done(&o);

        /* Answered once only: the next call is a new sample. */
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, need, &again), ERROR_SUCCESS);
        assert_int_equal(collections(fx), 2);
        assert_int_equal(get32(again.data + 48 + 16 + 24 + 8 + 24 + 8), alpha_values[0] + 1);
        out_done(&again);

        /* Another call on the handle in between drops what was kept. */
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, 1u << 16, &again), ERROR_SUCCESS);
        out_done(&again);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, need, &o), ERROR_SUCCESS);
        assert_int_equal(collections(fx), 4);
        out_done(&o);

        /* So does the window going by. */
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        usleep(PCQ_KEPT_REPLY_NS / 1000 + 100000);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, need, &o), ERROR_SUCCESS);
        assert_int_equal(collections(fx), 6);
        out_done(&o);

        /* A buffer still too small: measured again, never truncated. */
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, need - 8, &o),
                         ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.rtn_size, need);
        assert_int_equal(collections(fx), 8);
}

/*
 * A session keeps one sizing call's reply at a time: a sizing call on a
 * second handle drops the first handle's, so a client cannot leave the
 * server holding a reply per handle it opens; closing the handle that
 * keeps one forgets it.
 */
static void data_one_kept_reply_per_session(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o;
        void *first, *second;
        uint32_t need;

        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"*"), 0);
        first = fx->q;
        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"*"), 0);
        second = fx->q;
        fake_ns_clear_events(fx->ns);
        assert_int_equal(H->query_counter_data(&fx->s, first, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        need = o.rtn_size;
        assert_ptr_equal(fx->s.kept, first);
        assert_int_equal(H->query_counter_data(&fx->s, second, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_ptr_equal(fx->s.kept, second);
        assert_int_equal(collections(fx), 2);
        /* The first handle's reply went: its real call collects again. */
        assert_int_equal(H->query_counter_data(&fx->s, first, need, &o), ERROR_SUCCESS);
        assert_int_equal(collections(fx), 3);
        out_done(&o);
        /* The second's is still there, until its handle closes. */
        assert_ptr_equal(fx->s.kept, second);
        assert_int_equal(H->close_query(&fx->s, second), ERROR_SUCCESS);
        assert_null(fx->s.kept);
        fx->q = first;
}

/*
 * A query read again is written in one pass into a buffer sized from last
 * time; when instances arrive that buffer is too small and the two-pass
 * path takes over.  Either way the bytes are the same (bar the clocks).
 */
static void data_regrowth(void **state)
{
        struct fx *fx = *state;
        struct pv2_out a, b;

        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"*"), 0);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 20, &a), ERROR_SUCCESS);
        out_done(&a);
        for (uint32_t i = 0; i < 50; i++) {
                wchar_t name[16];

                swprintf(name, 16, L"grown%u", i);
                fake_ns_add_instance(fx->ns, &g_multi, 100 + i, name, alpha_values);
        }
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 20, &a), ERROR_SUCCESS);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 20, &b), ERROR_SUCCESS);
        assert_true(a.out_size > 48 + 16 + 24 + 8 + 50 * 72);
        assert_int_equal(a.out_size, b.out_size);
        assert_memory_equal(a.data, b.data, 8);
        assert_memory_equal(a.data + 48, b.data + 48, a.out_size - 48);
        out_done(&a);
        out_done(&b);
}

/* A query of every counter of every instance of g_multi. */
static void open_multi_all(struct fx *fx)
{
        open_query(fx, NULL);
        assert_int_equal(add1(fx, &g_multi, WILD, ANY, u"*"), 0);
}

/* The bytes of every counter of every instance of g_multi, as check_data returns them. */
static uint32_t multi_reply_size(struct fx *fx)
{
        struct pv2_out o;
        uint32_t need;

        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 24, &o), ERROR_SUCCESS);
        need = o.out_size;
        out_done(&o);
        return need;
}

/*
 * A reply the query memory cannot pay for is refused with
 * ERROR_OUTOFMEMORY, nothing sent and nothing held; the same call once it
 * fits succeeds, paid while lent to the transport and given back after.
 */
static void data_query_memory(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o;
        uint32_t need;

        open_multi_all(fx);
        need = multi_reply_size(fx);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);

        fake_ns_set_memory(fx->ns, need - 1);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 24, &o), ERROR_OUTOFMEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 0);
        assert_null(o.data);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);

        fake_ns_set_memory(fx->ns, need);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 24, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, need);
        assert_int_equal(fake_ns_memory_used(fx->ns), need);
        assert_int_equal(pcq_session_lent(&fx->s), need);
        out_done(&o);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
        assert_int_equal(pcq_session_lent(&fx->s), 0);

        /* EnumerateInstances' names are paid the same way. */
        fake_ns_set_memory(fx->ns, 8);
        assert_int_equal(H->enumerate_instances(&fx->s, NULL, &g_multi, 4096, &o),
                         ERROR_OUTOFMEMORY);
        assert_null(o.data);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
}

/*
 * A sizing call's reply is paid while kept, and while lent to the call
 * that takes it; one the query memory cannot pay for is not kept, and the
 * call that follows collects again.
 */
static void data_kept_reply_paid(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o;
        uint32_t need;

        open_multi_all(fx);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        need = o.rtn_size;
        assert_int_equal(fake_ns_memory_used(fx->ns), need);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, need, &o), ERROR_SUCCESS);
        assert_int_equal(fake_ns_memory_used(fx->ns), need);
        out_done(&o);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);

        /* Closing the handle gives a kept reply back too (teardown checks). */
        fake_ns_set_memory(fx->ns, need - 1);
        fake_ns_clear_events(fx->ns);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
        fake_ns_set_memory(fx->ns, 0);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, need, &o), ERROR_SUCCESS);
        assert_int_equal(collections(fx), 2);
        out_done(&o);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 48, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(fake_ns_memory_used(fx->ns), need);
}

/*
 * The session keeps a reply buffer from one call to the next only up to
 * PCQ_REPLY_KEEP_BYTES: a client of a huge counterset holds nothing
 * between its calls.
 */
static void data_large_reply_not_kept(void **state)
{
        struct fx *fx = *state;
        struct pv2_out o;

        open_multi_all(fx);
        (void) multi_reply_size(fx);
        assert_non_null(fx->s.reply.data);
        for (uint32_t i = 0; i < 20000; i++) {
                wchar_t name[16];

                swprintf(name, 16, L"many%u", i);
                fake_ns_add_instance(fx->ns, &g_multi, 100 + i, name, alpha_values);
        }
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, 1u << 24, &o), ERROR_SUCCESS);
        assert_true(o.out_size > PCQ_REPLY_KEEP_BYTES);
        assert_true(pcq_session_lent(&fx->s) >= o.out_size);
        out_done(&o);
        assert_null(fx->s.reply.data);
        assert_int_equal(fake_ns_memory_used(fx->ns), 0);
}

static void query_limit(void **state)
{
        struct fx *fx = *state;
        size_t n = PCQ_QUERY_MAX_ITEMS + 1;
        uint8_t *buf = calloc(n, 48);
        struct exp one = { .n = 0 };

        assert_non_null(buf);
        open_query(fx, NULL);
        /* Distinct items: "*" with instance ids 0..n-1. */
        for (size_t i = 0; i < n; i++) {
                one.n = 0;
                xident(&one, &g_multi, 1, (uint32_t) i, u"*", 0, 0, 0);
                memcpy(buf + 48 * i, one.d, 48);
        }
        assert_int_equal(H->validate_counters(&fx->s, fx->q, buf, (uint32_t) (48 * n), true),
                         ERROR_SUCCESS);
        for (size_t i = 0; i < n - 1; i++)
                assert_int_equal(get32(buf + 48 * i + 16), 0);
        assert_int_equal(get32(buf + 48 * (n - 1) + 16), ERROR_OUTOFMEMORY);
        free(buf);
}

/* Random identifier buffers: never a crash, only the statuses of the table. */
static void validate_garbage(void **state)
{
        struct fx *fx = *state;
        uint64_t x = 0x9E3779B97F4A7C15ull;
        uint8_t buf[512];
        struct pv2_out o;

        open_query(fx, NULL);
        for (int round = 0; round < 3000; round++) {
                uint32_t size = 0, off = 0;

                for (size_t i = 0; i < sizeof(buf); i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        buf[i] = (uint8_t) x;
                }
                size = (uint32_t) (x % sizeof(buf));
                /* Make most chains followable, with real GUIDs now and then. */
                for (off = 0; round % 4 && off + 40 <= size; off += get32(buf + off + 20)) {
                        uint32_t sz = 40 + 8 * (buf[off] % 6);

                        if (sz > size - off)
                                sz = size - off;
                        if (buf[off + 1] % 2)
                                memcpy(buf + off, buf[off + 2] % 2 ? &g_multi : &g_single, 16);
                        buf[off + 20] = (uint8_t) sz, buf[off + 21] = 0, buf[off + 22] = 0,
                        buf[off + 23] = 0;
                }
                uint32_t e = H->validate_counters(&fx->s, fx->q, buf, size, round % 3 != 0);
                assert_true(e == ERROR_SUCCESS || e == ERROR_INVALID_PARAMETER);
                for (off = 0; e == ERROR_SUCCESS && off + 40 <= size;
                     off += get32(buf + off + 20)) {
                        uint32_t st = get32(buf + off + 16);

                        assert_true(st == 0 || st == ERROR_WMI_GUID_NOT_FOUND ||
                                    st == ERROR_WMI_ITEMID_NOT_FOUND ||
                                    st == ERROR_PATH_NOT_FOUND || st == ERROR_ALREADY_EXISTS ||
                                    st == ERROR_INVALID_PARAMETER || st == ERROR_OUTOFMEMORY);
                }
        }
        assert_int_equal(H->query_counter_info(&fx->s, fx->q, PV2_MAX_COUNTER_INFO_BYTES, &o),
                         ERROR_SUCCESS);
        out_done(&o);
        assert_int_equal(H->query_counter_data(&fx->s, fx->q, PV2_MAX_COUNTER_DATA_BYTES, &o),
                         ERROR_SUCCESS);
        out_done(&o);
}

/* ---- the builder and the conversions on their own ---- */

static void check_units(struct pcq_buf *b, const char16_t *want)
{
        struct exp e = { .n = 0 };

        xstr(&e, want);
        assert_int_equal(b->len, e.n);
        assert_memory_equal(b->data, e.d, e.n);
}

static void buf_strings(void **state)
{
        static const struct {
                const char *in;
                const char16_t *out;
        } cases[] = {
                { "A\xc3\xa9\xf0\x9f\x98\x80", u"A\u00e9\U0001F600" },
                { "\xc0\xaf", u"\uFFFD\uFFFD" },                /* overlong */
                { "\xed\xa0\x80", u"\uFFFD\uFFFD\uFFFD" },      /* a surrogate */
                { "x\xe2\x82", u"x\uFFFD\uFFFD" },              /* cut short */
                { "\xf4\x90\x80\x80", u"\uFFFD\uFFFD\uFFFD\uFFFD" }, /* above U+10FFFF */
                { "", u"" },
        };
        static const wchar_t w[] = { 0xD800, 0x110000, 0x1F600, 0, L'z' };
        uint8_t data[64];
        struct pcq_buf b;

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                pcq_buf_measure(&b, 64);
                pcq_buf_utf8(&b, cases[i].in);
                assert_int_equal(b.len, 2 * (pcq_utf8_utf16_len(cases[i].in) + 1));
                pcq_buf_write(&b, data, sizeof(data));
                pcq_buf_utf8(&b, cases[i].in);
                check_units(&b, cases[i].out);
        }
        /* wchar_t: bad values and an embedded NUL become U+FFFD. */
        assert_int_equal(pcq_wcs_utf16_len(w, 5), 6);
        pcq_buf_write(&b, data, sizeof(data));
        pcq_buf_wcs(&b, w, 5);
        check_units(&b, u"\uFFFD\uFFFD\U0001F600\uFFFDz");
        assert_true(pcq_utf16_eq_wcs((const uint16_t *) u"\U0001F600x", 3, smile_name, 2));
        assert_false(pcq_utf16_eq_wcs((const uint16_t *) u"\U0001F600", 2, smile_name, 2));
        assert_false(pcq_utf16_eq_wcs((const uint16_t *) u"\U0001F600xy", 4, smile_name, 2));
}

static void buf_utf16_to_wcs(void **state)
{
        const char16_t *in = u"a\U0001F600\xD800z\xDC00";
        wchar_t *w;
        size_t n;

        (void) state;
        assert_int_equal(pcq_utf16_to_wcs((const uint16_t *) in, 6, &w, &n), 0);
        assert_int_equal(n, 5);
        assert_int_equal(w[0], L'a');
        assert_int_equal(w[1], 0x1F600);
        assert_int_equal(w[2], 0xFFFD);
        assert_int_equal(w[3], L'z');
        assert_int_equal(w[4], 0xFFFD);
        assert_int_equal(w[5], 0);
        free(w);
        assert_int_equal(pcq_utf16z_to_wcs(NULL, 10, &w, &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(w[0], 0);
        free(w);
        assert_int_equal(pcq_utf16z_to_wcs((const uint16_t *) u"abcdef", 3, &w, &n), 0);
        assert_int_equal(n, 3);
        assert_true(wcscmp(w, L"abc") == 0);
        free(w);
}

static void buf_overflow(void **state)
{
        uint8_t data[6] = { 0 };
        struct pcq_buf b;

        (void) state;
        pcq_buf_measure(&b, 7);
        pcq_buf_u32(&b, 1);
        pcq_buf_u32(&b, 2);
        assert_true(b.overflow);
        assert_int_equal(b.len, 4);
        pcq_buf_u16(&b, 3);
        assert_int_equal(b.len, 4);
        /* Writing: nothing lands past the end, nothing at all after. */
        pcq_buf_write(&b, data, 5);
        pcq_buf_u32(&b, 0x04030201);
        pcq_buf_u16(&b, 0x0605);
        pcq_buf_u16(&b, 0);
        assert_true(b.overflow);
        assert_memory_equal(data, "\x01\x02\x03\x04\x00\x00", 6);
        pcq_buf_patch_u32(&b, 0, 0);
        assert_int_equal(data[0], 1);
        /* GUIDs are little-endian in their first three fields. */
        pcq_buf_write(&b, (uint8_t[16]){ 0 }, 16);
        pcq_buf_guid(&b, &g_prov);
        assert_memory_equal(b.data, "\x11\x11\x11\x11\x22\x22\x33\x33"
                                    "\x44\x55\x66\x77\x88\x99\xaa\xbb", 16);
}

static void put_bytes(struct pcq_buf *b, const void *ctx)
{
        pcq_buf_zero(b, *(const size_t *) ctx);
}

/* The pdwRtnSize rule at its edges, and results no dwInSize could hold. */
static void emit_limits(void **state)
{
        struct pv2_out o;
        size_t n = 24;

        (void) state;
        assert_int_equal(pcq_emit(put_bytes, &n, 24, 24, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 24);
        assert_int_equal(o.rtn_size, 24);
        out_done(&o);
        o = (struct pv2_out){ 0 };
        assert_int_equal(pcq_emit(put_bytes, &n, 23, 24, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 24);
        assert_null(o.data);
        /* Above the IDL's bound on dwInSize: an error, never a truncated buffer. */
        o = (struct pv2_out){ 0 };
        assert_int_equal(pcq_emit(put_bytes, &n, 24, 23, &o), ERROR_OUTOFMEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, 0);
        assert_null(o.data);
        n = 0;
        assert_int_equal(pcq_emit(put_bytes, &n, 0, 24, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 0);
        assert_null(o.data);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                T(access_denied),
                T(enumerate_counterset),
                T(reginfo_counterset),
                T(reginfo_counter),
                T(reginfo_strings),
                T(reginfo_string_blocks),
                T(reginfo_errors),
                T(enumerate_instances),
                T(enumerate_instances_errors),
                T(instance_names_unicode),
                T(validate_add),
                T(counter_info),
                T(validate_remove),
                T(validate_whole_call_errors),
                T(counter_identity),
                T(data_block_types),
                T(data_global_and_zero_size),
                T(data_errors),
                T(data_one_snapshot_per_counterset),
                T(data_reresolves_instances),
                T(data_sizing),
                T(data_sizing_collects_once),
                T(data_one_kept_reply_per_session),
                T(data_regrowth),
                T(data_query_memory),
                T(data_kept_reply_paid),
                T(data_large_reply_not_kept),
                T(query_limit),
                T(validate_garbage),
                cmocka_unit_test(buf_strings),
                cmocka_unit_test(buf_utf16_to_wcs),
                cmocka_unit_test(buf_overflow),
                cmocka_unit_test(emit_limits),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
