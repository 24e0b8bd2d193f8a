/* SPDX-License-Identifier: MIT */
/*
 * Faulty plugins against a real perflibd (issue 16's proof).  Each fault
 * module of plugins/fault.c runs beside the good plugin, with small limits
 * so that the suite stays short; while the fault happens and until
 * perflibd restarted the plugin, a thread reads the good plugin's
 * reference counter (a collect round trip to its host) all the time, and
 * every read must be right and answered within GOOD_BOUND_MS (generous: it
 * proves that nothing blocks, not a speed; the worst is printed).  Then:
 * the fault is logged once per start, at error, naming the file and the
 * cause; the faulty plugin's counters are never served as success while
 * it is down (those that fault at their first collect never at all);
 * perflibd kept its pid and its resident size (not under AddressSanitizer,
 * whose quarantine keeps freed memory resident); a plugin that crashes at
 * its first collects only is served again after its restarts, as
 * perflibd --list-plugins says.  Stopping: SIGTERM with one plugin hung in
 * start and one in collect ends perflibd and every host within
 * STOP_WITHIN_S; SIGKILL of perflibd leaves no host.  As root:
 * --plugin-user=nobody runs the host as nobody, with no new privileges,
 * and its values are read.  PERFLIB_LONG_TESTS=1 sees each fault through
 * LONG_FAULTS restarts; an argument runs the tests whose names match it
 * (cmocka's filter, as in "fault-*").
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "plugins/fault-plugin.h"
#include "plugins/test-plugin.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif

#define GOOD_BOUND_MS   1000.0  /* any one read of the good plugin */
#define FAULT_BOUND_MS  2000.0  /* any one read of the faulty one: its collect deadline and more */
#define FAULT_WITHIN_S  20.0    /* a fault shows in the log, once the plugin is there */
#define BACK_WITHIN_S   30.0    /* crash-first is served again */
#define RESTART_WITHIN_S 10.0   /* --plugin-restart-max, and a start deadline */
#define STOP_WITHIN_S   5.0     /* issue 16: SIGTERM, hung plugins and all */
#define LONG_FAULTS     3
#define RSS_GROWTH_KIB  4096L   /* perflibd's growth over a test */

/* Small limits: a fault is seen within seconds, a restart within 2 s of it. */
static const char *const limits[] = {
        "--plugin-memory-max=64M", "--plugin-cpu-window=2s", "--plugin-start-timeout=2s",
        "--plugin-restart-min=2s", "--plugin-restart-max=4s", "--collect-timeout=500ms",
        NULL,
};

struct fault {
        const char *name;               /* the module and the descriptor's name */
        unsigned v;                     /* FP_* */
        const char *cause;              /* in its log line */
        bool never_served;              /* faults before it could serve anything */
        /* The cause when AddressSanitizer catches the fault first and exits. */
        const char *asan_cause;
};

static const struct fault faults[] = {
        { "fault-segv", FP_SEGV, "killed by signal 11", true, NULL },
        { "fault-abort", FP_ABORT, "killed by signal 6", true, NULL },
        { "fault-exit", FP_EXIT, "exited with status 3", true, NULL },
        { "fault-stack", FP_STACK, "killed by signal 11", true, NULL },
        { "fault-hang-start", FP_HANG_START, "missed its start deadline", true, NULL },
        { "fault-hang-collect", FP_HANG_COLLECT, "missed its collect deadline", true, NULL },
        { "fault-leak", FP_LEAK, "over its memory limit", false, NULL },
        { "fault-spin", FP_SPIN, "over its CPU limit", false, NULL },
        { "fault-bad-ref", FP_BAD_REF, "killed by signal 11", true, NULL },
        /* glibc's free sees the smashed heap and aborts; or the overrun itself faults. */
        { "fault-oob", FP_OOB, "killed by signal ", true, "exited with status 1" },
};

static const struct fault crash_first = {
        "fault-crash-first", FP_CRASH_FIRST, "killed by signal 11", false, NULL,
};

static const GUID good_cset = TP_CSET_GUID(1);
static struct du_daemon srv;
static pid_t server_pid;        /* srv.pid as started: hosts name it after it is gone */
static char log_path[4200], count_path[4200];

/* ---- the log ---- */

