/* SPDX-License-Identifier: MIT */
/*
 * ns-disc.h: discovery off the request path (ns-disc.c).  Once started
 * (ns_start_discovery, ns-live.h), a thread of the namespace scans the
 * runtime directory and opens the providers it finds, letting go of the
 * namespace lock while it reads the directory or waits on a provider, so
 * that a socket that never answers holds up no request.  It inserts what
 * it opened into the provider list and marks the counterset list dirty;
 * the rebuild stays with ns_refresh.  Every function here is called with
 * ns->lock held, except ns_disc_stop.
 */
#ifndef PERFLIBD_NS_DISC_H
#define PERFLIBD_NS_DISC_H

#include <stdbool.h>

#include "ns-internal.h"

/* Whether the thread runs: the refresh leaves scanning and opening to it. */
bool ns_disc_running(const struct ns *ns);

/*
 * The thread has work no request waits for (ns->sweep, ns->retry_at): wakes
 * it.  Without the thread the refresh scans itself.
 */
void ns_disc_poke(struct ns *ns);

/* A scan is wanted (ns_runtime_changed): tells the thread, does not wait. */
void ns_disc_kick(struct ns *ns);

/*
 * Asks for a scan and waits, with the lock let go of, until the thread has
 * scanned and tried every new provider it found: "announced before the
 * request" is then "served by the request" unless a provider is slow to
 * answer.  At most timings.scan_wait (a hung socket delays it no more);
 * while the scan a request gave up waiting for is not done, the requests
 * after it wait no longer than it.
 */
void ns_disc_wait(struct ns *ns);

/* Stops and joins the thread, lock not held (ns_free); nothing if it never ran. */
void ns_disc_stop(struct ns *ns);

#endif /* PERFLIBD_NS_DISC_H */
