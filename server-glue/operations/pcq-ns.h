/* SPDX-License-Identifier: MIT */
/*
 * pcq-ns.h: what the operations (pcq-browse.c, pcq-validate.c,
 * pcq-data.c) share about the namespace they serve: how a counterset's
 * instances are addressed, finding a counter and matching an instance,
 * the Win32 code for a namespace failure, an instance's header block and
 * the machine-name notifications to providers.
 */
#ifndef PERFLIBD_PCQ_NS_H
#define PERFLIBD_PCQ_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <wchar.h>

#include "ns.h"
#include "pcq-buf.h"
#include "pcq-query.h"

/* How a counterset's instances are addressed (see pcq-core.c). */
enum pcq_cs_kind {
        PCQ_CS_SINGLE,          /* PERF_COUNTERSET_SINGLE_INSTANCE: exactly one instance */
        PCQ_CS_GLOBAL,          /* global aggregates: unnamed, every instance returned */
        PCQ_CS_MULTI,           /* multiple-instance kinds: addressed by name */
};
enum pcq_cs_kind pcq_cs_kind(const struct ns_counterset *cs);

/* The index of counter id in cs->counters, or -1. */
long pcq_counter_index(const struct ns_counterset *cs, uint32_t id);

/* Whether inst is one the item selects (by name and id, for named items). */
bool pcq_instance_matches(const struct pcq_item *it, const struct ns_instance *inst);

/* The clocks a data reply carries, read once per reply. */
#define PCQ_PERF_FREQ 1000000000ull     /* PerfTime counts nanoseconds of CLOCK_MONOTONIC */
struct pcq_clocks {
        uint64_t perf_time;             /* CLOCK_MONOTONIC, in 1/PCQ_PERF_FREQ s */
        uint64_t time_100ns;            /* CLOCK_REALTIME, 100 ns since 1601 (a FILETIME) */
        struct tm utc;
        uint16_t msec;
};
void pcq_clocks_read(struct pcq_clocks *ret);
/* The SYSTEMTIME of clk: 8 u16 fields, UTC. */
void pcq_emit_systemtime(struct pcq_buf *b, const struct pcq_clocks *clk);

/* A Win32 code for a -errno from the namespace. */
uint32_t pcq_win32_from_errno(int r);

/* A _PERF_INSTANCE_HEADER block: header, UTF-16LE name, zero padding to 8. */
void pcq_emit_instance(struct pcq_buf *b, const struct ns_instance *inst);

/* The same for an instance with name16: one claim, one copy of the name. */
static inline void pcq_emit_instance16(struct pcq_buf *b, const struct ns_instance *inst)
{
        uint32_t size = 8 + inst->name16_size;
        uint32_t head[2] = { htole32(size), htole32(inst->id) };
        uint8_t *p = pcq_buf_grab(b, size);

        if (!p)
                return;
        memcpy(p, head, 8);
        memcpy(p + 8, inst->name16, inst->name16_size);
}

/*
 * ns_notify for the request codes whose buffer is the machine name
 * (PERF_ENUMERATE_INSTANCES, PERF_COLLECT_START, PERF_COLLECT_END): a
 * NUL-terminated wchar_t string, L"" when the client sent none.
 */
void pcq_notify_machine(struct ns *ns, const struct ns_counterset *cs, uint32_t code,
                        const wchar_t *machine, size_t machine_len);

#endif /* PERFLIBD_PCQ_NS_H */
