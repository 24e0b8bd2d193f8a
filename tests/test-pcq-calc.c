/* SPDX-License-Identifier: MIT */
/*
 * libpcqcalc: one test per counter type of winperf.h with the value worked
 * out by hand from the spec's formula (MS-PCQ 2.2.4.2 and
 * counter-types-and-formulas.txt, with the conventions of pcq-calculate(3)),
 * then the rules around them (scale, capping, wrap, restarts, the first
 * sample, bad time bases and bases), the text formatting, the aggregation
 * and the status texts.
 *
 * Unless a test says otherwise the two samples are one second apart on
 * every clock: perf_time 1e7 -> 2e7 ticks at perf_freq 1e7 (10 MHz), and
 * time_100ns 1e7 -> 2e7 (100 ns units).
 *
 * One file with one case per counter type: it is long because winperf.h has
 * many types, and each type's case reads best beside its neighbours'.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pcq.h>
#include <perflib.h>

#define T0      10000000ull
#define T1      20000000ull
#define FREQ    10000000ull

static struct pcq_raw at0(uint64_t first, uint64_t second)
{
        return (struct pcq_raw){ .first = first, .second = second, .multi = 1,
                                 .perf_time = T0, .perf_freq = FREQ, .time_100ns = T0 };
}

static struct pcq_raw at1(uint64_t first, uint64_t second)
{
        return (struct pcq_raw){ .first = first, .second = second, .multi = 1,
                                 .perf_time = T1, .perf_freq = FREQ, .time_100ns = T1 };
}

static void near(double have, double want)
{
        if (!(fabs(have - want) <= 1e-9 * fmax(1.0, fabs(want))))
                fail_msg("have %.17g, want %.17g", have, want);
}

/* The value of a calculation that must succeed. */
static double calc(uint32_t type, int32_t scale, const struct pcq_raw *p,
                   const struct pcq_raw *c, uint32_t flags)
{
        double v = -12345.0;
        uint32_t r = pcq_calculate(type, scale, p, c, flags, &v);

        if (r != PDH_CSTATUS_VALID_DATA)
                fail_msg("status 0x%08X (%s)", r, pcq_status_text(r));
        return v;
}

/* The status of a calculation that must fail, and leave the value alone. */
static uint32_t calc_fails(uint32_t type, int32_t scale, const struct pcq_raw *p,
                           const struct pcq_raw *c, uint32_t flags)
{
        double v = -12345.0;
        uint32_t r = pcq_calculate(type, scale, p, c, flags, &v);

        assert_int_not_equal(r, PDH_CSTATUS_VALID_DATA);
        assert_true(v == -12345.0);
        return r;
}

/* A rate or timer over one second with the counter going from c0 to c1. */
static double over_1s(uint32_t type, uint64_t c0, uint64_t c1)
{
        struct pcq_raw p = at0(c0, 0), c = at1(c1, 0);

        return calc(type, 0, &p, &c, 0);
}

/* A single-sample type. */
static double once(uint32_t type, uint64_t first, uint64_t second)
{
        struct pcq_raw c = at1(first, second);

        return calc(type, 0, NULL, &c, 0);
}

/* ---- one test per type ---- */

static void counter_counter(void **state)
{
        (void)state;
        /* PERF_COUNTER_COUNTER: DeltaC/DeltaT = (1500-1000)/((2e7-1e7)/1e7 s) = 500/s */
        near(over_1s(PERF_COUNTER_COUNTER, 1000, 1500), 500.0);
}

static void counter_timer(void **state)
{
        (void)state;
        /* PERF_COUNTER_TIMER: 100*DeltaC/DeltaT = 100*2.5e6/1e7 ticks = 25 % */
        near(over_1s(PERF_COUNTER_TIMER, 0, 2500000), 25.0);
}

static void queuelen(void **state)
{
        (void)state;
        /* PERF_COUNTER_QUEUELEN_TYPE: DeltaC/DeltaT = 3e7 length-ticks / 1e7 ticks = 3 */
        near(over_1s(PERF_COUNTER_QUEUELEN_TYPE, 1000, 30001000), 3.0);
}

static void large_queuelen(void **state)
{
        (void)state;
        /* PERF_COUNTER_LARGE_QUEUELEN_TYPE: (1e10+2.5e7 - 1e10)/1e7 ticks = 2.5 */
        near(over_1s(PERF_COUNTER_LARGE_QUEUELEN_TYPE, 10000000000ull, 10025000000ull), 2.5);
}

static void queuelen_100ns(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(30000000, 0);

        (void)state;
        /* PERF_COUNTER_100NS_QUEUELEN_TYPE: DeltaC/Delta100ns = 3e7/(3e7-1e7) = 1.5 */
        c.time_100ns = 30000000;
        near(calc(PERF_COUNTER_100NS_QUEUELEN_TYPE, 0, &p, &c, 0), 1.5);
}

static void queuelen_obj_time(void **state)
{
        struct pcq_raw p = at0(0, 1000), c = at1(4000, 2000);

        (void)state;
        /* PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE: DeltaC/DeltaPerfTime = 4000/(2000-1000) = 4 */
        p.freq = c.freq = 100;
        near(calc(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, 0, &p, &c, 0), 4.0);
}

static void bulk_count(void **state)
{
        (void)state;
        /* PERF_COUNTER_BULK_COUNT: (1e12+3e9 - 1e12)/1 s = 3e9/s, past 32 bits */
        near(over_1s(PERF_COUNTER_BULK_COUNT, 1000000000000ull, 1003000000000ull), 3e9);
}

static void counter_text(void **state)
{
        struct pcq_raw c = at1(0, 0);
        struct pcq_type_info ti;

        (void)state;
        /* PERF_COUNTER_TEXT: not a number, nothing to compute */
        assert_int_equal(calc_fails(PERF_COUNTER_TEXT, 0, NULL, &c, 0), PDH_INVALID_ARGUMENT);
        pcq_type_info(PERF_COUNTER_TEXT, &ti);
        assert_true(ti.known && ti.is_text);
        assert_int_equal(ti.value_size, 0);
}

