/* SPDX-License-Identifier: MIT */
/*
 * pidfds.h: the /proc/PID files of the processes the Process provider
 * knows, kept open from one collection to the next, so that a collection
 * reads each file with one pread(2) instead of opening, reading and
 * closing it (an open of a /proc/PID file costs a path walk and the
 * kernel's allocations, more than the read).  A descriptor keeps its
 * process: once that process is reaped the reads fail (ESRCH), even if
 * its PID is reused, and the entry is opened again on the new process.
 *
 * At most max entries (five descriptors each); processes beyond them are
 * read the old way by the caller.  Internal to providers/process.
 */
#ifndef PV_PIDFDS_H
#define PV_PIDFDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pidfd_entry {
        uint32_t pid;                   /* 0: a free slot */
        bool seen;
        int dir;                        /* /proc/PID, O_PATH; -1: not open */
        int fd_dir;                     /* /proc/PID/fd, O_PATH, for its fstat's size */
        /* -1: not open; one that does not open (io, another user's) is tried again
         * each collection, so that the figures are those of a fresh open. */
        int stat, statm, io;
};

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

#endif /* PV_PIDFDS_H */