/* Lines of perflibd's log holding both a and b. */
static int log_lines(const char *a, const char *b)
{
        FILE *f = fopen(log_path, "re");
        char line[2048];
        int n = 0;

        while (f && fgets(line, sizeof(line), f))
                n += strstr(line, a) && strstr(line, b);
        if (f)
                fclose(f);
        return n;
}

static void print_log(void)
{
        FILE *f = fopen(log_path, "re");
        char line[2048];

        while (f && fgets(line, sizeof(line), f))
                print_message("| %s", line);
        if (f)
                fclose(f);
}

static const char *cause_of(const struct fault *f)
{
        return UNDER_ASAN && f->asan_cause ? f->asan_cause : f->cause;
}

/* The fault's lines: at error, starting "plugin FILE.so: ", with the cause. */
static int fault_lines(const struct fault *f)
{
        char head[128];

        snprintf(head, sizeof(head), "error: plugin %s.so: ", f->name);
        return log_lines(head, cause_of(f));
}

/* ---- plugin hosts, found by their command line ---- */

/* Whether the NUL-separated args of a command line hold arg (a prefix of one, with prefix). */
static bool has_arg(const char *args, size_t len, const char *arg, bool prefix)
{
        for (const char *a = args; a < args + len; a += strlen(a) + 1)
                if (prefix ? strstr(a, arg) != NULL : strcmp(a, arg) == 0)
                        return true;
        return false;
}

/*
 * The hosts perflibd (pid parent) started, of plugin file when given: how
 * many, and the first one's pid in *ret_pid when there is one.
 */
static int hosts_of(pid_t parent, const char *file, pid_t *ret_pid)
{
        char want_parent[32], want_file[300], path[300], args[8192];
        DIR *d = opendir("/proc");
        struct dirent *de;
        int n = 0;

        snprintf(want_parent, sizeof(want_parent), "--parent=%d", (int) parent);
        snprintf(want_file, sizeof(want_file), "--file=%s", file ? file : "");
        assert_non_null(d);
        while ((de = readdir(d))) {
                FILE *f;
                size_t len;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                len = fread(args, 1, sizeof(args) - 1, f);
                fclose(f);
                args[len] = '\0';
                if (!has_arg(args, len, "perflib-plugin-host", true) ||
                    !has_arg(args, len, want_parent, false) ||
                    (file && !has_arg(args, len, want_file, false)))
                        continue;
                if (n++ == 0 && ret_pid)
                        *ret_pid = (pid_t) atoi(de->d_name);
        }
        closedir(d);
        return n;
}

/* Seconds until no host of server_pid is left, or -1 past bound_s. */
static double hosts_gone_within(double t0, double bound_s)
{
        while (hosts_of(server_pid, NULL, NULL) > 0) {
                if (tu_now() - t0 > bound_s)
                        return -1;
                usleep(20000);
        }
        return tu_now() - t0;
}

/* ---- the good plugin's reader ---- */

/* Reads the good plugin's reference counter in a loop, on a connection of its own. */
struct good_reader {
        pthread_t thread;
        struct pv2_client *c;
        atomic_bool stop;
        unsigned ok, wrong, failed;
        double worst_ms;
};

static void *good_read_loop(void *arg)
{
        struct good_reader *g = arg;

        while (!atomic_load(&g->stop)) {
                uint64_t v = 0;
                double t0 = tu_now(), ms;
                int r = du_value_of(g->c, &good_cset, "plugin-instance", 3, &v);

                ms = (tu_now() - t0) * 1000;
                if (ms > g->worst_ms)
                        g->worst_ms = ms;
                if (r < 0)
                        g->failed++;
                else if (v != TP_VALUE_REF)
                        g->wrong++;
                else
                        g->ok++;
                usleep(20000);
        }
        return NULL;
}

/* The one reader; static, so that teardown stops it when a test failed. */
static struct good_reader good;
static bool good_running;

static void good_start(struct good_reader *g)
{
        *g = (struct good_reader){ 0 };
        assert_int_equal(du_connect(&srv, 5000, &g->c), 0);
        assert_int_equal(pthread_create(&g->thread, NULL, good_read_loop, g), 0);
        good_running = true;
}