static void rawcount(void **state)
{
        (void)state;
        /* PERF_COUNTER_RAWCOUNT: C1 = 42; 32-bit, so 0x1_0000_0007 reads 7 */
        near(once(PERF_COUNTER_RAWCOUNT, 42, 0), 42.0);
        near(once(PERF_COUNTER_RAWCOUNT, 0x100000007ull, 0), 7.0);
}

static void large_rawcount(void **state)
{
        (void)state;
        /* PERF_COUNTER_LARGE_RAWCOUNT: C1 = 0x1_0000_0007 = 4294967303 */
        near(once(PERF_COUNTER_LARGE_RAWCOUNT, 0x100000007ull, 0), 4294967303.0);
}

static void rawcount_hex(void **state)
{
        (void)state;
        /* PERF_COUNTER_RAWCOUNT_HEX: C1 = 0xBEEF = 48879 (hex only in the text) */
        near(once(PERF_COUNTER_RAWCOUNT_HEX, 0xBEEF, 0), 48879.0);
}

static void large_rawcount_hex(void **state)
{
        (void)state;
        /* PERF_COUNTER_LARGE_RAWCOUNT_HEX: C1 = 0x12_3456_789A = 78187493530 */
        near(once(PERF_COUNTER_LARGE_RAWCOUNT_HEX, 0x123456789Aull, 0), 78187493530.0);
}

static void sample_fraction(void **state)
{
        struct pcq_raw p = at0(10, 100), c = at1(40, 160);

        (void)state;
        /* PERF_SAMPLE_FRACTION: 100*DeltaC/DeltaB = 100*(40-10)/(160-100) = 50 % */
        near(calc(PERF_SAMPLE_FRACTION, 0, &p, &c, 0), 50.0);
}

static void sample_counter(void **state)
{
        struct pcq_raw p = at0(200, 0), c = at1(700, 0);

        (void)state;
        /* PERF_SAMPLE_COUNTER: DeltaC/DeltaT = 500/(5e6 ticks / 1e7) = 1000/s */
        c.perf_time = T0 + 5000000;
        near(calc(PERF_SAMPLE_COUNTER, 0, &p, &c, 0), 1000.0);
}

static void counter_nodata(void **state)
{
        struct pcq_raw c = at1(1, 1);

        (void)state;
        /* PERF_COUNTER_NODATA: no value at all */
        assert_int_equal(calc_fails(PERF_COUNTER_NODATA, 0, NULL, &c, 0), PDH_NO_DATA);
}

static void timer_inv(void **state)
{
        (void)state;
        /* PERF_COUNTER_TIMER_INV: 100*(1 - DeltaC/DeltaT) = 100*(1 - 7.5e6/1e7) = 25 % */
        near(over_1s(PERF_COUNTER_TIMER_INV, 0, 7500000), 25.0);
}

static void sample_base(void **state)
{
        struct pcq_type_info ti;

        (void)state;
        /* PERF_SAMPLE_BASE: a base, shown as its raw value C1 = 60 */
        near(once(PERF_SAMPLE_BASE, 60, 0), 60.0);
        pcq_type_info(PERF_SAMPLE_BASE, &ti);
        assert_true(ti.is_base && !ti.two_samples);
}

static void average_timer(void **state)
{
        struct pcq_raw p = at0(0, 10), c = at1(5000000, 20);

        (void)state;
        /* PERF_AVERAGE_TIMER: (DeltaC/F)/DeltaB = (5e6/1e7 s)/(20-10) = 0.05 s/op */
        near(calc(PERF_AVERAGE_TIMER, 0, &p, &c, 0), 0.05);
}

static void average_base(void **state)
{
        (void)state;
        /* PERF_AVERAGE_BASE: a base, C1 = 20 */
        near(once(PERF_AVERAGE_BASE, 20, 0), 20.0);
}

static void average_bulk(void **state)
{
        struct pcq_raw p = at0(1000, 5), c = at1(9192, 7);

        (void)state;
        /* PERF_AVERAGE_BULK: DeltaC/DeltaB = (9192-1000)/(7-5) = 4096 bytes/op */
        near(calc(PERF_AVERAGE_BULK, 0, &p, &c, 0), 4096.0);
}

static void obj_time_timer(void **state)
{
        struct pcq_raw p = at0(0, 1000), c = at1(250, 2000);

        (void)state;
        /* PERF_OBJ_TIME_TIMER: 100*DeltaC/DeltaPerfTime = 100*250/(2000-1000) = 25 % */
        p.freq = c.freq = 1000;
        near(calc(PERF_OBJ_TIME_TIMER, 0, &p, &c, 0), 25.0);
}

static void nsec_timer(void **state)
{
        (void)state;
        /* PERF_100NSEC_TIMER: 100*DeltaC/Delta100ns = 100*(4e6-1e6)/1e7 = 30 % */
        near(over_1s(PERF_100NSEC_TIMER, 1000000, 4000000), 30.0);
}

static void nsec_timer_inv(void **state)
{
        (void)state;
        /* PERF_100NSEC_TIMER_INV: 100*(1 - 3e6/1e7) = 70 % */
        near(over_1s(PERF_100NSEC_TIMER_INV, 1000000, 4000000), 70.0);
}

static void multi_timer(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(20000000, 0);

        (void)state;
        /* PERF_COUNTER_MULTI_TIMER: 100*(DeltaC/DeltaT)/M = 100*(2e7/1e7)/4 = 50 % */
        c.multi = 4;
        near(calc(PERF_COUNTER_MULTI_TIMER, 0, &p, &c, 0), 50.0);
}

static void multi_timer_inv(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(35000000, 0);

        (void)state;
        /* PERF_COUNTER_MULTI_TIMER_INV: 100*(M - DeltaC/DeltaT) = 100*(4 - 3.5e7/1e7) = 50 % */
        c.multi = 4;
        near(calc(PERF_COUNTER_MULTI_TIMER_INV, 0, &p, &c, 0), 50.0);
        /* 100*(4 - 2.5) = 150: capped at 100, kept with PCQ_FMT_NOCAP100 */
        c.first = 25000000;
        near(calc(PERF_COUNTER_MULTI_TIMER_INV, 0, &p, &c, 0), 100.0);
        near(calc(PERF_COUNTER_MULTI_TIMER_INV, 0, &p, &c, PCQ_FMT_NOCAP100), 150.0);
}

