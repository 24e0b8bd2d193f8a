/* SPDX-License-Identifier: MIT */
/*
 * pcq-internal.h: what the files of the core share.  pcq-core.c checks the
 * session and dispatches; pcq-browse.c serves opnums 0-2, pcq-validate.c
 * opnums 5 and 7, pcq-data.c opnum 6.  Every pcq_op_* function is called
 * with an allowed session and a zeroed *out, and returns a Win32 code.
 */
#ifndef PERFLIBD_PCQ_INTERNAL_H
#define PERFLIBD_PCQ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "ns.h"
#include "pcq-buf.h"
#include "pcq-core.h"
#include "pcq-query.h"

/* Sizes of the fixed MS-PCQ structures (section 2.2.4). */
#define PCQ_COUNTERSET_REG_INFO_SIZE    32u
#define PCQ_COUNTER_REG_INFO_SIZE       48u
#define PCQ_COUNTER_IDENTIFIER_SIZE     40u
#define PCQ_DATA_HEADER_SIZE            48u
#define PCQ_COUNTER_HEADER_SIZE         16u

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

/* A Win32 code for a -errno from the namespace. */
uint32_t pcq_win32_from_errno(int r);

/*
 * A serializer: puts one whole lpData buffer into b.  pcq_emit runs it
 * twice, measuring then writing, so it must put the same bytes both times
 * and must not fail.
 */
typedef void (*pcq_emit_fn)(struct pcq_buf *b, const void *ctx);

/*
 * The pdwRtnSize rule: measures what fn puts; more than limit (the IDL's
 * bound on dwInSize, so no client could ever receive it) is
 * ERROR_OUTOFMEMORY; more than in_size is ERROR_NOT_ENOUGH_MEMORY with
 * rtn_size the size needed and out_size 0; otherwise out gets the bytes.
 */
uint32_t pcq_emit(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                  struct pv2_out *out);

/*
 * pcq_emit for a buffer that is usually about as big as last time (a query
 * read again and again): writes straight into an allocation of *hint bytes
 * and some slack, one pass instead of two, and falls back to pcq_emit when
 * that is too small.  *hint becomes the size needed this time.  With reuse
 * (not NULL), out->data is reuse's buffer whenever it is not lent out.
 */
uint32_t pcq_emit_hinted(pcq_emit_fn fn, const void *ctx, uint32_t in_size, uint32_t limit,
                         size_t *hint, struct pcq_reuse *reuse, struct pv2_out *out);

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

uint32_t pcq_op_enumerate_counterset(struct ns *ns, uint32_t in_size, struct pv2_out *out);
uint32_t pcq_op_registration_info(struct ns *ns, const GUID *guid, uint32_t code,
                                  uint32_t lcid, uint32_t in_size, struct pv2_out *out);
uint32_t pcq_op_enumerate_instances(struct ns *ns, const wchar_t *machine, size_t machine_len,
                                    const GUID *guid, uint32_t in_size, struct pv2_out *out);
uint32_t pcq_op_counter_info(const struct pcq_query *q, uint32_t in_size, struct pv2_out *out);
uint32_t pcq_op_counter_data(struct ns *ns, struct pcq_query *q, uint32_t in_size,
                             struct pcq_reuse *reuse, struct pv2_out *out);
uint32_t pcq_op_validate(struct ns *ns, struct pcq_query *q, uint8_t *data, uint32_t in_size,
                         bool add);

#endif /* PERFLIBD_PCQ_INTERNAL_H */
