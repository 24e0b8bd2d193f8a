/* SPDX-License-Identifier: MIT */
/*
 * bench-perflibd: what a query costs a client of perflibd, end to end over
 * the Unix socket (DCE/RPC, the namespace, the segment snapshot, the MS-PCQ
 * buffer), and what the server's memory is.  Prints figures; never fails on
 * a timing.
 *
 * For each shape a provider process publishes the instances, a fresh
 * perflibd serves them, and the client opens one query and times
 * PerflibV2QueryCounterData: p50 and p99 over many calls, with client and
 * server pinned to the same CPU and to different CPUs.
 *
 * PCP's pmcd serving the same shapes is measured in the same run by
 * bench-pmcd (when PCP is there), so the figures can be read side by side.
 *
 * Usage: bench-perflibd [--quick] [--perflibd PATH] [--pmcd-bench PATH]
 *                       [--shape NAME] [--iterations N] [--attack] [--readers]
 *                       [--plugin] [--tcp]
 *        (from the build directory)
 *
 * --shape runs one shape only (same-cpu placement, no memory figures, no
 * pmcd): with --perflibd naming a wrapper that runs perflibd under
 * valgrind --tool=callgrind, two runs of different --iterations give the
 * instructions one query costs the server.
 *
 * --attack runs instead what issue 15 asks of a shared machine: the
 * 1000x1 query from one client while 1,000 idle bound connections and 50
 * provider sockets that never answer exist (the runtime directory changing
 * before every call), beside the same query with neither (target: within
 * 2x); then perflibd's resident size after 16 clients each announce a
 * 63 MiB request and stream almost 1 MiB of it (target: under 64 MiB).
 *
 * --readers runs only the last figures of a full run: perflibd's peak
 * resident size with one client, then eight at once, reading a counterset
 * of 1,000,000 instances, and how many of their calls --query-memory
 * refused.
 *
 * --plugin runs only issue 16's figures, also part of a full run: the
 * 1000x1 query served from a plugin host (bench-plugin.so) beside the same
 * from a provider process, and a query that forces a collect round trip
 * to a callback of each, one perflibd serving all four.
 *
 * --tcp runs issue 17's figures, also part of a full run: the 1000x1 and
 * 1000x16 queries over TCP, logged on with SPNEGO (NTLM) and sealed at
 * PKT_PRIVACY, beside the same over the Unix socket, one perflibd serving
 * both (target: TCP within 2x for 1000x16); then what one authenticated
 * connect and bind costs (NTLM, SPNEGO) beside a Unix socket's.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nettle/arcfour.h>
#include <nettle/hmac.h>

#include "perflib.h"
#include "bench-publish.h"
#include "daemonutil.h"
#include "perflibv2.h"
#include "dcerpc-auth.h"
#include "dcerpc-ntlm.h"
#include "ntlm.h"
#include "spnego-sec.h"

static GUID prov = { 0xbe2c0001, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } };
static GUID cset = { 0xbe2c0002, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } };

static const char *perflibd = "server-glue/perflibd";
static const char *pmcd_bench = "bench/bench-pmcd";
static const char *passwd_tool = "server-glue/perflib-passwd";
static char rundir[96];      /* $TMPDIR/perflib-bench-XXXXXX: short, it holds a socket */
static struct du_daemon srv;
static bool quick;
static const char *only;        /* --shape: run this shape alone, no memory, no pmcd */
static unsigned iterations;     /* --iterations: calls per placement, 0 = the shape's */
static bool churn;              /* --attack: change the runtime directory before every call */

struct shape {
        const char *name;
        uint32_t instances, counters;
        uint32_t counter_id;            /* what the query adds: an id or 0xFFFFFFFF */
        const char *instance;           /* "i0" or "*" */
        unsigned iterations;
        const GUID *cset;               /* NULL: the provider process's, cset */
};

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
        fprintf(stderr, "bench-perflibd: %s\n", what);
        exit(1);
}

/* The provider's child: publishes the bench_shape arg, then waits for EOF on fd. */
static void provider(int ready, int fd, void *arg)
{
        HANDLE h;
        char c;

        if (bench_publish(arg, &h) != ERROR_SUCCESS)
                _exit(2);
        if (write(ready, "r", 1) != 1)
                _exit(4);
        while (read(fd, &c, 1) > 0)
                ;
        PerfStopProvider(h);
        _exit(0);
}