static void multi_base(void **state)
{
        struct pcq_type_info ti;

        (void)state;
        /* PERF_COUNTER_MULTI_BASE: a base, C1 = 4; not itself a multi timer */
        near(once(PERF_COUNTER_MULTI_BASE, 4, 0), 4.0);
        pcq_type_info(PERF_COUNTER_MULTI_BASE, &ti);
        assert_true(ti.is_base && !ti.needs_multi);
        assert_int_equal(ti.value_size, 8);
}

static void nsec_multi_timer(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(30000000, 0);

        (void)state;
        /* PERF_100NSEC_MULTI_TIMER: 100*(3e7/1e7)/4 = 75 % */
        c.multi = 4;
        near(calc(PERF_100NSEC_MULTI_TIMER, 0, &p, &c, 0), 75.0);
}

static void nsec_multi_timer_inv(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(36000000, 0);

        (void)state;
        /* PERF_100NSEC_MULTI_TIMER_INV: 100*(4 - 3.6e7/1e7) = 40 % */
        c.multi = 4;
        near(calc(PERF_100NSEC_MULTI_TIMER_INV, 0, &p, &c, 0), 40.0);
}

static void raw_fraction(void **state)
{
        (void)state;
        /* PERF_RAW_FRACTION: 100*C1/B1 = 100*3/4 = 75 % */
        near(once(PERF_RAW_FRACTION, 3, 4), 75.0);
}

static void large_raw_fraction(void **state)
{
        (void)state;
        /* PERF_LARGE_RAW_FRACTION: 100*3e10/1.2e11 = 25 %, both past 32 bits */
        near(once(PERF_LARGE_RAW_FRACTION, 30000000000ull, 120000000000ull), 25.0);
}

static void raw_base(void **state)
{
        (void)state;
        /* PERF_RAW_BASE: a base, C1 = 4 */
        near(once(PERF_RAW_BASE, 4, 0), 4.0);
}

static void large_raw_base(void **state)
{
        (void)state;
        /* PERF_LARGE_RAW_BASE: a base, C1 = 1.2e11 */
        near(once(PERF_LARGE_RAW_BASE, 120000000000ull, 0), 120000000000.0);
}

static void elapsed_time(void **state)
{
        struct pcq_raw c = at1(1000, 61000);

        (void)state;
        /* PERF_ELAPSED_TIME: (PerfTime - C1)/PerfFreq = (61000-1000)/1000 = 60 s */
        c.freq = 1000;
        near(calc(PERF_ELAPSED_TIME, 0, NULL, &c, 0), 60.0);
        /* a start after now */
        c.first = 62000;
        assert_int_equal(calc_fails(PERF_ELAPSED_TIME, 0, NULL, &c, 0), PDH_CALC_NEGATIVE_VALUE);
}

static void counter_delta(void **state)
{
        (void)state;
        /* PERF_COUNTER_DELTA: C1 - C0 = 350 - 100 = 250 */
        near(over_1s(PERF_COUNTER_DELTA, 100, 350), 250.0);
}

static void counter_large_delta(void **state)
{
        (void)state;
        /* PERF_COUNTER_LARGE_DELTA: 7e9 - 5e9 = 2e9 */
        near(over_1s(PERF_COUNTER_LARGE_DELTA, 5000000000ull, 7000000000ull), 2e9);
}

static void precision_system_timer(void **state)
{
        struct pcq_raw p = at0(0, 10000000), c = at1(3000000, 20000000);

        (void)state;
        /* PERF_PRECISION_SYSTEM_TIMER: 100*DeltaC/DeltaB = 100*3e6/(2e7-1e7) = 30 % */
        near(calc(PERF_PRECISION_SYSTEM_TIMER, 0, &p, &c, 0), 30.0);
}

static void precision_100ns_timer(void **state)
{
        struct pcq_raw p = at0(1000000, 10000000), c = at1(1500000, 12000000);

        (void)state;
        /* PERF_PRECISION_100NS_TIMER: 100*(1.5e6-1e6)/(1.2e7-1e7) = 25 % */
        near(calc(PERF_PRECISION_100NS_TIMER, 0, &p, &c, 0), 25.0);
}

static void precision_object_timer(void **state)
{
        struct pcq_raw p = at0(0, 100), c = at1(80, 300);

        (void)state;
        /* PERF_PRECISION_OBJECT_TIMER: 100*DeltaC/DeltaPerfTime = 100*80/(300-100) = 40 % */
        p.freq = c.freq = 1000;
        near(calc(PERF_PRECISION_OBJECT_TIMER, 0, &p, &c, 0), 40.0);
}

static void histogram_type(void **state)
{
        struct pcq_raw c = at1(1, 0);
        struct pcq_type_info ti;

        (void)state;
        /* PERF_COUNTER_HISTOGRAM_TYPE: in winperf.h, with no formula anywhere */
        pcq_type_info(PERF_COUNTER_HISTOGRAM_TYPE, &ti);
        assert_false(ti.known);
        assert_string_equal(ti.name, "PERF_COUNTER_HISTOGRAM_TYPE");
        assert_int_equal(calc_fails(PERF_COUNTER_HISTOGRAM_TYPE, 0, NULL, &c, 0),
                         PDH_INVALID_ARGUMENT);
}

/* ---- what pcq_type_info says ---- */

