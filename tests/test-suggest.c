/* SPDX-License-Identifier: MIT */
/*
 * sdk/common's "did you mean": the edit distance (swaps, case, lengths
 * without a terminator), the threshold (near misses suggested, names
 * near nothing and short names left alone), ties and the hint's text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "suggest.h"

static size_t dist(const char *a, const char *b)
{
        return sg_distance(a, strlen(a), b, strlen(b));
}

static void test_distance(void **state)
{
        char long_name[SG_MAX_NAME + 2];

        (void) state;
        assert_int_equal(dist("", ""), 0);
        assert_int_equal(dist("", "abc"), 3);
        assert_int_equal(dist("abc", ""), 3);
        assert_int_equal(dist("kitten", "sitting"), 3);
        assert_int_equal(dist("Procesor", "Processor"), 1);      /* a letter left out */
        assert_int_equal(dist("Porcessor", "Processor"), 1);     /* two swapped */
        assert_int_equal(dist("Processorr", "Processor"), 1);    /* one too many */
        assert_int_equal(dist("PERF_COUNTER_RAWCOUNT", "perf_counter_rawcount"), 0);
        assert_int_equal(dist("perf_counter_bogus", "perf_counter_text"), 5);
        /* Only the given lengths count: names cut out of a longer text. */
        assert_int_equal(sg_distance("sum, avg", 3, "sun", 3), 1);
        memset(long_name, 'a', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = 0;
        assert_int_equal(dist(long_name, "a"), SIZE_MAX);
        assert_int_equal(dist("a", long_name), SIZE_MAX);
}

static const char *nearest(const char *typed, const char *const *names)
{
        static struct sg_suggest sg;

        sg_begin(&sg, typed);
        for (size_t i = 0; names[i]; i++)
                sg_offer(&sg, names[i], strlen(names[i]));
        return sg_best(&sg);
}

static const char *const types[] = {
        "perf_counter_counter", "perf_counter_text", "perf_counter_rawcount",
        "perf_counter_large_rawcount", "perf_counter_rawcount_hex", NULL,
};

static void test_threshold(void **state)
{
        static const char *const sets[] = { "Memory", "Process", "Processor", "System", NULL };
        static const char *const cpus[] = { "0", "1", "_Total", NULL };
        static const char *const levels[] = { "standard", "advanced", NULL };
        static const char *const agg[] = { "sum", "avg", "max", "min", "undefined", NULL };

        (void) state;
        assert_string_equal(nearest("perf_counter_rawcont", types), "perf_counter_rawcount");
        assert_string_equal(nearest("PERF_COUNTER_RAWCOUNT", types), "perf_counter_rawcount");
        assert_null(nearest("perf_counter_bogus", types));
        assert_string_equal(nearest("Procesor", sets), "Processor");
        assert_string_equal(nearest("Proces", sets), "Process");
        assert_null(nearest("No Such Object", sets));
        assert_string_equal(nearest("standart", levels), "standard");
        assert_string_equal(nearest("sun", agg), "sum");
        /* One or two characters: any other is one edit away, so only case counts. */
        assert_null(nearest("7", cpus));
        assert_string_equal(nearest("_total", cpus), "_Total");
        assert_null(nearest(NULL, cpus));
}

static void test_ties_and_self(void **state)
{
        static const char *const two[] = { "cpu1", "cpu2", NULL };
        static const char *const same[] = { "Memory", NULL };
        struct sg_suggest sg;

        (void) state;
        /* Equally near: the first offered wins. */
        assert_string_equal(nearest("cpu3", two), "cpu1");
        /* What was typed is never its own suggestion. */
        assert_null(nearest("Memory", same));
        /* A nearer name offered later replaces a farther one. */
        sg_begin(&sg, "Processsor");
        sg_offer(&sg, "Processors", 10);
        sg_offer(&sg, "Processor", 9);
        assert_string_equal(sg_best(&sg), "Processor");
        /* The suggestion is a copy: the candidate's buffer may go. */
        {
                char tmp[] = "Memory";

                sg_begin(&sg, "Memroy");
                sg_offer(&sg, tmp, 6);
                memset(tmp, 'x', 6);
                assert_string_equal(sg_best(&sg), "Memory");
        }
}

static void test_hint(void **state)
{
        struct sg_suggest sg;

        (void) state;
        sg_begin(&sg, "perf_counter_rawcont");
        for (size_t i = 0; types[i]; i++)
                sg_offer(&sg, types[i], strlen(types[i]));
        assert_string_equal(sg_hint(&sg), "; did you mean 'perf_counter_rawcount'?");
        sg_begin(&sg, "perf_counter_bogus");
        for (size_t i = 0; types[i]; i++)
                sg_offer(&sg, types[i], strlen(types[i]));
        assert_string_equal(sg_hint(&sg), "");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_distance),
                cmocka_unit_test(test_threshold),
                cmocka_unit_test(test_ties_and_self),
                cmocka_unit_test(test_hint),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
