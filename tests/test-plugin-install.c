/* SPDX-License-Identifier: MIT */
/*
 * Installing plugins while a real perflibd runs, the ways an administrator
 * does: install -m 644, cp, and mv of a file written elsewhere in the same
 * filesystem, each many times (PERFLIB_TEST_INSTALLS, default 50), every
 * other time over the running plugin's file and otherwise after removing
 * it.  Each time the new build is served (two builds of 4 MiB, long
 * enough to write that a server acting on creation sees them half done,
 * alternate and differ in their instance id), its start ran exactly once,
 * and perflibd logs no error and no warning.  And two plugins publishing one provider:
 * one line, naming both files, once.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "plugins/test-plugin.h"
#include "testutil.h"

#define INSTALLS_DEFAULT 50
/* How long one install may take to be served (the loader's settle time is 0.1 s). */
#define SERVED_WITHIN_MS 5000

static const GUID cset = TP_CSET_GUID(1);
static struct du_daemon srv;
static char log_path[4096], starts_path[4096], staging[4096];

static int setup(void **state)
{
        const char *run = tu_runtime_setup();
        int fd;

        assert_int_equal(du_init(&srv, run), 0);
        snprintf(log_path, sizeof(log_path), "%s/perflibd.log", run);
        snprintf(starts_path, sizeof(starts_path), "%s/starts", run);
        snprintf(staging, sizeof(staging), "%s/staging", run);
        assert_int_equal(mkdir(staging, 0755), 0);
        /*
         * The good plugins count their starts there (perflibd and its hosts
         * inherit it); as root, the hosts run as nobody, who may write it.
         */
        assert_int_equal(setenv(TP_STARTS_ENV, starts_path, 1), 0);
        fd = open(starts_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        assert_true(fd >= 0);
        assert_int_equal(fchmod(fd, 0666), 0);
        close(fd);
        /* perflibd's stderr, where the test reads what it said. */
        srv.log = log_path;
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        return 0;
}

static int teardown(void **state)
{
        if (srv.pid > 0)
                assert_true(du_stop(&srv) >= 0);
        unsetenv(TP_STARTS_ENV);
        tu_runtime_teardown();
        return 0;
}

/* The instance id of the good plugins' one instance as perflibd serves it, 0 when none. */
static uint32_t served_id(struct pv2_client *c)
{
        struct pv2_out o = { 0 };
        uint32_t id = 0;

        if (pv2_enumerate_instances(c, NULL, &cset, 1 << 16, &o) == ERROR_SUCCESS &&
            o.out_size >= 8)
                id = du_le32(o.data + 4);       /* PERF_INSTANCE_HEADER.InstanceId */
        pv2_out_done(&o);
        return id;
}

/* Whether perflibd serves instance id (0: none) within SERVED_WITHIN_MS. */
static bool serves(struct pv2_client *c, uint32_t id)
{
        for (int i = 0; i < SERVED_WITHIN_MS / 10; i++) {
                if (served_id(c) == id)
                        return true;
                usleep(10000);
        }
        return false;
}

static void built(char *buf, size_t size, const char *module)
{
        assert_true((size_t) snprintf(buf, size, "%s/tests/plugins/.libs/%s.so",
                                      getenv("top_builddir"), module) < size);
}

enum how { INSTALL, CP, MV };

/* Puts module's build in the plugin directory as file, the way how says. */
static void put(enum how how, const char *module, const char *file)
{
        char src[4096];
        int r;

        built(src, sizeof(src), module);
        if (how == INSTALL)
                r = du_run("install -m 644 '%s' '%s/%s'", src, srv.plugins, file);
        else if (how == CP)
                r = du_run("cp '%s' '%s/%s'", src, srv.plugins, file);
        else
                r = du_run("cp '%s' '%s/%s' && mv '%s/%s' '%s/%s'", src, staging, file,
                           staging, file, srv.plugins, file);
        assert_int_equal(r, 0);
}

static int installs(void)
{
        const char *e = getenv("PERFLIB_TEST_INSTALLS");
        int n = e && *e ? atoi(e) : INSTALLS_DEFAULT;

        return n > 0 ? n : INSTALLS_DEFAULT;
}

/* perflibd's errors and warnings so far (each line starts "perflibd: LEVEL: "). */
static int problems(void)
{
        return du_count_lines(log_path, "perflibd: error: ") +
               du_count_lines(log_path, "perflibd: warning: ");
}

static void print_problems(void)
{
        char line[1024];
        FILE *f = fopen(log_path, "re");

        while (f && fgets(line, sizeof(line), f))
                if (strstr(line, "perflibd: error: ") || strstr(line, "perflibd: warning: "))
                        print_message("%s", line);
        if (f)
                fclose(f);
}

static void install_many(enum how how)
{
        static const char *const what[] = { "install -m 644", "cp", "mv" };
        struct pv2_client *c = NULL;
        int n = installs();
        char path[sizeof(srv.plugins) + 16];

        assert_int_equal(du_connect(&srv, 5000, &c), 0);
        snprintf(path, sizeof(path), "%s/good.so", srv.plugins);
        for (int i = 0; i < n; i++) {
                unsigned stamp = (unsigned) i % 2;

                if (i % 4 == 2) {
                        assert_int_equal(unlink(path), 0);
                        if (!serves(c, 0))
                                fail_msg("%s, round %d: still served once removed", what[how], i);
                }
                put(how, stamp ? "big-stamp" : "big", "good.so");
                if (!serves(c, TP_STAMPED_ID(stamp))) {
                        print_problems();
                        fail_msg("%s, round %d: the new build is not served (instance id %u)",
                                 what[how], i, (unsigned) served_id(c));
                }
        }
        print_message("%s: %d times, %d starts\n", what[how], n,
                      du_count_lines(starts_path, "good"));
        /* Loaded once per install: not before it was complete, not again after. */
        assert_int_equal(du_count_lines(starts_path, "good"), n);
        print_problems();
        assert_int_equal(problems(), 0);
        pv2_client_free(c);
}

static void with_install(void **state)
{
        install_many(INSTALL);
}

static void with_cp(void **state)
{
        install_many(CP);
}

static void with_mv(void **state)
{
        install_many(MV);
}

/* Two plugins publishing one provider: the second is refused, in one line naming both. */
static void duplicate_provider(void **state)
{
        const char *line = "plugin dup-b.so: provider " TP_PROVIDER_TEXT(1)
                           " is already published by plugin dup-a.so, which was loaded first";
        struct pv2_client *c = NULL;

        assert_int_equal(du_connect(&srv, 5000, &c), 0);
        put(INSTALL, "good", "dup-a.so");
        assert_true(serves(c, TP_INSTANCE_ID));
        put(INSTALL, "good-stamp", "dup-b.so");
        for (int i = 0; i < SERVED_WITHIN_MS / 10 && !du_count_lines(log_path, line); i++)
                usleep(10000);
        assert_int_equal(du_count_lines(log_path, line), 1);
        assert_int_equal(du_count_lines(log_path, "perflibd: error: "), 1);
        assert_int_equal(served_id(c), TP_INSTANCE_ID);

        /* Said once: a reload of everything does not repeat it. */
        assert_int_equal(kill(srv.pid, SIGHUP), 0);
        assert_true(serves(c, TP_INSTANCE_ID));
        usleep(300000);
        assert_int_equal(du_count_lines(log_path, line), 1);

        /* The first one gone, the second takes its place. */
        assert_int_equal(du_run("rm '%s/dup-a.so'", srv.plugins), 0);
        assert_true(serves(c, TP_STAMPED_ID(1)));
        assert_int_equal(problems(), 1);
        pv2_client_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(with_install, setup, teardown),
                cmocka_unit_test_setup_teardown(with_cp, setup, teardown),
                cmocka_unit_test_setup_teardown(with_mv, setup, teardown),
                cmocka_unit_test_setup_teardown(duplicate_provider, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
