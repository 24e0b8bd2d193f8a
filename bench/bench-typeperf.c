/* SPDX-License-Identifier: MIT */
/*
 * bench-typeperf: what one typeperf sample of 1,000 instances costs, end
 * to end: from the collect request (PerflibV2QueryCounterData through
 * libpcq, over perflibd's Unix socket) to the CSV line written to a file,
 * through typeperf's own code (typeperf-run.c, typeperf-out.c): the rate
 * math of 1,000 PERF_COUNTER_BULK_COUNT values, their text, the line.
 * Prints p50 and p99; never fails on a timing.
 *
 * A provider process publishes "Typeperf Bench(i0 ... i999)\Ops/sec", a
 * fresh perflibd serves it from a private runtime directory, and the
 * program adds "\Typeperf Bench(*)\Ops/sec" as typeperf -si does (the
 * wildcard expanded once into 1,000 columns), primes, then times samples.
 *
 * Usage: bench-typeperf [--quick] [--perflibd PATH]   (from the build directory)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perflib.h"
#include "pcq.h"
#include "typeperf.h"
#include "daemonutil.h"

#define INSTANCES 1000

#define BENCH_GUID(a) { 0x7e3f0b22, 0x5c2d, 0x4e8b, { 0x9a, 0x10, 0x3c, 0x44, 0x21, 0x6d, 0x0f, a } }
static GUID prov = BENCH_GUID(1);
static const GUID cset = BENCH_GUID(2);

static const struct ctrpp_counter_desc counters[] = {
        { 1, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
          CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
          "Ops/sec", "Operations" },
};
static const struct ctrpp_counterset_desc csets[] = {
        { BENCH_GUID(2), PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 1, counters, NULL, NULL,
          "Typeperf Bench", "1,000 instances", "multiple" },
};
static const struct ctrpp_provider_desc desc = {
        .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(struct ctrpp_provider_desc),
        .guid = BENCH_GUID(1), .resource_base = CTRPP_NO_ID,
        .n_countersets = 1, .countersets = csets, .name = "Typeperf Bench",
};

static const char *perflibd = "server-glue/perflibd";
static char rundir[96];         /* short: it holds a socket */
static struct du_daemon srv;    /* perflibd, once started */

/* Leaves no perflibd behind (the provider ends with our pipe). */
static void die(const char *what)
{
        fprintf(stderr, "bench-typeperf: %s\n", what);
        if (srv.pid > 0)
                kill(srv.pid, SIGTERM);
        exit(1);
}

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The provider's child process: publishes, says ready, lives until fd's EOF. */
static void provider(int ready, int fd, void *arg)
{
        struct {
                PERF_COUNTERSET_INFO set;
                PERF_COUNTER_INFO counter;
        } t = { { BENCH_GUID(2), BENCH_GUID(1), 1, PERF_COUNTERSET_MULTI_INSTANCES },
                { 1, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, 0 } };
        HANDLE h;
        char c;

        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, &t.set, sizeof(t)) != ERROR_SUCCESS ||
            pl_set_provider_description(h, &desc) != 0)
                _exit(2);
        for (unsigned i = 0; i < INSTANCES; i++) {
                char name[16];
                PPERF_COUNTERSET_INSTANCE in;

                snprintf(name, sizeof(name), "i%u", i);
                in = PerfCreateInstanceUtf8(h, &cset, name, i);
                if (!in)
                        _exit(3);
                PerfSetULongLongCounterValue(h, in, 1, (ULONGLONG) i * 1000);
        }
        if (write(ready, "r", 1) != 1)
                _exit(4);
        while (read(fd, &c, 1) > 0)
                ;
        PerfStopProvider(h);
        _exit(0);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* Sets up r with the 1,000 columns, waiting (10 s at most) for perflibd. */
static void open_run(struct tp_run *r, struct tp_options *o)
{
        int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
        bool ok = false;
        char path[160];
        int code = 0;

        /* Quiet while perflibd starts: typeperf's messages say it is not there yet. */
        dup2(null, STDERR_FILENO);
        for (int i = 0; i < 1000 && !ok; i++) {
                *r = (struct tp_run) { .o = o, .out = { .fd = -1 } };
                ok = tp_add_counters(r, &code) == 0;
                if (ok)
                        break;
                tp_run_done(r);
                if (code != TP_EXIT_CONNECT && code != TP_EXIT_COUNTER)
                        break;
                usleep(10000);
        }
        dup2(saved, STDERR_FILENO);
        close(saved);
        close(null);
        if (!ok || r->n_cols != INSTANCES)
                die("perflibd did not serve the 1,000 instances (run from the build directory?)");
        snprintf(path, sizeof(path), "%s/samples.csv", rundir);
        if (tp_out_open(&r->out, path) < 0 || tp_write_header(r) < 0)
                die("cannot write the output file");
}

