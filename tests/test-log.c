/* SPDX-License-Identifier: MIT */
/*
 * perflibd's log rate limit (server-glue/daemon/log.c), on a clock the test
 * drives: a burst of one message passes, the rest of the interval is
 * suppressed, the next message after it first says how many were, and
 * another message is counted on its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"

static uint64_t fake_now;
static FILE *out;               /* what perflibd writes to stderr */
static int saved_stderr = -1;

static uint64_t fake_clock(void)
{
        return fake_now;
}

static int setup(void **state)
{
        out = tmpfile();
        assert_non_null(out);
        fflush(stderr);
        saved_stderr = dup(STDERR_FILENO);
        assert_true(saved_stderr >= 0);
        assert_true(dup2(fileno(out), STDERR_FILENO) >= 0);
        unsetenv("JOURNAL_STREAM");
        log_setup();
        fake_now = 1000;
        log_set_clock(fake_clock);
        return 0;
}

static int teardown(void **state)
{
        fflush(stderr);
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        fclose(out);
        log_set_clock(NULL);
        return 0;
}

/* Lines logged so far that contain needle (all of them for ""). */
static int lines_with(const char *needle)
{
        char line[512];
        int n = 0;

        fflush(stderr);
        rewind(out);
        while (fgets(line, sizeof(line), out))
                n += strstr(line, needle) != NULL;
        return n;
}

static void test_burst_then_suppressed(void **state)
{
        for (int i = 0; i < 25; i++)
                log_warning("message A %d", i);
        assert_int_equal(lines_with("message A"), LOG_RATE_BURST);
        assert_int_equal(lines_with("suppressed"), 0);
        /* Still within the interval: nothing more, not even the count. */
        fake_now += LOG_RATE_INTERVAL_USEC - 1;
        log_warning("message A %d", 99);
        assert_int_equal(lines_with(""), LOG_RATE_BURST);
}

static void test_suppressed_count(void **state)
{
        char want[128];

        for (int i = 0; i < 25; i++)
                log_warning("message B %d", i);
        fake_now += LOG_RATE_INTERVAL_USEC;
        log_warning("message B %d", 25);
        snprintf(want, sizeof(want), "suppressed %u messages like: message B %%d",
                 25 - LOG_RATE_BURST);
        assert_int_equal(lines_with(want), 1);
        assert_int_equal(lines_with("message B 25"), 1);
        assert_int_equal(lines_with(""), LOG_RATE_BURST + 2);
        /* The new interval has its own burst, and said it all: no second count. */
        for (unsigned i = 0; i < LOG_RATE_BURST - 1; i++)
                log_warning("message B %u", 100 + i);
        assert_int_equal(lines_with("message B 10"), LOG_RATE_BURST - 1);
        assert_int_equal(lines_with("suppressed"), 1);
}

static void test_keys_independent(void **state)
{
        for (unsigned i = 0; i < 3 * LOG_RATE_BURST; i++)
                log_warning("message C %u", i);
        log_error("message D %s", "first");
        for (unsigned i = 0; i < LOG_RATE_BURST; i++)
                log_notice("message E %u", i);
        assert_int_equal(lines_with("message C"), LOG_RATE_BURST);
        assert_int_equal(lines_with("message D first"), 1);
        assert_int_equal(lines_with("message E"), LOG_RATE_BURST);
        assert_int_equal(lines_with("suppressed"), 0);
}

/*
 * Each subject has its own burst of a format: twenty plugins starting all say
 * so (a shared "%s" once cut a newcomer's log short after ten lines).
 */
static void test_subjects_independent(void **state)
{
        char file[32];

        for (unsigned k = 0; k < 20; k++) {
                snprintf(file, sizeof(file), "p%02u.so", k);
                log_subject_msg(6, file, "%s", "started");
                log_subject_msg(6, file, "%s", "stopped");
        }
        assert_int_equal(lines_with("started"), 20);
        assert_int_equal(lines_with("stopped"), 20);
        for (unsigned i = 0; i < 3 * LOG_RATE_BURST; i++)
                log_subject_msg(6, "chatty.so", "%s", "chatter");
        assert_int_equal(lines_with("chatter"), LOG_RATE_BURST);
}

/* At exit, what was held back is counted, with what it was about. */
static void test_flush(void **state)
{
        char want[128];

        for (unsigned i = 0; i < LOG_RATE_BURST + 4; i++)
                log_subject_msg(6, "chatty.so", "said %u", i);
        assert_int_equal(lines_with("suppressed"), 0);
        log_flush();
        snprintf(want, sizeof(want), "suppressed 4 messages about chatty.so like: said %%u");
        assert_int_equal(lines_with(want), 1);
        log_flush();
        assert_int_equal(lines_with("suppressed"), 1);
}

/* Debug lines are dropped unless asked for, and then limited like the rest. */
static void test_debug(void **state)
{
        log_debug("message F %d", 1);
        assert_int_equal(lines_with("message F"), 0);
        log_set_debug(true);
        for (unsigned i = 0; i < 2 * LOG_RATE_BURST; i++)
                log_debug("message F %u", i);
        log_set_debug(false);
        assert_int_equal(lines_with("message F"), LOG_RATE_BURST);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_burst_then_suppressed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_suppressed_count, setup, teardown),
                cmocka_unit_test_setup_teardown(test_keys_independent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_debug, setup, teardown),
                cmocka_unit_test_setup_teardown(test_subjects_independent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
