/* SPDX-License-Identifier: MIT */
/*
 * perflib-exporter's own modules, without a server: the command line and
 * its exit statuses (expo-opts), which counters a selection keeps
 * (expo-select: anchored excludes, --counters files with typeperf's
 * wildcards, their bad lines), and HTTP content negotiation (expo-http).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "expo-http.h"
#include "expo-opts.h"
#include "expo-select.h"

static int parse(struct expo_opts *o, ...)
{
        char *argv[16] = { "perflib-exporter" };
        int argc = 1, r;
        va_list ap;

        va_start(ap, o);
        while ((argv[argc] = va_arg(ap, char *)))
                argc++;
        va_end(ap);
        r = expo_opts_parse(argc, argv, o);
        return r;
}

static void test_opts(void **state)
{
        struct expo_opts o;

        (void) state;
        assert_int_equal(parse(&o, NULL), -1);
        assert_string_equal(o.listen, ":9478");
        assert_string_equal(o.path, "/metrics");
        assert_int_equal(o.max_connections, 64);
        assert_int_equal(o.max_per_address, 16);
        assert_int_equal(o.request_bytes, 65536);
        assert_int_equal(o.timeout_s, 30);
        assert_false(o.with_total);
        assert_null(o.server);
        expo_opts_done(&o);
        assert_int_equal(parse(&o, "--web.listen-address=[::1]:1234", "--collect.exclude=A",
                               "--collect.exclude", "B.*", "--collect.total",
                               "--web.timeout=5", "--server=h:4700",
                               "--web.max-connections-per-address=2",
                               "--web.max-request-bytes=8192", NULL), -1);
        assert_int_equal(o.max_per_address, 2);
        assert_int_equal(o.request_bytes, 8192);
        assert_string_equal(o.listen, "[::1]:1234");
        assert_int_equal(o.n_exclude, 2);
        assert_string_equal(o.exclude[1], "B.*");
        assert_true(o.with_total);
        assert_int_equal(o.timeout_s, 5);
        assert_string_equal(o.server, "h:4700");
        expo_opts_done(&o);
        /* Usage errors: 1, and nothing to free. */
        assert_int_equal(parse(&o, "--web.timeout=0", NULL), EXPO_EXIT_USAGE);
        assert_int_equal(parse(&o, "--web.max-connections=-1", NULL), EXPO_EXIT_USAGE);
        assert_int_equal(parse(&o, "--web.max-connections-per-address=0", NULL), EXPO_EXIT_USAGE);
        assert_int_equal(parse(&o, "--web.max-request-bytes=100", NULL), EXPO_EXIT_USAGE);
        assert_int_equal(parse(&o, "--web.telemetry-path=metrics", NULL), EXPO_EXIT_USAGE);
        assert_int_equal(parse(&o, "--log.level=loud", NULL), EXPO_EXIT_USAGE);
        assert_int_equal(parse(&o, "--collect.exclude=x", "stray", NULL), EXPO_EXIT_USAGE);
        assert_int_equal(parse(&o, "--version", NULL), 0);
        expo_log_set_level(EXPO_INFO);
}

static struct expo_select *select_file(const char *text, int want)
{
        char path[] = "/tmp/test-expo-main.XXXXXX";
        struct expo_select *s = NULL;
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        assert_int_equal(expo_select_new(NULL, 0, path, &s), want);
        unlink(path);
        return s;
}

