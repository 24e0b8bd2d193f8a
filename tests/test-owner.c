/* SPDX-License-Identifier: MIT */
/*
 * Who may publish a counterset, end to end: perflibd and provider
 * processes running as root and as nobody (uid 65534).  Another user's
 * copy of a counterset is refused (its values, instances and names never
 * served, one line logged) until the owner's last provider of it exits;
 * an installed counterset is served from its installer's or root's
 * providers only, or from the user lodctr --owner named; a user's
 * countersets beyond --max-countersets-per-user are refused, root's never.
 * The runtime directory is root's (0755): nobody's providers publish from
 * their own directory below users/, and are served from there.
 * Runs as root only: the providers must run as two users.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "testutil.h"

#define NOBODY 65534

static GUID prov = { 0x0e0e0001, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };
/* Sorts before prov: were copies merged, the attacker's would name the counterset. */
static GUID prov_attacker = { 0x0e0e0000, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };
static GUID cset = { 0x0e0e0002, 0x1, 0x2, { 9, 8, 7, 6, 5, 4, 3, 2 } };
/* The counterset example-usermode.man installs ("My System Objects"). */
static GUID spec = { 0xf72fdf55, 0xeaa6, 0x45ba,
                     { 0xbf, 0x6d, 0x4c, 0x7c, 0xb0, 0xd6, 0xef, 0x73 } };

static struct du_daemon srv;
static char log_path[4200];

/* What the next provider child publishes: set before tu_child_start. */
static struct {
        uid_t uid;
        GUID *prov;
        GUID guids[5];
        unsigned n;
        const char *instance;           /* ASCII */
        ULONGLONG value;                /* of counter 2 */
        const char *name;               /* the counterset's name in its self-description */
} job;

static int describe(HANDLE h)
{
        static struct ctrpp_counter_desc counters[2] = {
                { 1, PERF_COUNTER_RAWCOUNT, 0, 4, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
                  CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
                  "First", "" },
                { 2, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
                  CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
                  "Second", "" },
        };
        static struct ctrpp_counterset_desc cs = {
                .instance_type = PERF_COUNTERSET_MULTI_INSTANCES, .n_counters = 2,
                .counters = counters, .description = "", .instances = "multiple" };
        static struct ctrpp_provider_desc d = {
                .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
                .n_countersets = 1, .countersets = &cs, .name = "Owner Test" };

        memcpy(&cs.guid, &job.guids[0], sizeof(GUID));
        memcpy(&d.guid, job.prov, sizeof(GUID));
        cs.name = job.name;
        return pl_set_provider_description(h, &d);
}

static void provider_child(int cmd_fd, int ack_fd)
{
        wchar_t name[32];
        HANDLE h;

        if (du_drop_to(job.uid) < 0)
                _exit(4);
        swprintf(name, 32, L"%s", job.instance);
        if (PerfStartProvider(job.prov, NULL, &h) != ERROR_SUCCESS)
                _exit(2);
        for (unsigned k = 0; k < job.n; k++) {
                ULONG size;
                PPERF_COUNTERSET_INFO t = tu_template(job.prov, &job.guids[k],
                                                      PERF_COUNTERSET_MULTI_INSTANCES, 2,
                                                      (const ULONG[]) { 4, 8 }, &size);
                PPERF_COUNTERSET_INSTANCE i;

                if (PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS ||
                    !(i = PerfCreateInstance(h, &job.guids[k], name, 1)))
                        _exit(3);
                PerfSetULongLongCounterValue(h, i, 2, job.value);
        }
        if (job.name && describe(h) != 0)
                _exit(5);
        tu_ready(ack_fd);
        while (tu_next_command(cmd_fd))
                tu_ready(ack_fd);
        _exit(0);
}

static void start_child(struct tu_child *c, uid_t uid, const char *instance, ULONGLONG value,
                        const char *name)
{
        job.uid = uid;
        job.prov = uid == NOBODY ? &prov_attacker : &prov;
        job.instance = instance;
        job.value = value;
        job.name = name;
        assert_int_equal(tu_child_start(c, provider_child), 0);
}

static void start_server(const char *max_per_user)
{
        char script[64];
        const char *launcher[] = { "sh", "-c", script, NULL };

        snprintf(script, sizeof(script), "exec \"$0\" \"$@\" --max-countersets-per-user %s",
                 max_per_user);
        assert_int_equal(du_start(&srv, NULL, launcher), 0);
}