static pid_t start_shape(const struct bench_shape *bs, int *ret_wfd)
{
        pid_t pid = du_spawn_provider(provider, (void *) bs, ret_wfd);

        if (pid < 0)
                die("the provider did not start");
        return pid;
}

/* A provider process of prov and cset: instances i0..iN-1 of counters 1..C. */
static pid_t start_provider(uint32_t n, uint32_t counters, int *ret_wfd)
{
        struct bench_shape bs = { prov, cset, n, counters, NULL };

        return start_shape(&bs, ret_wfd);
}

/* A fresh perflibd on srv's directories, answering: its pid in srv.pid. */
static struct pv2_client *start_server(void)
{
        struct pv2_client *c;

        if (du_start(&srv, perflibd, NULL) < 0)
                die("fork");
        if (du_connect(&srv, 10000, &c) < 0)
                die("perflibd did not answer (run from the build directory, or pass --perflibd)");
        return c;
}

/* Pins every thread of pid (0: this process's calling thread) to cpu. */
static void pin(pid_t pid, int cpu)
{
        char path[64];
        struct dirent *de;
        cpu_set_t s;
        DIR *d;

        CPU_ZERO(&s);
        CPU_SET(cpu, &s);
        if (pid == 0) {
                (void) sched_setaffinity(0, sizeof(s), &s);
                return;
        }
        /* perflibd serves each client from a thread of its own: pin them all. */
        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        (void) sched_setaffinity(atoi(de->d_name), sizeof(s), &s);
        closedir(d);
}