static void good_stop(struct good_reader *g)
{
        if (!good_running)
                return;
        good_running = false;
        atomic_store(&g->stop, true);
        (void) pthread_join(g->thread, NULL);
        pv2_client_free(g->c);
}

/* Stops the reader: every read was right and within GOOD_BOUND_MS. */
static void good_check(struct good_reader *g, const char *what)
{
        good_stop(g);
        print_message("%s: good plugin read %u times, worst %.1f ms\n", what, g->ok, g->worst_ms);
        assert_int_equal(g->failed, 0);
        assert_int_equal(g->wrong, 0);
        assert_true(g->ok > 0);
        assert_true(g->worst_ms < GOOD_BOUND_MS);
}

/* ---- perflibd ---- */

static int setup(void **state)
{
        const char *run = tu_runtime_setup();

        /* As perflibd's unit makes it: hosts that run as nobody publish below users/. */
        assert_int_equal(chmod(run, 0755), 0);
        assert_int_equal(du_init(&srv, run), 0);
        snprintf(log_path, sizeof(log_path), "%s/perflibd.log", run);
        snprintf(count_path, sizeof(count_path), "%s/collects", run);
        srv.log = log_path;
        srv.args = limits;
        server_pid = 0;
        return 0;
}

/* SIGTERM, and perflibd gone within bound_s: its seconds, or -1 (then it is killed). */
static double stop_within(double bound_s)
{
        double t0 = tu_now();
        int status;

        assert_int_equal(kill(srv.pid, SIGTERM), 0);
        while (waitpid(srv.pid, &status, WNOHANG) == 0) {
                if (tu_now() - t0 > bound_s) {
                        kill(srv.pid, SIGKILL);
                        waitpid(srv.pid, &status, 0);
                        srv.pid = 0;
                        return -1;
                }
                usleep(10000);
        }
        srv.pid = 0;
        return tu_now() - t0;
}

/* Every test ends with perflibd stopped, its hosts with it. */
static int teardown(void **state)
{
        double t0 = tu_now();

        good_stop(&good);
        if (srv.pid > 0 && stop_within(STOP_WITHIN_S) < 0)
                fail_msg("perflibd did not stop within %.0f s of SIGTERM", STOP_WITHIN_S);
        if (server_pid > 0 && hosts_gone_within(t0, STOP_WITHIN_S) < 0)
                fail_msg("a plugin host outlived perflibd by %.0f s", STOP_WITHIN_S);
        unsetenv(FP_COUNT_ENV);
        tu_runtime_teardown();
        return 0;
}

static void add_plugin(const char *name)
{
        assert_int_equal(du_run("cp '%s/tests/plugins/.libs/%s.so' '%s/'", getenv("top_builddir"),
                                name, srv.plugins), 0);
}

/* perflibd with good.so and fault (when given) in its plugin directory, good.so served. */
static struct pv2_client *start_with(const char *fault)
{
        struct pv2_client *c = NULL;

        add_plugin("good");
        if (fault)
                add_plugin(fault);
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        server_pid = srv.pid;
        if (du_connect(&srv, 5000, &c) < 0)
                fail_msg("perflibd did not answer on %s", srv.sock);
        if (du_wait_listed(c, &good_cset, true, 10000) < 0) {
                print_log();
                fail_msg("the good plugin is not served");
        }
        return c;
}

/* perflibd is the process it was, still running. */
static void assert_server_alive(void)
{
        assert_int_equal(srv.pid, server_pid);
        assert_int_equal(waitpid(srv.pid, NULL, WNOHANG), 0);
}

/* ---- reading the faulty plugin ---- */

/*
 * Whether the fault plugin's counter is served with success; a value served
 * must be its own.  Not served: a failed call, a non-success status or no
 * such instance.  *worst_ms keeps the slowest answer.
 */
static bool fault_served(struct pv2_client *c, const struct fault *f, uint32_t counter,
                         double *worst_ms)
{
        const GUID g = FP_CSET_GUID(f->v);
        uint64_t v = UINT64_MAX;
        double t0 = tu_now(), ms;
        int r = du_value_of(c, &g, FP_INSTANCE, counter, &v);

        ms = (tu_now() - t0) * 1000;
        if (ms > *worst_ms)
                *worst_ms = ms;
        if (r < 0 || v == UINT64_MAX)
                return false;
        assert_int_equal(v, counter == 1 ? FP_VALUE : FP_VALUE_REF);
        return true;
}

