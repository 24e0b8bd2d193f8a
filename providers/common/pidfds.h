/* SPDX-License-Identifier: MIT */
/*
 * pidfds.h: the /proc/PID (or /proc/PID/task/TID) files of the processes
 * (threads) a provider knows, kept open from one collection to the next,
 * so that a collection reads each file with one pread(2) instead of
 * opening, reading and closing it (an open of a /proc/PID file costs a
 * path walk and the kernel's allocations, more than the read).  A
 * descriptor keeps its process: once that process is reaped the reads fail
 * (ESRCH), even if its PID is reused, and the caller opens the entry again
 * on the new process.
 *
 * At most max entries of PIDFDS_FDS descriptors, which the caller names
 * (an enum of its own) and opens; processes beyond them it reads the old
 * way.  Internal to providers/ (Process, Thread).
 */
#ifndef PV_PIDFDS_H
#define PV_PIDFDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PIDFDS_FDS      5

struct pidfd_entry {
        uint32_t pid;                   /* 0: a free slot */
        bool seen;
        /* -1: not open; one that does not open (io, another user's) is tried again
         * each collection, so that the figures are those of a fresh open. */
        int fd[PIDFDS_FDS];
};

/* An entry for one collection only, for pidfds_close after use. */
#define PIDFD_ENTRY_ONCE { .fd = { -1, -1, -1, -1, -1 } }

struct pidfds {
        struct pidfd_entry *slot;       /* open addressing by PID */
        size_t mask;                    /* slots - 1, a power of 2 minus 1 */
        size_t n, max;
};

/* Room for max processes; 0 or -ENOMEM.  t is owned by the caller (pidfds_done). */
int pidfds_init(struct pidfds *t, size_t max);

/*
 * The entry of pid, marked seen; a new one (descriptors -1) when pid is
 * not there yet, NULL when the table is full.
 */
struct pidfd_entry *pidfds_get(struct pidfds *t, uint32_t pid);

/* Closes e's descriptors (its process is gone); the entry stays, to be opened again. */
void pidfds_close(struct pidfd_entry *e);

/* Closes and forgets the entries not got since the last sweep. */
void pidfds_sweep(struct pidfds *t);

/* Closes everything and frees the table; accepts a zeroed struct. */
void pidfds_done(struct pidfds *t);

/* pv_read_at (procfs.h) of an open file, from its start: one pread. */
int pidfds_pread(int fd, char *buf, size_t size);

/*
 * The file name under the directory dir through *fd, opened on first use
 * (*fd -1) and kept: pidfds_pread's result.
 */
int pidfds_read(int *fd, int dir, const char *name, char *buf, size_t size);

/*
 * The first file of e (its stat), the one that says whether e's process
 * lives: file (a name) through e->fd[file_slot] in e->fd[dir_slot]; when it
 * does not read (the process was reaped), e is closed and opened anew: dir
 * (a PID, a TID) under parent as O_PATH, then the file.  -ESRCH when the
 * process is gone.
 */
int pidfds_read_first(struct pidfd_entry *e, int dir_slot, int file_slot, int parent,
                      const char *dir, const char *file, char *buf, size_t size);

/*
 * How many descriptors a provider may keep: half its open-file limit, which
 * is raised first (to 65,536 at most) as far as the hard limit allows.
 */
size_t pidfds_budget(void);

#endif /* PV_PIDFDS_H */
