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

#include "perflib.h"
#include "daemonutil.h"
#include "perflibv2.h"

static GUID prov = { 0xbe2c0001, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } };
static GUID cset = { 0xbe2c0002, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } };

static const char *perflibd = "server-glue/perflibd";
static const char *pmcd_bench = "bench/bench-pmcd";
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

struct provider_shape {
        uint32_t n, counters;
};

/* The provider's child: instances i0..iN-1 of counters 1..C (64-bit), then waits for EOF on fd. */
static void provider(int ready, int fd, void *arg)
{
        const struct provider_shape *ps = arg;
        size_t size = sizeof(PERF_COUNTERSET_INFO) + ps->counters * sizeof(PERF_COUNTER_INFO);
        PPERF_COUNTERSET_INFO t = calloc(1, size);
        PPERF_COUNTER_INFO ci = (PPERF_COUNTER_INFO) (t + 1);
        HANDLE h;
        char c;

        if (!t)
                _exit(1);
        t->CounterSetGuid = cset;
        t->ProviderGuid = prov;
        t->NumCounters = ps->counters;
        t->InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
        for (uint32_t i = 0; i < ps->counters; i++)
                ci[i] = (PERF_COUNTER_INFO){ .CounterId = i + 1, .Size = 8,
                        .Type = PERF_COUNTER_BULK_COUNT, .DetailLevel = PERF_DETAIL_NOVICE };
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, (ULONG) size) != ERROR_SUCCESS)
                _exit(2);
        for (uint32_t i = 0; i < ps->n; i++) {
                char name[32];

                snprintf(name, sizeof(name), "i%u", i);
                PPERF_COUNTERSET_INSTANCE in = PerfCreateInstanceUtf8(h, &cset, name, i);
                if (!in)
                        _exit(3);
                for (uint32_t k = 0; k < ps->counters; k++)
                        PerfSetULongLongCounterValue(h, in, k + 1, (ULONGLONG) i * k);
        }
        if (write(ready, "r", 1) != 1)
                _exit(4);
        while (read(fd, &c, 1) > 0)
                ;
        PerfStopProvider(h);
        _exit(0);
}

static pid_t start_provider(uint32_t n, uint32_t counters, int *ret_wfd)
{
        struct provider_shape ps = { n, counters };
        pid_t pid = du_spawn_provider(provider, &ps, ret_wfd);

        if (pid < 0)
                die("the provider did not start");
        return pid;
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

        memcpy(id, &cset, 16);
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

/* Times QueryCounterData; prints p50 and p99 in microseconds. */
static void time_queries(struct pv2_client *c, const struct pv2_handle *h,
                         const struct shape *s, const char *placement)
{
        unsigned n = iterations ? iterations : quick ? s->iterations / 10 + 1 : s->iterations;
        double *t = malloc(n * sizeof(*t));
        uint32_t size = 0;

        for (unsigned i = 0; i < n + 10; i++) {
                struct pv2_out o = { 0 };
                double t0;

                if (churn)
                        touch_rundir(i);
                t0 = now_us();
                if (pv2_query_counter_data(c, h, 1u << 30, &o) != ERROR_SUCCESS)
                        die("QueryCounterData failed");
                if (i >= 10)    /* the first calls warm caches and the namespace */
                        t[i - 10] = now_us() - t0;
                check_reply(&o, s);
                size = o.out_size;
                pv2_out_done(&o);
        }
        qsort(t, n, sizeof(*t), cmp_double);
        printf("query-%s-%s-p50: %.1f us\n", s->name, placement, t[n / 2]);
        printf("query-%s-%s-p99: %.1f us\n", s->name, placement, t[(size_t) (n * 0.99)]);
        printf("# query-%s: %u calls, %u bytes of counter data each\n", s->name, n, size);
        free(t);
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
        static const struct shape big = { "100000x1", 100000, 1, 1, "*", 3 };
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
        static const struct shape big = { "1000000x1", BIG_INSTANCES, 1, 1, "*", 0 };
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
        static const struct shape s = { "1000x1", 1000, 1, 1, "*", 1000 };
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

int main(int argc, char **argv)
{
        static const struct shape shapes[] = {
                { "1-value", 1, 1, 1, "i0", 5000 },
                { "1000x1", 1000, 1, 1, "*", 1000 },
                { "1000x16", 1000, 16, 0xFFFFFFFFu, "*", 300 },
                { "10000x1", 10000, 1, 1, "*", 200 },
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
                else {
                        bool help = strcmp(argv[i], "--help") == 0;

                        fprintf(help ? stdout : stderr,
                                "usage: bench-perflibd [--quick] [--perflibd PATH] "
                                "[--pmcd-bench PATH] [--shape NAME] [--iterations N] [--attack]\n"
                                "       [--readers]\n"
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
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
                if (!only || strcmp(only, shapes[i].name) == 0)
                        run_shape(&shapes[i], ncpu);
        if (only) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
                return system(cmd) == 0 ? 0 : 1;
        }
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
