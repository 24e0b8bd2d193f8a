/* SPDX-License-Identifier: MIT */
/*
 * Thread: one instance per thread of each process, named as Windows names
 * them, PROCESS/INDEX: the process's name (its comm, as in Process) and
 * the thread's place in /proc/PID/task (0 is the main thread, which the
 * kernel lists first); the instance id is the thread's id.  When a thread
 * exits the ones after it move up a place, as on Windows: their instances
 * are renamed (a new instance under the same id).
 *
 * A thread costs two files (task/TID/stat, and task/TID/schedstat for the
 * context switches, or status where the kernel has no schedstat: eight
 * times the cost), kept open as Process keeps its files (pidfds.h): a
 * collection reads at most MAX_THREADS threads, in /proc's order, and says
 * once in the log when it left some out.  A process is read through its
 * directory opened once, so that its threads are its own even if its PID
 * is reused meanwhile.
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
#include "pidfds.h"
#include "plugin.h"
#include "procfs.h"
#include "task.h"
#include "thread.h"

#define N_VALUES        (PV_THREAD_THREAD_WAIT_REASON + 1)
/* 10 to 14 us a thread on a 2-CPU virtual machine: 41 to 57 ms, within perflibd's collect bound. */
#define MAX_THREADS     4096

static struct pv_instset threads;
/* Kept descriptors: of a process, /proc/PID (O_PATH), its stat and its task/;
 * of a thread, task/TID (O_PATH), its stat and its schedstat (or status). */
static struct pidfds kept_processes, kept_threads;
enum { P_DIR, P_STAT, P_TASK };
enum { T_DIR, T_STAT, T_STATUS };
static uint64_t tick_100ns;
static bool logged_limit;
/* Whether threads' schedstat can be read (CONFIG_SCHED_INFO): else status. */
static bool have_schedstat;
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

/* The walk of one process's task/ directory. */
struct process_walk {
        struct collection *c;
        int task_fd;
        uint32_t pid;
        const char *process;
        unsigned index;
        int r;
};

/* The thread's context switches, voluntary and not (schedstat gives their sum). */
static void switches(struct pidfd_entry *e, uint64_t cs[N_CS])
{
        if (have_schedstat) {
                if (pidfds_read(&e->fd[T_STATUS], e->fd[T_DIR], "schedstat", buf,
                                sizeof(buf)) >= 0)
                        (void) pv_task_schedstat_switches(buf, &cs[CS_VOLUNTARY]);
        } else if (pidfds_read(&e->fd[T_STATUS], e->fd[T_DIR], "status", buf, sizeof(buf)) >= 0)
                (void) pv_kv_parse(buf, cs_keys, N_CS, cs, NULL);
}

/* Thread tid of w's process; 0 when it is gone. */
static int publish_thread(struct process_walk *w, const char *tid)
{
        struct pidfd_entry once = PIDFD_ENTRY_ONCE, *e;
        uint64_t v[N_VALUES] = { 0 }, cs[N_CS] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        struct pv_task_stat t;
        char name[96];
        int r;

        /* Past the table's room a thread is opened and closed within the collection. */
        e = pidfds_get(&kept_threads, (uint32_t) strtoul(tid, NULL, 10));
        if (!e)
                e = &once;
        r = pidfds_read_first(e, T_DIR, T_STAT, w->task_fd, tid, "stat", buf, sizeof(buf));
        if (r >= 0)
                r = pv_task_stat_parse(buf, &t);
        /* A thread that exits between the two reads counts no switch. */
        if (r >= 0)
                switches(e, cs);
        pidfds_close(&once);
        if (r < 0)
                return 0;
        thread_values(&t, w->pid, cs[CS_VOLUNTARY] + cs[CS_INVOLUNTARY], w->c->now, v);
        snprintf(name, sizeof(name), "%s/%u", w->process, w->index++);
        if ((r = pv_instset_get(&threads, name, t.stat.pid, &inst)) < 0)
                return r;
        pv_set_values(PV_THREAD_PROVIDER, inst, &PV_THREADInfo.CounterSet, v, N_VALUES);
        w->c->n++;
        return 0;
}

static int thread_entry(const struct dirent64 *d, void *userdata)
{
        struct process_walk *w = userdata;

        if (!isdigit((unsigned char) d->d_name[0]))
                return 0;
        if (w->c->n >= MAX_THREADS)
                return 1;
        w->r = publish_thread(w, d->d_name);
        return w->r < 0;
}

/* The threads of process pid, named after its comm; 0 when it is gone. */
static int publish_process(const char *pid, struct collection *c)
{
        struct pidfd_entry once = PIDFD_ENTRY_ONCE, *e;
        struct process_walk w = { .c = c };
        int *task_fd, r = 0;
        struct pv_pid_stat st;

        e = pidfds_get(&kept_processes, (uint32_t) strtoul(pid, NULL, 10));
        if (!e)
                e = &once;
        if (pidfds_read_first(e, P_DIR, P_STAT, c->proc_fd, pid, "stat", buf, sizeof(buf)) < 0 ||
            pv_pid_stat_parse(buf, &st) < 0)
                goto done;
        task_fd = &e->fd[P_TASK];
        if (*task_fd < 0)
                *task_fd = openat(e->fd[P_DIR], "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*task_fd < 0)
                goto done;
        w = (struct process_walk) { .c = c, .task_fd = *task_fd, .pid = st.pid,
                                    .process = st.comm };
        /* The walk lists the kept directory anew: threads born since are in it. */
        r = pv_dir_walk(*task_fd, thread_entry, &w) < 0 ? 0 : w.r;
done:
        pidfds_close(&once);
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
        if (r == 0) {
                pv_instset_sweep(&threads);
                pidfds_sweep(&kept_processes);
                pidfds_sweep(&kept_threads);
        }
        return r;
}

static void stop_tables(void)
{
        pidfds_done(&kept_processes);
        pidfds_done(&kept_threads);
}

static ULONG start(PERFLIBREQUEST callback)
{
        size_t budget = pidfds_budget();
        ULONG status;

        tick_100ns = pv_tick_100ns();
        have_schedstat = access("/proc/thread-self/schedstat", R_OK) == 0;
        if (!have_schedstat)
                pv_log(LOG_INFO, "no /proc/thread-self/schedstat (CONFIG_SCHED_INFO): context "
                       "switches from each thread's status, at eight times the cost");
        /* A quarter of the descriptors for the processes, three each, the rest for the
         * threads; without the tables every thread is opened anew each collection. */
        if (pidfds_init(&kept_processes, budget / 4 / 3) < 0 ||
            pidfds_init(&kept_threads, budget * 3 / 4 / 3) < 0)
                pv_log(LOG_WARNING, "no memory for the kept /proc descriptors");
        status = CounterInitialize(callback, NULL, NULL, NULL);
        if (status == ERROR_SUCCESS)
                pv_instset_init(&threads, PV_THREAD_PROVIDER, &PV_THREADGuid);
        else
                stop_tables();
        return status;
}

static void stop(void)
{
        pv_instset_done(&threads);
        stop_tables();
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "thread", .start = start, .collect = collect, .stop = stop,
};