static void test_select_exclude(void **state)
{
        const char *ex[] = { "^Process$", "^Net" };
        struct expo_select *s;

        (void) state;
        assert_int_equal(expo_select_new(ex, 2, NULL, &s), 0);
        /* Anywhere in the name, as regexec matches: anchors say where. */
        assert_false(expo_select_set(s, "Process"));
        assert_true(expo_select_set(s, "Processor"));
        assert_false(expo_select_set(s, "Network Interface"));
        assert_true(expo_select_set(s, "My Network"));
        assert_true(expo_select_set(s, "Memory"));
        expo_select_free(s);
        ex[0] = "Disk";
        assert_int_equal(expo_select_new(ex, 1, NULL, &s), 0);
        assert_false(expo_select_set(s, "PhysicalDisk"));
        assert_false(expo_select_set(s, "LogicalDisk"));
        assert_true(expo_select_set(s, "Memory"));
        assert_false(expo_select_narrow(s, "Memory"));
        assert_true(expo_select_value(s, "Memory", "Anything", NULL));
        expo_select_free(s);
        ex[0] = "(";
        assert_int_equal(expo_select_new(ex, 1, NULL, &s), -EINVAL);
}

static void test_select_counters(void **state)
{
        struct expo_select *s;

        (void) state;
        s = select_file("# comment\n\n  \\Memory\\*  \n\\Processor(cpu*)\\% Processor Time # why\n"
                        "\\Disk(sda/part1)\\Reads\n", 0);
        assert_true(expo_select_set(s, "memory"));
        assert_false(expo_select_narrow(s, "Memory"));
        assert_true(expo_select_value(s, "Memory", "Available Bytes", NULL));
        assert_false(expo_select_set(s, "System"));
        assert_true(expo_select_narrow(s, "Processor"));
        assert_true(expo_select_value(s, "Processor", "% Processor Time", "cpu1"));
        assert_false(expo_select_value(s, "Processor", "% Processor Time", "_Total"));
        assert_false(expo_select_value(s, "Processor", "% User Time", "cpu1"));
        /* Counter-level (no instance) keeps what some instance may have. */
        assert_true(expo_select_value(s, "Processor", "% Processor Time", NULL));
        assert_true(expo_select_value(s, "Disk", "Reads", "sda/part1"));
        assert_false(expo_select_value(s, "Disk", "Reads", "sdb/part1"));
        assert_false(expo_select_value(s, "Disk", "Reads", "part1"));
        expo_select_free(s);
        /* Bad lines, each said with its line: the selection is refused. */
        assert_null(select_file("\\Memory\\*\n\\Bad(path\n", -EINVAL));
        assert_null(select_file("\\\\host\\Memory\\Available Bytes\n", -EINVAL));
        /* An empty file selects nothing. */
        s = select_file("# nothing\n", 0);
        assert_false(expo_select_set(s, "Memory"));
        expo_select_free(s);
}

static void test_negotiate(void **state)
{
        (void) state;
        assert_int_equal(expo_http_negotiate(NULL), EXPO_PROMETHEUS);
        assert_int_equal(expo_http_negotiate("*/*"), EXPO_PROMETHEUS);
        assert_int_equal(expo_http_negotiate("text/plain;version=0.0.4"), EXPO_PROMETHEUS);
        /* What Prometheus 2.x sends. */
        assert_int_equal(expo_http_negotiate(
                "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                EXPO_OPENMETRICS);
        assert_int_equal(expo_http_negotiate("Application/OpenMetrics-Text"), EXPO_OPENMETRICS);
        assert_int_equal(expo_http_negotiate("text/plain, application/openmetrics-text;q=0.5"),
                         EXPO_PROMETHEUS);
        assert_int_equal(expo_http_negotiate("application/openmetrics-text ; q=0"),
                         EXPO_PROMETHEUS);
        assert_int_equal(expo_http_negotiate("application/openmetrics-textual"), EXPO_PROMETHEUS);
        assert_true(expo_http_gzip_ok("gzip"));
        assert_true(expo_http_gzip_ok("deflate, gzip;q=0.5, br"));
        assert_true(expo_http_gzip_ok("*"));
        assert_false(expo_http_gzip_ok(NULL));
        assert_false(expo_http_gzip_ok("identity"));
        assert_false(expo_http_gzip_ok("gzip;q=0"));
        assert_false(expo_http_gzip_ok("x-gzip-not"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_opts),
                cmocka_unit_test(test_select_exclude),
                cmocka_unit_test(test_select_counters),
                cmocka_unit_test(test_negotiate),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
