/* SPDX-License-Identifier: MIT */
/*
 * libpcq's counter paths: PDH's forms parse into their parts and format
 * back to the same text, and every malformed form is refused with the byte
 * offset where it went wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pcq.h"

static void check_parts(const char *path, const char *host, const char *object,
                        const char *parent, const char *instance, uint32_t index,
                        const char *counter)
{
        struct pcq_path p;
        size_t pos = 999;
        char *s;

        assert_int_equal(pcq_path_parse(path, &p, &pos), ERROR_SUCCESS);
        assert_int_equal(pos, 999);                     /* untouched on success */
        if (host)
                assert_string_equal(p.host, host);
        else
                assert_null(p.host);
        assert_string_equal(p.object, object);
        if (parent)
                assert_string_equal(p.parent, parent);
        else
                assert_null(p.parent);
        if (instance)
                assert_string_equal(p.instance, instance);
        else
                assert_null(p.instance);
        assert_int_equal(p.index, index);
        assert_string_equal(p.counter, counter);
        s = pcq_path_format(&p);
        assert_non_null(s);
        assert_string_equal(s, path);
        free(s);
        pcq_path_done(&p);
        pcq_path_done(&p);                              /* done twice is harmless */
}

static void test_round_trips(void **state)
{
        (void) state;
        check_parts("\\Processor(_Total)\\% Processor Time", NULL, "Processor", NULL, "_Total",
                    0, "% Processor Time");
        check_parts("\\Memory\\Available Bytes", NULL, "Memory", NULL, NULL, 0,
                    "Available Bytes");
        check_parts("\\\\server1\\Worker Queue(w1)\\Items/sec", "server1", "Worker Queue", NULL,
                    "w1", 0, "Items/sec");
        check_parts("\\Thread(svchost/3#2)\\Context Switches/sec", NULL, "Thread", "svchost",
                    "3", 2, "Context Switches/sec");
        check_parts("\\Process(*)\\*", NULL, "Process", NULL, "*", 0, "*");
        check_parts("\\Process(sql*)\\Handle Count", NULL, "Process", NULL, "sql*", 0,
                    "Handle Count");
        /* Parentheses inside the instance and the counter. */
        check_parts("\\Obj(a (b))\\Bytes (total)", NULL, "Obj", NULL, "a (b)", 0, "Bytes (total)");
        /* '#' not followed by digits only is part of the name. */
        check_parts("\\Lang(C#)\\Users", NULL, "Lang", NULL, "C#", 0, "Users");
        check_parts("\\Lang(a#b)\\Users", NULL, "Lang", NULL, "a#b", 0, "Users");
        check_parts("\\Obj(i#4294967295)\\C", NULL, "Obj", NULL, "i", 4294967295u, "C");
        /* A leading '/' is no parent: mount points are instance names. */
        check_parts("\\LogicalDisk(/)\\Free Megabytes", NULL, "LogicalDisk", NULL, "/", 0,
                    "Free Megabytes");
        check_parts("\\LogicalDisk(/srv/data#1)\\% Free Space", NULL, "LogicalDisk", NULL,
                    "/srv/data", 1, "% Free Space");
        /* UTF-8 names pass through. */
        check_parts("\\Wärme(Küche)\\°C", NULL, "Wärme", NULL, "Küche", 0, "°C");
}

static void test_index_zero(void **state)
{
        struct pcq_path p;
        char *s;

        (void) state;
        /* "#0" is the first occurrence, which PDH writes without a suffix. */
        assert_int_equal(pcq_path_parse("\\Obj(w#0)\\C", &p, NULL), ERROR_SUCCESS);
        assert_int_equal(p.index, 0);
        assert_string_equal(p.instance, "w");
        s = pcq_path_format(&p);
        assert_string_equal(s, "\\Obj(w)\\C");
        free(s);
        pcq_path_done(&p);
}

static void check_bad(const char *path, uint32_t code, size_t at)
{
        struct pcq_path p = { 0 };
        size_t pos = 999;

        assert_int_equal(pcq_path_parse(path, &p, &pos), code);
        if (pos != at)
                fail_msg("'%s': error at %zu, expected %zu", path, pos, at);
        assert_null(p.object);                          /* nothing written on failure */
        assert_int_equal(pcq_path_parse(path, &p, NULL), code);
}

static void test_malformed(void **state)
{
        (void) state;
        check_bad("", PDH_CSTATUS_NO_COUNTERNAME, 0);
        check_bad("Obj\\C", PDH_CSTATUS_BAD_COUNTERNAME, 0);            /* no leading '\' */
        check_bad("\\\\\\Obj\\C", PDH_CSTATUS_BAD_COUNTERNAME, 2);      /* empty host */
        check_bad("\\\\host", PDH_CSTATUS_BAD_COUNTERNAME, 6);          /* nothing after host */
        check_bad("\\\\host\\C", PDH_CSTATUS_BAD_COUNTERNAME, 8);       /* no counter part */
        check_bad("\\Obj", PDH_CSTATUS_BAD_COUNTERNAME, 4);             /* no counter part */
        check_bad("\\Obj\\", PDH_CSTATUS_BAD_COUNTERNAME, 5);           /* empty counter */
        check_bad("\\\\C", PDH_CSTATUS_BAD_COUNTERNAME, 3);             /* a host, nothing else */
        check_bad("\\(i)\\C", PDH_CSTATUS_BAD_COUNTERNAME, 1);          /* empty object */
        check_bad("\\\\h\\\\C", PDH_CSTATUS_BAD_COUNTERNAME, 4);        /* empty object after host */
        check_bad("\\Ob)j\\C", PDH_CSTATUS_BAD_COUNTERNAME, 3);         /* ')' in the object */
        check_bad("\\Obj(i\\C", PDH_CSTATUS_BAD_COUNTERNAME, 6);        /* no ')' */
        check_bad("\\Obj(i)x\\C", PDH_CSTATUS_BAD_COUNTERNAME, 7);      /* text after ')' */
        check_bad("\\Obj()\\C", PDH_CSTATUS_BAD_COUNTERNAME, 5);        /* empty instance */
        check_bad("\\Obj(p/)\\C", PDH_CSTATUS_BAD_COUNTERNAME, 7);      /* empty instance after parent */
        check_bad("\\Obj(p/#3)\\C", PDH_CSTATUS_BAD_COUNTERNAME, 7);    /* only an index */
        check_bad("\\Obj(i#4294967296)\\C", PDH_CSTATUS_BAD_COUNTERNAME, 7);    /* index overflow */
}

static void test_arguments(void **state)
{
        struct pcq_path p = { 0 };

        (void) state;
        assert_int_equal(pcq_path_parse(NULL, &p, NULL), PDH_INVALID_ARGUMENT);
        assert_int_equal(pcq_path_parse("\\A\\B", NULL, NULL), PDH_INVALID_ARGUMENT);
        assert_null(pcq_path_format(NULL));
        assert_null(pcq_path_format(&p));               /* no object, no counter */
        pcq_path_done(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trips),
                cmocka_unit_test(test_index_zero),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_arguments),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
