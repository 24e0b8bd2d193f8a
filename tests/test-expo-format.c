/* SPDX-License-Identifier: MIT */
/*
 * perflib-exporter's writer (exporter/expo-format.c) alone: family names,
 * one case per counter-type rule with the exact text expected, labels and
 * their escaping, shared instance names, _Total, name collisions, the two
 * syntaxes side by side and the health families.
 *
 * "test-expo-format --dump 0.0.4|openmetrics" prints a set using every
 * counter type, for test-expo-format-parse.sh to feed to real parsers.
 *
 * Unless a test says otherwise the sample's clock is perf_freq 1000 and
 * perf_time 5000 (five seconds after the clock's start).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <perflib.h>
#include <winperf.h>
#include "expo-format.h"

#define P EXPO_PROMETHEUS
#define OM EXPO_OPENMETRICS

static const struct expo_instance single = { 0, NULL };

/* The text of s; the caller frees it. */
static char *render(const struct expo_set *s, enum expo_syntax syn, bool with_total)
{
        struct expo_buf b = { 0 };
        struct expo_write_opts o = { .syntax = syn, .with_total = with_total };

        assert_int_equal(expo_write_set(&b, s, &o), 0);
        char *r = strdup(b.data ? b.data : "");
        assert_non_null(r);
        expo_buf_done(&b);
        return r;
}

/* One single-instance set "Proc" of n counters, every value present. */
static void check_one(const struct expo_counter *c, size_t n, const uint64_t *raw,
                      enum expo_syntax syn, const char *want)
{
        bool has[16];
        struct expo_set s = {
                .name = "Proc", .counters = c, .n_counters = n, .instances = &single,
                .n_instances = 1, .raw = raw, .has = has, .perf_time = 5000, .perf_freq = 1000,
        };

        assert_true(n <= 16);
        for (size_t i = 0; i < n; i++)
                has[i] = true;
        char *got = render(&s, syn, false);
        assert_string_equal(got, want);
        free(got);
}

static void check_name(const char *object, const char *counter, const char *want)
{
        char buf[128];

        assert_int_equal(expo_family_name(object, counter, buf, sizeof(buf)), 0);
        assert_string_equal(buf, want);
}

