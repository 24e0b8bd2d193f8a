/* SPDX-License-Identifier: MIT */
/*
 * ns-map.h: what the namespace maps (ns-map.c).  Every provider's segment
 * is opened through ns_map_open, which refuses, before anything is mapped,
 * a segment over the per-segment cap or over what is left of the total
 * cap, and logs each refused provider once; ns_map_release gives its bytes
 * back.  A shortage of descriptors or memory met opening a provider or
 * scanning for them schedules another scan and is said once (ns_map_short).
 */
#ifndef PERFLIBD_NS_MAP_H
#define PERFLIBD_NS_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "ns-internal.h"
#include "reader.h"

/* A provider that is not served for its size, remembered so as to log it once. */
struct ns_refused {
        char *path;
        uint64_t dev, ino;              /* of its socket: a new provider there is new */
        bool too_big;                   /* over the per-segment cap: not even asked again */
};

/*
 * Opens the provider at path: 0 with *ret_r and its mapped size, or -errno.
 * unlocked: ns->lock is held and let go of while it waits on the provider
 * (only the discovery thread, ns-disc.c, opens that way).
 */
int ns_map_open(struct ns *ns, const char *path, bool unlocked, struct pl_reader **ret_r,
                uint64_t *ret_size);
void ns_map_release(struct ns *ns, uint64_t size);
void ns_map_free(struct ns *ns);

/*
 * A shortage of descriptors or memory (-EMFILE, -ENFILE, -ENOMEM,
 * -ENOBUFS) kept what, a provider's socket or the runtime directory at
 * path, from being opened: whichever thread met it, and whether or not a
 * scan was under way, a scan is due a second later (ns_map_retry_at), and
 * the first shortage before that scan is logged.  ns_map_open reports its
 * own; a scan reports the directory's.  ns_map_retry_take: whether that
 * scan is due now, and if so it is taken (a shortage after re-arms it).
 */
bool ns_map_shortage(int err);
void ns_map_short(struct ns *ns, const char *what, const char *path, int err);
bool ns_map_retry_take(struct ns *ns);
uint64_t ns_map_retry_at(const struct ns *ns);       /* CLOCK_MONOTONIC ns, 0: none */

#endif /* PERFLIBD_NS_MAP_H */
