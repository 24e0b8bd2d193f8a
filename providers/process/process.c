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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "instances.h"
#include "pidfds.h"
#include "plugin.h"
#include "procfs.h"
#include "process.h"

#define N_VALUES        (PV_PROCESS_ELAPSED_TIME_FREQ + 1)

static struct pv_instset processes;
static struct pidfds kept;
/* The descriptors kept of a process: /proc/PID and PID/fd as O_PATH, and three files. */
enum { K_DIR, K_FD_DIR, K_STAT, K_STATM, K_IO };
static uint64_t tick_100ns, page_size;
/* Whether fd/'s size counts the descriptors (Linux 6.2+), probed at start. */
static bool fds_by_size;
/* Every file of a process is read into this one buffer: collections are serialised
 * (plugin.c), and status, the largest, fits with room to spare. */
static char buf[16384];

enum { IO_RCHAR, IO_WCHAR, N_IO };
static const char *const io_keys[N_IO] = { "rchar", "wchar" };
static const char *const swap_key[] = { "VmSwap" };

/* What a collection reads of one process; the figures it cannot read are 0. */
struct figures {
        struct pv_pid_stat stat;
        struct pv_pid_statm statm;      /* all 0 for a kernel thread */
        uint64_t swap;                  /* bytes */
        uint64_t io[N_IO];
        uint64_t fds;
};

/*
 * No swap in use (or none at all) means no process has any: then status,
 * the costliest file, need not be read, statm has the rest.  Swap that a
 * process gets after this is counted by the next collection.
 */
static bool swap_in_use(void)
{
        struct sysinfo si;

        return sysinfo(&si) < 0 || si.totalswap != si.freeswap;
}

/* The file name of e's process into buf, through the kept descriptor *fd. */
static int kept_read(struct pidfd_entry *e, int slot, const char *name)
{
        return pidfds_read(&e->fd[slot], e->fd[K_DIR], name, buf, sizeof(buf));
}

/* The open descriptors of e's process: fd/'s size, through a kept descriptor of fd/. */
static int count_fds(struct pidfd_entry *e, uint64_t *ret)
{
        int *fd_dir = &e->fd[K_FD_DIR];
        struct stat st;

        if (!fds_by_size)
                return pv_pid_count_fds(e->fd[K_DIR], false, ret);
        if (*fd_dir < 0 && (*fd_dir = openat(e->fd[K_DIR], "fd", O_PATH | O_CLOEXEC)) < 0)
                return -errno;
        /* The size is counted when asked (proc_fd_getattr), as pv_pid_count_fds's is. */
        if (fstat(*fd_dir, &st) < 0)
                return -errno;
        *ret = (uint64_t) st.st_size;
        return 0;
}

/* The files of one process; -ESRCH: gone. */
static int read_figures(struct pidfd_entry *e, int proc_fd, const char *pid, bool swap,
                        struct figures *f)
{
        *f = (struct figures) { 0 };
        if (pidfds_read_first(e, K_DIR, K_STAT, proc_fd, pid, "stat", buf, sizeof(buf)) < 0 ||
            pv_pid_stat_parse(buf, &f->stat) < 0)
                return -ESRCH;
        /* No virtual memory: a kernel thread or a zombie, whose statm is all 0. */
        if (f->stat.vsize > 0 && (kept_read(e, K_STATM, "statm") < 0 ||
                                  pv_pid_statm_parse(buf, &f->statm) < 0))
                f->statm = (struct pv_pid_statm) { 0 };
        if (swap && f->stat.vsize > 0 && pv_read_at(e->fd[K_DIR], "status", buf, sizeof(buf)) >= 0)
                (void) pv_kv_parse(buf, swap_key, 1, &f->swap, NULL);
        /* io is another user's secret (ptrace access): 0 then. */
        if (kept_read(e, K_IO, "io") >= 0)
                (void) pv_kv_parse(buf, io_keys, N_IO, f->io, NULL);
        if (count_fds(e, &f->fds) < 0)
                f->fds = 0;
        return 0;
}

