/* SPDX-License-Identifier: MIT */
/*
 * fake-ns.h: a namespace (ns.h) the test scripts: countersets with their
 * counters, live instances with values, and a log of every ns_notify and
 * ns_snapshot call, so that the core can be driven without segments.
 * Allocation failures abort: this is test code.
 */
#ifndef FAKE_NS_H
#define FAKE_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "ns.h"

struct ns *fake_ns_new(void);
void fake_ns_free(struct ns *ns);

/*
 * Adds a counterset (copied; its counters and strings are borrowed and
 * must outlive the namespace).  Countersets keep the order they were added
 * in.  Removing one also drops its instances.
 */
void fake_ns_add(struct ns *ns, const struct ns_counterset *cs);
void fake_ns_remove(struct ns *ns, const GUID *guid);

/* A live instance; name and values (cs->n_counters of them) are copied. */
void fake_ns_add_instance(struct ns *ns, const GUID *cs, uint32_t id, const wchar_t *name,
                          const uint64_t *values);
/* Removes the instance with this id and name; false when there is none. */
bool fake_ns_remove_instance(struct ns *ns, const GUID *cs, uint32_t id, const wchar_t *name);

/* After copying the values into a snapshot, add 1 to every stored value. */
void fake_ns_bump_on_snapshot(struct ns *ns, bool on);
/* Make ns_snapshot fail with err (a -errno), or succeed again with 0. */
void fake_ns_fail_snapshots(struct ns *ns, int err);
/* Make ns_snapshot report n_counters one less than the counterset has. */
void fake_ns_short_snapshots(struct ns *ns, bool on);

/*
 * The query memory (ns_mem_take): a cap (0, the default: none) and the
 * bytes taken and not given back.  Snapshots are not paid from it here.
 */
void fake_ns_set_memory(struct ns *ns, size_t cap);
size_t fake_ns_memory_used(const struct ns *ns);

enum fake_event_kind {
        FAKE_NOTIFY,
        FAKE_SNAPSHOT,
};

struct fake_event {
        enum fake_event_kind kind;
        GUID cs;
        uint32_t code;                  /* request code, or snapshot flags */
        uint8_t *buffer;                /* a copy of the notify buffer (NULL for snapshots) */
        uint32_t size;
};

/* The calls logged since the last fake_ns_clear_events. */
size_t fake_ns_events(const struct ns *ns, const struct fake_event **ret);
void fake_ns_clear_events(struct ns *ns);
/* How many logged events have this kind and code. */
size_t fake_ns_count(const struct ns *ns, enum fake_event_kind kind, uint32_t code);

#endif