static void names(void **state)
{
        (void) state;
        check_name("Processor", "% Processor Time", "perflib_processor_percent_processor_time");
        check_name("Network Interface", "Bytes/sec", "perflib_network_interface_bytes_sec");
        check_name("X", "__weird  %%", "perflib_x_weird_percent_percent");
        check_name("X", "%Idle", "perflib_x_percent_idle");
        check_name("Größe", "Zähler (MB)", "perflib_gr_e_z_hler_mb");
        check_name("  Memory  ", "--Pages--", "perflib_memory_pages");

        char buf[32];
        assert_int_equal(expo_family_name("X", "", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(expo_family_name("X", "/// ", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(expo_family_name("", "Y", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(expo_family_name("X", "éé", buf, sizeof(buf)), -EINVAL);
        /* "perflib_x_abcdefgh" is 19 bytes with its NUL: 18 is one short. */
        assert_int_equal(expo_family_name("X", "abcdefgh", buf, 19), 0);
        assert_int_equal(expo_family_name("X", "abcdefgh", buf, 18), -ENAMETOOLONG);
}

static void raw_gauges(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Threads", "Number of threads." },
                { 2, PERF_COUNTER_LARGE_RAWCOUNT_HEX, 0, 0, 0, "Big", "" },
        };
        static const uint64_t raw[] = { 0x100000007ull, 0x100000007ull };

        /* A DWORD type's value is its low 32 bits; an empty HELP is the name. */
        check_one(c, 2, raw, P,
                  "# HELP perflib_proc_threads Number of threads.\n"
                  "# TYPE perflib_proc_threads gauge\n"
                  "perflib_proc_threads 7\n"
                  "# HELP perflib_proc_big Big\n"
                  "# TYPE perflib_proc_big gauge\n"
                  "perflib_proc_big 4294967303\n");
}

static void rate_counters(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_BULK_COUNT, 0, 0, 0, "Bytes/sec", "Bytes moved." },
                { 2, PERF_COUNTER_COUNTER, 0, 0, 0, "Events/sec", "Events." },
        };
        static const uint64_t raw[] = { UINT64_MAX, 12 };

        check_one(c, 2, raw, P,
                  "# HELP perflib_proc_bytes_sec_total Bytes moved.\n"
                  "# TYPE perflib_proc_bytes_sec_total counter\n"
                  "perflib_proc_bytes_sec_total 18446744073709551615\n"
                  "# HELP perflib_proc_events_sec_total Events.\n"
                  "# TYPE perflib_proc_events_sec_total counter\n"
                  "perflib_proc_events_sec_total 12\n");
        check_one(c, 1, raw, OM,
                  "# HELP perflib_proc_bytes_sec Bytes moved.\n"
                  "# TYPE perflib_proc_bytes_sec counter\n"
                  "perflib_proc_bytes_sec_total 18446744073709551615\n");
}

static void timers_100ns(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_100NSEC_TIMER, 0, 0, 0, "% Busy Time", "Busy." },
        };
        static const uint64_t raw[] = { 15000000 };

        check_one(c, 1, raw, P,
                  "# HELP perflib_proc_percent_busy_time_seconds_total Busy.\n"
                  "# TYPE perflib_proc_percent_busy_time_seconds_total counter\n"
                  "perflib_proc_percent_busy_time_seconds_total 1.5\n");
        check_one(c, 1, raw, OM,
                  "# HELP perflib_proc_percent_busy_time_seconds Busy.\n"
                  "# TYPE perflib_proc_percent_busy_time_seconds counter\n"
                  "# UNIT perflib_proc_percent_busy_time_seconds seconds\n"
                  "perflib_proc_percent_busy_time_seconds_total 1.5\n");
}

static void timers_ticks(void **state)
{
        (void) state;
        /* A name that already ends in "seconds" gets no second one. */
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_TIMER, 0, 0, 0, "Run Seconds", "Run." },
        };
        static const uint64_t raw[] = { 2500 };

        check_one(c, 1, raw, P,
                  "# HELP perflib_proc_run_seconds_total Run.\n"
                  "# TYPE perflib_proc_run_seconds_total counter\n"
                  "perflib_proc_run_seconds_total 2.5\n");
}

static void timers_inverse(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_100NSEC_TIMER_INV, 0, 0, 0, "% Idle", "Idle." },
                { 2, PERF_COUNTER_TIMER_INV, 0, 0, 0, "Wait", "Wait." },
        };
        static const uint64_t raw[] = { 10000000, 500 };

        check_one(c, 2, raw, P,
                  "# HELP perflib_proc_percent_idle_seconds_total Idle. (exported as the measured time, not inverted)\n"
                  "# TYPE perflib_proc_percent_idle_seconds_total counter\n"
                  "perflib_proc_percent_idle_seconds_total 1\n"
                  "# HELP perflib_proc_wait_seconds_total Wait. (exported as the measured time, not inverted)\n"
                  "# TYPE perflib_proc_wait_seconds_total counter\n"
                  "perflib_proc_wait_seconds_total 0.5\n");
}

static void timers_multi(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_100NSEC_MULTI_TIMER, 0, 0, 0, "% Busy", "Busy." },
                { 2, PERF_COUNTER_MULTI_BASE, 0, 0, 0, "Busy Base", "Instances." },
        };
        static const uint64_t raw[] = { 20000000, 4 };

        check_one(c, 2, raw, P,
                  "# HELP perflib_proc_percent_busy_seconds_total Busy.\n"
                  "# TYPE perflib_proc_percent_busy_seconds_total counter\n"
                  "perflib_proc_percent_busy_seconds_total 2\n"
                  "# HELP perflib_proc_percent_busy_base Instances.\n"
                  "# TYPE perflib_proc_percent_busy_base gauge\n"
                  "perflib_proc_percent_busy_base 4\n");
        /* Without a base the time alone. */
        check_one(c, 1, raw, P,
                  "# HELP perflib_proc_percent_busy_seconds_total Busy.\n"
                  "# TYPE perflib_proc_percent_busy_seconds_total counter\n"
                  "perflib_proc_percent_busy_seconds_total 2\n");
}