static int faults_wanted(void)
{
        const char *l = getenv("PERFLIB_LONG_TESTS");

        return l && strcmp(l, "1") == 0 ? LONG_FAULTS : 1;
}

/* ---- one fault beside the good plugin ---- */

/*
 * Reads the faulty plugin until its fault was logged wanted times; how
 * often it was served meanwhile.
 */
static unsigned drive_fault(struct pv2_client *c, const struct fault *f, int wanted)
{
        double end = tu_now() + FAULT_WITHIN_S * wanted, worst = 0;
        unsigned served = 0;

        while (fault_lines(f) < wanted && tu_now() < end) {
                served += fault_served(c, f, 2, &worst);
                usleep(50000);
        }
        print_message("%s: %d faults logged, served %u times, slowest read %.1f ms\n", f->name,
                      fault_lines(f), served, worst);
        if (fault_lines(f) < wanted) {
                print_log();
                fail_msg("%s: %s not logged %d times within %.0f s", f->name, cause_of(f), wanted,
                         FAULT_WITHIN_S * wanted);
        }
        assert_true(worst < FAULT_BOUND_MS);
        return served;
}

/*
 * Goes on reading f until it was started again, or faulted again (a
 * plugin whose start hangs is never "started"): restarts are perflibd's
 * own doing, and the good plugin's reads go on meanwhile.  Whether it
 * faulted again first: a read of ours may reach the restarted host before
 * perflibd marks it started, and fault it there.
 */
static bool await_restart(struct pv2_client *c, const struct fault *f)
{
        int started = log_lines("started", f->name), faulted = fault_lines(f);
        double end = tu_now() + RESTART_WITHIN_S, worst = 0;

        while (log_lines("started", f->name) == started && fault_lines(f) == faulted &&
               tu_now() < end) {
                (void) fault_served(c, f, 2, &worst);
                usleep(50000);
        }
        if (tu_now() >= end) {
                print_log();
                fail_msg("%s: not restarted within %.0f s", f->name, RESTART_WITHIN_S);
        }
        return log_lines("started", f->name) == started;
}

/*
 * What the log says of f: each fault once, by file and cause, and nothing
 * of good.so.  refaulted: the last start faulted before it was marked.
 */
static void check_fault_log(const struct fault *f, bool refaulted)
{
        char head[128];
        int started = log_lines("started", f->name);

        snprintf(head, sizeof(head), "plugin %s.so: ", f->name);
        print_message("%s: started %d times\n", f->name, started);
        if (f->v != FP_HANG_START) {
                assert_true(started >= 1);
                /* A start ends in one fault at most, logged once. */
                assert_true(fault_lines(f) <= started + (refaulted ? 1 : 0));
        }
        assert_true(log_lines(head, "restart") >= 1);
        assert_int_equal(log_lines("error: ", "plugin good.so: "), 0);
}

static void one_fault(void **state)
{
        const struct fault *f = *state;
        struct pv2_client *c = start_with(f->name);
        double worst = 0;
        long rss0, rss1;
        unsigned served;

        /* Warm: the fault plugin's host runs, every connection is made. */
        good_start(&good);
        served = fault_served(c, f, 1, &worst);
        rss0 = du_status_kib(srv.pid, "VmRSS");
        served += drive_fault(c, f, faults_wanted());
        /* Down until its restart, which is --plugin-restart-min away. */
        assert_false(fault_served(c, f, 2, &worst));
        bool refaulted = await_restart(c, f);
        good_check(&good, f->name);
        if (f->never_served)
                assert_int_equal(served, 0);
        assert_server_alive();
        rss1 = du_status_kib(srv.pid, "VmRSS");
        print_message("%s: perflibd's VmRSS %ld -> %ld KiB\n", f->name, rss0, rss1);
        assert_true(rss0 > 0 && rss1 > 0);
        if (!UNDER_ASAN)
                assert_true(rss1 - rss0 < RSS_GROWTH_KIB);
        check_fault_log(f, refaulted);
        pv2_client_free(c);
}

