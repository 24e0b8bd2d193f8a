/* SPDX-License-Identifier: MIT */
/*
 * cgroupfs.h: the cgroup v2 hierarchy, for the Control Group provider: where
 * it is mounted, a bounded walk of its groups, and the files of one group
 * (Documentation/admin-guide/cgroup-v2.rst).  Internal to providers/.
 */
#ifndef PV_CGROUPFS_H
#define PV_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "psi.h"

/* A limit file's "max" (no limit), as pv_cgroup_limit_parse returns it. */
#define PV_CG_NO_LIMIT      UINT64_MAX

/*
 * The mount point of the first cgroup2 mount of a mountinfo file:
 * /sys/fs/cgroup on a pure v2 system, /sys/fs/cgroup/unified on a hybrid
 * one.  -ENOENT when there is none, -ENAMETOOLONG when it does not fit.
 */
int pv_cgroup2_mount(FILE *mountinfo, char *buf, size_t size);

/* Which files of a group were there and whole (struct pv_cgroup.have). */
enum {
        PV_CG_CPU = 1 << 0,             /* cpu.stat usage_usec, user_usec, system_usec */
        PV_CG_THROTTLE = 1 << 1,        /* cpu.stat nr_periods ... (the cpu controller) */
        PV_CG_MEMORY = 1 << 2,          /* memory.current */
        PV_CG_MEMORY_PEAK = 1 << 3,     /* memory.peak (Linux 5.19) */
        PV_CG_MEMORY_MAX = 1 << 4,
        PV_CG_MEMORY_EVENTS = 1 << 5,
        PV_CG_IO = 1 << 6,              /* io.stat */
        PV_CG_PIDS = 1 << 7,            /* pids.current */
        PV_CG_PIDS_MAX = 1 << 8,
        PV_CG_CPU_PRESSURE = 1 << 9,
        PV_CG_MEMORY_PRESSURE = 1 << 10,
        PV_CG_IO_PRESSURE = 1 << 11,
};

enum { PV_CG_EV_LOW, PV_CG_EV_HIGH, PV_CG_EV_MAX, PV_CG_EV_OOM, PV_CG_EV_OOM_KILL, PV_CG_N_EV };

/* What one group's files say; a figure whose file is missing is 0. */
struct pv_cgroup {
        uint64_t usage_usec, user_usec, system_usec;
        uint64_t nr_periods, nr_throttled, throttled_usec;
        uint64_t memory_current, memory_peak;
        uint64_t memory_max;                    /* PV_CG_NO_LIMIT: "max" */
        uint64_t events[PV_CG_N_EV];            /* memory.events */
        uint64_t rbytes, wbytes, rios, wios;    /* io.stat, summed over devices */
        uint64_t pids_current;
        uint64_t pids_max;                      /* PV_CG_NO_LIMIT: "max" */
        struct pv_psi cpu, memory, io;          /* the group's own *.pressure */
        unsigned have;                          /* PV_CG_* */
};

/*
 * Reads the files of the group whose directory is dirfd.  Files that are
 * missing (a controller not enabled for the group, an older kernel, the
 * root group, which has no memory.current or pids.current) or unparsable
 * leave their figures 0 and their bit clear.  0, or -EINVAL.
 */
int pv_cgroup_read(int dirfd, struct pv_cgroup *ret);

/* io.stat ("MAJ:MIN rbytes=N wbytes=N rios=N wios=N ..." per device), summed. */
int pv_cgroup_iostat_parse(const char *text, struct pv_cgroup *ret);

/* A limit file: a decimal number, or "max" as PV_CG_NO_LIMIT. */
int pv_cgroup_limit_parse(const char *text, uint64_t *ret);

/*
 * Called for each group of a walk: its path relative to the walk's root
 * ("/" for the root itself, "system.slice/ssh.service" below it), its
 * directory (open for reading, valid during the call), and its inode
 * number (a group made again under the same name has another).  A
 * negative return stops the walk and is its result.
 */
typedef int (*pv_cgroup_fn)(const char *path, int dirfd, uint64_t ino, void *userdata);

struct pv_cgroup_walk {
        unsigned max_depth;             /* the root is depth 0, its children 1 ... */
        size_t max_groups;              /* the root included */
        size_t n_groups;                /* out: how many fn was called for */
        bool truncated;                 /* out: a group was left out by a bound */
};

/*
 * Calls fn for root_fd's group and its descendants, parents before
 * children, within w's bounds (a group beyond them is left out with its
 * subtree).  A group that vanishes during the walk is simply not listed.
 * Keeps one descriptor open per level.  0, or fn's error, or -errno of
 * the root.
 */
int pv_cgroup_walk(int root_fd, struct pv_cgroup_walk *w, pv_cgroup_fn fn, void *userdata);

#endif /* PV_CGROUPFS_H */
