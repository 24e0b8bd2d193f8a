/* SPDX-License-Identifier: MIT */
/* The kept /proc/PID descriptors of the Process and Thread providers (pidfds.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
        t->slot[i] = (struct pidfd_entry) PIDFD_ENTRY_ONCE;
        t->slot[i].pid = pid;
        t->slot[i].seen = true;
        return &t->slot[i];
}

void pidfds_close(struct pidfd_entry *e)
{
        for (size_t k = 0; k < PIDFDS_FDS; k++) {
                if (e->fd[k] >= 0)
                        close(e->fd[k]);
                e->fd[k] = -1;
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

int pidfds_read(int *fd, int dir, const char *name, char *buf, size_t size)
{
        if (*fd < 0 && (*fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
                return -errno;
        return pidfds_pread(*fd, buf, size);
}

int pidfds_read_first(struct pidfd_entry *e, int dir_slot, int file_slot, int parent,
                      const char *dir, const char *file, char *buf, size_t size)
{
        int *d = &e->fd[dir_slot];

        /* A kept file that no longer reads is a reaped process, its PID maybe another's. */
        if (*d >= 0 && pidfds_read(&e->fd[file_slot], *d, file, buf, size) >= 0)
                return 0;
        pidfds_close(e);
        /* One lookup of the PID; its files are then opened relative to it. */
        *d = openat(parent, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (*d >= 0 && pidfds_read(&e->fd[file_slot], *d, file, buf, size) >= 0)
                return 0;
        pidfds_close(e);
        return -ESRCH;
}

size_t pidfds_budget(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return 0;
        /* The plugin has its host process to itself: the hard limit is its to use. */
        if (rl.rlim_cur < 65536 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        (void) getrlimit(RLIMIT_NOFILE, &rl);
        }
        return (rl.rlim_cur < 65536 ? (size_t) rl.rlim_cur : 65536) / 2;
}