/* Opens a query holding one identifier; *ret is the handle. */
static void open_query(struct pv2_client *c, const struct shape *s, struct pv2_handle *ret)
{
        uint8_t id[64] = { 0 };
        uint32_t any = 0xFFFFFFFFu;       /* InstanceId: match by name only */
        size_t n = strlen(s->instance) + 1, size = (40 + 2 * n + 7) & ~(size_t) 7;

        memcpy(id, s->cset ? s->cset : &cset, 16);
        id[20] = (uint8_t) size;
        memcpy(id + 24, &s->counter_id, 4);
        memcpy(id + 28, &any, 4);
        for (size_t i = 0; i < n; i++)
                id[40 + 2 * i] = (uint8_t) s->instance[i];
        if (pv2_open_query(c, NULL, ret) != ERROR_SUCCESS ||
            pv2_validate_counters(c, ret, id, (uint32_t) size, 1) != ERROR_SUCCESS ||
            id[16] != 0)
                die("cannot open the query");
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static uint32_t le32_at(const uint8_t *b, size_t off)
{
        return (uint32_t) b[off] | (uint32_t) b[off + 1] << 8 | (uint32_t) b[off + 2] << 16 |
               (uint32_t) b[off + 3] << 24;
}

/*
 * What every reply must be: the sizes agree, one block of the expected type
 * with no error, and, for "*", every instance in it.  A reply that is not
 * is the end of the run, not a figure.
 */
static void check_reply(const struct pv2_out *o, const struct shape *s)
{
        bool all = strcmp(s->instance, "*") == 0;
        uint32_t type = all ? (s->counter_id == 0xFFFFFFFFu ? PERF_COUNTERSET
                                                           : PERF_MULTIPLE_INSTANCES)
                            : PERF_SINGLE_COUNTER;
        size_t inst = 48 + 16;

        if (o->out_size < 48 + 16 || le32_at(o->data, 0) != o->out_size ||
            o->rtn_size != o->out_size || le32_at(o->data, 4) != 1 ||
            le32_at(o->data, 48) != 0 || le32_at(o->data, 52) != type ||
            le32_at(o->data, 56) != o->out_size - 48)
                die("a reply that is not what the query asks for");
        if (type == PERF_COUNTERSET)
                inst += le32_at(o->data, inst);         /* _PERF_MULTI_COUNTERS and ids */
        if (all && (inst + 8 > o->out_size || le32_at(o->data, inst + 4) != s->instances))
                die("a reply without every instance");
}

/* A file created in the runtime directory: perflibd rescans it at the next call. */
static void touch_rundir(unsigned i)
{
        char path[160];
        FILE *f;

        snprintf(path, sizeof(path), "%s/churn-%u", rundir, i % 4);
        f = fopen(path, "w");
        if (f)
                fclose(f);
        unlink(path);
}

/* One QueryCounterData, its reply checked: its microseconds, its size in *ret_size. */
static double timed_query(struct pv2_client *c, const struct pv2_handle *h,
                          const struct shape *s, uint32_t *ret_size)
{
        struct pv2_out o = { 0 };
        double t0 = now_us(), us;

        if (pv2_query_counter_data(c, h, 1u << 30, &o) != ERROR_SUCCESS)
                die("QueryCounterData failed");
        us = now_us() - t0;
        check_reply(&o, s);
        *ret_size = o.out_size;
        pv2_out_done(&o);
        return us;
}

static uint32_t last_size;      /* the bytes of counter data of the last timed reply */

static unsigned calls_of(const struct shape *s)
{
        return iterations ? iterations : quick ? s->iterations / 10 + 1 : s->iterations;
}

/* Prints name-p50 and name-p99 of the n timings t (sorted here), also in *ret_p50 and *ret_p99. */
static void print_percentiles(const char *name, double *t, unsigned n, double *ret_p50,
                              double *ret_p99)
{
        qsort(t, n, sizeof(*t), cmp_double);
        *ret_p50 = t[n / 2];
        *ret_p99 = t[(size_t) (n * 0.99)];
        printf("%s-p50: %.1f us\n", name, *ret_p50);
        printf("%s-p99: %.1f us\n", name, *ret_p99);
}

/* Times QueryCounterData; prints p50 and p99 in microseconds, returns p50. */
static double time_queries(struct pv2_client *c, const struct pv2_handle *h,
                         const struct shape *s, const char *placement)
{
        unsigned n = calls_of(s);
        double *t = malloc(n * sizeof(*t)), p50, p99;
        char name[128];
        uint32_t size = 0;

        if (!t)
                die("out of memory");
        for (unsigned i = 0; i < n + 10; i++) {
                double us;

                if (churn)
                        touch_rundir(i);
                us = timed_query(c, h, s, &size);
                if (i >= 10)    /* the first calls warm caches and the namespace */
                        t[i - 10] = us;
        }
        snprintf(name, sizeof(name), "query-%s-%s", s->name, placement);
        print_percentiles(name, t, n, &p50, &p99);
        printf("# query-%s: %u calls, %u bytes of counter data each\n", s->name, n, size);
        free(t);
        last_size = size;
        return p50;
}

static void run_shape(const struct shape *s, int ncpu)
{
        int wfd;
        pid_t p = start_provider(s->instances, s->counters, &wfd);
        struct pv2_client *c = start_server();
        struct pv2_handle h;

        open_query(c, s, &h);
        pin(srv.pid, 0);
        pin(0, 0);
        time_queries(c, &h, s, "same-cpu");
        if (ncpu > 1 && !only) {
                pin(srv.pid, 1);
                time_queries(c, &h, s, "two-cpus");
        }
        pv2_client_free(c);
        du_stop(&srv);
        close(wfd);
        waitpid(p, NULL, 0);
}

/* perflibd's resident size idle, and while serving 100,000 instances. */
static void memory(void)
{
        static const struct shape big = { "100000x1", 100000, 1, 1, "*", 3, NULL };
        struct pv2_handle h;
        struct pv2_client *c;
        pid_t p;
        int wfd;

        c = start_server();
        printf("rss-idle: %ld KiB\n", du_status_kib(srv.pid, "VmRSS"));
        pv2_client_free(c);
        du_stop(&srv);

        p = start_provider(big.instances, big.counters, &wfd);
        c = start_server();
        open_query(c, &big, &h);
        time_queries(c, &h, &big, "any-cpu");
        printf("rss-100000-instances: %ld KiB\n", du_status_kib(srv.pid, "VmRSS"));
        printf("rss-100000-instances-peak: %ld KiB\n", du_status_kib(srv.pid, "VmHWM"));
        pv2_client_free(c);
        du_stop(&srv);
        close(wfd);
        waitpid(p, NULL, 0);
}

/*
 * Times a and b alternately (each first every other time, so that both see
 * the same machine), as prefix-na and prefix-nb, and prints b's p50 and p99
 * over a's.
 */
static void time_pair(struct pv2_client *c, const struct shape *s[2],
                      const struct pv2_handle h[2], const char *prefix,
                      const char *const names[2])
{
        unsigned n = calls_of(s[0]);
        double *t[2] = { malloc(n * sizeof(double)), malloc(n * sizeof(double)) };
        double p50[2], p99[2];
        char name[128];
        uint32_t size;

        if (!t[0] || !t[1])
                die("out of memory");
        for (unsigned i = 0; i < n + 10; i++)
                for (unsigned k = 0; k < 2; k++) {
                        unsigned j = (i + k) % 2;
                        double us = timed_query(c, &h[j], s[j], &size);

                        if (i >= 10)
                                t[j][i - 10] = us;
                }
        for (unsigned j = 0; j < 2; j++) {
                snprintf(name, sizeof(name), "%s-%s", prefix, names[j]);
                print_percentiles(name, t[j], n, &p50[j], &p99[j]);
                free(t[j]);
        }
        printf("%s-ratio-p50: %.2f\n", prefix, p50[1] / p50[0]);
        printf("%s-ratio-p99: %.2f\n", prefix, p99[1] / p99[0]);
        printf("# %s: %u calls each, %s and %s alternating\n", prefix, n, names[0], names[1]);
}

/* The plugin host perflibd is to start: $PERFLIB_PLUGIN_HOST, else the build tree's. */
static bool find_plugin_host(void)
{
        char *host;

        if (getenv("PERFLIB_PLUGIN_HOST"))
                return access(getenv("PERFLIB_PLUGIN_HOST"), X_OK) == 0;
        host = realpath("server-glue/plugins/perflib-plugin-host", NULL);
        if (!host || access(host, X_OK) < 0 || setenv("PERFLIB_PLUGIN_HOST", host, 1) < 0) {
                free(host);
                return false;
        }
        free(host);
        return true;
}

/*
 * Issue 16's figures: 1,000 instances x 1 counter served from a plugin
 * host and from a provider process by one perflibd, one of their
 * instances, then a query of one value that forces a collect round trip
 * (PERF_COLLECT_START and END to a callback) to each: the difference of
 * the last two is what the round trips cost.
 */
static void plugins(void)
{
        static const GUID plugin_cset = BENCH_PLUGIN_CSET, plugin_cb_cset = BENCH_PLUGIN_CB_CSET;
        static const struct bench_shape cb = {
                { 0xbe2c0005, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } },
                { 0xbe2c0006, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } },
                1, 1, bench_answer,
        };
        static const struct shape query[2] = {
                { "1000x1", BENCH_PLUGIN_INSTANCES, 1, 1, "*", 1000, NULL },
                { "1000x1", BENCH_PLUGIN_INSTANCES, 1, 1, "*", 1000, &plugin_cset },
        }, one[2] = {
                { "1-value", BENCH_PLUGIN_INSTANCES, 1, 1, "i0", 1000, NULL },
                { "1-value", BENCH_PLUGIN_INSTANCES, 1, 1, "i0", 1000, &plugin_cset },
        }, collect[2] = {
                { "1-value", 1, 1, 1, "i0", 1000, &cb.cset },
                { "1-value", 1, 1, 1, "i0", 1000, &plugin_cb_cset },
        };
        static const char *const from[2] = { "process", "host" };
        const struct shape *queries[2] = { &query[0], &query[1] };
        const struct shape *ones[2] = { &one[0], &one[1] };
        const struct shape *collects[2] = { &collect[0], &collect[1] };
        struct pv2_handle h[6];
        struct pv2_client *c;
        int wfd[2];
        pid_t p[2];

        if (!find_plugin_host() || access("bench/.libs/bench-plugin.so", R_OK) < 0) {
                printf("# plugin: the plugin host or bench/.libs/bench-plugin.so not built, "
                       "skipped\n");
                return;
        }
        /* Run as root, the host runs as nobody, who publishes below users/. */
        if (chmod(rundir, 0755) < 0 ||
            du_run("cp bench/.libs/bench-plugin.so '%s/'", srv.plugins) != 0)
                die("cannot install the bench plugin");
        p[0] = start_provider(BENCH_PLUGIN_INSTANCES, 1, &wfd[0]);
        p[1] = start_shape(&cb, &wfd[1]);
        c = start_server();
        if (du_wait_listed(c, &plugin_cset, true, 10000) < 0 ||
            du_wait_listed(c, &plugin_cb_cset, true, 10000) < 0 ||
            du_wait_listed(c, &cset, true, 10000) < 0 ||
            du_wait_listed(c, &cb.cset, true, 10000) < 0)
                die("perflibd does not serve the bench plugin and the providers");
        for (unsigned j = 0; j < 2; j++) {
                open_query(c, &query[j], &h[j]);
                open_query(c, &one[j], &h[2 + j]);
                open_query(c, &collect[j], &h[4 + j]);
        }
        printf("# plugin: unpinned, one perflibd serving both\n");
        time_pair(c, queries, &h[0], "plugin-query-1000x1", from);
        time_pair(c, ones, &h[2], "plugin-query-1-value", from);
        time_pair(c, collects, &h[4], "plugin-collect-round-trip", from);
        pv2_client_free(c);
        du_stop(&srv);
        /* The second provider holds a copy of the first one's pipe: close both, then wait. */
        close(wfd[0]);
        close(wfd[1]);
        waitpid(p[0], NULL, 0);
        waitpid(p[1], NULL, 0);
        (void) du_run("rm -f '%s'/*.so", srv.plugins);
}