static void sample_fraction(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_SAMPLE_FRACTION, 0, 0, 2, "Hits", "Hit ratio." },
                { 2, PERF_SAMPLE_BASE, 0, 0, 0, "Hits Base", "Lookups." },
        };
        static const uint64_t raw[] = { 3, 10 };

        check_one(c, 2, raw, OM,
                  "# HELP perflib_proc_hits Hit ratio.\n"
                  "# TYPE perflib_proc_hits counter\n"
                  "perflib_proc_hits_total 3\n"
                  "# HELP perflib_proc_hits_base Lookups.\n"
                  "# TYPE perflib_proc_hits_base counter\n"
                  "perflib_proc_hits_base_total 10\n");
}

static void averages(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_AVERAGE_BULK, 0, 0, 0, "Avg. Bytes/Read", "Bytes a read." },
                { 2, PERF_AVERAGE_BASE, 0, 0, 0, "base", "" },
                { 3, PERF_AVERAGE_TIMER, 0, 0, 0, "Avg. Disk sec/Read", "Time a read." },
                { 4, PERF_AVERAGE_BASE, 0, 0, 0, "base", "" },
        };
        static const uint64_t raw[] = { 4096, 2, 3000, 6 };

        check_one(c, 4, raw, P,
                  "# HELP perflib_proc_avg_bytes_read Bytes a read.\n"
                  "# TYPE perflib_proc_avg_bytes_read summary\n"
                  "perflib_proc_avg_bytes_read_sum 4096\n"
                  "perflib_proc_avg_bytes_read_count 2\n"
                  "# HELP perflib_proc_avg_disk_sec_read_seconds Time a read.\n"
                  "# TYPE perflib_proc_avg_disk_sec_read_seconds summary\n"
                  "perflib_proc_avg_disk_sec_read_seconds_sum 3\n"
                  "perflib_proc_avg_disk_sec_read_seconds_count 6\n");
        check_one(c + 2, 2, raw + 2, OM,
                  "# HELP perflib_proc_avg_disk_sec_read_seconds Time a read.\n"
                  "# TYPE perflib_proc_avg_disk_sec_read_seconds summary\n"
                  "# UNIT perflib_proc_avg_disk_sec_read_seconds seconds\n"
                  "perflib_proc_avg_disk_sec_read_seconds_sum 3\n"
                  "perflib_proc_avg_disk_sec_read_seconds_count 6\n");
}

static void raw_fractions(void **state)
{
        (void) state;
        /* base_id names the right base even when another base comes first. */
        static const struct expo_counter c[] = {
                { 1, PERF_RAW_FRACTION, 0, 0, 9, "% Free Space", "Free." },
                { 5, PERF_RAW_BASE, 0, 0, 0, "Wrong", "" },
                { 9, PERF_LARGE_RAW_BASE, 0, 0, 0, "Right", "" },
        };
        static const uint64_t raw[] = { 1, 1000, 4 };

        check_one(c, 3, raw, P,
                  "# HELP perflib_proc_percent_free_space Free.\n"
                  "# TYPE perflib_proc_percent_free_space gauge\n"
                  "perflib_proc_percent_free_space 0.25\n");

        /* A base_id naming no base: the next base; a zero base: no sample. */
        static const struct expo_counter d[] = {
                { 1, PERF_LARGE_RAW_FRACTION, 0, 0, 7, "Used", "Used." },
                { 7, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Other", "Other." },
                { 8, PERF_RAW_BASE, 0, 0, 0, "Base", "" },
        };
        static const uint64_t raw2[] = { 1, 5, 3 }, zero[] = { 1, 5, 0 };
        check_one(d, 3, raw2, P,
                  "# HELP perflib_proc_used Used.\n"
                  "# TYPE perflib_proc_used gauge\n"
                  "perflib_proc_used 0.33333333333333331\n"
                  "# HELP perflib_proc_other Other.\n"
                  "# TYPE perflib_proc_other gauge\n"
                  "perflib_proc_other 5\n");
        check_one(d, 1, zero, P, "");   /* no base at all: no family */
        check_one(d, 3, zero, P,
                  "# HELP perflib_proc_used Used.\n"
                  "# TYPE perflib_proc_used gauge\n"
                  "# HELP perflib_proc_other Other.\n"
                  "# TYPE perflib_proc_other gauge\n"
                  "perflib_proc_other 5\n");
}

static void elapsed(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_ELAPSED_TIME, 0, 0, 0, "Elapsed Time", "Up." },
        };
        static const uint64_t raw[] = { 2000 }, future[] = { 6000 };

        check_one(c, 1, raw, OM,
                  "# HELP perflib_proc_elapsed_time_seconds Up.\n"
                  "# TYPE perflib_proc_elapsed_time_seconds gauge\n"
                  "# UNIT perflib_proc_elapsed_time_seconds seconds\n"
                  "perflib_proc_elapsed_time_seconds 3\n");
        /* A start after the sample's time has no elapsed time. */
        check_one(c, 1, future, P,
                  "# HELP perflib_proc_elapsed_time_seconds Up.\n"
                  "# TYPE perflib_proc_elapsed_time_seconds gauge\n");
}