#define T(name) { name, #name }
static const struct {
        uint32_t type;
        const char *name;
} every_type[] = {
        T(PERF_COUNTER_COUNTER), T(PERF_COUNTER_TIMER), T(PERF_COUNTER_QUEUELEN_TYPE),
        T(PERF_COUNTER_LARGE_QUEUELEN_TYPE), T(PERF_COUNTER_100NS_QUEUELEN_TYPE),
        T(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE), T(PERF_COUNTER_BULK_COUNT),
        T(PERF_COUNTER_TEXT), T(PERF_COUNTER_RAWCOUNT), T(PERF_COUNTER_LARGE_RAWCOUNT),
        T(PERF_COUNTER_RAWCOUNT_HEX), T(PERF_COUNTER_LARGE_RAWCOUNT_HEX),
        T(PERF_SAMPLE_FRACTION), T(PERF_SAMPLE_COUNTER), T(PERF_COUNTER_NODATA),
        T(PERF_COUNTER_TIMER_INV), T(PERF_SAMPLE_BASE), T(PERF_AVERAGE_TIMER),
        T(PERF_AVERAGE_BASE), T(PERF_AVERAGE_BULK), T(PERF_OBJ_TIME_TIMER),
        T(PERF_100NSEC_TIMER), T(PERF_100NSEC_TIMER_INV), T(PERF_COUNTER_MULTI_TIMER),
        T(PERF_COUNTER_MULTI_TIMER_INV), T(PERF_COUNTER_MULTI_BASE),
        T(PERF_100NSEC_MULTI_TIMER), T(PERF_100NSEC_MULTI_TIMER_INV),
        T(PERF_RAW_FRACTION), T(PERF_LARGE_RAW_FRACTION), T(PERF_RAW_BASE),
        T(PERF_LARGE_RAW_BASE), T(PERF_ELAPSED_TIME), T(PERF_COUNTER_DELTA),
        T(PERF_COUNTER_LARGE_DELTA), T(PERF_PRECISION_SYSTEM_TIMER),
        T(PERF_PRECISION_100NS_TIMER), T(PERF_PRECISION_OBJECT_TIMER),
};

static void every_type_known_and_named(void **state)
{
        struct pcq_type_info ti;

        (void)state;
        for (size_t i = 0; i < sizeof(every_type) / sizeof(every_type[0]); i++) {
                pcq_type_info(every_type[i].type, &ti);
                assert_true(ti.known);
                assert_string_equal(ti.name, every_type[i].name);
        }
}

static void type_info_fields(void **state)
{
        struct pcq_type_info ti;

        (void)state;
        pcq_type_info(PERF_COUNTER_COUNTER, &ti);
        assert_true(ti.two_samples && !ti.is_percent && !ti.needs_base && !ti.is_base);
        assert_int_equal(ti.value_size, 4);
        pcq_type_info(PERF_AVERAGE_BULK, &ti);
        assert_true(ti.two_samples && ti.needs_base && !ti.is_base && !ti.is_percent);
        assert_int_equal(ti.value_size, 8);
        pcq_type_info(PERF_100NSEC_MULTI_TIMER_INV, &ti);
        assert_true(ti.needs_multi && ti.is_percent && !ti.needs_perf_time);
        pcq_type_info(PERF_ELAPSED_TIME, &ti);
        assert_true(ti.needs_perf_time && !ti.two_samples && !ti.is_percent);
        pcq_type_info(PERF_PRECISION_SYSTEM_TIMER, &ti);
        assert_true(ti.needs_base && !ti.needs_perf_time);
        pcq_type_info(PERF_PRECISION_OBJECT_TIMER, &ti);
        assert_true(!ti.needs_base && ti.needs_perf_time);
        pcq_type_info(PERF_RAW_FRACTION, &ti);
        assert_true(ti.needs_base && !ti.two_samples && ti.is_percent);
        pcq_type_info(PERF_LARGE_RAW_BASE, &ti);
        assert_true(ti.is_base && !ti.needs_base);
        pcq_type_info(PERF_COUNTER_NODATA, &ti);
        assert_int_equal(ti.value_size, 0);
}

static void unknown_type(void **state)
{
        struct pcq_raw c = at1(1, 1);
        struct pcq_type_info ti;

        (void)state;
        pcq_type_info(0x12345678, &ti);
        assert_false(ti.known);
        assert_non_null(ti.name);
        assert_false(ti.two_samples || ti.is_percent || ti.needs_multi);
        assert_int_equal(calc_fails(0x12345678, 0, NULL, &c, 0), PDH_INVALID_ARGUMENT);
        /* ASCII text (PERF_TEXT_ASCII) is neither in MS-PCQ nor in the schema */
        assert_int_equal(calc_fails(PERF_COUNTER_TEXT | PERF_TEXT_ASCII, 0, NULL, &c, 0),
                         PDH_INVALID_ARGUMENT);
        pcq_type_info(PERF_COUNTER_COUNTER, NULL);     /* accepted, does nothing */
}

/* ---- the rules ---- */

static void scale(void **state)
{
        struct pcq_raw c = at1(1234, 0);

        (void)state;
        /* DefaultScale +2: 1234 * 10^2 = 123400 */
        near(calc(PERF_COUNTER_RAWCOUNT, 2, NULL, &c, 0), 123400.0);
        /* DefaultScale -3: 1234 * 10^-3 = 1.234 */
        near(calc(PERF_COUNTER_RAWCOUNT, -3, NULL, &c, 0), 1.234);
        /* the extremes MS-PCQ allows, and one past them */
        near(calc(PERF_COUNTER_RAWCOUNT, 10, NULL, &c, 0), 1.234e13);
        near(calc(PERF_COUNTER_RAWCOUNT, -10, NULL, &c, 0), 1.234e-7);
        assert_int_equal(calc_fails(PERF_COUNTER_RAWCOUNT, 11, NULL, &c, 0), PDH_INVALID_ARGUMENT);
        assert_int_equal(calc_fails(PERF_COUNTER_RAWCOUNT, -11, NULL, &c, 0), PDH_INVALID_ARGUMENT);
}

static void noscale_and_fmt_1000(void **state)
{
        struct pcq_raw c = at1(1234, 0), p = at0(0, 10), c2 = at1(5000000, 20);

        (void)state;
        /* PCQ_FMT_NOSCALE: DefaultScale 3 ignored, 1234 */
        near(calc(PERF_COUNTER_RAWCOUNT, 3, NULL, &c, PCQ_FMT_NOSCALE), 1234.0);
        /* PCQ_FMT_1000 on PERF_AVERAGE_TIMER: 0.05 s/op * 1000 = 50 (ms/op) */
        near(calc(PERF_AVERAGE_TIMER, 0, &p, &c2, PCQ_FMT_1000), 50.0);
        /* both with a scale: 1234 * 10^-1 * 1000 = 123400 */
        near(calc(PERF_COUNTER_RAWCOUNT, -1, NULL, &c, PCQ_FMT_1000), 123400.0);
}