#define N_READERS 8
#define BIG_INSTANCES 1000000

/* One concurrent reader: its own connection and query, calls QueryCounterData. */
struct reader {
        pthread_t t;
        const struct shape *s;
        unsigned calls, served, refused;
        double *us;                     /* per served call */
};

static pthread_barrier_t readers_go;

static void *reader_run(void *arg)
{
        struct reader *rd = arg;
        struct pv2_client *c;
        struct pv2_handle h;

        if (du_connect(&srv, 60000, &c) < 0)
                die("a reader could not connect");
        open_query(c, rd->s, &h);
        pthread_barrier_wait(&readers_go);
        for (unsigned i = 0; i < rd->calls; i++) {
                struct pv2_out o = { 0 };
                double t0 = now_us();
                uint32_t e = pv2_query_counter_data(c, &h, 1u << 30, &o);

                if (e == ERROR_OUTOFMEMORY) {
                        rd->refused++;
                        continue;
                }
                if (e != ERROR_SUCCESS)
                        die("QueryCounterData failed");
                rd->us[rd->served++] = now_us() - t0;
                check_reply(&o, rd->s);
                pv2_out_done(&o);
        }
        pv2_client_free(c);
        return NULL;
}

/* n readers at once, calls each; prints the served calls' p50 and the refusals. */
static void run_readers(const struct shape *s, unsigned n, unsigned calls)
{
        struct reader rd[N_READERS] = { 0 };
        double *all = calloc((size_t) n * calls, sizeof(*all));
        unsigned served = 0, refused = 0;

        if (!all || pthread_barrier_init(&readers_go, NULL, n) != 0)
                die("out of memory");
        for (unsigned i = 0; i < n; i++) {
                rd[i] = (struct reader){ .s = s, .calls = calls, .us = all + i * calls };
                if (pthread_create(&rd[i].t, NULL, reader_run, &rd[i]) != 0)
                        die("pthread_create");
        }
        for (unsigned i = 0; i < n; i++) {
                pthread_join(rd[i].t, NULL);
                for (unsigned k = 0; k < rd[i].served; k++)
                        all[served++] = rd[i].us[k];
                refused += rd[i].refused;
        }
        pthread_barrier_destroy(&readers_go);
        qsort(all, served, sizeof(*all), cmp_double);
        printf("query-%u-readers-%s-p50: %.1f us\n", n, s->name, served ? all[served / 2] : 0.0);
        printf("refused-%u-readers-%s: %u of %u calls\n", n, s->name, refused, n * calls);
        printf("hwm-%u-readers-%s: %ld KiB\n", n, s->name, du_status_kib(srv.pid, "VmHWM"));
        free(all);
}