static void process_values(const struct figures *f, uint64_t now, uint64_t *v)
{
        const struct pv_pid_stat *s = &f->stat;
        uint64_t anon = f->statm.resident > f->statm.shared ?
                        f->statm.resident - f->statm.shared : 0;

        v[PV_PROCESS_PCT_PROCESSOR_TIME] = (s->utime + s->stime) * tick_100ns;
        v[PV_PROCESS_PCT_USER_TIME] = s->utime * tick_100ns;
        v[PV_PROCESS_PCT_PRIVILEGED_TIME] = s->stime * tick_100ns;
        v[PV_PROCESS_VIRTUAL_BYTES] = s->vsize;
        /* stat's rss lags behind the threads' cached counts; statm's resident (status's
         * VmRSS, 0 for kernel threads) agrees with ps(1). */
        v[PV_PROCESS_WORKING_SET] = (f->statm.resident ? f->statm.resident : s->rss) * page_size;
        /* status's RssAnon + VmSwap. */
        v[PV_PROCESS_PRIVATE_BYTES] = anon * page_size + f->swap;
        v[PV_PROCESS_THREAD_COUNT] = s->num_threads;
        v[PV_PROCESS_ID_PROCESS] = s->pid;
        v[PV_PROCESS_CREATING_PROCESS_ID] = s->ppid;
        v[PV_PROCESS_HANDLE_COUNT] = f->fds;
        v[PV_PROCESS_IO_READ_BYTES] = f->io[IO_RCHAR];
        v[PV_PROCESS_IO_WRITE_BYTES] = f->io[IO_WCHAR];
        v[PV_PROCESS_ELAPSED_TIME] = s->starttime * tick_100ns;
        v[PV_PROCESS_ELAPSED_TIME_NOW] = now;
        v[PV_PROCESS_ELAPSED_TIME_FREQ] = 10000000u;
}

/* One process; a process that exited meanwhile is simply not listed (0). */
static int publish(int proc_fd, const char *pid, bool swap, uint64_t now)
{
        struct pidfd_entry once = PIDFD_ENTRY_ONCE, *e;
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        struct figures f;
        int r;

        /* Past the table's room a process is opened and closed within the collection. */
        e = pidfds_get(&kept, (uint32_t) strtoul(pid, NULL, 10));
        r = read_figures(e ? e : &once, proc_fd, pid, swap, &f);
        pidfds_close(&once);
        if (r < 0)
                return 0;
        process_values(&f, now, v);
        r = pv_instset_get(&processes, f.stat.comm, f.stat.pid, &inst);
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
        bool swap;
        DIR *d;
        int r = 0;

        /* starttime counts from boot, suspended time included: CLOCK_BOOTTIME's origin. */
        clock_gettime(CLOCK_BOOTTIME, &ts);
        now = (uint64_t) ts.tv_sec * 10000000u + (uint64_t) ts.tv_nsec / 100u;
        d = opendir("/proc");
        if (!d)
                return -errno;
        swap = swap_in_use();
        while (r == 0 && (e = readdir(d)))
                if (isdigit((unsigned char) e->d_name[0]))
                        r = publish(dirfd(d), e->d_name, swap, now);
        closedir(d);
        if (r == 0) {
                pv_instset_sweep(&processes);
                pidfds_sweep(&kept);
        }
        return r;
}

static ULONG start(PERFLIBREQUEST callback)
{
        long page = sysconf(_SC_PAGESIZE);
        ULONG status;
        int fd;

        fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fds_by_size = fd >= 0 && pv_fds_by_size(fd);
        if (fd >= 0)
                close(fd);
        tick_100ns = pv_tick_100ns();
        page_size = page > 0 ? (uint64_t) page : 4096;
        /* Without the table every process is opened anew each collection, as before it. */
        if (pidfds_init(&kept, pidfds_budget() / 5) < 0)
                pv_log(LOG_WARNING, "no memory for the kept /proc descriptors");
        status = CounterInitialize(callback, NULL, NULL, NULL);
        if (status == ERROR_SUCCESS)
                pv_instset_init(&processes, PV_PROCESS_PROVIDER, &PV_PROCESSGuid);
        else
                pidfds_done(&kept);
        return status;
}

static void stop(void)
{
        pv_instset_done(&processes);
        pidfds_done(&kept);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "process", .start = start, .collect = collect, .stop = stop,
};
