/* SPDX-License-Identifier: MIT */
/*
 * The plugins' limits (server-glue/plugins/plugin-conf.h): the units flags
 * and the file take, what each key refuses, and the per-plugin file: which
 * line applies to which plugin, and errors naming the file, line and cause.
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

#include "plugin-conf.h"

static void times(void **state)
{
        static const struct { const char *text; uint64_t usec; } ok[] = {
                { "250ms", 250000 }, { "2s", 2000000 }, { "3", 3000000 }, { "5min", 300000000 },
                { "1h", UINT64_C(3600000000) }, { "0", 0 }, { "7sec", 7000000 },
        };
        static const char *const bad[] = { "", "s", "-1", "1.5s", "2 s", "3d", "10m", "1e3",
                                           "99999999999h", "2ss" };
        uint64_t v = 42;

        (void) state;
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                assert_int_equal(plugin_parse_time(ok[i].text, &v), 0);
                assert_true(v == ok[i].usec);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                v = 42;
                assert_int_equal(plugin_parse_time(bad[i], &v), -EINVAL);
                assert_true(v == 42);
        }
        assert_int_equal(plugin_parse_time(NULL, &v), -EINVAL);
}

static void sizes(void **state)
{
        uint64_t v = 0;

        (void) state;
        assert_int_equal(plugin_parse_size("64M", &v), 0);
        assert_true(v == UINT64_C(64) << 20);
        assert_int_equal(plugin_parse_size("1G", &v), 0);
        assert_true(v == UINT64_C(1) << 30);
        assert_int_equal(plugin_parse_size("4096", &v), 0);
        assert_true(v == 4096);
        assert_int_equal(plugin_parse_size("64MB", &v), -EINVAL);
        assert_int_equal(plugin_parse_size("M", &v), -EINVAL);
        assert_int_equal(plugin_parse_size("-5M", &v), -EINVAL);
        assert_int_equal(plugin_parse_size("99999999999999999G", &v), -EINVAL);
}

static void keys(void **state)
{
        struct plugin_limits l, d;

        (void) state;
        plugin_limits_default(&l);
        d = l;
        assert_true(l.memory_max == UINT64_C(256) << 20);
        assert_true(l.start_timeout == 10000000u && l.cpu_max == 50);
        assert_int_equal(plugin_limits_set(&l, "memory-max", "64M"), 0);
        assert_int_equal(plugin_limits_set(&l, "cpu-max", "20"), 0);
        assert_int_equal(plugin_limits_set(&l, "start-timeout", "30s"), 0);
        assert_int_equal(plugin_limits_set(&l, "user", "perflib"), 0);
        assert_true(l.memory_max == UINT64_C(64) << 20 && l.cpu_max == 20);
        assert_true(l.start_timeout == 30000000u);
        assert_string_equal(l.user, "perflib");
        /* Refused: and l is left as it was. */
        d = l;
        assert_int_equal(plugin_limits_set(&l, "memory-max", "1M"), -EINVAL);
        assert_int_equal(plugin_limits_set(&l, "cpu-max", "0"), -EINVAL);
        assert_int_equal(plugin_limits_set(&l, "cpu-max", "101"), -EINVAL);
        assert_int_equal(plugin_limits_set(&l, "cpu-max", "20%"), -EINVAL);
        assert_int_equal(plugin_limits_set(&l, "cpu-window", "10ms"), -EINVAL);
        assert_int_equal(plugin_limits_set(&l, "user", ""), -EINVAL);
        assert_int_equal(plugin_limits_set(&l, "colour", "blue"), -ENOENT);
        assert_memory_equal(&l, &d, sizeof(l));
}

static char *write_conf(const char *text)
{
        char *path = strdup("/tmp/perflib-plugin-conf.XXXXXX");
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        return path;
}

static void file_lines(void **state)
{
        struct plugin_limits base, l;
        struct plugin_conf *c = NULL;
        char *error = NULL;
        char *path = write_conf("# limits\n"
                                "\n"
                                "processor.so  memory-max=64M cpu-max=20   # small\n"
                                "smart.so\tuser=root start-timeout=30s\n"
                                "processor.so  cpu-max=30\n");

        (void) state;
        plugin_limits_default(&base);
        assert_int_equal(plugin_conf_load(path, &base, &c, &error), 0);
        assert_null(error);
        /* The last line of a file wins, whole: base plus its own keys. */
        plugin_conf_limits(c, &base, "processor.so", &l);
        assert_int_equal(l.cpu_max, 30);
        assert_true(l.memory_max == base.memory_max);
        plugin_conf_limits(c, &base, "smart.so", &l);
        assert_string_equal(l.user, "root");
        assert_true(l.start_timeout == 30000000u);
        plugin_conf_limits(c, &base, "other.so", &l);
        assert_memory_equal(&l, &base, sizeof(l));
        plugin_conf_free(c);
        unlink(path);
        free(path);

        /* A missing file is an empty one. */
        c = NULL;
        assert_int_equal(plugin_conf_load("/nonexistent/plugins.conf", &base, &c, &error), 0);
        plugin_conf_limits(c, &base, "smart.so", &l);
        assert_memory_equal(&l, &base, sizeof(l));
        plugin_conf_free(c);
        plugin_conf_free(NULL);
}

static void file_errors(void **state)
{
        static const struct { const char *text, *error; } cases[] = {
                { "a.so memory-max=64M\nb.so colour=blue\n", ":2: unknown key 'colour'" },
                { "a.so memory-max\n", ":1: 'memory-max' is not KEY=VALUE" },
                { "a.so cpu-max=200\n", ":1: bad value for cpu-max: '200'" },
                { "\n\nplugins/a.so cpu-max=2\n", ":3: 'plugins/a.so' is not a plugin file name" },
                { "a cpu-max=2\n", ":1: 'a' is not a plugin file name" },
        };
        struct plugin_limits base;

        (void) state;
        plugin_limits_default(&base);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct plugin_conf *c = NULL;
                char *error = NULL, *path = write_conf(cases[i].text);

                assert_int_equal(plugin_conf_load(path, &base, &c, &error), -EINVAL);
                assert_null(c);
                assert_non_null(error);
                /* The file's name, the line, the cause. */
                assert_memory_equal(error, path, strlen(path));
                assert_non_null(strstr(error, cases[i].error));
                free(error);
                unlink(path);
                free(path);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(times),
                cmocka_unit_test(sizes),
                cmocka_unit_test(keys),
                cmocka_unit_test(file_lines),
                cmocka_unit_test(file_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
