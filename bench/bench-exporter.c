/* SPDX-License-Identifier: MIT */
/*
 * bench-exporter: what one scrape of perflib-exporter costs, end to end
 * over HTTP (the exporter's libpcq query to perflibd, the families'
 * text, the socket), beside Prometheus' node_exporter scraped the same way
 * on the same machine in the same run, and for 100,000 series.  Prints
 * figures; never fails on a timing.
 *
 *   1. perflibd serving the Linux provider plugins of the build tree, the
 *      exporter over it: scrape p50 and p99, series and bytes a scrape;
 *      then node_exporter (Debian's prometheus-node-exporter, default
 *      collectors) when it is installed (target: the exporter no slower).
 *   2. A fresh perflibd serving one provider of 100,000 instances of one
 *      counter: scrape p50 and p99 (target under 200 ms) and the
 *      exporter's peak resident size (target under 64 MiB).
 *
 * Usage: bench-exporter [--quick] [--exporter PATH] [--node-exporter PATH]
 *        (from the build directory, with top_builddir set as for the tests)
 *
 * Scrapes are HTTP/1.0 GETs, one connection each, as Prometheus' first
 * scrape of a target is; the time is from connect to the last byte.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perflib.h"
#include "bench-publish.h"
#include "daemonutil.h"
#include "perflibv2.h"

#define BIG_INSTANCES 100000u
#define BIG_PROV { 0xbe2c0201, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } }
#define BIG_CSET { 0xbe2c0202, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } }

static const char *exporter = "exporter/perflib-exporter";
static const char *node_exporter = "/usr/bin/prometheus-node-exporter";
static char rundir[96];
static struct du_daemon srv;
static bool quick;

static void die(const char *what)
{
        fprintf(stderr, "bench-exporter: %s\n", what);
        exit(1);
}

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* A TCP port of 127.0.0.1 free right now. */
static unsigned free_port(void)
{
        int port = du_free_port();

        if (port < 0)
                die("no free TCP port");
        return (unsigned) port;
}

struct reply {
        char *data;                     /* malloc'd: headers and body */
        size_t len;
        int status;                     /* HTTP status, 0 if none came */
};

/* GET /metrics from 127.0.0.1:port into *r (the caller frees r->data); 0 or -errno. */
static int scrape(unsigned port, struct reply *r)
{
        static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                                  "Accept: text/plain\r\n\r\n";
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        size_t cap = 1 << 16;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        ssize_t n;

        *r = (struct reply){ .data = malloc(cap) };
        if (fd < 0 || !r->data)
                return -ENOMEM;
        if (connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0 ||
            write(fd, req, sizeof(req) - 1) != (ssize_t) (sizeof(req) - 1)) {
                close(fd);
                return -errno;
        }
        while ((n = read(fd, r->data + r->len, cap - r->len - 1)) > 0) {
                r->len += (size_t) n;
                if (cap - r->len < 4096) {
                        char *d = realloc(r->data, cap *= 2);

                        if (!d)
                                die("out of memory");
                        r->data = d;
                }
        }
        close(fd);
        r->data[r->len] = 0;
        if (sscanf(r->data, "HTTP/%*s %d", &r->status) != 1)
                r->status = 0;
        return n < 0 ? -errno : 0;
}

