/* SPDX-License-Identifier: MIT */
/*
 * bench-providers: the cost of one full collection of each Linux provider
 * plugin, driven the way perflibd drives it: the plugin is loaded and
 * started, then each collection is PERF_COLLECT_START through the
 * provider's collect service, a snapshot of its counterset, and
 * PERF_COLLECT_END, within perflibd's collect bound
 * ($PERFLIB_COLLECT_TIMEOUT_MS, else 100 ms): a collection that does not
 * answer in time is counted as over it.  Then Process and Thread again with
 * 1,000 and with 2,000 extra processes running, and the cost of one more
 * process (thread) from the two.  Last, every plugin again with 500
 * processes running, summed: what one collection of every provider costs.
 * Prints figures; passes or fails nothing.
 *
 *      bench-providers [--quick] [PLUGIN.so ...]
 *
 * With no plugin named, every providers/<name>/.libs/<name>.so of the build
 * tree ($top_builddir, else "..") is measured.
 */
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perflib-plugin.h"
#include "reader.h"

#define EXTRA_PROCESSES 1000

static char rundir[128];
static int iterations = 20;

static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fputs("bench-providers: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(1);
}

static void __attribute__((format(printf, 3, 4)))
svc_log(const struct perflib_plugin_services *svc, int priority, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fputs("# plugin: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static double cpu_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

/* The socket of the one provider in the runtime directory. */
static int find_socket(const char *path, void *userdata)
{
        snprintf(userdata, PATH_MAX, "%s", path);
        return 1;
}

struct running {
        void *dl;
        const struct perflib_plugin *plugin;
        void *state;
        struct pl_reader *r;
        struct perflib_plugin_services svc;
};

static void plugin_start(const char *so, struct running *p)
{
        perflib_plugin_entry_fn entry;
        char sock[PATH_MAX] = "";

        p->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        if (!p->dl)
                die("%s: %s", so, dlerror());
        entry = (perflib_plugin_entry_fn) dlsym(p->dl, PERFLIB_PLUGIN_ENTRY_SYMBOL);
        if (!entry)
                die("%s: no %s", so, PERFLIB_PLUGIN_ENTRY_SYMBOL);
        p->plugin = entry();
        p->svc = (struct perflib_plugin_services) { .abi = PERFLIB_PLUGIN_ABI,
                                                    .size = sizeof(p->svc), .log = svc_log,
                                                    .runtime_dir = rundir };
        if (p->plugin->start(&p->svc, &p->state) != 0)
                die("%s: start failed", so);
        if (pl_scan(rundir, find_socket, sock, NULL) != 1 || pl_reader_open(sock, &p->r) < 0)
                die("%s: its provider is not in %s", so, rundir);
}

static void plugin_stop(struct running *p)
{
        pl_reader_close(p->r);
        p->plugin->stop(p->state);
        dlclose(p->dl);
}

/*
 * One collection as perflibd does it; returns the instance count.  *over
 * counts the requests that perflibd would have given up on (its collect
 * bound), serving the last values instead.
 */
static uint32_t collect(struct pl_reader *r, int *over)
{
        static const wchar_t machine[] = L"";
        struct pl_snapshot *s;
        uint32_t status, n;
        int k;

        k = pl_reader_notify(r, PERF_COLLECT_START, machine, sizeof(machine), &status);
        if (k == -ETIMEDOUT)
                ++*over;
        else if (k < 0)
                die("PERF_COLLECT_START: %s", strerror(-k));
        if (pl_reader_snapshot(r, 0, PL_SNAPSHOT_COLLECT, &s) < 0)
                die("a snapshot failed");
        k = pl_reader_notify(r, PERF_COLLECT_END, machine, sizeof(machine), &status);
        if (k < 0 && k != -ETIMEDOUT)
                die("PERF_COLLECT_END: %s", strerror(-k));
        n = s->n_instances;
        pl_snapshot_free(s);
        return n;
}

/*
 * The CPU time of one collection, in us; its mean wall time in *ret_wall
 * when not NULL.  gap_us apart: a provider may serve collections that
 * follow closely from its last (netproto, for 20 ms), which the gap rules out.
 */
static double measure_wall(const char *so, const char *label, unsigned gap_us, double *ret_wall)
{
        struct running p;
        double best = 1e18, total = 0, cpu0, cpu;
        uint32_t n = 0;
        int over = 0;

        plugin_start(so, &p);
        n = collect(p.r, &over);                /* warm: instances exist */
        over = 0;
        cpu0 = cpu_us();
        for (int i = 0; i < iterations; i++) {
                double t0, dt;

                if (gap_us)
                        usleep(gap_us);
                t0 = now_us();

                n = collect(p.r, &over);
                dt = now_us() - t0;
                total += dt;
                if (dt < best)
                        best = dt;
        }
        /* The plugin's service thread runs in this process: its CPU time is the
         * collection's cost, whatever else the machine runs meanwhile. */
        cpu = (cpu_us() - cpu0) / iterations;
        printf("%s: mean %.1f us, best %.1f us, CPU %.1f us per collection (%u instances), "
               "%d over the %d ms bound\n", label, total / iterations, best, cpu, n, over,
               pl_collect_timeout_ms());
        plugin_stop(&p);
        if (ret_wall)
                *ret_wall = total / iterations;
        return cpu;
}

static double measure(const char *so, const char *label)
{
        return measure_wall(so, label, 0, NULL);
}

static char *label_of(const char *so)
{
        const char *base = strrchr(so, '/');
        char *l = strdup(base ? base + 1 : so), *dot;

        if (!l)
                die("out of memory");
        if ((dot = strstr(l, ".so")))
                *dot = '\0';
        return l;
}

static pid_t *spawn_sleepers(int n)
{
        pid_t *pids = calloc((size_t) n, sizeof(*pids));

        if (!pids)
                die("out of memory");
        for (int i = 0; i < n; i++) {
                pids[i] = fork();
                if (pids[i] < 0)
                        die("fork: %s", strerror(errno));
                if (pids[i] == 0) {
                        for (;;)
                                pause();
                }
        }
        return pids;
}

static void kill_sleepers(pid_t *pids, int n)
{
        for (int i = 0; i < n; i++)
                kill(pids[i], SIGKILL);
        for (int i = 0; i < n; i++)
                waitpid(pids[i], NULL, 0);
        free(pids);
}

/*
 * Process and Thread again with 1,000 and 2,000 extra sleeping processes
 * (one thread each); the difference of the two, per process, is what one
 * more process (one more thread) costs a collection.
 */
static void measure_extra(const char *process, const char *thread)
{
        pid_t *pids = spawn_sleepers(EXTRA_PROCESSES), *more;
        double p1 = 0, p2 = 0, t1 = 0, t2 = 0;

        if (process)
                p1 = measure(process, "process+1000");
        if (thread)
                t1 = measure(thread, "thread+1000");
        more = spawn_sleepers(EXTRA_PROCESSES);
        if (process)
                p2 = measure(process, "process+2000");
        if (thread)
                t2 = measure(thread, "thread+2000");
        kill_sleepers(more, EXTRA_PROCESSES);
        kill_sleepers(pids, EXTRA_PROCESSES);
        if (process)
                printf("process-per-process: CPU %.1f us\n", (p2 - p1) / EXTRA_PROCESSES);
        if (thread)
                printf("thread-per-thread: CPU %.1f us\n", (t2 - t1) / EXTRA_PROCESSES);
}

/* The processes the machine runs now (numeric entries of /proc). */
static int count_processes(void)
{
        glob_t g = { 0 };
        int n = 0;

        if (glob("/proc/[0-9]*", GLOB_ONLYDIR, NULL, &g) == 0)
                n = (int) g.gl_pathc;
        globfree(&g);
        return n;
}

/*
 * Every plugin once more, with the machine running ALL_PROCESSES processes
 * (sleepers added up to that), each collection 25 ms after the last: the
 * sum is what one query of every counterset costs on such a machine.
 */
#define ALL_PROCESSES 500
static void measure_all(char **so, size_t n)
{
        int have = count_processes(), extra = have < ALL_PROCESSES ? ALL_PROCESSES - have : 0;
        pid_t *pids = spawn_sleepers(extra);
        double wall = 0, cpu = 0;

        for (size_t i = 0; i < n; i++) {
                char *label = label_of(so[i]), full[64];
                double w = 0;

                snprintf(full, sizeof(full), "%s@%d", label, ALL_PROCESSES);
                cpu += measure_wall(so[i], full, 25000, &w);
                wall += w;
                free(label);
        }
        printf("all-providers@%d-processes (%d running): wall %.2f ms, CPU %.2f ms per "
               "collection of every provider\n", ALL_PROCESSES, count_processes(), wall / 1000,
               cpu / 1000);
        kill_sleepers(pids, extra);
}

static void setup_rundir(void)
{
        const char *tmp = getenv("TMPDIR");

        snprintf(rundir, sizeof(rundir), "%s/perflib-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(rundir) || setenv("PERFLIB_RUNTIME_DIR", rundir, 1) < 0)
                die("%s: %s", rundir, strerror(errno));
}

int main(int argc, char **argv)
{
        const char *top = getenv("top_builddir");
        const char *process = NULL, *thread = NULL;
        char pattern[PATH_MAX];
        glob_t g = { 0 };
        int first = 1;

        if (argc > 1 && strcmp(argv[1], "--quick") == 0) {
                iterations = 5;
                first++;
        }
        if (argc > first && (strcmp(argv[first], "-h") == 0 || strcmp(argv[first], "--help") == 0)) {
                printf("usage: bench-providers [--quick] [PLUGIN.so ...]\n");
                return 0;
        }
        if (argc == first) {
                snprintf(pattern, sizeof(pattern), "%s/providers/*/.libs/*.so", top ? top : "..");
                if (glob(pattern, 0, NULL, &g) != 0)
                        die("no plugin matches %s (run from the build directory's bench/)", pattern);
        }
        setup_rundir();
        printf("# bench-providers: %d collections per figure, %ld online CPUs\n", iterations,
               sysconf(_SC_NPROCESSORS_ONLN));
        for (size_t i = 0; i < (argc == first ? g.gl_pathc : (size_t) (argc - first)); i++) {
                const char *so = argc == first ? g.gl_pathv[i] : argv[first + (int) i];
                char *label = label_of(so);

                measure(so, label);
                if (strcmp(label, "process") == 0)
                        process = so;
                if (strcmp(label, "thread") == 0)
                        thread = so;
                free(label);
        }
        if (process || thread)
                measure_extra(process, thread);
        if (argc == first)
                measure_all(g.gl_pathv, g.gl_pathc);
        else
                measure_all(argv + first, (size_t) (argc - first));
        globfree(&g);
        rmdir(rundir);
        return 0;
}