static void queue_and_delta(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_100NS_QUEUELEN_TYPE, 0, 0, 0, "Queue", "Queue." },
                { 2, PERF_COUNTER_LARGE_DELTA, 0, 0, 0, "Changes", "Changes." },
                { 3, PERF_PRECISION_100NS_TIMER, 0, 0, 0, "Precise", "Precise." },
                { 4, PERF_LARGE_RAW_BASE, 0, 0, 0, "Stamp", "" },
        };
        static const uint64_t raw[] = { 50000000, 9, 5000000, 123 };

        check_one(c, 4, raw, P,
                  "# HELP perflib_proc_queue_total Queue.\n"
                  "# TYPE perflib_proc_queue_total counter\n"
                  "perflib_proc_queue_total 5\n"
                  "# HELP perflib_proc_changes_total Changes.\n"
                  "# TYPE perflib_proc_changes_total counter\n"
                  "perflib_proc_changes_total 9\n"
                  "# HELP perflib_proc_precise_seconds_total Precise.\n"
                  "# TYPE perflib_proc_precise_seconds_total counter\n"
                  "perflib_proc_precise_seconds_total 0.5\n");
}

static void left_out(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_TEXT, 0, 0, 0, "Text", "" },
                { 2, PERF_COUNTER_NODATA, 0, 0, 0, "None", "" },
                { 3, 0x12345678, 0, 0, 0, "Unknown", "" },
                { 4, PERF_AVERAGE_BASE, 0, 0, 0, "Lone base", "" },
                { 5, PERF_COUNTER_HISTOGRAM_TYPE, 0, 0, 0, "Histogram", "" },
                { 6, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "", "Nameless." },
                { 7, PERF_AVERAGE_BULK, 0, 0, 0, "No base after", "" },
                { 8, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 0, 0, "Now", "" },
        };
        static const uint64_t raw[] = { 1, 2, 3, 4, 5, 6, 7, 8 };

        check_one(c, 8, raw, P, "");
}

/* Multi-instance "Disk": escaping, shared names, _Total, missing values. */
static const struct expo_counter disk_c[] = {
        { 1, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Reads", "Reads \\ \"quoted\"\nline2" },
};
static const struct expo_instance disk_i[] = {
        { 0, "C:" }, { 1, "a\"b\\c\nd" }, { 2, "dup" }, { 3, "dup" }, { 4, "_Total" }, { 5, "gone" },
};
static const uint64_t disk_raw[] = { 1, 2, 3, 4, 5, 6 };
static const bool disk_has[] = { true, true, true, true, true, false };
static const struct expo_set disk = {
        .name = "Disk", .multi = true, .counters = disk_c, .n_counters = 1,
        .instances = disk_i, .n_instances = 6, .raw = disk_raw, .has = disk_has,
};

