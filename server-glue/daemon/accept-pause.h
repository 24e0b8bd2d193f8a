/* SPDX-License-Identifier: MIT */
/*
 * accept-pause.h: a listener that cannot accept for want of descriptors or
 * memory stops listening for a while (accept-pause.c) instead of spinning:
 * its socket stays readable while the connection waits in the backlog, so
 * retrying at once would burn a core and log thousands of lines a second.
 * Internal to perflibd.
 */
#ifndef PERFLIBD_ACCEPT_PAUSE_H
#define PERFLIBD_ACCEPT_PAUSE_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#define ACCEPT_PAUSE_MIN_USEC     (UINT64_C(50) * 1000u)
#define ACCEPT_PAUSE_MAX_USEC     (UINT64_C(1000) * 1000u)
#define ACCEPT_PAUSE_REPORT_USEC  (UINT64_C(60) * 1000000u)

struct accept_pause {
        sd_event_source *io;            /* the listener's (the loop owns it) */
        sd_event_source *timer;         /* turns io back on; the loop owns it */
        uint64_t next_usec;             /* the next pause */
        uint64_t deferred;              /* pauses since the last report */
        uint64_t reported;              /* usec of the last report, 0 = none yet */
};

/* For the listener io; both sources belong to io's loop. */
int accept_pause_init(struct accept_pause *p, sd_event_source *io);

/*
 * accept(2) failed with err.  When err is a shortage (EMFILE, ENFILE,
 * ENOBUFS, ENOMEM) pauses the listener, 50 ms doubling to 1 s, logs at
 * most once a minute, and returns true; false for other errors.
 */
bool accept_pause(struct accept_pause *p, int err);

/* An accept succeeded: the next shortage pauses briefly again. */
static inline void accept_pause_reset(struct accept_pause *p)
{
        p->next_usec = ACCEPT_PAUSE_MIN_USEC;
}

#endif /* PERFLIBD_ACCEPT_PAUSE_H */
