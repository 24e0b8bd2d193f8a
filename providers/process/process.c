/* SPDX-License-Identifier: MIT */
/*
 * Process: one instance per process, named by its comm with its PID as
 * instance id (two processes of one name are two instances; consumers
 * number them name#1 ... as Windows does).  Each collection lists /proc
 * again: processes that appeared get an instance, those that exited lose
 * theirs, and a PID reused by another program is a new instance.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "process.h"

#define N_VALUES        (PV_PROCESS_ELAPSED_TIME_FREQ + 1)

static struct pv_instset processes;
static uint64_t tick_100ns, page_size;

enum { VM_RSS, RSS_ANON, VM_SWAP, N_STATUS };
static const char *const status_keys[N_STATUS] = { "VmRSS", "RssAnon", "VmSwap" };
enum { IO_RCHAR, IO_WCHAR, N_IO };
static const char *const io_keys[N_IO] = { "rchar", "wchar" };

/* Open descriptors; 0 when the directory cannot be listed (another user's process). */
static uint64_t count_fds(const char *pid)
{
        char path[64];
        struct dirent *e;
        uint64_t n = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%s/fd", pid);
        d = opendir(path);
        if (!d)
                return 0;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

/* The figures of files that may be unreadable (io: another user's process): 0 then. */
static void read_optional(const char *pid, const char *file, const char *const *keys, size_t n,
                          uint64_t *values)
{
        char rel[64];

        snprintf(rel, sizeof(rel), "%s/%s", pid, file);
        if (pv_kv_read_file("/proc", rel, keys, n, values, NULL) < 0)
                for (size_t i = 0; i < n; i++)
                        values[i] = 0;
}

static void process_values(const char *pid, const struct pv_pid_stat *s, uint64_t now,
                           uint64_t *v)
{
        uint64_t st[N_STATUS] = { 0 }, io[N_IO] = { 0 };

        read_optional(pid, "status", status_keys, N_STATUS, st);
        read_optional(pid, "io", io_keys, N_IO, io);
        v[PV_PROCESS_PCT_PROCESSOR_TIME] = (s->utime + s->stime) * tick_100ns;
        v[PV_PROCESS_PCT_USER_TIME] = s->utime * tick_100ns;
        v[PV_PROCESS_PCT_PRIVILEGED_TIME] = s->stime * tick_100ns;
        v[PV_PROCESS_VIRTUAL_BYTES] = s->vsize;
        /* stat's rss lags behind the threads' cached counts; status's VmRSS (0 for
         * kernel threads) agrees with ps(1). */
        v[PV_PROCESS_WORKING_SET] = st[VM_RSS] ? st[VM_RSS] : s->rss * page_size;
        v[PV_PROCESS_PRIVATE_BYTES] = st[RSS_ANON] + st[VM_SWAP];
        v[PV_PROCESS_THREAD_COUNT] = s->num_threads;
        v[PV_PROCESS_ID_PROCESS] = s->pid;
        v[PV_PROCESS_CREATING_PROCESS_ID] = s->ppid;
        v[PV_PROCESS_HANDLE_COUNT] = count_fds(pid);
        v[PV_PROCESS_IO_READ_BYTES] = io[IO_RCHAR];
        v[PV_PROCESS_IO_WRITE_BYTES] = io[IO_WCHAR];
        v[PV_PROCESS_ELAPSED_TIME] = s->starttime * tick_100ns;
        v[PV_PROCESS_ELAPSED_TIME_NOW] = now;
        v[PV_PROCESS_ELAPSED_TIME_FREQ] = 10000000u;
}

/* One process; a process that exited meanwhile is simply not listed (0). */
static int publish(const char *pid, uint64_t now)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        struct pv_pid_stat s;
        char rel[64], line[1024];
        int r;

        snprintf(rel, sizeof(rel), "%s/stat", pid);
        if (pv_read_small("/proc", rel, line, sizeof(line)) < 0 || pv_pid_stat_parse(line, &s) < 0)
                return 0;
        process_values(pid, &s, now, v);
        r = pv_instset_get(&processes, s.comm, s.pid, &inst);
        if (r < 0)
                return r;
        pv_set_values(PV_PROCESS_PROVIDER, inst, &PV_PROCESSInfo.CounterSet, v, N_VALUES);
        return 0;
}

static int collect(void)
{
        struct timespec ts;
        struct dirent *e;
        uint64_t now;
        DIR *d;
        int r = 0;

        /* starttime counts from boot, suspended time included: CLOCK_BOOTTIME's origin. */
        clock_gettime(CLOCK_BOOTTIME, &ts);
        now = (uint64_t) ts.tv_sec * 10000000u + (uint64_t) ts.tv_nsec / 100u;
        d = opendir("/proc");
        if (!d)
                return -errno;
        while (r == 0 && (e = readdir(d)))
                if (isdigit((unsigned char) e->d_name[0]))
                        r = publish(e->d_name, now);
        closedir(d);
        if (r == 0)
                pv_instset_sweep(&processes);
        return r;
}

static ULONG start(PERFLIBREQUEST callback)
{
        long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
        ULONG status;

        tick_100ns = hz > 0 ? (uint64_t) (10000000 / hz) : 100000;
        page_size = page > 0 ? (uint64_t) page : 4096;
        status = CounterInitialize(callback, NULL, NULL, NULL);
        if (status == ERROR_SUCCESS)
                pv_instset_init(&processes, PV_PROCESS_PROVIDER, &PV_PROCESSGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&processes);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "process", .start = start, .collect = collect, .stop = stop,
};
