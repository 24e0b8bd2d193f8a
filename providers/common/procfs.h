/* SPDX-License-Identifier: MIT */
/*
 * procfs.h: parsers of the /proc and /sys files the Linux providers read.
 * Internal to providers/ (a noinst convenience library linked into each
 * plugin and into the unit tests).
 *
 * Every parser reads an open FILE * or takes a root directory ("/proc",
 * "/sys") so that the tests can feed it fixture files.  They return 0 (or
 * 1 for "one more record" from the _next iterators, 0 at the end) and
 * -errno on failure, and write ret_ parameters only on success.
 */
#ifndef PV_PROCFS_H
#define PV_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- /proc/stat ---- */

/* One "cpu" line, in USER_HZ ticks. */
struct pv_cpu_times {
        uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

struct pv_stat {
        struct pv_cpu_times total;      /* the "cpu" line */
        struct pv_cpu_times *cpu;       /* one per "cpuN" line, in file order */
        unsigned *cpu_id;               /* N of each */
        size_t n_cpu;
        uint64_t intr;                  /* first field of "intr" */
        uint64_t ctxt;
        uint64_t processes;             /* forks since boot */
        uint64_t procs_running;
        uint64_t procs_blocked;
        uint64_t btime;
};

/* *ret's arrays are allocated here and owned by the caller (pv_stat_done). */
int pv_stat_read(FILE *f, struct pv_stat *ret);
/* Frees the arrays; accepts NULL and a zeroed struct. */
void pv_stat_done(struct pv_stat *s);
/* pv_stat_read of root/stat. */
int pv_stat_read_file(const char *root, struct pv_stat *ret);

/*
 * /proc/interrupts: adds each CPU column's counts into per_cpu[k], where k
 * is the position of that CPU's id in cpu_id[0..n) (columns named CPUn;
 * a column whose CPU is not listed is skipped).  per_cpu is zeroed first.
 */
int pv_interrupts_read(FILE *f, const unsigned *cpu_id, size_t n, uint64_t *per_cpu);

/* ---- "key: value [kB]" files: /proc/meminfo, /proc/vmstat, /proc/PID/status ---- */

/*
 * For each line "KEY[:] VALUE [kB]" whose KEY is keys[i], sets values[i]
 * (multiplied by 1024 when the unit is kB) and found bit i of *ret_found
 * (so at most 64 keys).  Keys not in the file keep their value.
 */
int pv_kv_read(FILE *f, const char *const *keys, size_t n, uint64_t *values,
               uint64_t *ret_found);
/* pv_kv_read of a NUL-terminated text (a file read whole with pv_read_at). */
int pv_kv_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                uint64_t *ret_found);
/* pv_kv_read of the file root/rel. */
int pv_kv_read_file(const char *root, const char *rel, const char *const *keys, size_t n,
                    uint64_t *values, uint64_t *ret_found);

/* ---- /proc/loadavg ---- */

/* The running/total scheduling entities ("r/t" field). */
int pv_loadavg_read(FILE *f, uint64_t *ret_running, uint64_t *ret_threads);

/* ---- /proc/diskstats ---- */

struct pv_disk {
        unsigned major, minor;
        char name[64];
        uint64_t reads, reads_merged, sectors_read, ms_reading;
        uint64_t writes, writes_merged, sectors_written, ms_writing;
        uint64_t in_flight, ms_io, ms_weighted;
};

/* The next device line; 1, or 0 at the end of the file. */
int pv_diskstats_next(FILE *f, struct pv_disk *ret);

/* ---- /proc/net/dev ---- */

struct pv_netdev {
        char name[64];
        uint64_t rx_bytes, rx_packets, rx_errs, rx_drop;
        uint64_t tx_bytes, tx_packets, tx_errs, tx_drop;
};

/* The next interface line (the two header lines are skipped); 1, or 0 at the end. */
int pv_netdev_next(FILE *f, struct pv_netdev *ret);

/* ---- /proc/self/mountinfo ---- */

struct pv_mount {
        unsigned major, minor;
        char root[512];                 /* of the mount within its filesystem */
        char point[512];                /* octal escapes (\040) decoded */
        char fstype[64];
        char source[256];
};

/* The next mount; 1, or 0 at the end.  A line too long for the fields is -ENAMETOOLONG. */
int pv_mountinfo_next(FILE *f, struct pv_mount *ret);