static struct pv2_client *connect_client(void)
{
        struct pv2_client *c = NULL;

        if (du_connect(&srv, 5000, &c) < 0)
                fail_msg("perflibd did not answer on %s", srv.sock);
        return c;
}

static int setup(void **state)
{
        const char *run = tu_runtime_setup();

        /*
         * The server's directory, as the unit makes it: root's, 0755, with
         * users/ (1733) where nobody's providers make their own directory.
         */
        assert_int_equal(chmod(run, 0755), 0);
        assert_int_equal(pl_runtime_make_users(run), 0);
        assert_int_equal(du_init(&srv, run), 0);
        snprintf(log_path, sizeof(log_path), "%s/perflibd.log", run);
        srv.log = log_path;
        return 0;
}

static int teardown(void **state)
{
        if (srv.pid > 0)
                du_stop(&srv);
        tu_runtime_teardown();
        return 0;
}

/* How many lines of perflibd's log hold what. */
static int log_lines(const char *what)
{
        return du_count_lines(log_path, what);
}

/* Whether s appears in data as UTF-16LE. */
static bool utf16_has(const uint8_t *data, size_t size, const char *s)
{
        size_t n = strlen(s);

        for (size_t i = 0; i + 2 * n <= size; i++) {
                size_t k = 0;

                while (k < n && data[i + 2 * k] == (uint8_t) s[k] && data[i + 2 * k + 1] == 0)
                        k++;
                if (k == n)
                        return true;
        }
        return false;
}

/* Whether g's instances (EnumerateInstances) include the name inst. */
static bool has_instance(struct pv2_client *c, const GUID *g, const char *inst)
{
        struct pv2_out o = { 0 };
        bool has = pv2_enumerate_instances(c, NULL, g, 1 << 16, &o) == ERROR_SUCCESS &&
                   utf16_has(o.data, o.out_size, inst);

        pv2_out_done(&o);
        return has;
}

/* Whether g's registration information (its names) holds s. */
static bool named(struct pv2_client *c, const GUID *g, const char *s)
{
        struct pv2_out o = { 0 };
        bool has;

        /* 3: the counterset's name (MS-PCQ 3.1.4.1.2). */
        assert_int_equal(pv2_query_registration_info(c, NULL, g, 3, 0, 1 << 16, &o),
                         ERROR_SUCCESS);
        has = utf16_has(o.data, o.out_size, s);
        pv2_out_done(&o);
        return has;
}

/* Polls (10 s at most, requests making perflibd refresh) until the log has n lines of what. */
static bool log_reaches(struct pv2_client *c, const char *what, int n)
{
        for (int i = 0; i < 200; i++) {
                if (log_lines(what) >= n)
                        return true;
                (void) du_listed(c, &cset);
                usleep(50000);
        }
        return false;
}

/* Counter 2 of instance inst of g, or UINT64_MAX when it is not served. */
static uint64_t value_of(struct pv2_client *c, const GUID *g, const char *inst)
{
        uint64_t v = 0;

        assert_int_equal(du_value_of(c, g, inst, 2, &v), 0);
        return v;
}

/* Polls (10 s at most) until value_of is want. */
static bool value_becomes(struct pv2_client *c, const GUID *g, const char *inst, uint64_t want)
{
        for (int i = 0; i < 200; i++) {
                if (value_of(c, g, inst) == want)
                        return true;
                usleep(50000);
        }
        return false;
}

/*
 * The spoofing attack: nobody publishes root's counterset with the same
 * instance name, other values and another name.  Root's values and name
 * are served, nobody's instance never; once root's provider exits, the
 * counterset is nobody's (the claim lasts while the owner publishes it).
 */