/* perflibd --list-plugins' line of file, or fails: state, pid, restarts, last fault (trimmed). */
struct listed {
        char state[32], fault[256];
        long pid;
        unsigned restarts;
};

static void list_plugin(const char *file, struct listed *ret)
{
        char cmd[4200], line[512], f[256], name[256];
        FILE *out;
        int found = 0;

        snprintf(cmd, sizeof(cmd), "'%s/server-glue/perflibd' --list-plugins",
                 getenv("top_builddir"));
        out = popen(cmd, "re");
        assert_non_null(out);
        while (fgets(line, sizeof(line), out)) {
                struct listed l;
                int n = 0;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "%255s %255s %31s %ld %u %n", f, name, l.state, &l.pid,
                           &l.restarts, &n) == 5 && n > 0 && strcmp(f, file) == 0) {
                        snprintf(l.fault, sizeof(l.fault), "%s", line + n);
                        *ret = l;
                        found++;
                }
        }
        assert_int_equal(pclose(out), 0);
        assert_int_equal(found, 1);
}

/* Crashes at its first FP_CRASHES collects, then is served again, by itself. */
static void crash_first_comes_back(void **state)
{
        const struct fault *f = &crash_first;
        double end, worst = 0;
        struct pv2_client *c;
        struct listed l;
        pid_t host = 0;

        assert_int_equal(du_run("touch '%s' && chmod 666 '%s'", count_path, count_path), 0);
        assert_int_equal(setenv(FP_COUNT_ENV, count_path, 1), 0);
        c = start_with(f->name);
        good_start(&good);
        end = tu_now() + BACK_WITHIN_S;
        while (!(fault_served(c, f, 1, &worst) && fault_served(c, f, 2, &worst)) &&
               tu_now() < end)
                usleep(50000);
        print_message("%s: %d faults logged, slowest read %.1f ms\n", f->name, fault_lines(f),
                      worst);
        if (tu_now() >= end) {
                print_log();
                fail_msg("%s is not served again within %.0f s", f->name, BACK_WITHIN_S);
        }
        /* Back for good: its values keep coming. */
        for (int i = 0; i < 10; i++)
                assert_true(fault_served(c, f, 2, &worst));
        good_check(&good, f->name);
        assert_server_alive();
        assert_int_equal(fault_lines(f), FP_CRASHES);
        assert_true(log_lines("started", f->name) >= FP_CRASHES + 1);
        check_fault_log(f, false);
        /* And so says --list-plugins. */
        list_plugin("fault-crash-first.so", &l);
        print_message("--list-plugins: %s, pid %ld, %u restarts, last fault: %s\n", l.state,
                      l.pid, l.restarts, l.fault);
        assert_int_equal(hosts_of(server_pid, "fault-crash-first.so", &host), 1);
        assert_string_equal(l.state, "running");
        assert_int_equal(l.pid, host);
        assert_int_equal(l.restarts, FP_CRASHES);
        assert_non_null(strstr(l.fault, f->cause));
        pv2_client_free(c);
}

/* ---- stopping ---- */

/* Waits until perflibd started n hosts. */
static void wait_hosts(int n)
{
        double end = tu_now() + 10;

        while (hosts_of(server_pid, NULL, NULL) < n && tu_now() < end)
                usleep(20000);
        if (hosts_of(server_pid, NULL, NULL) < n) {
                print_log();
                fail_msg("perflibd started %d plugin hosts, not %d", hosts_of(server_pid, NULL,
                         NULL), n);
        }
}

/* A read of hang-collect's counter, which waits for its collect (to the deadline). */
static void *read_hung(void *arg)
{
        static const struct fault hung = { "fault-hang-collect", FP_HANG_COLLECT, "", false, NULL };
        struct pv2_client *c = arg;
        double worst = 0;

        (void) fault_served(c, &hung, 2, &worst);
        return NULL;
}

