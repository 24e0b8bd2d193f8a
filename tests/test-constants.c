/* SPDX-License-Identifier: MIT */
/*
 * The numbers a Windows header would give: every counter type with the
 * value MS-PCQ 2.2.4.2 states (the rest with winperf.h's), and the instance
 * types, detail levels, aggregate functions, attributes, notification codes
 * and block types MS-PCQ and the counter schema name.  A wrong bit in a
 * composed type would silently change what every client computes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <perflib.h>
#include <winperf.h>

struct constant {
        const char *name;
        uint64_t have, want;
};
#define C(name, want) { #name, (uint64_t) (name), (want) }

/* Counter types, values as printed in MS-PCQ 2.2.4.2. */
static const struct constant mspcq_types[] = {
        C(PERF_COUNTER_COUNTER, 0x10410400),
        C(PERF_COUNTER_TIMER, 0x20410500),
        C(PERF_COUNTER_QUEUELEN_TYPE, 0x00450400),
        C(PERF_COUNTER_LARGE_QUEUELEN_TYPE, 0x00450500),
        C(PERF_COUNTER_100NS_QUEUELEN_TYPE, 0x00550500),
        C(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, 0x00650500),
        C(PERF_COUNTER_BULK_COUNT, 0x10410500),
        C(PERF_COUNTER_RAWCOUNT, 0x00010000),
        C(PERF_COUNTER_LARGE_RAWCOUNT, 0x00010100),
        C(PERF_COUNTER_RAWCOUNT_HEX, 0x00000000),
        C(PERF_COUNTER_LARGE_RAWCOUNT_HEX, 0x00000100),
        C(PERF_SAMPLE_FRACTION, 0x20C20400),
        C(PERF_SAMPLE_COUNTER, 0x00410400),
        C(PERF_COUNTER_TIMER_INV, 0x21410500),
        C(PERF_ELAPSED_TIME, 0x30240500),
        C(PERF_SAMPLE_BASE, 0x40030401),
        C(PERF_AVERAGE_TIMER, 0x30020400),
        C(PERF_AVERAGE_BASE, 0x40030402),
        C(PERF_AVERAGE_BULK, 0x40020500),
        C(PERF_OBJ_TIME_TIMER, 0x20610500),
        C(PERF_PRECISION_100NS_TIMER, 0x20570500),
        C(PERF_PRECISION_SYSTEM_TIMER, 0x20470500),
        C(PERF_PRECISION_OBJECT_TIMER, 0x20670500),
        C(PERF_100NSEC_TIMER, 0x20510500),
        C(PERF_100NSEC_TIMER_INV, 0x21510500),
        C(PERF_RAW_FRACTION, 0x20020400),
        C(PERF_RAW_BASE, 0x40030403),
        C(PERF_LARGE_RAW_FRACTION, 0x20020500),
        C(PERF_LARGE_RAW_BASE, 0x40030500),
};

/* Types the counter schema accepts that MS-PCQ's table leaves out (winperf.h values). */
static const struct constant schema_types[] = {
        C(PERF_COUNTER_DELTA, 0x00400400),
        C(PERF_COUNTER_LARGE_DELTA, 0x00400500),
        C(PERF_COUNTER_MULTI_TIMER, 0x22410500),
        C(PERF_COUNTER_MULTI_TIMER_INV, 0x23410500),
        C(PERF_COUNTER_MULTI_BASE, 0x42030500),
        C(PERF_100NSEC_MULTI_TIMER, 0x22510500),
        C(PERF_100NSEC_MULTI_TIMER_INV, 0x23510500),
        C(PERF_COUNTER_TEXT, 0x00000B00),
        C(PERF_COUNTER_NODATA, 0x40000200),
};

