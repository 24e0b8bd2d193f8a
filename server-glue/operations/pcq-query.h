/* SPDX-License-Identifier: MIT */
/*
 * pcq-query.h: the state behind one RPC_HQUERY (MS-PCQ 3.1.1.5): the
 * machine name the client opened it with and its list of counter
 * specifications, in the order their blocks come out of QueryCounterData.
 * Only GUIDs, ids and names are kept, never pointers into the namespace,
 * because a query lives across ns_refresh() (the namespace itself, whose
 * query memory pays for a kept reply, outlives it).  Internal to perflibd.
 */
#ifndef PERFLIBD_PCQ_QUERY_H
#define PERFLIBD_PCQ_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "ns.h"
#include "perflib.h"

/* Bounds on one query, so that no client can make it grow without end. */
#define PCQ_QUERY_MAX_ITEMS     8192u
#define PCQ_MAX_NAME_UNITS      2048u   /* UTF-16 units of an instance name, NUL included */

/* PERF_COUNTER_IDENTIFIER.InstanceId that matches any instance id (Windows' perflib.h). */
#define PCQ_ANY_INSTANCE_ID     0xFFFFFFFFu

/*
 * One counter specification.  has_name is false for countersets that are
 * not multiple-instance: their identifiers carry no instance name, and one
 * sent anyway is dropped when the item is made.
 */
struct pcq_item {
        GUID guid;
        uint32_t counter_id;            /* PERF_WILDCARD_COUNTER for all */
        uint32_t instance_id;           /* PCQ_ANY_INSTANCE_ID for any */
        bool has_name;
        uint32_t name_len;              /* UTF-16 units, without the NUL */
        uint16_t *name;                 /* owned; NULL when !has_name */
};

struct pcq_query {
        wchar_t *machine;               /* owned, NUL-terminated; L"" when none came */
        size_t machine_len;
        struct pcq_item *items;         /* owned, n_items of them */
        size_t n_items;
        size_t cap;
        size_t data_size_hint;          /* bytes of the last QueryCounterData answer */
        size_t max_items;               /* the session's cap; 0 or above: PCQ_QUERY_MAX_ITEMS */

        /*
         * The reply of a QueryCounterData that did not fit the client's
         * buffer (the sizing call), for the call that follows with the size
         * it was told: answered from it, the two return the same sample and
         * the collection runs once.  At most one, owned; see pcq_query_kept.
         */
        uint8_t *kept;
        uint32_t kept_size;
        uint64_t kept_at;               /* CLOCK_MONOTONIC ns */
        struct ns *kept_ns;             /* whose query memory paid for it (borrowed) */
};

/* How long a kept reply may answer the next call: a client asks again at once. */
#define PCQ_KEPT_REPLY_NS       UINT64_C(1000000000)

/*
 * A new empty query.  machine: the szMachine the client sent (UTF-16LE
 * units, NUL-terminated) or NULL.  *ret owned by the caller
 * (pcq_query_free).  0 or -ENOMEM.
 */
int pcq_query_new(const uint16_t *machine, struct pcq_query **ret);
/* Frees the query and its items; accepts NULL. */
void pcq_query_free(struct pcq_query *q);

/*
 * Keeps data (size bytes, malloc'ed, now owned by q, paid from ns's query
 * memory) as q's kept reply, freeing any older one; what is freed is given
 * back to the query memory.
 */
void pcq_query_keep(struct pcq_query *q, struct ns *ns, uint8_t *data, uint32_t size);

/*
 * Takes q's kept reply when it is younger than PCQ_KEPT_REPLY_NS and fits
 * in in_size bytes: 1 with *ret_data the caller's (*ret_size bytes, still
 * paid for), else 0.  Either way q keeps none afterwards.
 */
int pcq_query_take_kept(struct pcq_query *q, uint32_t in_size, uint8_t **ret_data,
                        uint32_t *ret_size);

/* Frees q's kept reply: any other call on the handle makes it stale. */
void pcq_query_forget(struct pcq_query *q);

/* The instance name is "*", PERF_WILDCARD_INSTANCE. */
bool pcq_item_wildcard_instance(const struct pcq_item *it);

/*
 * Whether a and b name the same specification: same counterset and
 * counter, and (for items with names) the same instance name and id.
 */
bool pcq_item_same(const struct pcq_item *a, const struct pcq_item *b);

/* The index of the item that is the same as key, or -1. */
long pcq_query_find(const struct pcq_query *q, const struct pcq_item *key);

/*
 * Appends a copy of it (its name copied too).  0, -E2BIG when the query
 * holds max_items (at most PCQ_QUERY_MAX_ITEMS) already, -ENOMEM.
 */
int pcq_query_append(struct pcq_query *q, const struct pcq_item *it);

/* Removes item i, keeping the order of the others. */
void pcq_query_remove(struct pcq_query *q, size_t i);

#endif /* PERFLIBD_PCQ_QUERY_H */