static void capping(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(12000000, 0);

        (void)state;
        /* PERF_COUNTER_TIMER: 100*1.2e7/1e7 = 120 -> 100 unless PCQ_FMT_NOCAP100 */
        near(calc(PERF_COUNTER_TIMER, 0, &p, &c, 0), 100.0);
        near(calc(PERF_COUNTER_TIMER, 0, &p, &c, PCQ_FMT_NOCAP100), 120.0);
        /* the cap is on the percentage, before DefaultScale: 100 * 10^-1 = 10 */
        near(calc(PERF_COUNTER_TIMER, -1, &p, &c, 0), 10.0);
        /* PERF_RAW_FRACTION 5/4 = 125 % -> 100 */
        c = at1(5, 4);
        near(calc(PERF_RAW_FRACTION, 0, NULL, &c, 0), 100.0);
        near(calc(PERF_RAW_FRACTION, 0, NULL, &c, PCQ_FMT_NOCAP100), 125.0);
        /* not a percentage: a rate is never capped, 500/s stays */
        near(over_1s(PERF_COUNTER_COUNTER, 0, 500), 500.0);
}

static void inverse_floors(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(11000000, 0);

        (void)state;
        /* PERF_COUNTER_TIMER_INV: 100*(1 - 1.1e7/1e7) = -10 -> 0, also with NOCAP100 */
        near(calc(PERF_COUNTER_TIMER_INV, 0, &p, &c, 0), 0.0);
        near(calc(PERF_COUNTER_TIMER_INV, 0, &p, &c, PCQ_FMT_NOCAP100), 0.0);
        /* PERF_100NSEC_MULTI_TIMER_INV, M = 4: 100*(4 - 4.4e7/1e7) = -40 -> 0 */
        c.first = 44000000;
        c.multi = 4;
        near(calc(PERF_100NSEC_MULTI_TIMER_INV, 0, &p, &c, PCQ_FMT_NOCAP100), 0.0);
}

static void wrap_32bit(void **state)
{
        struct pcq_raw p = at0(0xFFFFFFF0u, 0xFFFFFFC0u), c = at1(0x10, 0x40);

        (void)state;
        /* PERF_COUNTER_COUNTER: (0x100 - 0xFFFFFF00) mod 2^32 = 0x200 = 512 in 1 s */
        near(over_1s(PERF_COUNTER_COUNTER, 0xFFFFFF00u, 0x100u), 512.0);
        /* PERF_COUNTER_DELTA: 3 - 0xFFFFFFFE mod 2^32 = 5 */
        near(over_1s(PERF_COUNTER_DELTA, 0xFFFFFFFEu, 3), 5.0);
        /* bits above 32 are not part of a 32-bit value: 0x2_00000020 - 0x1_00000010 -> 0x10 */
        near(over_1s(PERF_COUNTER_COUNTER, 0x100000010ull, 0x200000020ull), 16.0);
        /* PERF_SAMPLE_FRACTION: counter 0xFFFFFFF0 -> 0x10 (+32), base 0xFFFFFFC0 -> 0x40 (+128): 25 % */
        near(calc(PERF_SAMPLE_FRACTION, 0, &p, &c, 0), 25.0);
        /* PERF_AVERAGE_BULK: 64-bit counter, 32-bit PERF_AVERAGE_BASE wraps 0xFFFFFFFF -> 1 (+2) */
        p = at0(1000, 0xFFFFFFFFu);
        c = at1(3000, 1);
        near(calc(PERF_AVERAGE_BULK, 0, &p, &c, 0), 1000.0);
}

static void backwards_64bit(void **state)
{
        struct pcq_raw p, c;

        (void)state;
        /* a provider restart: 64-bit counters smaller than before are no sample */
        p = at0(1000000000, 0);
        c = at1(5, 0);
        assert_int_equal(calc_fails(PERF_COUNTER_BULK_COUNT, 0, &p, &c, 0), PDH_CSTATUS_INVALID_DATA);
        assert_int_equal(calc_fails(PERF_COUNTER_LARGE_DELTA, 0, &p, &c, 0), PDH_CSTATUS_INVALID_DATA);
        assert_int_equal(calc_fails(PERF_100NSEC_TIMER, 0, &p, &c, 0), PDH_CSTATUS_INVALID_DATA);
        /* a 64-bit base going back: PERF_LARGE_RAW_FRACTION needs one sample, so no issue;
         * PERF_PRECISION_SYSTEM_TIMER's base is its clock: a time base error */
        p = at0(0, 20000000);
        c = at1(10, 10000000);
        assert_int_equal(calc_fails(PERF_PRECISION_SYSTEM_TIMER, 0, &p, &c, 0),
                         PDH_CALC_NEGATIVE_TIMEBASE);
}

static void first_sample(void **state)
{
        struct pcq_raw c = at1(100, 10);

        (void)state;
        /* the first-sample rule: no previous sample, no rate */
        assert_int_equal(calc_fails(PERF_COUNTER_COUNTER, 0, NULL, &c, 0), PDH_CSTATUS_INVALID_DATA);
        assert_int_equal(calc_fails(PERF_AVERAGE_TIMER, 0, NULL, &c, 0), PDH_CSTATUS_INVALID_DATA);
        assert_int_equal(calc_fails(PERF_COUNTER_DELTA, 0, NULL, &c, 0), PDH_CSTATUS_INVALID_DATA);
        /* single-sample types do not need one */
        near(calc(PERF_COUNTER_RAWCOUNT, 0, NULL, &c, 0), 100.0);
        /* PERF_RAW_FRACTION: 100*100/10 = 1000 %, capped at 100 */
        near(calc(PERF_RAW_FRACTION, 0, NULL, &c, 0), 100.0);
}

static void invalid_samples(void **state)
{
        struct pcq_raw p = at0(1000, 0), c = at1(1500, 0);

        (void)state;
        /* a previous sample that has no value counts as none */
        p.status = PDH_CSTATUS_NO_INSTANCE;
        assert_int_equal(calc_fails(PERF_COUNTER_COUNTER, 0, &p, &c, 0), PDH_CSTATUS_INVALID_DATA);
        /* but a single-sample type ignores it */
        near(calc(PERF_COUNTER_RAWCOUNT, 0, &p, &c, 0), 1500.0);
        /* a current sample without a value never yields one */
        p.status = PDH_CSTATUS_VALID_DATA;
        c.status = PDH_CSTATUS_NO_INSTANCE;
        assert_int_equal(calc_fails(PERF_COUNTER_COUNTER, 0, &p, &c, 0), PDH_CSTATUS_INVALID_DATA);
        assert_int_equal(calc_fails(PERF_COUNTER_RAWCOUNT, 0, &p, &c, 0), PDH_CSTATUS_INVALID_DATA);
}