static void labels(void **state)
{
        (void) state;
        char *got = render(&disk, P, false);
        assert_string_equal(got,
                "# HELP perflib_disk_reads Reads \\\\ \"quoted\"\\nline2\n"
                "# TYPE perflib_disk_reads gauge\n"
                "perflib_disk_reads{instance_name=\"C:\"} 1\n"
                "perflib_disk_reads{instance_name=\"a\\\"b\\\\c\\nd\"} 2\n"
                "perflib_disk_reads{instance_name=\"dup\",instance_id=\"2\"} 3\n"
                "perflib_disk_reads{instance_name=\"dup\",instance_id=\"3\"} 4\n");
        free(got);

        got = render(&disk, OM, true);
        assert_string_equal(got,
                "# HELP perflib_disk_reads Reads \\\\ \\\"quoted\\\"\\nline2\n"
                "# TYPE perflib_disk_reads gauge\n"
                "perflib_disk_reads{instance_name=\"C:\"} 1\n"
                "perflib_disk_reads{instance_name=\"a\\\"b\\\\c\\nd\"} 2\n"
                "perflib_disk_reads{instance_name=\"dup\",instance_id=\"2\"} 3\n"
                "perflib_disk_reads{instance_name=\"dup\",instance_id=\"3\"} 4\n"
                "perflib_disk_reads{instance_name=\"_Total\"} 5\n");
        free(got);
}

static void collisions(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Bytes/sec", "a" },
                { 2, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Bytes sec", "b" },
                { 3, PERF_COUNTER_COUNTER, 0, 0, 0, "Bytes", "c" },
                { 4, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Bytes Total", "d" },
                { 5, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Up", "e" },
                { 6, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "bytes sec 2", "f" },
        };
        static const uint64_t raw[] = { 1, 2, 3, 4, 5, 6 };
        bool has[] = { true, true, true, true, true, true };
        struct expo_set s = { .name = "Exporter", .counters = c, .n_counters = 6,
                              .instances = &single, .n_instances = 1, .raw = raw, .has = has };

        /* Later ones yield, in registration order; the health names are taken. */
        char *got = render(&s, OM, false);
        assert_string_equal(got,
                "# HELP perflib_exporter_bytes_sec a\n# TYPE perflib_exporter_bytes_sec gauge\n"
                "perflib_exporter_bytes_sec 1\n"
                "# HELP perflib_exporter_bytes_sec_2 b\n# TYPE perflib_exporter_bytes_sec_2 gauge\n"
                "perflib_exporter_bytes_sec_2 2\n"
                "# HELP perflib_exporter_bytes c\n# TYPE perflib_exporter_bytes counter\n"
                "perflib_exporter_bytes_total 3\n"
                "# HELP perflib_exporter_bytes_total_2 d\n# TYPE perflib_exporter_bytes_total_2 gauge\n"
                "perflib_exporter_bytes_total_2 4\n"
                "# HELP perflib_exporter_up_2 e\n# TYPE perflib_exporter_up_2 gauge\n"
                "perflib_exporter_up_2 5\n"
                "# HELP perflib_exporter_bytes_sec_2_2 f\n# TYPE perflib_exporter_bytes_sec_2_2 gauge\n"
                "perflib_exporter_bytes_sec_2_2 6\n");
        free(got);
}

/* The same two-instance set in both syntaxes. */
/*
 * Two countersets of one name in one scrape ("Processor" from two
 * providers): the second's families get "_2", never a family twice.
 */
static void collisions_across_sets(void **state)
{
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Queue", "Waiting" },
        };
        static const uint64_t raw[] = { 7 };
        static const bool has[] = { true };
        const struct expo_set s = {
                .name = "Proc", .counters = c, .n_counters = 1, .instances = &single,
                .n_instances = 1, .raw = raw, .has = has,
        };
        struct expo_write_opts o = { .syntax = P, .taken = expo_names_new() };
        struct expo_buf b = { 0 };

        (void) state;
        assert_non_null(o.taken);
        assert_int_equal(expo_write_set(&b, &s, &o), 0);
        assert_int_equal(expo_write_set(&b, &s, &o), 0);
        assert_string_equal(b.data,
                            "# HELP perflib_proc_queue Waiting\n"
                            "# TYPE perflib_proc_queue gauge\n"
                            "perflib_proc_queue 7\n"
                            "# HELP perflib_proc_queue_2 Waiting\n"
                            "# TYPE perflib_proc_queue_2 gauge\n"
                            "perflib_proc_queue_2 7\n");
        expo_buf_done(&b);
        expo_names_free(o.taken);
        expo_names_free(NULL);
}

static void syntaxes(void **state)
{
        (void) state;
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_COUNTER, 0, 0, 0, "Ops/sec", "Ops." },
                { 2, PERF_100NSEC_TIMER, 0, 0, 0, "Time", "Time." },
        };
        static const struct expo_instance in[] = { { 0, "a" }, { 1, "b" } };
        static const uint64_t raw[] = { 1, 10000000, 2, 30000000 };
        static const bool has[] = { true, true, true, true };
        struct expo_set s = { .name = "Ops", .multi = true, .counters = c, .n_counters = 2,
                              .instances = in, .n_instances = 2, .raw = raw, .has = has };

        char *got = render(&s, P, false);
        assert_string_equal(got,
                "# HELP perflib_ops_ops_sec_total Ops.\n"
                "# TYPE perflib_ops_ops_sec_total counter\n"
                "perflib_ops_ops_sec_total{instance_name=\"a\"} 1\n"
                "perflib_ops_ops_sec_total{instance_name=\"b\"} 2\n"
                "# HELP perflib_ops_time_seconds_total Time.\n"
                "# TYPE perflib_ops_time_seconds_total counter\n"
                "perflib_ops_time_seconds_total{instance_name=\"a\"} 1\n"
                "perflib_ops_time_seconds_total{instance_name=\"b\"} 3\n");
        free(got);
        got = render(&s, OM, false);
        assert_string_equal(got,
                "# HELP perflib_ops_ops_sec Ops.\n"
                "# TYPE perflib_ops_ops_sec counter\n"
                "perflib_ops_ops_sec_total{instance_name=\"a\"} 1\n"
                "perflib_ops_ops_sec_total{instance_name=\"b\"} 2\n"
                "# HELP perflib_ops_time_seconds Time.\n"
                "# TYPE perflib_ops_time_seconds counter\n"
                "# UNIT perflib_ops_time_seconds seconds\n"
                "perflib_ops_time_seconds_total{instance_name=\"a\"} 1\n"
                "perflib_ops_time_seconds_total{instance_name=\"b\"} 3\n");
        free(got);
}