static void test_spoof_refused(void **state)
{
        struct tu_child victim = { .cmd_fd = -1, .ack_fd = -1 }, attacker = victim;
        struct pv2_client *c;
        bool logged;

        job.guids[0] = cset;
        job.n = 1;
        start_server("64");
        c = connect_client();
        start_child(&victim, 0, "v1", 1234, "Victim Set");
        assert_int_equal(du_wait_listed(c, &cset, true, 10000), 0);
        assert_true(value_of(c, &cset, "v1") == 1234);

        start_child(&attacker, NOBODY, "v1", 666666, "Attacker Set");
        assert_int_equal(tu_command(&attacker, 'x'), 0);
        /* The log says when perflibd has seen it; the values are checked first. */
        logged = log_reaches(c, "refused: it belongs to uid 0", 1);
        for (int i = 0; i < 5; i++) {
                assert_int_equal(value_of(c, &cset, "v1"), 1234);
                assert_true(named(c, &cset, "Victim Set"));
                assert_false(named(c, &cset, "Attacker Set"));
                usleep(100000);
        }
        /* Reported once, however many rebuilds saw it. */
        assert_true(logged);
        assert_int_equal(log_lines("refused"), 1);

        tu_child_stop(&victim);
        assert_true(value_becomes(c, &cset, "v1", 666666));
        assert_true(named(c, &cset, "Attacker Set"));
        pv2_client_free(c);
        tu_child_stop(&attacker);
}

static int lodctr(const char *owner)
{
        return du_run("%s/server-glue/lodctr --registry-dir '%s' %s%s "
                      "/M:%s/tests/ctrpp/spec/example-usermode.man >/dev/null 2>&1",
                      getenv("top_builddir"), srv.registry, owner ? "--owner " : "",
                      owner ? owner : "", getenv("top_srcdir"));
}

/*
 * An installed counterset (lodctr as root): root's provider of it is
 * served, nobody's refused; installed with --owner nobody, nobody's is.
 */
static void test_installed_owner(void **state)
{
        struct tu_child root = { .cmd_fd = -1, .ack_fd = -1 }, other = root;
        struct pv2_client *c;

        job.guids[0] = spec;
        job.n = 1;
        assert_int_equal(lodctr(NULL), 0);
        start_server("64");
        c = connect_client();
        assert_int_equal(du_wait_listed(c, &spec, true, 10000), 0);
        start_child(&other, NOBODY, "n1", 7, NULL);
        start_child(&root, 0, "r1", 8, NULL);
        assert_true(value_becomes(c, &spec, "r1", 8));
        assert_true(log_reaches(c, "refused: it belongs to uid 0", 1));
        assert_false(has_instance(c, &spec, "n1"));
        assert_true(value_of(c, &spec, "n1") == UINT64_MAX);
        tu_child_stop(&root);
        tu_child_stop(&other);

        assert_int_equal(du_run("%s/server-glue/unlodctr --registry-dir '%s' "
                                "/M:%s/tests/ctrpp/spec/example-usermode.man >/dev/null",
                                getenv("top_builddir"), srv.registry, getenv("top_srcdir")), 0);
        assert_int_equal(lodctr("nobody"), 0);
        start_child(&other, NOBODY, "n1", 7, NULL);
        assert_true(value_becomes(c, &spec, "n1", 7));
        assert_true(has_instance(c, &spec, "n1"));
        pv2_client_free(c);
        tu_child_stop(&other);
}

/* With a cap of 3, nobody's 5 countersets: 3 served, 2 refused; root's 5 all served. */
static void test_cap(void **state)
{
        struct tu_child capped = { .cmd_fd = -1, .ack_fd = -1 }, root = capped;
        struct pv2_client *c;
        int served = 0;

        start_server("3");
        c = connect_client();
        job.n = 5;
        for (unsigned k = 0; k < 5; k++)
                job.guids[k] = (GUID) { 0x0e0e1000 + k, 1, 2, { 1, 2, 3, 4, 5, 6, 7, 8 } };
        start_child(&capped, NOBODY, "c1", 5, NULL);
        for (unsigned k = 0; k < 5; k++)
                job.guids[k].Data1 += 0x100;
        start_child(&root, 0, "r1", 6, NULL);
        for (unsigned k = 0; k < 5; k++)
                assert_int_equal(du_wait_listed(c, &job.guids[k], true, 10000), 0);
        assert_true(log_reaches(c, "--max-countersets-per-user", 2));
        for (unsigned k = 0; k < 5; k++) {
                GUID g = job.guids[k];

                g.Data1 -= 0x100;
                served += du_listed(c, &g) == 1;
        }
        assert_int_equal(served, 3);
        assert_int_equal(log_lines("--max-countersets-per-user"), 2);
        pv2_client_free(c);
        tu_child_stop(&capped);
        tu_child_stop(&root);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_spoof_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_installed_owner, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
        };

        if (geteuid() != 0) {
                printf("SKIP: test-owner runs providers as two users, so it must run as root\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
