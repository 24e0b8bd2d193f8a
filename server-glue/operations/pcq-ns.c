/* SPDX-License-Identifier: MIT */
/*
 * pcq-ns.c: the namespace as the operations read it (pcq-ns.h): counterset
 * kinds, counter and instance lookups, the Win32 code for a namespace
 * failure, an instance's header block, the machine-name notifications.
 * Shared by pcq-browse.c, pcq-validate.c and pcq-data.c; the readings of
 * MS-PCQ they implement are listed at the top of pcq-core.c.
 */
#include <errno.h>

#include "pcq-ns.h"

enum pcq_cs_kind pcq_cs_kind(const struct ns_counterset *cs)
{
        if (cs->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE)
                return PCQ_CS_MULTI;
        if (cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE)
                return PCQ_CS_SINGLE;
        return PCQ_CS_GLOBAL;
}

long pcq_counter_index(const struct ns_counterset *cs, uint32_t id)
{
        for (uint32_t i = 0; i < cs->n_counters; i++)
                if (cs->counters[i].id == id)
                        return (long) i;
        return -1;
}

bool pcq_instance_matches(const struct pcq_item *it, const struct ns_instance *inst)
{
        if (!it->has_name)
                return true;
        if (it->instance_id != PCQ_ANY_INSTANCE_ID && it->instance_id != inst->id)
                return false;
        if (pcq_item_wildcard_instance(it))
                return true;
        if (inst->name16)
                return pcq_utf16_eq_le(it->name, it->name_len, inst->name16, inst->name16_size);
        return pcq_utf16_eq_wcs(it->name, it->name_len, inst->name,
                                inst->name ? inst->name_len : 0);
}

uint32_t pcq_win32_from_errno(int r)
{
        switch (r) {
        case -ENOMEM:
                return ERROR_OUTOFMEMORY;
        case -ETIMEDOUT:
                return ERROR_TIMEOUT;
        case -ENOENT:
                return ERROR_WMI_GUID_NOT_FOUND;
        default:
                return ERROR_GEN_FAILURE;
        }
}

void pcq_emit_instance(struct pcq_buf *b, const struct ns_instance *inst)
{
        size_t len = inst->name ? inst->name_len : 0;
        size_t start = b->len;

        if (inst->name16) {
                pcq_emit_instance16(b, inst);
                return;
        }
        /* Size is what the block came to: patched, so the name is read once. */
        pcq_buf_u32(b, 0);
        pcq_buf_u32(b, inst->id);
        pcq_buf_wcs(b, inst->name, len);
        pcq_buf_pad8(b);
        pcq_buf_patch_u32(b, start, (uint32_t) (b->len - start));
}

void pcq_notify_machine(struct ns *ns, const struct ns_counterset *cs, uint32_t code,
                        const wchar_t *machine, size_t machine_len)
{
        static const wchar_t none[] = L"";

        if (!machine) {
                machine = none;
                machine_len = 0;
        }
        /* Providers that do not answer are the namespace's concern; the
         * request goes on either way, as on Windows. */
        (void) ns_notify(ns, cs, code, machine, (uint32_t) ((machine_len + 1) * sizeof(wchar_t)));
}

/* Seconds from 1601-01-01 to 1970-01-01, both UTC. */
#define EPOCH_1601_TO_1970      11644473600ull

void pcq_clocks_read(struct pcq_clocks *ret)
{
        struct timespec mono = { 0 }, real = { 0 };
        time_t sec;

        (void) clock_gettime(CLOCK_MONOTONIC, &mono);
        (void) clock_gettime(CLOCK_REALTIME, &real);
        ret->perf_time = (uint64_t) mono.tv_sec * PCQ_PERF_FREQ + (uint64_t) mono.tv_nsec;
        ret->time_100ns = ((uint64_t) real.tv_sec + EPOCH_1601_TO_1970) * 10000000u +
                          (uint64_t) real.tv_nsec / 100u;
        sec = real.tv_sec;
        if (!gmtime_r(&sec, &ret->utc))
                memset(&ret->utc, 0, sizeof(ret->utc));
        ret->msec = (uint16_t) (real.tv_nsec / 1000000);
}

void pcq_emit_systemtime(struct pcq_buf *b, const struct pcq_clocks *clk)
{
        const struct tm *t = &clk->utc;

        pcq_buf_u16(b, (uint16_t) (t->tm_year + 1900));
        pcq_buf_u16(b, (uint16_t) (t->tm_mon + 1));
        pcq_buf_u16(b, (uint16_t) t->tm_wday);
        pcq_buf_u16(b, (uint16_t) t->tm_mday);
        pcq_buf_u16(b, (uint16_t) t->tm_hour);
        pcq_buf_u16(b, (uint16_t) t->tm_min);
        pcq_buf_u16(b, (uint16_t) t->tm_sec);
        pcq_buf_u16(b, clk->msec);
}
