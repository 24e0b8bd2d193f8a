/* SPDX-License-Identifier: MIT */
/*
 * ns-map.h: what the namespace maps (ns-map.c).  Every provider's segment
 * is opened through ns_map_open, which refuses, before anything is mapped,
 * a segment over the per-segment cap or over what is left of the total
 * cap, and logs each refused provider once; ns_map_release gives its bytes
 * back.  It also counts the providers a shortage of descriptors or memory
 * kept from opening, for ns.c to retry them and say so.
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
 * Around a scan (and the opening of what it found): the providers a
 * shortage kept out are counted, logged, and the scan is due again
 * (ns_map_retry_due, ns_map_retry_at) a second later.
 */
void ns_map_scan_begin(struct ns *ns);
void ns_map_scan_end(struct ns *ns);
bool ns_map_retry_due(const struct ns *ns);
uint64_t ns_map_retry_at(const struct ns *ns);       /* CLOCK_MONOTONIC ns, 0: none */

/* Through the daemon's log when it gave one (ns_set_log); rate-limited there. */
void ns_log(struct ns *ns, int priority, const char *format, ...)
        __attribute__((format(printf, 3, 4)));

#endif /* PERFLIBD_NS_MAP_H */
