/* SPDX-License-Identifier: MIT */
/* The kept /proc/PID descriptors of the Process provider (pidfds.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pidfds.h"

int pidfds_init(struct pidfds *t, size_t max)
{
        size_t slots = 16;

        /* At most half full: probes stay short. */
        while (slots < 2 * max)
                slots *= 2;
        t->slot = calloc(slots, sizeof(*t->slot));
        if (!t->slot)
                return -ENOMEM;
        t->mask = slots - 1;
        t->n = 0;
        t->max = max;
        return 0;
}

static size_t home(const struct pidfds *t, uint32_t pid)
{
        uint32_t h = pid * UINT32_C(2654435761);

        return (size_t) (h ^ h >> 16) & t->mask;
}

struct pidfd_entry *pidfds_get(struct pidfds *t, uint32_t pid)
{
        size_t i;

        if (!t->slot || pid == 0)
                return NULL;
        for (i = home(t, pid); t->slot[i].pid; i = (i + 1) & t->mask)
                if (t->slot[i].pid == pid) {
                        t->slot[i].seen = true;
                        return &t->slot[i];
                }
        if (t->n == t->max)
                return NULL;
        t->n++;
        t->slot[i] = (struct pidfd_entry) { .pid = pid, .seen = true, .dir = -1, .fd_dir = -1,
                                            .stat = -1, .statm = -1, .io = -1 };
        return &t->slot[i];
}

void pidfds_close(struct pidfd_entry *e)
{
        int *fd[] = { &e->dir, &e->fd_dir, &e->stat, &e->statm, &e->io };

        for (size_t k = 0; k < sizeof(fd) / sizeof(fd[0]); k++) {
                if (*fd[k] >= 0)
                        close(*fd[k]);
                *fd[k] = -1;
        }
}

void pidfds_sweep(struct pidfds *t)
{
        struct pidfd_entry *old = t->slot;
        size_t slots = t->mask + 1, i;

        if (!old)
                return;
        /* Entries move when others leave: the table is laid again, O(slots). */
        t->slot = calloc(slots, sizeof(*t->slot));
        if (!t->slot) {
                /* No memory to lay it again: the gone ones keep their slots, closed. */
                t->slot = old;
                for (i = 0; i < slots; i++) {
                        if (old[i].pid && !old[i].seen)
                                pidfds_close(&old[i]);
                        old[i].seen = false;
                }
                return;
        }
        t->n = 0;
        for (size_t k = 0; k < slots; k++) {
                if (!old[k].pid)
                        continue;
                if (!old[k].seen) {
                        pidfds_close(&old[k]);
                        continue;
                }
                for (i = home(t, old[k].pid); t->slot[i].pid; i = (i + 1) & t->mask)
                        ;
                t->slot[i] = old[k];
                t->slot[i].seen = false;
                t->n++;
        }
        free(old);
}

void pidfds_done(struct pidfds *t)
{
        if (t->slot)
                for (size_t i = 0; i <= t->mask; i++)
                        if (t->slot[i].pid)
                                pidfds_close(&t->slot[i]);
        free(t->slot);
        *t = (struct pidfds) { 0 };
}

int pidfds_pread(int fd, char *buf, size_t size)
{
        ssize_t n;

        if (size == 0)
                return -EINVAL;
        /* Offset 0 makes the kernel build the file anew (seq_file), as a fresh open would. */
        n = pread(fd, buf, size - 1, 0);
        if (n < 0)
                return -errno;
        if ((size_t) n == size - 1)
                return -ENOBUFS;
        buf[n] = '\0';
        return (int) n;
}
