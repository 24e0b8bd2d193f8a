/* SPDX-License-Identifier: MIT */
/*
 * Thread: one instance per thread of each process, named as Windows names
 * them, PROCESS/INDEX: the process's name (its comm, as in Process) and
 * the thread's place in /proc/PID/task (0 is the main thread, which the
 * kernel lists first); the instance id is the thread's id.  When a thread
 * exits the ones after it move up a place, as on Windows: their instances
 * are renamed (a new instance under the same id).
 *
 * A thread costs two files (task/TID/stat and task/TID/status, for the
 * context switches), about 10 us (bench-providers): a collection reads at most MAX_THREADS
 * threads, in /proc's order, and says once in the log when it left some
 * out.  A process is read through its directory opened once, so that its
 * threads are its own even if its PID is reused meanwhile.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "task.h"
#include "thread.h"

#define N_VALUES        (PV_THREAD_THREAD_WAIT_REASON + 1)
/* About 100 ms of collection on this 2-CPU machine: within perflibd's collect bound. */
#define MAX_THREADS     10000

static struct pv_instset threads;
static uint64_t tick_100ns;
static bool logged_limit;
/* Collections are serialised (plugin.c): one buffer for every file, status the largest. */
static char buf[16384];

enum { CS_VOLUNTARY, CS_INVOLUNTARY, N_CS };
static const char *const cs_keys[N_CS] = { "voluntary_ctxt_switches",
                                           "nonvoluntary_ctxt_switches" };

struct collection {
        int proc_fd;
        uint64_t now;                   /* CLOCK_BOOTTIME, 100 ns */
        size_t n;                       /* threads published so far */
};

static void thread_values(const struct pv_task_stat *t, uint32_t pid, uint64_t switches,
                          uint64_t now, uint64_t *v)
{
        const struct pv_pid_stat *s = &t->stat;

        v[PV_THREAD_PCT_PROCESSOR_TIME] = (s->utime + s->stime) * tick_100ns;
        v[PV_THREAD_PCT_USER_TIME] = s->utime * tick_100ns;
        v[PV_THREAD_PCT_PRIVILEGED_TIME] = s->stime * tick_100ns;
        v[PV_THREAD_CONTEXT_SWITCHES] = switches;
        v[PV_THREAD_ELAPSED_TIME] = s->starttime * tick_100ns;
        v[PV_THREAD_ELAPSED_TIME_NOW] = now;
        v[PV_THREAD_ELAPSED_TIME_FREQ] = 10000000u;
        v[PV_THREAD_PRIORITY_CURRENT] = pv_task_priority_current(t);
        v[PV_THREAD_PRIORITY_BASE] = pv_task_priority_base(t);
        v[PV_THREAD_ID_PROCESS] = pid;
        v[PV_THREAD_ID_THREAD] = s->pid;
        v[PV_THREAD_THREAD_STATE] = pv_task_state(s->state);
        v[PV_THREAD_THREAD_WAIT_REASON] = pv_task_wait_reason(s->state);
}

/* Thread tid of the process whose task/ directory is task_fd; 0 when it is gone. */
static int publish_thread(int task_fd, const char *tid, uint32_t pid, const char *process,
                          unsigned index, struct collection *c)
{
        uint64_t v[N_VALUES] = { 0 }, cs[N_CS] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        struct pv_task_stat t;
        char name[96], path[300];
        int r;

        /* TID/stat and TID/status by path: two lookups cost less than opening TID. */
        snprintf(path, sizeof(path), "%s/stat", tid);
        r = pv_read_at(task_fd, path, buf, sizeof(buf));
        if (r >= 0)
                r = pv_task_stat_parse(buf, &t);
        if (r < 0)
                return 0;
        /* A thread that exits between the two reads counts no switch. */
        snprintf(path, sizeof(path), "%s/status", tid);
        if (pv_read_at(task_fd, path, buf, sizeof(buf)) >= 0)
                (void) pv_kv_parse(buf, cs_keys, N_CS, cs, NULL);
        thread_values(&t, pid, cs[CS_VOLUNTARY] + cs[CS_INVOLUNTARY], c->now, v);
        snprintf(name, sizeof(name), "%s/%u", process, index);
        if ((r = pv_instset_get(&threads, name, t.stat.pid, &inst)) < 0)
                return r;
        pv_set_values(PV_THREAD_PROVIDER, inst, &PV_THREADInfo.CounterSet, v, N_VALUES);
        c->n++;
        return 0;
}

/* The threads of process pid, named after its comm; 0 when it is gone. */
static int publish_process(const char *pid, struct collection *c)
{
        struct pv_pid_stat st;
        unsigned index = 0;
        struct dirent *e;
        int dfd, tfd, r = 0;
        DIR *d;

        dfd = openat(c->proc_fd, pid, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return 0;
        if (pv_read_at(dfd, "stat", buf, sizeof(buf)) < 0 || pv_pid_stat_parse(buf, &st) < 0) {
                close(dfd);
                return 0;
        }
        tfd = openat(dfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(dfd);
        d = tfd >= 0 ? fdopendir(tfd) : NULL;
        if (!d) {
                if (tfd >= 0)
                        close(tfd);
                return 0;
        }
        while (r == 0 && c->n < MAX_THREADS && (e = readdir(d)))
                if (isdigit((unsigned char) e->d_name[0]))
                        r = publish_thread(dirfd(d), e->d_name, st.pid, st.comm, index++, c);
        closedir(d);
        return r;
}

static int collect(void)
{
        struct collection c = { 0 };
        struct timespec ts;
        struct dirent *e;
        DIR *d;
        int r = 0;

        /* starttime counts from boot, suspended time included: CLOCK_BOOTTIME's origin. */
        clock_gettime(CLOCK_BOOTTIME, &ts);
        c.now = (uint64_t) ts.tv_sec * 10000000u + (uint64_t) ts.tv_nsec / 100u;
        d = opendir("/proc");
        if (!d)
                return -errno;
        c.proc_fd = dirfd(d);
        while (r == 0 && c.n < MAX_THREADS && (e = readdir(d)))
                if (isdigit((unsigned char) e->d_name[0]))
                        r = publish_process(e->d_name, &c);
        if (r == 0 && c.n == MAX_THREADS && readdir(d) && !logged_limit) {
                pv_log(LOG_WARNING, "more than %d threads: the rest are not published",
                       MAX_THREADS);
                logged_limit = true;
        }
        closedir(d);
        if (r == 0)
                pv_instset_sweep(&threads);
        return r;
}

static ULONG start(PERFLIBREQUEST callback)
{
        long hz = sysconf(_SC_CLK_TCK);
        ULONG status;

        tick_100ns = hz > 0 ? (uint64_t) (10000000 / hz) : 100000;
        status = CounterInitialize(callback, NULL, NULL, NULL);
        if (status == ERROR_SUCCESS)
                pv_instset_init(&threads, PV_THREAD_PROVIDER, &PV_THREADGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&threads);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "thread", .start = start, .collect = collect, .stop = stop,
};
