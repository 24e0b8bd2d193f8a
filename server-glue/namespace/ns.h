/* SPDX-License-Identifier: MIT */
/*
 * ns.h: the namespace perflibd serves.  Installed manifests (the registry),
 * the self-descriptions of live provider segments and of loaded plugins all
 * become one list of countersets, each with its counters' metadata and, on
 * request, a snapshot of its live instances merged across every provider
 * that publishes it.
 *
 * The eight operations (operations/) see only this interface; ns-live.h is the
 * real one over libperflib's reader, and the core's unit tests link a fake.
 *
 * Lifetime: the counterset pointers handed out stay valid until the next
 * ns_refresh() (perflibd refreshes between requests, never during one).
 * Callers that keep a reference across requests (query handles) keep the
 * GUID and counter ids, never pointers.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFLIBD_NS_H
#define PERFLIBD_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "perflib.h"

struct ns;

/* An id attribute the manifest leaves out. */
#define NS_NO_ID 0xFFFFFFFFu

struct ns_counter {
        uint32_t id;
        uint32_t type;                  /* PERF_COUNTER_* */
        uint64_t attrib;                /* PERF_ATTRIB_* */
        uint32_t size;                  /* bytes of the raw value: 4 or 8 (0: zero-size types) */
        uint32_t detail_level;          /* PERF_DETAIL_NOVICE or PERF_DETAIL_ADVANCED */
        int32_t default_scale;
        uint32_t base_id;               /* NS_NO_ID when absent */
        uint32_t perf_time_id;
        uint32_t perf_freq_id;
        uint32_t multi_id;
        uint32_t aggregate;             /* PERF_AGGREGATE_*; PERF_AGGREGATE_UNDEFINED when absent */
        const char *name;               /* UTF-8, never NULL ("" when unknown) */
        const char *description;        /* UTF-8, never NULL */
};

struct ns_counterset {
        GUID guid;
        uint32_t instance_type;         /* PERF_COUNTERSET_* */
        uint32_t detail_level;          /* the lowest of its counters' (novice wins) */
        const char *name;               /* UTF-8, never NULL */
        const char *description;        /* UTF-8, never NULL */
        GUID provider_guid;
        const char *provider_name;      /* UTF-8, never NULL */
        uint32_t n_counters;
        const struct ns_counter *counters;
        bool installed;                 /* listed in the registry */
        bool live;                      /* published by at least one live provider or plugin */
};

/* Every counterset, in a stable order (by GUID), valid until ns_refresh. */
size_t ns_count(const struct ns *ns);
const struct ns_counterset *ns_at(const struct ns *ns, size_t i);
/* NULL when no counterset has this GUID. */
const struct ns_counterset *ns_find(const struct ns *ns, const GUID *guid);

/*
 * One live instance: values[i] is the raw value of cs->counters[i],
 * zero-extended, already dereferenced for reference counters.  name is
 * NUL-terminated (name_len characters without the NUL); single-instance
 * countersets have one instance named "" with id 0... as the provider made it.
 * name16, when not NULL, is the same name as a client receives it:
 * UTF-16LE, NUL-terminated, zero-padded to a multiple of 8 (name16_size
 * bytes), encoded as pcq_buf_wcs would encode name.
 */
struct ns_instance {
        uint32_t id;
        uint32_t name_len;
        const wchar_t *name;
        const uint64_t *values;
        const uint8_t *name16;
        uint32_t name16_size;
};
struct ns_snapshot {
        uint32_t n_instances;
        uint32_t n_counters;            /* of the counterset when taken */
        const struct ns_instance *instances;
};

/* Dereference reference counters (through each provider's collect service
 * when out of process, waiting at most the collect bound). */
#define NS_SNAPSHOT_COLLECT 0x1u

/*
 * A consistent snapshot of every live instance of cs, from every provider
 * that publishes it (installed-only countersets give an empty snapshot).
 * A provider that is stopped, or missed the collect bound within the last
 * second, is left out: its instances are absent, never stale values.
 *
 * Concurrent requests share it: one taken with the same flags that began
 * after this call did is handed out again, so a request never gets values
 * read before it arrived, and one that arrives while a snapshot of cs is
 * being taken waits for it and then shares the next one with every other
 * request that arrived meanwhile.  A snapshot is immutable; each caller
 * holds a reference (ns_snapshot_free drops it, accepts NULL), under the
 * namespace lock when threaded.  Its memory is paid from the query memory
 * (ns_mem_take): -ENOMEM when that is spent.
 */
int ns_snapshot(struct ns *ns, const struct ns_counterset *cs, unsigned flags,
                struct ns_snapshot **ret);
void ns_snapshot_free(struct ns_snapshot *s);

/*
 * What QueryCounterData collects: PERF_COLLECT_START to cs's providers
 * (ns_notify, with machine as its buffer: machine_len wchar_t and a NUL,
 * L"" for NULL), ns_snapshot(NS_SNAPSHOT_COLLECT), PERF_COLLECT_END,
 * shared as ns_snapshot is.  A request that shares another's collection
 * notifies nobody: the providers were told once, with the machine name of
 * the request that took it.
 */
int ns_collect(struct ns *ns, const struct ns_counterset *cs, const wchar_t *machine,
               size_t machine_len, struct ns_snapshot **ret);

/*
 * The memory queries hold, all clients together: snapshots (paid by the
 * namespace) and the reply buffers the operations make of them, paid
 * before they are allocated and given back once freed.  0, or -ENOMEM
 * (logged, rate-limited) when bytes more would pass the cap, so that a
 * request is refused rather than the server grown.  ns_mem_try does not
 * log: for an allocation that has a smaller one to fall back on, or
 * whose refusal refuses nothing.  Thread-safe.
 */
int ns_mem_take(struct ns *ns, size_t bytes);
int ns_mem_try(struct ns *ns, size_t bytes);
void ns_mem_give(struct ns *ns, size_t bytes);

/*
 * Runs the ControlCallback of every live provider of cs that registered one
 * (callback="custom"), with request_code (PERF_ADD_COUNTER,
 * PERF_REMOVE_COUNTER, PERF_ENUMERATE_INSTANCES, PERF_COLLECT_START,
 * PERF_COLLECT_END) and the buffer as Windows passes it (for add/remove a
 * PERF_COUNTER_IDENTITY and its strings).  Each provider is waited for at
 * most the collect bound; one that does not answer is skipped, not waited
 * for again within this call.  Returns 0, or -errno when none could be told.
 */
int ns_notify(struct ns *ns, const struct ns_counterset *cs, uint32_t request_code,
              const void *buffer, uint32_t size);

#endif /* PERFLIBD_NS_H */
