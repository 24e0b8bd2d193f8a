/* SPDX-License-Identifier: MIT */
/*
 * perflib-description.h: a provider's self-description, the Linux
 * counterpart of the string resources Windows ctrpp writes into a .rc file.
 *
 * ctrpp's resource output (ctrpp -rc, by default MANIFEST_strings.c) defines
 * one const struct ctrpp_provider_desc per provider: every counterset and
 * counter name and description with the resource ids Windows gives them,
 * and the manifest metadata a PERF_COUNTER_INFO template does not carry
 * (uri, baseID, perfTimeID, perfFreqID, multiCounterID, aggregate,
 * providerName, applicationIdentity).  The header ctrpp writes hands it to
 * pl_set_provider_description() in CounterInitialize(), which publishes it
 * with the provider's segment, so that perflibd serves the provider's names
 * and descriptions with no install step.
 *
 * Strings are UTF-8.  Included by perflib.h.
 */
#ifndef PERFLIB_PERFLIB_DESCRIPTION_H
#define PERFLIB_PERFLIB_DESCRIPTION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Goes up whenever the layout of these structs changes. */
#define CTRPP_DESCRIPTION_VERSION 1

/* An id attribute the manifest leaves out (never a counter id: perflib refuses it). */
#define CTRPP_NO_ID 0xFFFFFFFFu
/* No aggregate attribute; otherwise a PERF_AGGREGATE_* value. */
#define CTRPP_NO_AGGREGATE (-1)

/* Laid out as a GUID. */
struct ctrpp_guid {
        uint32_t data1;
        uint16_t data2;
        uint16_t data3;
        uint8_t data4[8];
};

/* Strings are UTF-8, NULL when the manifest has none. */
struct ctrpp_counter_desc {
        uint32_t id;
        uint32_t type;                  /* PERF_COUNTER_* */
        uint64_t attrib;                /* PERF_ATTRIB_* */
        uint32_t size;                  /* of the value: 4, 8, or 0 */
        uint32_t detail_level;          /* PERF_DETAIL_* */
        int32_t default_scale;
        int32_t aggregate;              /* PERF_AGGREGATE_* or CTRPP_NO_AGGREGATE */
        uint32_t base_id;               /* the ids below: CTRPP_NO_ID when absent */
        uint32_t perf_time_id;
        uint32_t perf_freq_id;
        uint32_t multi_counter_id;
        uint32_t name_id;               /* string resource ids, as Windows numbers them */
        uint32_t description_id;
        const char *symbol;
        const char *uri;
        const char *name;
        const char *description;
};

struct ctrpp_counterset_desc {
        struct ctrpp_guid guid;
        uint32_t instance_type;         /* PERF_COUNTERSET_* */
        uint32_t name_id;
        uint32_t description_id;
        uint32_t n_counters;
        const struct ctrpp_counter_desc *counters;
        const char *symbol;
        const char *uri;
        const char *name;
        const char *description;
        const char *instances;          /* the instances attribute, as written */
};

struct ctrpp_provider_desc {
        uint32_t version;               /* CTRPP_DESCRIPTION_VERSION */
        uint32_t size;                  /* sizeof(struct ctrpp_provider_desc) */
        struct ctrpp_guid guid;
        uint32_t callback_custom;       /* callback="custom" */
        uint32_t kernel_mode;           /* providerType="kernelMode" */
        uint32_t resource_base;         /* CTRPP_NO_ID when absent */
        uint32_t n_countersets;
        const struct ctrpp_counterset_desc *countersets;
        const char *name;               /* providerName */
        const char *symbol;
        const char *application_identity;
        const char *schema_version;
        const char *manifest;           /* the manifest's file name */
};

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_PERFLIB_DESCRIPTION_H */
