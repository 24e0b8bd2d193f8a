/* SPDX-License-Identifier: MIT */
/*
 * Pausing a listener that ran out of descriptors or memory: see
 * accept-pause.h.  The backlog keeps the waiting clients; once the pause is
 * over the loop accepts them if it can, or pauses again, twice as long.
 */
#include <errno.h>
#include <string.h>

#include "accept-pause.h"
#include "log.h"

static int on_pause_over(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct accept_pause *p = userdata;

        return sd_event_source_set_enabled(p->io, SD_EVENT_ON);
}

int accept_pause_init(struct accept_pause *p, sd_event_source *io)
{
        sd_event_source *t;
        int r;

        *p = (struct accept_pause){ .io = io, .next_usec = ACCEPT_PAUSE_MIN_USEC };
        r = sd_event_add_time(sd_event_source_get_event(io), &t, CLOCK_MONOTONIC, 0, 0,
                              on_pause_over, p);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(t, SD_EVENT_OFF);
        if (r == 0)
                r = sd_event_source_set_floating(t, true);
        sd_event_source_unref(t);
        if (r < 0)
                return r;
        p->timer = t;
        return 0;
}

static void report(struct accept_pause *p, int err, uint64_t now)
{
        if (p->reported != 0 && now - p->reported < ACCEPT_PAUSE_REPORT_USEC)
                return;
        log_warning("accept: %s: pausing new connections (up to %u ms at a time); "
                    "%llu accepts deferred since the last report",
                    strerror(err), (unsigned) (ACCEPT_PAUSE_MAX_USEC / 1000),
                    (unsigned long long) p->deferred);
        p->reported = now;
        p->deferred = 0;
}

bool accept_pause(struct accept_pause *p, int err)
{
        uint64_t now;

        if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
                return false;
        if (sd_event_now(sd_event_source_get_event(p->io), CLOCK_MONOTONIC, &now) < 0)
                return false;
        p->deferred++;
        report(p, err, now);
        /* The timer first: a listener turned off with no timer armed would stay off. */
        if (sd_event_source_set_time(p->timer, now + p->next_usec) < 0 ||
            sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT) < 0)
                return false;
        (void) sd_event_source_set_enabled(p->io, SD_EVENT_OFF);
        p->next_usec *= 2;
        if (p->next_usec > ACCEPT_PAUSE_MAX_USEC)
                p->next_usec = ACCEPT_PAUSE_MAX_USEC;
        return true;
}
