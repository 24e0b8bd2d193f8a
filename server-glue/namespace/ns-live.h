/* SPDX-License-Identifier: MIT */
/*
 * ns-live.h: the real namespace (this folder's ns*.c) behind ns.h, over
 * libperflib's segment reader.  perflibd owns one; the eight operations read it through
 * ns.h between two ns_refresh() calls.
 */
#ifndef PERFLIBD_NS_LIVE_H
#define PERFLIBD_NS_LIVE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ns.h"

/*
 * A namespace over the providers announced in runtime_dir (copied).  Owned
 * by the caller (ns_free, which accepts NULL and closes every reader).
 */
int ns_new(const char *runtime_dir, struct ns **ret);

void ns_free(struct ns *ns);

/*
 * The installed providers (the registry) and, parallel to them, the uid
 * owning each (NULL: root owns them all): borrowed, and must stay valid
 * until the next ns_set_installed() or ns_free().  Takes effect at the next
 * ns_refresh().
 *
 * Who may publish a counterset: a provider's owner is the uid it runs as
 * (SO_PEERCRED of its socket); one whose owner cannot be learned publishes
 * nothing.  An installed counterset's copies are served when their owner
 * is its owner, root or the server's own user (its plugins).  A self-described one belongs to the first user
 * that published it for as long as one of that user's providers publishes
 * it.  Other copies are refused: neither merged, valued nor named.
 */
void ns_set_installed(struct ns *ns, const struct ctrpp_provider_desc *const *descs,
                      const uid_t *owners, size_t n);

/*
 * How many self-described countersets one user other than root and the
 * server's own may own (default NS_MAX_PER_USER_DEFAULT): those beyond are
 * refused, so that no user can grow the list past what clients enumerate.
 * Takes effect at the next rebuild; claims held already are kept.
 */
#define NS_MAX_PER_USER_DEFAULT 64
void ns_set_max_per_user(struct ns *ns, size_t n);

/*
 * Caps on what the namespace maps: one provider's segment, and all of them
 * together.  A provider over either is refused before its segment is
 * mapped (and logged once); one refused for the total is tried again at
 * later scans.  ns_new sets the defaults.
 */
#define NS_MAX_SEGMENT_DEFAULT  (UINT64_C(1) << 30)     /* 1 GiB */
#define NS_MAX_MAPPED_DEFAULT   (UINT64_C(1) << 40)     /* 1 TiB */
void ns_set_map_limits(struct ns *ns, uint64_t max_segment, uint64_t max_mapped);

/*
 * The namespace's timings (perflibd(8), SLOW PROVIDERS), in nanoseconds:
 * how old the look at a provider's state (stopped or not) may be, so a
 * stop shows this late at most; the first and the longest wait before a
 * provider that could not be added is tried again, doubling between them;
 * how long a refresh waits for the scan it asked for.  ns_new sets the
 * defaults.  ns_set_timings: 0, or -EINVAL when a retry wait is 0 or the
 * first is longer than the longest.
 */
struct ns_timings {
        uint64_t state_check, retry_min, retry_max, scan_wait;
};
#define NS_TIMINGS_DEFAULT \
        ((struct ns_timings){ 10000000, 100000000, 2000000000, 50000000 })
int ns_set_timings(struct ns *ns, const struct ns_timings *t);

/*
 * The cap on what queries hold (ns_mem_take): snapshots and the replies
 * made of them, all clients together.  0, a new namespace's, caps nothing.
 * ns_query_memory_used: the bytes held now, for tests.
 */
void ns_set_query_memory(struct ns *ns, size_t bytes);
size_t ns_query_memory_used(const struct ns *ns);

/*
 * Where the namespace reports what it refused or could not open: priority
 * is a syslog(3) level, format a constant (a rate-limiting key).  None by default.
 */
typedef void (*ns_log_fn)(void *userdata, int priority, const char *format, va_list ap);
void ns_set_log(struct ns *ns, ns_log_fn log, void *userdata);

/*
 * Told when a provider misses the collect bound (its callback or its
 * reference counters did not answer in time), with the pid it listens
 * from (0 when unknown): perflibd kills and restarts a plugin's host then.
 * Called from any thread, under the namespace lock: it must only hand the
 * pid on.  None by default.
 */
typedef void (*ns_missed_fn)(void *userdata, pid_t pid);
void ns_set_missed(struct ns *ns, ns_missed_fn missed, void *userdata);

/* The runtime directory changed (inotify): rescan it at the next refresh. */
void ns_runtime_changed(struct ns *ns);

/*
 * Brings the namespace up to date: drops providers that died, adds those
 * announced since the last scan and (one per call, with backoff) those
 * that could not be added before, and rebuilds the counterset list when
 * anything changed (invalidating every pointer ns_at/ns_find returned).
 * Cheap when nothing changed: one poll(2) per live provider.  With
 * discovery started (ns_start_discovery) it adds what that found instead.
 */
int ns_refresh(struct ns *ns);

/*
 * For a server that answers clients from several threads: after
 * ns_set_threaded(), every use of ns (these functions and ns.h's) happens
 * between ns_lock() and ns_unlock().  ns_snapshot and ns_notify let go of
 * the lock while they wait on a provider, so a hung provider holds up
 * only the requests that need it.  ns_wait_idle (lock held) returns once
 * no request is waiting on a provider: for changes that must not happen
 * under one, such as replacing the installed descriptions or unloading a
 * plugin.
 */
void ns_set_threaded(struct ns *ns);
void ns_lock(struct ns *ns);
void ns_unlock(struct ns *ns);
void ns_wait_idle(struct ns *ns);

/*
 * For a threaded server (after ns_set_threaded, before other threads use
 * ns, lock not held): a thread of the namespace scans the runtime
 * directory and opens new providers from then on, and ns_refresh only
 * asks it to and waits for it at most 50 ms, so a provider that is slow
 * to answer delays no request longer; it comes in with a later refresh.
 * Without it ns_refresh scans and opens itself.  0 or -errno;
 * ns_free stops it.
 */
int ns_start_discovery(struct ns *ns);

/* Live providers (segments) and countersets, for sd_notify's status line. */
size_t ns_providers(const struct ns *ns);

/*
 * Frees the memory the calling thread keeps from its last snapshot for its
 * next one (ns_snapshot_free keeps the arrays of one snapshot of at most
 * NS_SPARE_BYTES per thread): for a thread gone idle, and before it ends.
 */
#define NS_SPARE_BYTES (1024 * 1024)
void ns_thread_trim(void);

/*
 * Instance names replaced in the name cache but kept for a snapshot that
 * may still point at them (tests check that they stay bounded).
 */
size_t ns_parked_names(struct ns *ns);

#endif /* PERFLIBD_NS_LIVE_H */