static void health(void **state)
{
        (void) state;
        static const struct expo_set_health sets[] = { { "Proc\"x", 0.5, 3 } };
        struct expo_health h = { .up = true, .sets = sets, .n_sets = 1 };
        struct expo_buf b = { 0 };

        assert_int_equal(expo_write_health(&b, &h, P), 0);
        assert_string_equal(b.data,
                "# HELP perflib_exporter_up Whether perflibd answered this scrape (1) or not (0).\n"
                "# TYPE perflib_exporter_up gauge\nperflib_exporter_up 1\n"
                "# HELP perflib_exporter_scrape_duration_seconds How long the last scrape of a counterset took.\n"
                "# TYPE perflib_exporter_scrape_duration_seconds gauge\n"
                "perflib_exporter_scrape_duration_seconds{counterset=\"Proc\\\"x\"} 0.5\n"
                "# HELP perflib_exporter_scrape_errors_total Scrapes of a counterset that failed since the exporter started.\n"
                "# TYPE perflib_exporter_scrape_errors_total counter\n"
                "perflib_exporter_scrape_errors_total{counterset=\"Proc\\\"x\"} 3\n");
        expo_buf_done(&b);

        h.up = false;
        assert_int_equal(expo_write_health(&b, &h, OM), 0);
        assert_string_equal(b.data,
                "# HELP perflib_exporter_up Whether perflibd answered this scrape (1) or not (0).\n"
                "# TYPE perflib_exporter_up gauge\nperflib_exporter_up 0\n"
                "# HELP perflib_exporter_scrape_duration_seconds How long the last scrape of a counterset took.\n"
                "# TYPE perflib_exporter_scrape_duration_seconds gauge\n"
                "# UNIT perflib_exporter_scrape_duration_seconds seconds\n"
                "perflib_exporter_scrape_duration_seconds{counterset=\"Proc\\\"x\"} 0.5\n"
                "# HELP perflib_exporter_scrape_errors Scrapes of a counterset that failed since the exporter started.\n"
                "# TYPE perflib_exporter_scrape_errors counter\n"
                "perflib_exporter_scrape_errors_total{counterset=\"Proc\\\"x\"} 3\n"
                "# EOF\n");
        expo_buf_done(&b);
        assert_string_equal(expo_content_type(OM), "application/openmetrics-text; version=1.0.0; charset=utf-8");
        assert_string_equal(expo_content_type(P), "text/plain; version=0.0.4; charset=utf-8");
}

