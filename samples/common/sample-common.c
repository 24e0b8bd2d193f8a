/* SPDX-License-Identifier: MIT */
/*
 * sample-common.c: the command line, run loop and figures of the
 * spec-manifest samples (see sample-common.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "sample-common.h"

static char *default_paths[] = { (char *) "/", NULL };

static void usage(FILE *f, const char *program)
{
        fprintf(f,
                "Usage: %s [OPTION]... [PATH]...\n"
                "Publish the counters of the spec's example manifest until interrupted:\n"
                "\"My LogicalDisk\" (one instance per PATH, default /) and \"My System Objects\".\n"
                "\n"
                "  -d, --duration SECONDS  stop after SECONDS (default: until SIGINT/SIGTERM)\n"
                "  -i, --interval MS       update the counters every MS milliseconds (default 1000)\n"
                "  -v, --verbose           print the notifications consumers send\n"
                "  -h, --help              show this help and exit\n"
                "\n"
                "Counters are published in $PERFLIB_RUNTIME_DIR (see perflib(7)).\n",
                program);
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int sc_parse_options(int argc, char **argv, const char *program, struct sc_options *ret)
{
        static const struct option opts[] = {
                { "duration", required_argument, NULL, 'd' },
                { "interval", required_argument, NULL, 'i' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        struct sc_options o = { .interval_ms = 1000 };
        int c;

        while ((c = getopt_long(argc, argv, "d:i:vh", opts, NULL)) != -1) {
                switch (c) {
                case 'd':
                        if (parse_uint(optarg, 0, 86400 * 365, &o.duration_s) < 0) {
                                fprintf(stderr, "%s: invalid duration '%s'\n", program, optarg);
                                return -EINVAL;
                        }
                        break;
                case 'i':
                        if (parse_uint(optarg, 1, 3600 * 1000, &o.interval_ms) < 0) {
                                fprintf(stderr, "%s: invalid interval '%s' (1..3600000 ms)\n",
                                        program, optarg);
                                return -EINVAL;
                        }
                        break;
                case 'v':
                        o.verbose = 1;
                        break;
                case 'h':
                        usage(stdout, program);
                        return 1;
                default:
                        usage(stderr, program);
                        return -EINVAL;
                }
        }
        o.paths = optind < argc ? argv + optind : default_paths;
        o.n_paths = optind < argc ? (unsigned) (argc - optind) : 1;
        *ret = o;
        return 0;
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
        stop_requested = sig;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Sleeps until `until` (monotonic seconds) or a signal, whichever is first. */
static void sleep_until(double until)
{
        struct timespec ts = {
                .tv_sec = (time_t) until,
                .tv_nsec = (long) ((until - floor(until)) * 1e9),
        };

        if (ts.tv_nsec >= 1000000000L)
                ts.tv_nsec = 999999999L;
        (void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int sc_run(const struct sc_options *o, sc_tick_fn tick, void *ctx)
{
        struct sigaction sa = { .sa_handler = on_signal };
        double t0 = now_s(), prev = 0.0, next = 0.0, step = o->interval_ms / 1000.0;

        /* No SA_RESTART: the signal must cut the sleep short. */
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
                return -errno;
        while (!stop_requested) {
                double t = now_s() - t0;
                int r;

                if (o->duration_s > 0 && t >= o->duration_s)
                        break;
                if (t >= next) {
                        r = tick(ctx, t, t - prev);
                        if (r < 0)
                                return r;
                        prev = t;
                        /* Fell behind: start again from now rather than burst. */
                        next = next + step < t ? t + step : next + step;
                }
                sleep_until(t0 + (o->duration_s > 0 && next > o->duration_s ? o->duration_s
                                                                             : next));
        }
        return 0;
}

int sc_check(ULONG status, const char *program, const char *what)
{
        if (status == ERROR_SUCCESS)
                return 0;
        fprintf(stderr, "%s: %s failed: Win32 error %lu\n", program, what,
                (unsigned long) status);
        return -EIO;
}

int sc_process_count(ULONG *ret)
{
        DIR *d = opendir("/proc");
        struct dirent *e;
        ULONG n = 0;

        if (!d)
                return -errno;
        while ((e = readdir(d)))
                if (isdigit((unsigned char) e->d_name[0]))
                        n++;
        closedir(d);
        *ret = n;
        return 0;
}

int sc_thread_count(ULONG *ret)
{
        FILE *f = fopen("/proc/loadavg", "re");
        unsigned long running, total;
        int n;

        if (!f)
                return -errno;
        /* "0.42 0.30 0.25 2/317 12345": 317 scheduling entities. */
        n = fscanf(f, "%*s %*s %*s %lu/%lu", &running, &total);
        fclose(f);
        if (n != 2)
                return -EBADMSG;
        *ret = (ULONG) total;
        return 0;
}

int sc_free_megabytes(const char *path, ULONG *ret)
{
        struct statvfs st;

        if (statvfs(path, &st) < 0)
                return -errno;
        *ret = (ULONG) ((unsigned long long) st.f_bavail * st.f_frsize >> 20);
        return 0;
}

static ULONGLONG ns_of(const struct timespec *ts)
{
        return (ULONGLONG) ts->tv_sec * SC_NS_PER_SEC + (ULONGLONG) ts->tv_nsec;
}

int sc_clock(ULONGLONG *ret_boot_ns, ULONGLONG *ret_now_ns)
{
        struct timespec real, boot;

        if (clock_gettime(CLOCK_REALTIME, &real) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
                return -errno;
        *ret_boot_ns = ns_of(&real) - ns_of(&boot);
        *ret_now_ns = ns_of(&real);
        return 0;
}

/* A small deterministic generator (xorshift32): the samples need no real randomness. */
static uint32_t next_random(uint32_t *seed)
{
        uint32_t x = *seed ? *seed : 0x9e3779b9u;

        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *seed = x;
        return x;
}

void sc_simulate_transfers(uint32_t *seed, double dt, ULONG *ret_count, ULONG *ret_ns)
{
        ULONG count = (ULONG) lround(dt * (10 + next_random(seed) % 21)), ns = 0;

        for (ULONG i = 0; i < count; i++)
                ns += 2000000u + next_random(seed) % 10000000u;
        *ret_count = count;
        *ret_ns = ns;
}
