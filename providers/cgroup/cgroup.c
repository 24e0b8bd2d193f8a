/* SPDX-License-Identifier: MIT */
/*
 * Control Group: one instance per group of the cgroup v2 hierarchy, named
 * by its path below the hierarchy's root ("/" for the root), with the
 * group directory's inode number as instance id, so that a group removed
 * and made again under the same name is a new instance, as a reused PID
 * is for Process.  Each collection walks the tree again, within bounds:
 *
 *      PERFLIB_CGROUP_MAX_GROUPS  groups listed, the root included (1024)
 *      PERFLIB_CGROUP_MAX_DEPTH   levels below the root (16)
 *
 * A group beyond them is left out with its subtree, and one log line says
 * so.  PERFLIB_CGROUP_ROOT names the hierarchy's directory instead of the
 * first cgroup2 mount of /proc/self/mountinfo (a container's delegated
 * subtree, or the tests' fixture trees).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "instances.h"
#include "plugin.h"
#include "cgroup.h"

#define N_VALUES        (PV_CGROUP_PCT_IO_FULL + 1)
/* The kernel's times are in us, the 100 ns timers count 100 ns. */
#define US_100NS        10u

static struct pv_instset groups;
static char root[PATH_MAX];             /* "": no cgroup v2 hierarchy */
static struct pv_cgroup_walk bounds;
/* PV_CG_* files already reported as missing from every group; the bound, once. */
static unsigned logged_missing;
static bool logged_truncated;
/* PV_CG_* files some group of this collection had. */
static unsigned seen_files;

static uint64_t limit_value(uint64_t v)
{
        return v == PV_CG_NO_LIMIT ? 0 : v;
}

static void cgroup_values(const struct pv_cgroup *c, uint64_t *v)
{
        v[PV_CGROUP_PCT_PROCESSOR_TIME] = c->usage_usec * US_100NS;
        v[PV_CGROUP_PCT_USER_TIME] = c->user_usec * US_100NS;
        v[PV_CGROUP_PCT_PRIVILEGED_TIME] = c->system_usec * US_100NS;
        v[PV_CGROUP_THROTTLING_PERIODS] = c->nr_periods;
        v[PV_CGROUP_THROTTLED_PERIODS] = c->nr_throttled;
        v[PV_CGROUP_PCT_THROTTLED_TIME] = c->throttled_usec * US_100NS;
        v[PV_CGROUP_MEMORY_CURRENT] = c->memory_current;
        v[PV_CGROUP_MEMORY_PEAK] = c->memory_peak;
        v[PV_CGROUP_MEMORY_LIMIT] = limit_value(c->memory_max);
        v[PV_CGROUP_MEMORY_LOW_EVENTS] = c->events[PV_CG_EV_LOW];
        v[PV_CGROUP_MEMORY_HIGH_EVENTS] = c->events[PV_CG_EV_HIGH];
        v[PV_CGROUP_MEMORY_MAX_EVENTS] = c->events[PV_CG_EV_MAX];
        v[PV_CGROUP_MEMORY_OOM_EVENTS] = c->events[PV_CG_EV_OOM];
        v[PV_CGROUP_MEMORY_OOM_KILLS] = c->events[PV_CG_EV_OOM_KILL];
        v[PV_CGROUP_IO_READ_BYTES] = c->rbytes;
        v[PV_CGROUP_IO_WRITE_BYTES] = c->wbytes;
        v[PV_CGROUP_IO_READ_OPERATIONS] = c->rios;
        v[PV_CGROUP_IO_WRITE_OPERATIONS] = c->wios;
        v[PV_CGROUP_TASK_COUNT] = c->pids_current;
        v[PV_CGROUP_TASK_LIMIT] = limit_value(c->pids_max);
        v[PV_CGROUP_PCT_CPU_SOME] = c->cpu.some.total * US_100NS;
        v[PV_CGROUP_PCT_CPU_FULL] = c->cpu.full.total * US_100NS;
        v[PV_CGROUP_PCT_MEMORY_SOME] = c->memory.some.total * US_100NS;
        v[PV_CGROUP_PCT_MEMORY_FULL] = c->memory.full.total * US_100NS;
        v[PV_CGROUP_PCT_IO_SOME] = c->io.some.total * US_100NS;
        v[PV_CGROUP_PCT_IO_FULL] = c->io.full.total * US_100NS;
}

/*
 * The instance name of a group's path: '(', ')' and '#' would end the
 * instance or number it in a counter path, so they become '[', ']' and
 * '_', as Windows' own providers write such instance names.  Group names
 * of systemd and the container runtimes have none of them.
 */
static void instance_name(const char *path, char *buf, size_t size)
{
        static const char from[] = "()#", to[] = "[]_";
        size_t i;

        for (i = 0; path[i] && i + 1 < size; i++) {
                const char *c = strchr(from, path[i]);

                buf[i] = c ? to[c - from] : path[i];
        }
        buf[i] = '\0';
}

