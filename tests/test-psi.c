/* SPDX-License-Identifier: MIT */
/*
 * The pressure stall parser (providers/common/psi.h) on saved
 * /proc/pressure files of several kernels (tests/data/pressure): CPU
 * without a full line before 5.13, irq with only one from 6.1, and
 * garbage: fields missing, not numbers, too large, fields and lines a
 * later kernel might add.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "procfs.h"
#include "psi.h"

/* The fixture rel parsed; its return value. */
static int parse(const char *rel, struct pv_psi *ret)
{
        char text[1024];

        if (pv_read_small(PSI_FIXTURES, rel, text, sizeof(text)) < 0)
                fail_msg("%s/%s: cannot read", PSI_FIXTURES, rel);
        return pv_psi_parse(text, ret);
}

static void assert_line(const struct pv_psi_line *l, uint64_t avg10, uint64_t avg60,
                        uint64_t avg300, uint64_t total)
{
        assert_int_equal(l->avg10, avg10);
        assert_int_equal(l->avg60, avg60);
        assert_int_equal(l->avg300, avg300);
        assert_int_equal(l->total, total);
}

/* 4.20, PSI's first kernel: CPU has no full line, whose figures stay 0. */
static void test_linux_4_20(void **state)
{
        struct pv_psi p;

        (void) state;
        assert_int_equal(parse("linux-4.20/cpu", &p), 0);
        assert_int_equal(p.have, PV_PSI_SOME);
        assert_line(&p.some, 0, 12, 105, 4007);
        assert_line(&p.full, 0, 0, 0, 0);
        assert_int_equal(parse("linux-4.20/memory", &p), 0);
        assert_int_equal(p.have, PV_PSI_SOME | PV_PSI_FULL);
        assert_line(&p.some, 1250, 301, 70, 987654321);
        assert_line(&p.full, 525, 100, 9, 123456789);
        /* 100.00 and 99.99 apart, and a total of 17 digits. */
        assert_int_equal(parse("linux-4.20/io", &p), 0);
        assert_line(&p.some, 9999, 10000, 1, UINT64_C(18446744073709551));
}

/* 5.13 prints CPU's full line; 6.1 adds irq, which has only that line. */
static void test_linux_5_13_6_1(void **state)
{
        struct pv_psi p;

        (void) state;
        assert_int_equal(parse("linux-5.13/cpu", &p), 0);
        assert_int_equal(p.have, PV_PSI_SOME | PV_PSI_FULL);
        assert_line(&p.some, 142, 106, 449, UINT64_C(5258512614));
        assert_int_equal(parse("linux-6.1/irq", &p), 0);
        assert_int_equal(p.have, PV_PSI_FULL);
        assert_line(&p.some, 0, 0, 0, 0);
        assert_line(&p.full, 31, 20, 15, 2718281);
}

/* Fewer or more decimals than two, a field and a line of a later kernel. */
static void test_extra(void **state)
{
        struct pv_psi p;

        (void) state;
        assert_int_equal(parse("garbage/extra", &p), 0);
        assert_int_equal(p.have, PV_PSI_SOME | PV_PSI_FULL);
        assert_line(&p.some, 50, 100, 234, 77);
        assert_line(&p.full, 100, 200, 300, 88);
}

/* A line with a field missing or not a number is left out; no line at all is -EINVAL. */
static void test_garbage(void **state)
{
        struct pv_psi p = { .have = 0xdead };

        (void) state;
        assert_int_equal(parse("garbage/missing", &p), -EINVAL);
        assert_int_equal(parse("garbage/junk", &p), -EINVAL);
        /* Nothing written on failure. */
        assert_int_equal(p.have, 0xdead);
        /* A total of 20 digits and one followed by junk are left out; the
         * last full line, with no newline, is read. */
        assert_int_equal(parse("garbage/overflow", &p), 0);
        assert_int_equal(p.have, PV_PSI_FULL);
        assert_line(&p.full, 0, 0, 0, 7);
        assert_int_equal(pv_psi_parse("", &p), -EINVAL);
        assert_int_equal(pv_psi_parse(NULL, &p), -EINVAL);
        assert_int_equal(pv_psi_parse("some avg10=1.00 avg60=1.00 avg300=1.00 total=1", NULL),
                         -EINVAL);
        /* "someone" is not "some". */
        assert_int_equal(pv_psi_parse("someone avg10=1.00 avg60=1.00 avg300=1.00 total=1\n", &p),
                         -EINVAL);
        assert_int_equal(pv_psi_parse("some avg10=1.00 avg60=1.00 avg300=1.00 total=-1\n", &p),
                         -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_linux_4_20),
                cmocka_unit_test(test_linux_5_13_6_1),
                cmocka_unit_test(test_extra),
                cmocka_unit_test(test_garbage),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