static void bad_arguments(void **state)
{
        struct pcq_raw c = at1(1, 0);
        double v;

        (void)state;
        assert_int_equal(pcq_calculate(PERF_COUNTER_RAWCOUNT, 0, NULL, NULL, 0, &v),
                         PDH_INVALID_ARGUMENT);
        assert_int_equal(pcq_calculate(PERF_COUNTER_RAWCOUNT, 0, NULL, &c, 0, NULL),
                         PDH_INVALID_ARGUMENT);
}

static void zero_time_base(void **state)
{
        struct pcq_raw p = at0(0, 0), c = at1(100, 0);

        (void)state;
        /* two samples in the same tick: PDH_CALC_NEGATIVE_TIMEBASE */
        c.perf_time = T0;
        assert_int_equal(calc_fails(PERF_COUNTER_COUNTER, 0, &p, &c, 0), PDH_CALC_NEGATIVE_TIMEBASE);
        /* a clock that went back */
        c.perf_time = T0 - 1;
        assert_int_equal(calc_fails(PERF_COUNTER_TIMER, 0, &p, &c, 0), PDH_CALC_NEGATIVE_TIMEBASE);
        /* the 100 ns clock, for the 100 ns types */
        c = at1(100, 0);
        c.time_100ns = T0;
        assert_int_equal(calc_fails(PERF_100NSEC_TIMER, 0, &p, &c, 0), PDH_CALC_NEGATIVE_TIMEBASE);
        near(calc(PERF_COUNTER_TIMER, 0, &p, &c, 0), 100.0 * 100 / 1e7);
        /* no frequency */
        c = at1(100, 0);
        c.perf_freq = 0;
        assert_int_equal(calc_fails(PERF_COUNTER_COUNTER, 0, &p, &c, 0), PDH_CALC_NEGATIVE_TIMEBASE);
        /* the object clock (PerfTimeId) standing still */
        c = at1(100, 0);
        assert_int_equal(calc_fails(PERF_OBJ_TIME_TIMER, 0, &p, &c, 0), PDH_CALC_NEGATIVE_TIMEBASE);
        /* PERF_ELAPSED_TIME with PerfFreqId 0 */
        c = at1(0, 1000);
        c.freq = 0;
        assert_int_equal(calc_fails(PERF_ELAPSED_TIME, 0, NULL, &c, 0), PDH_CALC_NEGATIVE_TIMEBASE);
}

static void zero_base(void **state)
{
        struct pcq_raw p = at0(10, 100), c = at1(40, 100);

        (void)state;
        /* DeltaB = 0: PDH_CALC_NEGATIVE_DENOMINATOR */
        assert_int_equal(calc_fails(PERF_SAMPLE_FRACTION, 0, &p, &c, 0), PDH_CALC_NEGATIVE_DENOMINATOR);
        assert_int_equal(calc_fails(PERF_AVERAGE_TIMER, 0, &p, &c, 0), PDH_CALC_NEGATIVE_DENOMINATOR);
        assert_int_equal(calc_fails(PERF_AVERAGE_BULK, 0, &p, &c, 0), PDH_CALC_NEGATIVE_DENOMINATOR);
        /* B1 = 0 */
        c = at1(3, 0);
        assert_int_equal(calc_fails(PERF_RAW_FRACTION, 0, NULL, &c, 0), PDH_CALC_NEGATIVE_DENOMINATOR);
        /* a 32-bit base is masked: 0x1_0000_0000 is 0 */
        c = at1(3, 0x100000000ull);
        assert_int_equal(calc_fails(PERF_RAW_FRACTION, 0, NULL, &c, 0), PDH_CALC_NEGATIVE_DENOMINATOR);
        near(calc(PERF_LARGE_RAW_FRACTION, 0, NULL, &c, PCQ_FMT_NOCAP100), 100.0 * 3 / 4294967296.0);
        /* An idle interval, 0/0: 0, as Windows shows an idle disk's Avg. Disk sec/Read */
        p = at0(40, 100);
        c = at1(40, 100);
        near(calc(PERF_AVERAGE_TIMER, 0, &p, &c, 0), 0.0);
        near(calc(PERF_AVERAGE_BULK, 0, &p, &c, 0), 0.0);
        near(calc(PERF_SAMPLE_FRACTION, 0, &p, &c, 0), 0.0);
        c = at1(0, 0);
        near(calc(PERF_RAW_FRACTION, 0, NULL, &c, 0), 0.0);
        /* MultiId 0 */
        p = at0(0, 0);
        c = at1(100, 0);
        c.multi = 0;
        assert_int_equal(calc_fails(PERF_COUNTER_MULTI_TIMER, 0, &p, &c, 0), PDH_CALC_NEGATIVE_DENOMINATOR);
}

/* ---- pcq_value_text ---- */

static const char *text(double v, uint64_t raw, uint32_t type, uint64_t attrib,
                        unsigned decimals, uint32_t flags)
{
        static char buf[512];

        memset(buf, 'X', sizeof(buf));
        assert_int_equal(pcq_value_text(v, raw, type, attrib, decimals, flags, buf, sizeof(buf)),
                         ERROR_SUCCESS);
        return buf;
}

static void text_no_display(void **state)
{
        (void)state;
        assert_string_equal(text(42, 42, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 6, 0), "");
        assert_string_equal(text(0, 0, PERF_COUNTER_NODATA, 0, 6, 0), "");
}

