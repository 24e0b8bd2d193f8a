/* SPDX-License-Identifier: MIT */
/*
 * sample-common.h: what the two spec-manifest samples (usermode/ and
 * kernelmode/) share, so each of them shows only its own way of publishing:
 * the command line, the run loop, and the figures they publish.  Built into
 * each program (it is not part of the SDK): copy it along with a sample.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef SAMPLE_COMMON_H
#define SAMPLE_COMMON_H

#include <stdint.h>

#include <perflib.h>

struct sc_options {
        unsigned duration_s;            /* 0: until SIGINT/SIGTERM */
        unsigned interval_ms;
        int verbose;
        char **paths;                   /* the PATH arguments (argv's), NULL-terminated */
        unsigned n_paths;
};

/*
 * Parses "[-d SECONDS] [-i MS] [-v] [PATH]...": one "My LogicalDisk"
 * instance per PATH, "/" when none is given.  Returns 0 to run, 1 when
 * --help was printed (exit 0), -EINVAL after printing why to stderr (exit 2).
 */
int sc_parse_options(int argc, char **argv, const char *program, struct sc_options *ret);

/*
 * Calls tick(ctx, t, dt) every interval (t: seconds since start, dt: since
 * the previous tick) until SIGINT, SIGTERM or the duration.  Returns 0, or
 * the first negative value tick returned.
 */
typedef int (*sc_tick_fn)(void *ctx, double t, double dt);
int sc_run(const struct sc_options *o, sc_tick_fn tick, void *ctx);

/* Reports a failed Win32 call on stderr; -EIO if status is not ERROR_SUCCESS. */
int sc_check(ULONG status, const char *program, const char *what);

/* ---- the figures ---- */

/* Processes running: the numeric entries of /proc. */
int sc_process_count(ULONG *ret);
/* Threads (kernel scheduling entities), from /proc/loadavg. */
int sc_thread_count(ULONG *ret);
/* Free space of the filesystem holding path, in MiB (what an unprivileged user may use). */
int sc_free_megabytes(const char *path, ULONG *ret);

/*
 * The wall clock and the time of the last boot, in ns since the Unix epoch,
 * and their frequency: the three values of an elapsed-time counter with its
 * own perfTimeID and perfFreqID (uptime = (now - boot) / freq).
 */
#define SC_NS_PER_SEC UINT64_C(1000000000)
int sc_clock(ULONGLONG *ret_boot_ns, ULONGLONG *ret_now_ns);

/*
 * Disk transfers are simulated (the sample has no disk of its own): about
 * 20 transfers per second of 2 to 12 ms each, from a per-instance seed.
 * Writes how many happened in dt seconds and their total time in ns
 * (perflibd's PerfFreq is 10^9, CLOCK_MONOTONIC: the timebase a
 * PERF_AVERAGE_TIMER is divided by).  The caller adds them to 32-bit
 * counters, which wrap as Windows' do.
 */
void sc_simulate_transfers(uint32_t *seed, double dt, ULONG *ret_count, ULONG *ret_ns);

#endif