static void report(const char *name, double *t, unsigned n)
{
        qsort(t, n, sizeof(*t), cmp_double);
        printf("%s-p50: %.1f us\n", name, t[n / 2]);
        printf("%s-p99: %.1f us\n", name, t[(size_t) (n * 0.99)]);
}

static void time_samples(struct tp_run *r, unsigned n, const char *shape)
{
        char name[64];

        double *total = calloc(n, sizeof(double)), *coll = calloc(n, sizeof(double));

        if (!total || !coll)
                die("out of memory");
        for (unsigned i = 0; i < n; i++) {
                double t0 = now_us(), t1;

                if (tp_collect(r) < 0)
                        die("collect failed");
                t1 = now_us();
                if (tp_write_sample(r) < 0)
                        die("write failed");
                total[i] = now_us() - t0;
                coll[i] = t1 - t0;
        }
        for (size_t i = 0; i < r->n_cols; i++)
                if (!r->cells[i].valid)
                        die("a value of the last sample was not valid");
        snprintf(name, sizeof(name), "typeperf-sample-%s", shape);
        report(name, total, n);
        snprintf(name, sizeof(name), "typeperf-collect-%s", shape);
        report(name, coll, n);
        /* The header and the n lines, all of about the same length. */
        printf("# %u samples of %zu columns, about %lld bytes a line\n", n, r->n_cols,
               (long long) lseek(r->out.fd, 0, SEEK_CUR) / (n + 1));
        free(total);
        free(coll);
}

/* The same 1,000 instances added as 1,000 paths of one instance each. */
static void time_paths(unsigned n)
{
        char **paths = calloc(INSTANCES, sizeof(char *));
        struct tp_options o = { .paths = paths, .n_paths = INSTANCES, .format = TP_CSV };
        struct tp_run r;

        for (int i = 0; paths && i < INSTANCES; i++)
                if (asprintf(&paths[i], "\\Typeperf Bench(i%d)\\Ops/sec", i) < 0)
                        die("out of memory");
        if (!paths)
                die("out of memory");
        open_run(&r, &o);
        time_samples(&r, n, "1000-paths");
        tp_out_close(&r.out);
        tp_run_done(&r);
        for (int i = 0; i < INSTANCES; i++)
                free(paths[i]);
        free(paths);
}

int main(int argc, char **argv)
{
        char *paths[] = { "\\Typeperf Bench(*)\\Ops/sec" };
        struct tp_options o = { .paths = paths, .n_paths = 1, .format = TP_CSV };
        bool quick = false;
        struct tp_run r;
        pid_t prov_pid;
        char cmd[200];
        int wfd, err;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--quick") == 0)
                        quick = true;
                else if (strcmp(argv[i], "--perflibd") == 0 && i + 1 < argc)
                        perflibd = argv[++i];
                else {
                        fprintf(stderr, "usage: bench-typeperf [--quick] [--perflibd PATH]\n");
                        return 2;
                }
        }
        err = du_mkdtemp(&srv, rundir, sizeof(rundir), "typeperf-bench");
        if (err < 0)
                die(err == -ENAMETOOLONG ? "$TMPDIR is too long for a socket path" : "mkdtemp");
        unsetenv("PERFLIB_SOCKET");
        signal(SIGPIPE, SIG_IGN);
        printf("# bench-typeperf: %s run, %ld CPUs online, perflibd %s\n", quick ? "quick" : "full",
               sysconf(_SC_NPROCESSORS_ONLN), perflibd);
        prov_pid = du_spawn_provider(provider, NULL, &wfd);
        if (prov_pid < 0)
                die("the provider did not start");
        if (du_start(&srv, perflibd, NULL) < 0)
                die("fork");
        open_run(&r, &o);
        time_samples(&r, quick ? 50 : 500, "1000");
        tp_out_close(&r.out);
        tp_run_done(&r);
        time_paths(quick ? 50 : 500);
        du_stop(&srv);
        close(wfd);
        waitpid(prov_pid, NULL, 0);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
        return system(cmd) == 0 ? 0 : 1;
}