static void text_grouping(void **state)
{
        (void)state;
        assert_string_equal(text(1234567, 0, PERF_COUNTER_RAWCOUNT, 0, 6, PCQ_TEXT_GROUP),
                            "1,234,567");
        assert_string_equal(text(1234567, 0, PERF_COUNTER_RAWCOUNT, 0, 6, 0), "1234567");
        assert_string_equal(text(1234567, 0, PERF_COUNTER_RAWCOUNT,
                                 PERF_ATTRIB_NO_GROUP_SEPARATOR, 6, PCQ_TEXT_GROUP), "1234567");
        assert_string_equal(text(-1234.5, 0, PERF_COUNTER_COUNTER, 0, 2, PCQ_TEXT_GROUP),
                            "-1,234.50");
        assert_string_equal(text(123, 0, PERF_COUNTER_RAWCOUNT, 0, 6, PCQ_TEXT_GROUP), "123");
        assert_string_equal(text(123456, 0, PERF_COUNTER_RAWCOUNT, 0, 6, PCQ_TEXT_GROUP), "123,456");
}

static void text_real(void **state)
{
        (void)state;
        /* counts are whole numbers unless the attribute asks for real */
        assert_string_equal(text(42, 42, PERF_COUNTER_RAWCOUNT, 0, 3, 0), "42");
        assert_string_equal(text(42, 42, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_DISPLAY_AS_REAL, 3, 0),
                            "42.000");
        /* or a scale made them fractional */
        assert_string_equal(text(1.234, 1234, PERF_COUNTER_RAWCOUNT, 0, 3, 0), "1.234");
        /* computed values are real as typeperf prints them */
        assert_string_equal(text(37.5, 0, PERF_100NSEC_TIMER, 0, 6, 0), "37.500000");
        assert_string_equal(text(500, 0, PERF_COUNTER_COUNTER, 0, 0, 0), "500");
        /* rounding, and no "-0" */
        assert_string_equal(text(2.0 / 3.0, 0, PERF_COUNTER_COUNTER, 0, 4, 0), "0.6667");
        assert_string_equal(text(-0.0001, 0, PERF_COUNTER_COUNTER, 0, 2, 0), "0.00");
        assert_string_equal(text(0.999, 0, PERF_COUNTER_COUNTER, 0, 2, 0), "1.00");
        /* past the fast path: printf's digits, grouped alike */
        assert_string_equal(text(1e20, 0, PERF_COUNTER_BULK_COUNT, 0, 2, PCQ_TEXT_GROUP),
                            "100,000,000,000,000,000,000.00");
        assert_string_equal(text(-1e20, 0, PERF_COUNTER_BULK_COUNT, 0, 0, 0),
                            "-100000000000000000000");
        assert_string_equal(text(INFINITY, 0, PERF_COUNTER_COUNTER, 0, 2, PCQ_TEXT_GROUP), "inf");
        assert_string_equal(text(NAN, 0, PERF_COUNTER_COUNTER, 0, 2, 0), "nan");
}

static void text_hex(void **state)
{
        (void)state;
        /* the hex types show the raw value, not the (scaled) double */
        assert_string_equal(text(48879, 0xBEEF, PERF_COUNTER_RAWCOUNT_HEX, 0, 6, PCQ_TEXT_GROUP),
                            "0xBEEF");
        assert_string_equal(text(0, 0x123456789Aull, PERF_COUNTER_LARGE_RAWCOUNT_HEX, 0, 6, 0),
                            "0x123456789A");
        /* a 32-bit type shows 32 bits */
        assert_string_equal(text(0, 0x1FFFFFFFFull, PERF_COUNTER_RAWCOUNT_HEX, 0, 6, 0),
                            "0xFFFFFFFF");
        /* the attribute on a decimal type */
        assert_string_equal(text(255, 255, PERF_COUNTER_LARGE_RAWCOUNT,
                                 PERF_ATTRIB_DISPLAY_AS_HEX, 6, 0), "0xFF");
        /* hex wins over real, which MS-PCQ forbids beside it */
        assert_string_equal(text(255, 255, PERF_COUNTER_RAWCOUNT,
                                 PERF_ATTRIB_DISPLAY_AS_HEX | PERF_ATTRIB_DISPLAY_AS_REAL, 6, 0),
                            "0xFF");
        /* no display wins over everything */
        assert_string_equal(text(255, 255, PERF_COUNTER_RAWCOUNT_HEX, PERF_ATTRIB_NO_DISPLAYABLE, 6, 0),
                            "");
}

static void text_errors(void **state)
{
        char buf[8];

        (void)state;
        /* "1234567" needs 8 bytes with the NUL: fits; "12345678" does not, and leaves "" */
        assert_int_equal(pcq_value_text(1234567, 0, PERF_COUNTER_RAWCOUNT, 0, 0, 0, buf, 8),
                         ERROR_SUCCESS);
        assert_string_equal(buf, "1234567");
        assert_int_equal(pcq_value_text(12345678, 0, PERF_COUNTER_RAWCOUNT, 0, 0, 0, buf, 8),
                         ERROR_INSUFFICIENT_BUFFER);
        assert_string_equal(buf, "");
        /* even "" needs its NUL */
        assert_int_equal(pcq_value_text(0, 0, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE,
                                        0, 0, buf, 0), ERROR_INSUFFICIENT_BUFFER);
        assert_int_equal(pcq_value_text(0, 0, PERF_COUNTER_RAWCOUNT, 0, 0, 0, NULL, 8),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(pcq_value_text(0, 0, PERF_COUNTER_RAWCOUNT, 0, 18, 0, buf, 8),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(pcq_value_text(0, 0, PERF_COUNTER_TEXT, 0, 0, 0, buf, 8),
                         ERROR_INVALID_PARAMETER);
}

/* ---- pcq_aggregate ---- */

static void aggregate(void **state)
{
        const double v[] = { 1.0, 5.0, 3.0 };
        double r = -1;

        (void)state;
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_TOTAL, v, 3, &r), PDH_CSTATUS_VALID_DATA);
        near(r, 9.0);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_AVG, v, 3, &r), PDH_CSTATUS_VALID_DATA);
        near(r, 3.0);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_MIN, v, 3, &r), PDH_CSTATUS_VALID_DATA);
        near(r, 1.0);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_MAX, v, 3, &r), PDH_CSTATUS_VALID_DATA);
        near(r, 5.0);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_MIN, v + 1, 1, &r), PDH_CSTATUS_VALID_DATA);
        near(r, 5.0);
}