/*
 * The space-separated field at *p, leading spaces skipped and the kernel's
 * octal escapes (\040) decoded, as mountinfo and /proc/swaps write paths;
 * *p is left after it.  -EBADMSG when empty, -ENAMETOOLONG when too long.
 */
int pv_escaped_field(const char **p, char *out, size_t size);

/* Filesystems with no storage of their own (proc, sysfs, tmpfs, cgroup ...). */
bool pv_fs_is_pseudo(const char *fstype);

/* ---- /proc/PID/ ---- */

struct pv_pid_stat {
        uint32_t pid, ppid;
        char comm[64];                  /* between the first '(' and the last ')' */
        char state;
        uint64_t utime, stime;          /* USER_HZ ticks */
        uint64_t num_threads;
        uint64_t starttime;             /* USER_HZ ticks after boot */
        uint64_t vsize;                 /* bytes */
        uint64_t rss;                   /* pages */
};

/* One /proc/PID/stat line (a comm may hold spaces and parentheses). */
int pv_pid_stat_parse(const char *line, struct pv_pid_stat *ret);

/* The first three figures of /proc/PID/statm, in pages. */
struct pv_pid_statm {
        uint64_t size;                  /* VmSize */
        uint64_t resident;              /* VmRSS */
        uint64_t shared;                /* RssFile + RssShmem: resident - shared is RssAnon */
};

int pv_pid_statm_parse(const char *text, struct pv_pid_statm *ret);

/*
 * The open descriptors of the process whose /proc/PID directory is
 * pid_dirfd: fd/'s st_size when by_size (Linux 6.2 and later count them
 * there), else its entries, listed.
 */
int pv_pid_count_fds(int pid_dirfd, bool by_size, uint64_t *ret);

/* Whether this kernel gives fd/'s count as its st_size; proc_dirfd is /proc, open. */
bool pv_fds_by_size(int proc_dirfd);

/*
 * Reads the whole small file root/rel (a /proc or /sys file) into buf,
 * NUL-terminated; returns the length or -errno.  -ENOBUFS when it does
 * not fit.
 */
int pv_read_small(const char *root, const char *rel, char *buf, size_t size);

/*
 * pv_read_small of the file name under the directory dirfd, in one read:
 * only for the /proc files that the kernel makes whole at once (the
 * /proc/PID files: stat, statm, status, io), where a short read is the end.
 */
int pv_read_at(int dirfd, const char *name, char *buf, size_t size);

/* A file holding one signed decimal number (sysfs): -errno, or 0 with *ret. */
int pv_read_s64(const char *root, const char *rel, int64_t *ret);

/* Opens root/rel for reading ("re"); NULL with errno set on failure. */
FILE *pv_fopen(const char *root, const char *rel);

/* ---- the processes of /proc (proc_dirfd: /proc, open as a directory) ---- */

/* Its numeric entries, listed: what ps -e counts. */
int pv_proc_count_listed(int proc_dirfd, uint64_t *ret);

/*
 * /proc's link count less its directories that are not processes ("." and
 * ".." included): the kernel's count of processes (its link count is its
 * own directories plus one per process), without listing the processes.
 */
int pv_proc_count_by_links(int proc_dirfd, uint64_t *ret);

/*
 * Whether pv_proc_count_by_links counts what the listing shows: not when
 * this /proc is of a child PID namespace or hides other users' processes
 * (hidepid), where the link count still counts every process of the kernel.
 */
bool pv_proc_links_count(int proc_dirfd);

/* ---- shared by the CPU providers (Processor, Processor Information) ---- */

/* Adds t's times into sum, field by field. */
void pv_cpu_times_add(struct pv_cpu_times *sum, const struct pv_cpu_times *t);

/* pv_interrupts_read of root/interrupts; per_cpu all 0 when it cannot be read. */
void pv_interrupts_read_file(const char *root, const unsigned *cpu_id, size_t n,
                             uint64_t *per_cpu);

/*
 * Calls fn on each entry of the open directory fd from its start (it is
 * rewound first, so a kept descriptor lists anew), until fn returns non-0.
 */
struct dirent64;
int pv_dir_walk(int fd, int (*fn)(const struct dirent64 *e, void *userdata), void *userdata);

/* One USER_HZ tick (the unit of /proc's CPU times) in 100 ns: 100000 when sysconf cannot tell. */
uint64_t pv_tick_100ns(void);

#endif /* PV_PROCFS_H */