/*
 * What concurrent readers of one huge counterset cost perflibd: its peak
 * resident size with one reader, then with N_READERS reading at once (the
 * same perflibd: VmHWM only grows), and how many calls were refused for
 * --query-memory.
 */
static void readers(void)
{
        static const struct shape big = { "1000000x1", BIG_INSTANCES, 1, 1, "*", 0, NULL };
        unsigned calls = quick ? 3 : 10;
        struct pv2_client *c;
        pid_t p;
        int wfd;

        p = start_provider(big.instances, big.counters, &wfd);
        c = start_server();
        printf("hwm-idle-%s: %ld KiB\n", big.name, du_status_kib(srv.pid, "VmHWM"));
        run_readers(&big, 1, calls);
        run_readers(&big, N_READERS, calls);
        pv2_client_free(c);
        du_stop(&srv);
        close(wfd);
        waitpid(p, NULL, 0);
}

#define N_IDLE 1000
#define N_HUNG 50
#define N_FLOOD 16

/* n SOCK_SEQPACKET sockets named as providers' that listen and never answer: fds in fds. */
static void hang_sockets(int *fds, int n)
{
        for (int i = 0; i < n; i++) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                char path[256];

                snprintf(path, sizeof(path), "%s/provider-hung%d.sock", rundir, i);
                if (strlen(path) >= sizeof(sa.sun_path))
                        die("$TMPDIR is too long for a socket path");
                memcpy(sa.sun_path, path, strlen(path) + 1);
                fds[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
                if (fds[i] < 0 || bind(fds[i], (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
                    listen(fds[i], 16) < 0)
                        die("cannot make the hung provider sockets");
        }
}

/* 16 clients announce 63 MiB requests and stream DU_FLOOD_FRAGS fragments each. */
static void flood(int *fds)
{
        uint8_t *pdu = calloc(1, 24 + DU_FLOOD_STUB);
        bool gone[N_FLOOD] = { false };
        int refused = 0;

        if (!pdu)
                die("out of memory");
        for (int i = 0; i < N_FLOOD; i++)
                if ((fds[i] = du_raw_connect(&srv)) < 0 || du_raw_bind(fds[i]) < 0)
                        die("a flooding client could not bind");
        for (unsigned f = 0; f < DU_FLOOD_FRAGS; f++)
                for (int i = 0; i < N_FLOOD; i++)
                        if (!gone[i] && du_flood_fragment(fds[i], f, pdu) < 0) {
                                gone[i] = true;
                                refused++;
                        }
        printf("# flood: %d of %d clients refused\n", refused, N_FLOOD);
        free(pdu);
}

static void attack(void)
{
        static const struct shape s = { "1000x1", 1000, 1, 1, "*", 1000, NULL };
        static struct pv2_client *idle[N_IDLE];
        int hung[N_HUNG], flooders[N_FLOOD], wfd;
        pid_t p = start_provider(s.instances, s.counters, &wfd);
        struct pv2_client *c = start_server();
        struct pv2_handle h;

        struct rlimit rl;

        /* 1,000 idle clients are 1,000 descriptors here too. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        open_query(c, &s, &h);
        time_queries(c, &h, &s, "quiet");
        for (int i = 0; i < N_IDLE; i++)
                if (du_connect(&srv, 10000, &idle[i]) < 0)
                        die("an idle client could not connect (the per-user cap? run as root)");
        hang_sockets(hung, N_HUNG);
        churn = true;
        time_queries(c, &h, &s, "under-attack");
        churn = false;
        printf("rss-1000-idle-50-hung: %ld KiB\n", du_status_kib(srv.pid, "VmRSS"));
        for (int i = 0; i < N_IDLE; i++)
                pv2_client_free(idle[i]);
        flood(flooders);
        printf("rss-after-flood: %ld KiB\n", du_status_kib(srv.pid, "VmRSS"));
        printf("rss-after-flood-peak: %ld KiB\n", du_status_kib(srv.pid, "VmHWM"));
        for (int i = 0; i < N_FLOOD; i++)
                close(flooders[i]);
        for (int i = 0; i < N_HUNG; i++)
                close(hung[i]);
        pv2_client_free(c);
        du_stop(&srv);
        close(wfd);
        waitpid(p, NULL, 0);
}


/* ---- issue 17: TCP at PKT_PRIVACY beside the Unix socket ---- */

#define BENCH_USER "bench"
#define BENCH_PASSWORD "bench password"

/* rundir/accounts holding BENCH_USER, written by perflib-passwd itself. */
static void make_account(char *path, size_t size)
{
        char cmd[4400];

        snprintf(path, size, "%s/accounts", rundir);
        snprintf(cmd, sizeof(cmd), "printf '%%s\\n' '%s' | '%s' -f '%s' %s >/dev/null",
                 BENCH_PASSWORD, passwd_tool, path, BENCH_USER);
        if (system(cmd) != 0)
                die("perflib-passwd could not write the bench's account");
}

/* A TCP port of 127.0.0.1 free right now, as text. */
static void free_port(char *buf, size_t size)
{
        int port = du_free_port();

        if (port < 0)
                die("no free TCP port");
        snprintf(buf, size, "%d", port);
}

/* Connects to 127.0.0.1:port as BENCH_USER with auth_type (NTLM or SPNEGO offering it). */
static int connect_sec(const char *port, uint8_t auth_type, struct pv2_client **ret)
{
        struct dcerpc_sec ntlm = { 0 }, sec = { 0 };
        uint8_t hash[NTLM_HASH_SIZE];
        int r = ntlm_nt_hash(BENCH_PASSWORD, hash);

        if (r == 0)
                r = dcerpc_sec_ntlm_client(BENCH_USER, "", hash, &ntlm);
        if (r == 0 && auth_type == DCERPC_AUTH_TYPE_SPNEGO)
                r = dcerpc_sec_spnego_client(SPNEGO_MECH_NTLM, &ntlm, &sec);
        else if (r == 0)
                sec = ntlm;
        if (r == 0)
                r = pv2_client_connect_tcp_sec("127.0.0.1", port, 10000, auth_type, &sec, ret);
        return r;
}

/* The microseconds of n connects with binds, made by connect_one; p50 and p99 printed. */
static void time_binds(const char *name, unsigned n, const char *port, uint8_t auth_type)
{
        double *t = malloc(n * sizeof(*t)), p50, p99;

        if (!t)
                die("out of memory");
        for (unsigned i = 0; i < n + 5; i++) {
                struct pv2_client *c = NULL;
                double t0 = now_us();
                int r = auth_type == DCERPC_AUTH_TYPE_NONE ?
                        pv2_client_connect_unix(srv.sock, 10000, &c) :
                        connect_sec(port, auth_type, &c);
                double us = now_us() - t0;

                if (r < 0)
                        die("a bind failed");
                pv2_client_free(c);
                if (i >= 5)
                        t[i - 5] = us;
        }
        print_percentiles(name, t, n, &p50, &p99);
        free(t);
}

/*
 * What NTLM's sealing alone costs for size bytes: RC4 over the stub and
 * HMAC-MD5 over it, once to seal and once to unseal, the CPU time that no
 * implementation of PKT_PRIVACY with NTLM can avoid.  Microseconds, p50.
 */
static double ntlm_crypto_floor(size_t size)
{
        uint8_t key[16] = { 1 }, digest[MD5_DIGEST_SIZE], *in = calloc(1, size), *out = malloc(size);
        struct arcfour_ctx rc4;
        struct hmac_md5_ctx mac;
        double t[21], p50;

        if (!in || !out)
                die("out of memory");
        arcfour_set_key(&rc4, sizeof(key), key);
        hmac_md5_set_key(&mac, sizeof(key), key);
        for (int i = 0; i < 21; i++) {
                double t0 = now_us();

                for (int side = 0; side < 2; side++) {
                        arcfour_crypt(&rc4, size, out, in);
                        hmac_md5_update(&mac, size, in);
                        hmac_md5_digest(&mac, sizeof(digest), digest);
                }
                t[i] = now_us() - t0;
        }
        qsort(t, 21, sizeof(*t), cmp_double);
        p50 = t[10];
        free(in);
        free(out);
        return p50;
}

/* One shape over both transports, each placement: the ratio of the p50s. */
static void tcp_shape(const struct shape *s, const char *port, int ncpu)
{
        static const char *const placements[] = { "same-cpu", "two-cpus" };
        int wfd;
        pid_t p = start_provider(s->instances, s->counters, &wfd);
        struct pv2_client *u = start_server(), *t = NULL;
        struct pv2_handle hu, ht;

        if (connect_sec(port, DCERPC_AUTH_TYPE_SPNEGO, &t) < 0)
                die("cannot log on over TCP");
        open_query(u, s, &hu);
        open_query(t, s, &ht);
        for (int i = 0; i < (ncpu > 1 ? 2 : 1); i++) {
                struct shape su = *s, st = *s;
                char nu[64], nt[64];
                double pu, pt;

                pin(srv.pid, i);
                pin(0, 0);
                snprintf(nu, sizeof(nu), "%s-unix", s->name);
                snprintf(nt, sizeof(nt), "%s-tcp-privacy", s->name);
                su.name = nu;
                st.name = nt;
                pu = time_queries(u, &hu, &su, placements[i]);
                pt = time_queries(t, &ht, &st, placements[i]);
                printf("query-%s-tcp-over-unix-%s: %.2fx\n", s->name, placements[i], pt / pu);
        }
        printf("ntlm-seal-unseal-%s: %.1f us of CPU (RC4 and HMAC-MD5 over %u bytes, "
               "both ends)\n", s->name, ntlm_crypto_floor(last_size), last_size);
        pv2_client_free(t);
        pv2_client_free(u);
        du_stop(&srv);
        close(wfd);
        waitpid(p, NULL, 0);
}

static void tcp(const struct shape *shapes, size_t n, int ncpu)
{
        char accounts[200], port[16], listen[32];
        const char *args[] = { "--listen-tcp", listen, "--accounts", accounts, NULL };
        unsigned binds = quick ? 20 : 300;

        make_account(accounts, sizeof(accounts));
        free_port(port, sizeof(port));
        snprintf(listen, sizeof(listen), "127.0.0.1:%s", port);
        srv.args = args;
        printf("# tcp: SPNEGO (NTLM) at PKT_PRIVACY on 127.0.0.1:%s beside the Unix socket\n",
               port);
        for (size_t i = 0; i < n; i++)
                if (strcmp(shapes[i].name, "1000x1") == 0 || strcmp(shapes[i].name, "1000x16") == 0)
                        tcp_shape(&shapes[i], port, ncpu);
        pv2_client_free(start_server());
        printf("# bind: %u connects, each closed at once, client and server unpinned\n", binds);
        time_binds("bind-unix", binds, port, DCERPC_AUTH_TYPE_NONE);
        time_binds("bind-tcp-ntlm", binds, port, DCERPC_AUTH_TYPE_NTLM);
        time_binds("bind-tcp-spnego", binds, port, DCERPC_AUTH_TYPE_SPNEGO);
        du_stop(&srv);
        srv.args = NULL;
}

int main(int argc, char **argv)
{
        static const struct shape shapes[] = {
                { "1-value", 1, 1, 1, "i0", 5000, NULL },
                { "1000x1", 1000, 1, 1, "*", 1000, NULL },
                { "1000x16", 1000, 16, 0xFFFFFFFFu, "*", 300, NULL },
                { "10000x1", 10000, 1, 1, "*", 200, NULL },
        };
        int ncpu = (int) sysconf(_SC_NPROCESSORS_ONLN);
        char cmd[4200];
        int r;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--quick") == 0)
                        quick = true;
                else if (strcmp(argv[i], "--perflibd") == 0 && i + 1 < argc)
                        perflibd = argv[++i];
                else if (strcmp(argv[i], "--pmcd-bench") == 0 && i + 1 < argc)
                        pmcd_bench = argv[++i];
                else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc)
                        only = argv[++i];
                else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
                        iterations = (unsigned) strtoul(argv[++i], NULL, 10);
                else if (strcmp(argv[i], "--attack") == 0)
                        only = "attack";
                else if (strcmp(argv[i], "--readers") == 0)
                        only = "readers";
                else if (strcmp(argv[i], "--plugin") == 0)
                        only = "plugin";
                else if (strcmp(argv[i], "--tcp") == 0)
                        only = "tcp";
                else {
                        bool help = strcmp(argv[i], "--help") == 0;

                        fprintf(help ? stdout : stderr,
                                "usage: bench-perflibd [--quick] [--perflibd PATH] "
                                "[--pmcd-bench PATH] [--shape NAME] [--iterations N] [--attack]\n"
                                "       [--readers] [--plugin] [--tcp]\n"
                                "shapes: 1-value 1000x1 1000x16 10000x1\n");
                        return help ? 0 : 2;
                }
        }
        r = du_mkdtemp(&srv, rundir, sizeof(rundir), "perflibd-bench");
        if (r < 0)
                die(r == -ENAMETOOLONG ? "$TMPDIR is too long for a socket path" : "mkdtemp");
        signal(SIGPIPE, SIG_IGN);
        printf("# bench-perflibd: %s run, %d CPUs online, perflibd %s\n",
               quick ? "quick" : "full", ncpu, perflibd);
        if (only && strcmp(only, "attack") == 0)
                attack();
        if (only && strcmp(only, "readers") == 0)
                readers();
        if (only && strcmp(only, "plugin") == 0)
                plugins();
        if (only && strcmp(only, "tcp") == 0)
                tcp(shapes, sizeof(shapes) / sizeof(shapes[0]), ncpu);
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
                if (!only || strcmp(only, shapes[i].name) == 0)
                        run_shape(&shapes[i], ncpu);
        if (only) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
                return system(cmd) == 0 ? 0 : 1;
        }
        plugins();
        tcp(shapes, sizeof(shapes) / sizeof(shapes[0]), ncpu);
        memory();
        readers();
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
        if (system(cmd) != 0)
                return 1;
        fflush(stdout);
        if (access(pmcd_bench, X_OK) != 0) {
                printf("# pmcd: %s not built, no comparison\n", pmcd_bench);
                return 0;
        }
        snprintf(cmd, sizeof(cmd), "'%s'%s", pmcd_bench, quick ? " --quick" : "");
        return system(cmd) == 0 ? 0 : 1;
}