static void aggregate_no_data(void **state)
{
        const double v[] = { 1.0 };
        double r = -1;

        (void)state;
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_TOTAL, v, 0, &r), PDH_NO_DATA);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_TOTAL, NULL, 0, &r), PDH_NO_DATA);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_UNDEFINED, v, 1, &r), PDH_NO_DATA);
        near(r, -1);
        assert_int_equal(pcq_aggregate(5, v, 1, &r), PDH_INVALID_ARGUMENT);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_TOTAL, NULL, 1, &r), PDH_INVALID_ARGUMENT);
        assert_int_equal(pcq_aggregate(PERF_AGGREGATE_TOTAL, v, 1, NULL), PDH_INVALID_ARGUMENT);
}

/* ---- pcq_status_text ---- */

static void status_known(void **state)
{
        static const uint32_t codes[] = {
                ERROR_SUCCESS, ERROR_ACCESS_DENIED, ERROR_INVALID_PARAMETER, ERROR_OUTOFMEMORY,
                ERROR_NOT_ENOUGH_MEMORY, ERROR_INSUFFICIENT_BUFFER, ERROR_NOT_FOUND,
                ERROR_WMI_GUID_NOT_FOUND, ERROR_WMI_INSTANCE_NOT_FOUND, ERROR_WMI_ITEMID_NOT_FOUND,
                ERROR_CONNECTION_ABORTED, RPC_S_CALL_FAILED, ERROR_TIMEOUT, ERROR_INVALID_DATA,
                PDH_CSTATUS_NEW_DATA, PDH_CSTATUS_NO_MACHINE, PDH_CSTATUS_NO_INSTANCE,
                PDH_MORE_DATA, PDH_CSTATUS_ITEM_NOT_VALIDATED, PDH_NO_DATA,
                PDH_CALC_NEGATIVE_DENOMINATOR, PDH_CALC_NEGATIVE_TIMEBASE,
                PDH_CALC_NEGATIVE_VALUE, PDH_CSTATUS_NO_OBJECT, PDH_CSTATUS_NO_COUNTER,
                PDH_CSTATUS_INVALID_DATA, PDH_MEMORY_ALLOCATION_FAILURE, PDH_INVALID_HANDLE,
                PDH_INVALID_ARGUMENT, PDH_CSTATUS_NO_COUNTERNAME, PDH_CSTATUS_BAD_COUNTERNAME,
                PDH_INSUFFICIENT_BUFFER, PDH_CANNOT_CONNECT_MACHINE, PDH_INVALID_PATH,
                PDH_INVALID_INSTANCE, PDH_INVALID_DATA,
        };

        (void)state;
        assert_string_equal(pcq_status_text(PDH_CSTATUS_NO_OBJECT),
                            "The specified object was not found on the computer.");
        assert_string_equal(pcq_status_text(ERROR_ACCESS_DENIED), "Access is denied.");
        assert_string_equal(pcq_status_text(RPC_S_CALL_FAILED), "The remote procedure call failed.");
        for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
                const char *t = pcq_status_text(codes[i]);

                assert_non_null(t);
                assert_true(strlen(t) > 5);
                if (strncmp(t, "Unknown error", 13) == 0)
                        fail_msg("no text for 0x%08X", codes[i]);
                /* no two codes share a text */
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(t, pcq_status_text(codes[j]));
        }
}

static void status_unknown(void **state)
{
        (void)state;
        assert_string_equal(pcq_status_text(0xDEADBEEF), "Unknown error 0xDEADBEEF");
        assert_string_equal(pcq_status_text(0x1234), "Unknown error 0x00001234");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(counter_counter),
                cmocka_unit_test(counter_timer),
                cmocka_unit_test(queuelen),
                cmocka_unit_test(large_queuelen),
                cmocka_unit_test(queuelen_100ns),
                cmocka_unit_test(queuelen_obj_time),
                cmocka_unit_test(bulk_count),
                cmocka_unit_test(counter_text),
                cmocka_unit_test(rawcount),
                cmocka_unit_test(large_rawcount),
                cmocka_unit_test(rawcount_hex),
                cmocka_unit_test(large_rawcount_hex),
                cmocka_unit_test(sample_fraction),
                cmocka_unit_test(sample_counter),
                cmocka_unit_test(counter_nodata),
                cmocka_unit_test(timer_inv),
                cmocka_unit_test(sample_base),
                cmocka_unit_test(average_timer),
                cmocka_unit_test(average_base),
                cmocka_unit_test(average_bulk),
                cmocka_unit_test(obj_time_timer),
                cmocka_unit_test(nsec_timer),
                cmocka_unit_test(nsec_timer_inv),
                cmocka_unit_test(multi_timer),
                cmocka_unit_test(multi_timer_inv),
                cmocka_unit_test(multi_base),
                cmocka_unit_test(nsec_multi_timer),
                cmocka_unit_test(nsec_multi_timer_inv),
                cmocka_unit_test(raw_fraction),
                cmocka_unit_test(large_raw_fraction),
                cmocka_unit_test(raw_base),
                cmocka_unit_test(large_raw_base),
                cmocka_unit_test(elapsed_time),
                cmocka_unit_test(counter_delta),
                cmocka_unit_test(counter_large_delta),
                cmocka_unit_test(precision_system_timer),
                cmocka_unit_test(precision_100ns_timer),
                cmocka_unit_test(precision_object_timer),
                cmocka_unit_test(histogram_type),
                cmocka_unit_test(every_type_known_and_named),
                cmocka_unit_test(type_info_fields),
                cmocka_unit_test(unknown_type),
                cmocka_unit_test(scale),
                cmocka_unit_test(noscale_and_fmt_1000),
                cmocka_unit_test(capping),
                cmocka_unit_test(inverse_floors),
                cmocka_unit_test(wrap_32bit),
                cmocka_unit_test(backwards_64bit),
                cmocka_unit_test(first_sample),
                cmocka_unit_test(invalid_samples),
                cmocka_unit_test(bad_arguments),
                cmocka_unit_test(zero_time_base),
                cmocka_unit_test(zero_base),
                cmocka_unit_test(text_no_display),
                cmocka_unit_test(text_grouping),
                cmocka_unit_test(text_real),
                cmocka_unit_test(text_hex),
                cmocka_unit_test(text_errors),
                cmocka_unit_test(aggregate),
                cmocka_unit_test(aggregate_no_data),
                cmocka_unit_test(status_known),
                cmocka_unit_test(status_unknown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
