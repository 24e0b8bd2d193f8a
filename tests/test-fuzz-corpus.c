/* SPDX-License-Identifier: MIT */
/*
 * Runs the segment fuzz harness over the deterministic mutation corpus of
 * fuzz-segment.c, so every `make check` (with the sanitizers under
 * --enable-sanitizers) repeats a short fuzz campaign without libFuzzer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "fuzz-segment.h"
#include "reader.h"

#define FZ_CORPUS_ITERATIONS 3000u

struct corpus_stats {
        unsigned inputs;
        unsigned opened;                /* accepted by pl_reader_open_memory */
        unsigned full;                  /* ... with all three instances read back */
        unsigned partial;               /* ... with some, not all */
};

static struct corpus_stats corpus_stats;

static void corpus_classify(const uint8_t *data, size_t size)
{
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;

        if (pl_reader_open_memory(data, size, &r) < 0)
                return;
        corpus_stats.opened++;
        if (pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s) == 0) {
                if (s->n_instances == FZ_N_INSTANCES)
                        corpus_stats.full++;
                else if (s->n_instances > 0)
                        corpus_stats.partial++;
        }
        pl_snapshot_free(s);
        pl_reader_close(r);
}

static int corpus_one(const uint8_t *data, size_t size)
{
        corpus_stats.inputs++;
        corpus_classify(data, size);
        return LLVMFuzzerTestOneInput(data, size);
}

static void test_corpus(void **state)
{
        unsigned n = pl_fuzz_mutations(FZ_CORPUS_ITERATIONS, corpus_one);

        assert_int_equal(n, FZ_CORPUS_ITERATIONS);
        assert_int_equal(corpus_stats.inputs, FZ_CORPUS_ITERATIONS);
        /*
         * The corpus is only worth running if it reaches past the header
         * checks: some inputs must open, and some of those must lose some
         * but not all instances to the block checks.
         */
        assert_true(corpus_stats.opened > FZ_CORPUS_ITERATIONS / 10);
        assert_true(corpus_stats.full > 0);
        assert_true(corpus_stats.partial > 0);
        assert_true(corpus_stats.opened < FZ_CORPUS_ITERATIONS);
}

/* The first input is the unmutated image, which must read back whole. */
static int corpus_first(const uint8_t *data, size_t size)
{
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;

        assert_int_equal(pl_reader_open_memory(data, size, &r), 0);
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        assert_int_equal(s->n_instances, FZ_N_INSTANCES);
        pl_snapshot_free(s);
        pl_reader_close(r);
        return 0;
}

static void test_seed_is_valid(void **state)
{
        assert_int_equal(pl_fuzz_mutations(1, corpus_first), 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_seed_is_valid),
                cmocka_unit_test(test_corpus),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