/* SIGTERM while one plugin is in its start and another in its collect, neither returning. */
static void sigterm_hung(void **state)
{
        /* Deadlines past the SIGTERM: the plugins are still hung when it comes. */
        static const char *const args[] = { "--collect-timeout=1s", NULL };
        const GUID hung_cset = FP_CSET_GUID(FP_HANG_COLLECT);
        struct pv2_client *c, *c2 = NULL;
        pthread_t t;
        double s;

        srv.args = args;
        add_plugin("fault-hang-start");
        c = start_with("fault-hang-collect");
        assert_int_equal(du_wait_listed(c, &hung_cset, true, 10000), 0);
        wait_hosts(3);
        assert_int_equal(du_connect(&srv, 5000, &c2), 0);
        assert_int_equal(pthread_create(&t, NULL, read_hung, c2), 0);
        usleep(500000);
        s = stop_within(STOP_WITHIN_S);
        if (s < 0) {
                print_log();
                fail_msg("perflibd did not stop within %.0f s of SIGTERM", STOP_WITHIN_S);
        }
        s = hosts_gone_within(tu_now() - s, STOP_WITHIN_S);
        print_message("perflibd and its hosts gone %.2f s after SIGTERM\n", s);
        assert_true(s >= 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        pv2_client_free(c2);
        pv2_client_free(c);
}

/* perflibd killed: its hosts die with it. */
static void sigkill_leaves_no_host(void **state)
{
        struct pv2_client *c = start_with("fault-hang-start");
        double s;

        wait_hosts(2);
        assert_int_equal(kill(srv.pid, SIGKILL), 0);
        assert_int_equal(waitpid(srv.pid, NULL, 0), srv.pid);
        srv.pid = 0;
        s = hosts_gone_within(tu_now(), STOP_WITHIN_S);
        print_message("hosts gone %.2f s after perflibd was killed\n", s);
        assert_true(s >= 0);
        pv2_client_free(c);
}

/* ---- as root: the host as another user ---- */

/* Field (the first number of a /proc/PID/status line), and that all of them on the line are it. */
static bool status_all(pid_t pid, const char *field, long want)
{
        char path[64], line[256];
        size_t len = strlen(field);
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, field, len) == 0 && line[len] == ':') {
                        char *p = line + len + 1, *end;

                        found = true;
                        for (long v = strtol(p, &end, 10); end != p; v = strtol(p, &end, 10)) {
                                found = found && v == want;
                                p = end;
                        }
                        break;
                }
        fclose(f);
        return found;
}

static void host_as_nobody(void **state)
{
        static const char *const args[] = { "--plugin-user=nobody", NULL };
        const struct passwd *pw = getpwnam("nobody");
        struct pv2_client *c;
        uint64_t v = 0;
        pid_t host = 0;

        if (geteuid() != 0 || !pw) {
                print_message("SKIP: the host runs as another user only when perflibd is root\n");
                skip();
        }
        srv.args = args;
        c = start_with(NULL);
        assert_int_equal(hosts_of(server_pid, "good.so", &host), 1);
        assert_true(status_all(host, "Uid", (long) pw->pw_uid));
        assert_true(status_all(host, "Gid", (long) pw->pw_gid));
        assert_true(status_all(host, "NoNewPrivs", 1));
        assert_int_equal(du_value_of(c, &good_cset, "plugin-instance", 3, &v), 0);
        assert_int_equal(v, TP_VALUE_REF);
        pv2_client_free(c);
}

#define FAULT_TEST(i) { \
        .name = faults[i].name, .test_func = one_fault, .setup_func = setup, \
        .teardown_func = teardown, .initial_state = (void *) &faults[i], \
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
                FAULT_TEST(0), FAULT_TEST(1), FAULT_TEST(2), FAULT_TEST(3), FAULT_TEST(4),
                FAULT_TEST(5), FAULT_TEST(6), FAULT_TEST(7), FAULT_TEST(8), FAULT_TEST(9),
                cmocka_unit_test_setup_teardown(crash_first_comes_back, setup, teardown),
                cmocka_unit_test_setup_teardown(sigterm_hung, setup, teardown),
                cmocka_unit_test_setup_teardown(sigkill_leaves_no_host, setup, teardown),
                cmocka_unit_test_setup_teardown(host_as_nobody, setup, teardown),
        };

        _Static_assert(sizeof(faults) / sizeof(faults[0]) == 10, "a FAULT_TEST for each fault");
        signal(SIGPIPE, SIG_IGN);
        if (argc > 1)
                cmocka_set_test_filter(argv[1]);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