static const struct constant others[] = {
        /* Instance types (MS-PCQ 2.2.4.1). */
        C(PERF_COUNTERSET_SINGLE_INSTANCE, 0x0),
        C(PERF_COUNTERSET_MULTI_INSTANCES, 0x2),
        C(PERF_COUNTERSET_SINGLE_AGGREGATE, 0x4),
        C(PERF_COUNTERSET_MULTI_AGGREGATE, 0x6),
        C(PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY, 0xC),
        C(PERF_COUNTERSET_INSTANCE_AGGREGATE, 0x16),
        /* Detail levels (MS-PCQ 2.2.4.1, 2.2.4.2; winperf.h for the other two). */
        C(PERF_DETAIL_NOVICE, 0x64),
        C(PERF_DETAIL_ADVANCED, 0xC8),
        C(PERF_DETAIL_EXPERT, 300),
        C(PERF_DETAIL_WIZARD, 400),
        /* Aggregate functions (MS-PCQ 2.2.4.2). */
        C(PERF_AGGREGATE_UNDEFINED, 0),
        C(PERF_AGGREGATE_TOTAL, 1),
        C(PERF_AGGREGATE_AVG, 2),
        C(PERF_AGGREGATE_MIN, 3),
        C(PERF_AGGREGATE_MAX, 4),
        /* Counter attributes (the schema's counterAttribute values). */
        C(PERF_ATTRIB_BY_REFERENCE, 0x1),
        C(PERF_ATTRIB_NO_DISPLAYABLE, 0x2),
        C(PERF_ATTRIB_NO_GROUP_SEPARATOR, 0x4),
        C(PERF_ATTRIB_DISPLAY_AS_REAL, 0x8),
        C(PERF_ATTRIB_DISPLAY_AS_HEX, 0x10),
        /* Notification request codes of a PERFLIBREQUEST callback. */
        C(PERF_ADD_COUNTER, 1),
        C(PERF_REMOVE_COUNTER, 2),
        C(PERF_ENUMERATE_INSTANCES, 3),
        C(PERF_COLLECT_START, 5),
        C(PERF_COLLECT_END, 6),
        C(PERF_FILTER, 9),
        /* Block types of PERF_COUNTER_HEADER (MS-PCQ 2.2.4.8). */
        C(PERF_ERROR_RETURN, 0),
        C(PERF_SINGLE_COUNTER, 1),
        C(PERF_MULTIPLE_COUNTERS, 2),
        C(PERF_MULTIPLE_INSTANCES, 4),
        C(PERF_COUNTERSET, 6),
        C(PERF_WILDCARD_COUNTER, 0xFFFFFFFF),
};

static void check_table(const struct constant *t, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (t[i].have != t[i].want)
                        fail_msg("%s is 0x%llx, must be 0x%llx", t[i].name,
                                 (unsigned long long) t[i].have, (unsigned long long) t[i].want);
}

static void counter_types_match_mspcq(void **state)
{
        (void) state;
        check_table(mspcq_types, sizeof(mspcq_types) / sizeof(mspcq_types[0]));
}

static void schema_only_types_match_winperf(void **state)
{
        (void) state;
        check_table(schema_types, sizeof(schema_types) / sizeof(schema_types[0]));
}

static void other_constants(void **state)
{
        (void) state;
        check_table(others, sizeof(others) / sizeof(others[0]));
}

/* The size bits of a type say how big its value is: what PerfSetCounterSetInfo checks. */
static void size_bits(void **state)
{
        (void) state;
        assert_int_equal(PERF_COUNTER_COUNTER & PERF_SIZE_VARIABLE_LEN, PERF_SIZE_DWORD);
        assert_int_equal(PERF_COUNTER_BULK_COUNT & PERF_SIZE_VARIABLE_LEN, PERF_SIZE_LARGE);
        assert_int_equal(PERF_COUNTER_TEXT & PERF_SIZE_VARIABLE_LEN, PERF_SIZE_VARIABLE_LEN);
        assert_int_equal(PERF_COUNTER_NODATA & PERF_SIZE_VARIABLE_LEN, PERF_SIZE_ZERO);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(counter_types_match_mspcq),
                cmocka_unit_test(schema_only_types_match_winperf),
                cmocka_unit_test(other_constants),
                cmocka_unit_test(size_bits),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