/* Every counter type of winperf.h, each with the base it needs, two instances. */
static int dump(const char *syntax)
{
        static const struct expo_counter c[] = {
                { 1, PERF_COUNTER_COUNTER, 0, 0, 0, "Events/sec", "Events." },
                { 2, PERF_COUNTER_TIMER, 0, 0, 0, "% Timer", "Timer." },
                { 3, PERF_COUNTER_QUEUELEN_TYPE, 0, 0, 0, "Queue", "Queue." },
                { 4, PERF_COUNTER_LARGE_QUEUELEN_TYPE, 0, 0, 0, "Large Queue", "Queue." },
                { 5, PERF_COUNTER_100NS_QUEUELEN_TYPE, 0, 0, 0, "100ns Queue", "Queue." },
                { 6, PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, 0, 0, 0, "Obj Queue", "Queue." },
                { 7, PERF_COUNTER_BULK_COUNT, 0, 0, 0, "Bytes/sec", "Bytes." },
                { 8, PERF_COUNTER_TEXT, 0, 0, 0, "Text", "Text." },
                { 9, PERF_COUNTER_RAWCOUNT, 0, 0, 0, "Raw", "Raw \"quoted\" \\ help." },
                { 10, PERF_COUNTER_LARGE_RAWCOUNT, 0, 0, 0, "Large Raw", "Raw." },
                { 11, PERF_COUNTER_RAWCOUNT_HEX, 0, 0, 0, "Hex", "Raw." },
                { 12, PERF_COUNTER_LARGE_RAWCOUNT_HEX, 0, 0, 0, "Large Hex", "Raw." },
                { 13, PERF_SAMPLE_FRACTION, 0, 0, 14, "Sample Fraction", "Fraction." },
                { 14, PERF_SAMPLE_BASE, 0, 0, 0, "Sample Base", "Samples." },
                { 15, PERF_SAMPLE_COUNTER, 0, 0, 0, "Sample Counter", "Samples." },
                { 16, PERF_COUNTER_NODATA, 0, 0, 0, "No Data", "" },
                { 17, PERF_COUNTER_TIMER_INV, 0, 0, 0, "% Timer Inv", "Inverse." },
                { 18, PERF_AVERAGE_TIMER, 0, 0, 19, "Avg. sec/Op", "Average time." },
                { 19, PERF_AVERAGE_BASE, 0, 0, 0, "Ops", "Ops." },
                { 20, PERF_AVERAGE_BULK, 0, 0, 21, "Avg. Bytes/Op", "Average bytes." },
                { 21, PERF_AVERAGE_BASE, 0, 0, 0, "Ops 2", "Ops." },
                { 22, PERF_OBJ_TIME_TIMER, 0, 0, 0, "Obj Timer", "Timer." },
                { 23, PERF_100NSEC_TIMER, 0, 0, 0, "% 100ns", "Timer." },
                { 24, PERF_100NSEC_TIMER_INV, 0, 0, 0, "% 100ns Inv", "Timer." },
                { 25, PERF_COUNTER_MULTI_TIMER, 0, 0, 26, "% Multi", "Multi." },
                { 26, PERF_COUNTER_MULTI_BASE, 0, 0, 0, "Multi Base", "Instances." },
                { 27, PERF_COUNTER_MULTI_TIMER_INV, 0, 0, 28, "% Multi Inv", "Multi." },
                { 28, PERF_COUNTER_MULTI_BASE, 0, 0, 0, "Multi Base 2", "Instances." },
                { 29, PERF_100NSEC_MULTI_TIMER, 0, 0, 30, "% 100ns Multi", "Multi." },
                { 30, PERF_COUNTER_MULTI_BASE, 0, 0, 0, "Multi Base 3", "Instances." },
                { 31, PERF_100NSEC_MULTI_TIMER_INV, 0, 0, 32, "% 100ns Multi Inv", "Multi." },
                { 32, PERF_COUNTER_MULTI_BASE, 0, 0, 0, "Multi Base 4", "Instances." },
                { 33, PERF_RAW_FRACTION, 0, 0, 34, "% Raw Fraction", "Fraction." },
                { 34, PERF_RAW_BASE, 0, 0, 0, "Raw Base", "Base." },
                { 35, PERF_LARGE_RAW_FRACTION, 0, 0, 36, "% Large Fraction", "Fraction." },
                { 36, PERF_LARGE_RAW_BASE, 0, 0, 0, "Large Base", "Base." },
                { 37, PERF_ELAPSED_TIME, 0, 0, 0, "Elapsed Time", "Up." },
                { 38, PERF_COUNTER_DELTA, 0, 0, 0, "Delta", "Delta." },
                { 39, PERF_COUNTER_LARGE_DELTA, 0, 0, 0, "Large Delta", "Delta." },
                { 40, PERF_PRECISION_SYSTEM_TIMER, 0, 0, 0, "Precision System", "P." },
                { 41, PERF_PRECISION_100NS_TIMER, 0, 0, 0, "Precision 100ns", "P." },
                { 42, PERF_PRECISION_OBJECT_TIMER, 0, 0, 0, "Precision Object", "P." },
                { 43, PERF_LARGE_RAW_BASE, 0, 0, 0, "Timestamp", "" },
        };
        enum { N = sizeof(c) / sizeof(c[0]) };
        static const struct expo_instance in[] = { { 0, "one \"1\"" }, { 1, "one \"1\"" }, { 2, "_Total" } };
        static uint64_t raw[3 * N];
        static bool has[3 * N];
        struct expo_set s = { .name = "Every Type", .multi = true, .counters = c, .n_counters = N,
                              .instances = in, .n_instances = 3, .raw = raw, .has = has,
                              .perf_time = 5000000, .perf_freq = 1000, .perf_time_100ns = 1 };
        struct expo_write_opts o = { .syntax = strcmp(syntax, "openmetrics") == 0 ? OM : P };
        static const struct expo_set_health sets[] = { { "Every Type", 0.001, 0 } };
        struct expo_health h = { .up = true, .sets = sets, .n_sets = 1 };
        struct expo_buf b = { 0 };

        for (size_t i = 0; i < 3 * N; i++) {
                raw[i] = 1000 + i;
                has[i] = true;
        }
        if (expo_write_set(&b, &s, &o) < 0 || expo_write_health(&b, &h, o.syntax) < 0)
                return 1;
        fputs(b.data, stdout);
        expo_buf_done(&b);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc == 3 && strcmp(argv[1], "--dump") == 0)
                return dump(argv[2]);

        const struct CMUnitTest tests[] = {
                cmocka_unit_test(names),
                cmocka_unit_test(raw_gauges),
                cmocka_unit_test(rate_counters),
                cmocka_unit_test(timers_100ns),
                cmocka_unit_test(timers_ticks),
                cmocka_unit_test(timers_inverse),
                cmocka_unit_test(timers_multi),
                cmocka_unit_test(sample_fraction),
                cmocka_unit_test(averages),
                cmocka_unit_test(raw_fractions),
                cmocka_unit_test(elapsed),
                cmocka_unit_test(queue_and_delta),
                cmocka_unit_test(left_out),
                cmocka_unit_test(labels),
                cmocka_unit_test(collisions),
                cmocka_unit_test(collisions_across_sets),
                cmocka_unit_test(syntaxes),
                cmocka_unit_test(health),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