static int publish(const char *path, int dirfd, uint64_t ino, void *userdata)
{
        uint64_t v[N_VALUES] = { 0 };
        char name[PATH_MAX];
        PPERF_COUNTERSET_INSTANCE inst;
        struct pv_cgroup c;
        int r;

        (void) userdata;
        if ((r = pv_cgroup_read(dirfd, &c)) < 0)
                return r;
        /* Not one file read: the group was removed while being listed. */
        if (!c.have)
                return 0;
        seen_files |= c.have;
        cgroup_values(&c, v);
        /* The id only tells groups of one name apart: its low 32 bits do. */
        instance_name(path, name, sizeof(name));
        r = pv_instset_get(&groups, name, (uint32_t) ino, &inst);
        if (r < 0)
                return r;
        pv_set_values(PV_CGROUP_PROVIDER, inst, &PV_CGROUPInfo.CounterSet, v, N_VALUES);
        return 0;
}

/* Says once which files no group has (a controller enabled nowhere, an older kernel). */
static void log_missing(void)
{
        static const struct { unsigned bit; const char *what; } files[] = {
                { PV_CG_CPU, "cpu.stat" },
                { PV_CG_THROTTLE, "cpu.stat's nr_periods (the cpu controller)" },
                { PV_CG_MEMORY, "memory.current (the memory controller)" },
                { PV_CG_MEMORY_PEAK, "memory.peak (Linux 5.19 and later)" },
                { PV_CG_MEMORY_MAX, "memory.max (the memory controller)" },
                { PV_CG_MEMORY_EVENTS, "memory.events (the memory controller)" },
                { PV_CG_IO, "io.stat (the io controller)" },
                { PV_CG_PIDS, "pids.current (the pids controller)" },
                { PV_CG_PIDS_MAX, "pids.max (the pids controller)" },
                { PV_CG_CPU_PRESSURE, "cpu.pressure (CONFIG_PSI, psi=1)" },
                { PV_CG_MEMORY_PRESSURE, "memory.pressure (CONFIG_PSI, psi=1)" },
                { PV_CG_IO_PRESSURE, "io.pressure (CONFIG_PSI, psi=1)" },
        };

        char list[1024] = "";
        size_t len = 0;

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                if ((seen_files | logged_missing) & files[i].bit)
                        continue;
                logged_missing |= files[i].bit;
                len += (size_t) snprintf(list + len, sizeof(list) - len, "%s%s",
                                         len ? ", " : "", files[i].what);
                if (len >= sizeof(list))
                        len = sizeof(list) - 1;
        }
        if (len)
                pv_log(LOG_INFO, "%s: no group has %s; those counters are 0", root, list);
}

static int collect(void)
{
        struct pv_cgroup_walk w = bounds;
        int fd, r;

        if (!root[0])
                return 0;
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        seen_files = 0;
        r = pv_cgroup_walk(fd, &w, publish, NULL);
        close(fd);
        if (r < 0)
                return r;
        pv_instset_sweep(&groups);
        log_missing();
        if (w.truncated && !logged_truncated)
                pv_log(LOG_WARNING, "%s: more than %zu groups or %u levels; the others are left "
                       "out (PERFLIB_CGROUP_MAX_GROUPS, PERFLIB_CGROUP_MAX_DEPTH)",
                       root, bounds.max_groups, bounds.max_depth);
        logged_truncated |= w.truncated;
        return 0;
}

/* A bound from the environment: a number in 1..max, else def (and a log line). */
static unsigned long env_bound(const char *name, unsigned long def, unsigned long max)
{
        const char *s = getenv(name);
        unsigned long v;
        char *end;

        if (!s || !*s)
                return def;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v == 0 || v > max || *s == '-') {
                pv_log(LOG_WARNING, "%s=%s: not a number from 1 to %lu; using %lu", name, s, max,
                       def);
                return def;
        }
        return v;
}

/* The hierarchy's directory into root; "" and a log line when there is none. */
static void find_root(void)
{
        const char *env = getenv("PERFLIB_CGROUP_ROOT");
        FILE *f;
        int r;

        root[0] = '\0';
        if (env && *env) {
                if (strlen(env) < sizeof(root))
                        strcpy(root, env);
                return;
        }
        f = fopen("/proc/self/mountinfo", "re");
        if (!f) {
                pv_log(LOG_WARNING, "/proc/self/mountinfo: %s; no instances", strerror(errno));
                return;
        }
        r = pv_cgroup2_mount(f, root, sizeof(root));
        fclose(f);
        if (r < 0) {
                root[0] = '\0';
                pv_log(LOG_INFO, "no cgroup2 file system mounted (%s); no instances",
                       r == -ENOENT ? "cgroup v1 only" : strerror(-r));
        }
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status;

        /* The walk's recursion holds one directory per level: 64 bound it. */
        bounds = (struct pv_cgroup_walk) {
                .max_groups = env_bound("PERFLIB_CGROUP_MAX_GROUPS", 1024, 1000000),
                .max_depth = (unsigned) env_bound("PERFLIB_CGROUP_MAX_DEPTH", 16, 64),
        };
        logged_missing = 0;
        logged_truncated = false;
        find_root();
        status = CounterInitialize(callback, NULL, NULL, NULL);
        if (status == ERROR_SUCCESS)
                pv_instset_init(&groups, PV_CGROUP_PROVIDER, &PV_CGROUPGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&groups);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "cgroup", .start = start, .collect = collect, .stop = stop,
};