/* Lines of the body that are samples, not comments or blank. */
static size_t series_of(const struct reply *r)
{
        const char *p = strstr(r->data, "\r\n\r\n");
        size_t n = 0;

        for (p = p ? p + 4 : r->data; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
                if (*p != '#' && *p != '\n')
                        n++;
        return n;
}

/* Waits up to 20 s for a 200 scrape holding needle. */
static void wait_ready(unsigned port, const char *needle, const char *who)
{
        for (int i = 0; i < 200; i++) {
                struct reply r;
                bool ok = scrape(port, &r) == 0 && r.status == 200 && strstr(r.data, needle);

                free(r.data);
                if (ok)
                        return;
                usleep(100000);
        }
        fprintf(stderr, "bench-exporter: %s never served %s on port %u\n", who, needle, port);
        exit(1);
}

/* Times n scrapes of port; prints NAME-p50, -p99, series and bytes. */
static double time_scrapes(const char *name, unsigned port, unsigned n)
{
        double *t = malloc(n * sizeof(*t)), p50;
        size_t series = 0, bytes = 0;

        if (!t)
                die("out of memory");
        for (unsigned i = 0; i < n + 2; i++) {
                struct reply r;
                double t0 = now_us();

                if (scrape(port, &r) < 0 || r.status != 200)
                        die("a scrape failed");
                if (i >= 2)     /* the first ones warm the exporter's caches */
                        t[i - 2] = now_us() - t0;
                series = series_of(&r);
                bytes = r.len;
                free(r.data);
        }
        qsort(t, n, sizeof(*t), cmp_double);
        p50 = t[n / 2];
        printf("%s-p50: %.2f ms\n", name, p50 / 1000);
        printf("%s-p99: %.2f ms\n", name, t[(size_t) (n * 0.99)] / 1000);
        printf("# %s: %u scrapes, %zu series, %zu bytes each\n", name, n, series, bytes);
        free(t);
        return p50;
}

/* Starts argv[0] with its stdout and stderr to log; its pid. */
static pid_t spawn(char *const argv[], const char *log)
{
        pid_t pid = fork();

        if (pid == 0) {
                FILE *f = freopen(log, "w", stdout);

                if (!f || dup2(fileno(f), 2) < 0)
                        _exit(126);
                execv(argv[0], argv);
                _exit(127);
        }
        if (pid < 0)
                die("fork");
        return pid;
}

static void stop(pid_t pid)
{
        if (pid > 0 && kill(pid, SIGTERM) == 0)
                waitpid(pid, NULL, 0);
}

static pid_t start_exporter(unsigned port)
{
        char listen[64], log[160];
        char *argv[] = { (char *) exporter, listen, "--log.level=warn", NULL };

        snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%u", port);
        snprintf(log, sizeof(log), "%s/exporter.log", rundir);
        return spawn(argv, log);
}

/* VmHWM of pid in MiB, or -1. */
static double peak_mib(pid_t pid)
{
        long kib = du_status_kib(pid, "VmHWM");

        return kib < 0 ? -1 : kib / 1024.0;
}

/* The Linux provider plugins of the build tree, linked into perflibd's plugin directory. */
static void link_plugins(void)
{
        const char *top = getenv("top_builddir");
        char pattern[4096], to[8192];
        glob_t g;

        snprintf(pattern, sizeof(pattern), "%s/providers/*/.libs/*.so", top ? top : ".");
        if (glob(pattern, 0, NULL, &g) != 0)
                die("no provider plugins in the build tree (run from the build directory)");
        for (size_t i = 0; i < g.gl_pathc; i++) {
                const char *base = strrchr(g.gl_pathv[i], '/') + 1;
                char abs[4096];

                if (!realpath(g.gl_pathv[i], abs))
                        die("realpath");
                snprintf(to, sizeof(to), "%s/%s", srv.plugins, base);
                if (symlink(abs, to) < 0 && errno != EEXIST)
                        die("symlink");
        }
        globfree(&g);
        snprintf(pattern, sizeof(pattern), "%s/server-glue/plugins/perflib-plugin-host",
                 top ? top : ".");
        if (!realpath(pattern, to))
                die("no perflib-plugin-host in the build tree");
        setenv("PERFLIB_PLUGIN_HOST", to, 1);
}

static void unlink_plugins(void)
{
        char pattern[4200];
        glob_t g;

        snprintf(pattern, sizeof(pattern), "%s/*.so", srv.plugins);
        if (glob(pattern, 0, NULL, &g) == 0)
                for (size_t i = 0; i < g.gl_pathc; i++)
                        unlink(g.gl_pathv[i]);
        globfree(&g);
}

static void start_perflibd(void)
{
        struct pv2_client *c;

        if (du_start(&srv, NULL, NULL) < 0 || du_connect(&srv, 10000, &c) < 0)
                die("perflibd did not answer (run from the build directory)");
        pv2_client_free(c);
}

/* 1: the Linux providers, through us and through node_exporter. */
static void linux_providers(void)
{
        unsigned n = quick ? 20 : 200, port = free_port();
        pid_t ex, ne = 0;
        double ours, theirs;

        link_plugins();
        start_perflibd();
        ex = start_exporter(port);
        wait_ready(port, "perflib_processor_", "perflib-exporter");
        ours = time_scrapes("scrape-linux-perflib-exporter", port, n);
        printf("rss-peak-perflib-exporter-linux: %.1f MiB\n", peak_mib(ex));
        stop(ex);
        du_stop(&srv);
        unlink_plugins();
        if (access(node_exporter, X_OK) != 0) {
                printf("# node_exporter: %s not installed, no comparison\n", node_exporter);
                return;
        }
        port = free_port();
        {
                char listen[64], log[160];
                char *argv[] = { (char *) node_exporter, listen, NULL };

                snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%u", port);
                snprintf(log, sizeof(log), "%s/node-exporter.log", rundir);
                ne = spawn(argv, log);
        }
        wait_ready(port, "node_cpu_seconds_total", "node_exporter");
        theirs = time_scrapes("scrape-linux-node-exporter", port, n);
        printf("scrape-linux-perflib-over-node-exporter: %.2fx\n", ours / theirs);
        stop(ne);
}

/* The 100,000-instance provider's child: publishes, then waits for EOF on fd. */
static void big_provider(int ready, int fd, void *arg)
{
        static const struct ctrpp_counter_desc counters[] = {
                { 1, PERF_COUNTER_BULK_COUNT, 0, 8, PERF_DETAIL_NOVICE, 0, CTRPP_NO_AGGREGATE,
                  CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, CTRPP_NO_ID, 0, 0, NULL, NULL,
                  "Ops/sec", "Operations a second of one instance" },
        };
        const struct bench_shape *s = arg;
        static const struct ctrpp_counterset_desc set = {
                BIG_CSET, PERF_COUNTERSET_MULTI_INSTANCES, 0, 0, 1, counters, NULL, NULL,
                "Scrape Bench", "100,000 instances of one counter", "multiple" };
        static const struct ctrpp_provider_desc desc = {
                .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(desc), .guid = BIG_PROV,
                .resource_base = CTRPP_NO_ID, .n_countersets = 1, .countersets = &set,
                .name = "Scrape Bench Provider" };
        HANDLE h;
        char c;

        if (bench_publish(s, &h) != ERROR_SUCCESS || pl_set_provider_description(h, &desc) < 0)
                _exit(2);
        if (write(ready, "r", 1) != 1)
                _exit(4);
        while (read(fd, &c, 1) > 0)
                ;
        PerfStopProvider(h);
        _exit(0);
}

/* 2: 100,000 series from one provider. */
static void big(void)
{
        static const struct bench_shape shape = { BIG_PROV, BIG_CSET, BIG_INSTANCES, 1, NULL };
        unsigned n = quick ? 5 : 30, port = free_port();
        int wfd;
        pid_t p = du_spawn_provider(big_provider, (void *) &shape, &wfd), ex;

        if (p < 0)
                die("the 100,000-instance provider did not start");
        start_perflibd();
        ex = start_exporter(port);
        wait_ready(port, "instance_name=\"i99999\"", "perflib-exporter");
        time_scrapes("scrape-100000-series", port, n);
        printf("rss-peak-perflib-exporter-100000-series: %.1f MiB\n", peak_mib(ex));
        stop(ex);
        du_stop(&srv);
        close(wfd);
        waitpid(p, NULL, 0);
}

int main(int argc, char **argv)
{
        char cmd[200];
        int r;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--quick") == 0)
                        quick = true;
                else if (strcmp(argv[i], "--exporter") == 0 && i + 1 < argc)
                        exporter = argv[++i];
                else if (strcmp(argv[i], "--node-exporter") == 0 && i + 1 < argc)
                        node_exporter = argv[++i];
                else {
                        bool help = strcmp(argv[i], "--help") == 0;

                        fprintf(help ? stdout : stderr, "usage: bench-exporter [--quick] "
                                "[--exporter PATH] [--node-exporter PATH]\n");
                        return help ? 0 : 2;
                }
        }
        if (access(exporter, X_OK) != 0)
                die("no perflib-exporter (run from the build directory, or pass --exporter)");
        r = du_mkdtemp(&srv, rundir, sizeof(rundir), "exporter-bench");
        if (r < 0)
                die("mkdtemp");
        signal(SIGPIPE, SIG_IGN);
        /* Line by line: every fork (perflibd, providers, exporters) would repeat a full buffer. */
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("# bench-exporter: %s run, exporter %s\n", quick ? "quick" : "full", exporter);
        linux_providers();
        big();
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
        return system(cmd) == 0 ? 0 : 1;
}
