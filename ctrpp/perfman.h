/* SPDX-License-Identifier: MIT */
/*
 * libperfman: the counter-manifest model, parser and validator shared by
 * ctrpp, lodctr and perflibd.  Internal (not installed, not API).
 *
 * Ownership: pm_parse_file returns a manifest owned by the caller and freed
 * with pm_manifest_free, which frees every string and array in it.  The
 * diagnostics list is owned by whoever made it (pm_diags_new/free).
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFMAN_H
#define PERFMAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perflib.h"    /* GUID, PERF_* values */

/* ---- diagnostics ---- */

enum pm_severity { PM_WARNING, PM_ERROR };

struct pm_loc {
        const char *file;       /* borrowed from the manifest */
        unsigned line;          /* 1-based; 0 = unknown */
        unsigned col;           /* 1-based; 0 = unknown */
};

struct pm_diag {
        enum pm_severity severity;
        struct pm_loc loc;
        char *message;          /* without "error: ", owned */
        size_t order;           /* when it was found: ties keep this order */
};

struct pm_diags {
        struct pm_diag *items;
        size_t n, cap;
        size_t n_errors, n_warnings;
        bool werror;            /* warnings count as errors */
};

struct pm_diags *pm_diags_new(void);
void pm_diags_free(struct pm_diags *d);
/* Adds one diagnostic; out of memory is remembered as an error. */
void pm_diag(struct pm_diags *d, enum pm_severity sev, const struct pm_loc *loc,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Sorted by file, line, column (stable), then printed as gcc does. */
void pm_diags_print(struct pm_diags *d, FILE *f);
/* True when the manifest must be rejected (errors, or warnings with werror). */
bool pm_diags_failed(const struct pm_diags *d);

/* ---- the model ---- */

/* An optional unsigned attribute. */
struct pm_u32 {
        bool set;
        uint32_t value;
        struct pm_loc loc;      /* of the attribute */
};

enum pm_aggregate {
        PM_AGG_ABSENT = -1,
        PM_AGG_UNDEFINED = PERF_AGGREGATE_UNDEFINED,
        PM_AGG_SUM = PERF_AGGREGATE_TOTAL,
        PM_AGG_AVG = PERF_AGGREGATE_AVG,
        PM_AGG_MIN = PERF_AGGREGATE_MIN,
        PM_AGG_MAX = PERF_AGGREGATE_MAX,
};

struct pm_counter {
        struct pm_loc loc;              /* of the <counter> element */
        uint32_t id;
        char *symbol;                   /* NULL when absent */
        char *uri;
        char *name;                     /* resolved ($(string.X)); NULL when absent */
        char *description;              /* resolved; NULL when absent */
        struct pm_u32 name_id, description_id;
        char *type_name;                /* as written, e.g. "perf_counter_rawcount" */
        uint32_t type;                  /* its PERF_* value */
        uint32_t size;                  /* 4 or 8 from the size bits, 0 for zero-size types */
        struct pm_u32 base_id, perf_time_id, perf_freq_id, multi_counter_id;
        uint32_t detail_level;          /* PERF_DETAIL_NOVICE or PERF_DETAIL_ADVANCED */
        int32_t default_scale;
        enum pm_aggregate aggregate;
        uint64_t attrib;                /* PERF_ATTRIB_* bits */
        struct pm_loc attrib_loc[5];    /* of each counterAttribute, by bit index */
        char *struct_name;              /* "struct" attribute, NULL when absent */
        char *field;                    /* NULL when absent */
        /*
         * The <struct> whose field this counter is, as pm_validate resolved
         * it: 1-based index into the counterset's structs, 0 = none.
         */
        uint32_t struct_ref;
        /* Resource ids as Windows numbers them (filled by pm_assign_ids). */
        uint32_t res_name_id, res_description_id;
};

struct pm_struct {
        struct pm_loc loc;
        char *name;
        char *type;
};

struct pm_counterset {
        struct pm_loc loc;
        GUID guid;
        char *guid_text;                /* as written */
        char *symbol;                   /* NULL when absent */
        char *uri;
        char *name;                     /* resolved */
        char *description;              /* resolved */
        struct pm_u32 name_id, description_id;
        char *instances_name;           /* as written; "single" when absent */
        uint32_t instance_type;         /* PERF_COUNTERSET_* */
        struct pm_struct *structs;
        size_t n_structs;
        struct pm_counter *counters;
        size_t n_counters;
        uint32_t res_name_id, res_description_id;
};

struct pm_provider {
        struct pm_loc loc;
        GUID guid;
        char *guid_text;
        char *symbol;                   /* NULL when absent */
        char *name;                     /* providerName; "Counters" when absent */
        char *application_identity;
        bool callback_custom;
        bool kernel_mode;
        struct pm_u32 resource_base;
        struct pm_counterset *countersets;
        size_t n_countersets;
};

struct pm_manifest {
        char *file;                     /* the path given to pm_parse_file */
        char *schema_version;           /* NULL when absent */
        struct pm_loc counters_loc;     /* of the <counters> element */
        struct pm_provider *providers;
        size_t n_providers;
};

/*
 * Reads and validates a manifest: well-formedness, the embedded counter
 * schema, and then every semantic rule (pm_validate).  Every problem found is
 * added to d.  Returns 0 and the model even when d holds errors, as long as a
 * model could be built (so a caller can list everything wrong at once);
 * -EBADMSG when the document could not be read into a model at all, -errno
 * on a system error.
 */
int pm_parse_file(const char *path, struct pm_diags *d, struct pm_manifest **ret);
/* The same over a buffer; name is what diagnostics call it. */
int pm_parse_memory(const char *name, const void *data, size_t size, struct pm_diags *d,
                    struct pm_manifest **ret);
/* Accepts NULL. */
void pm_manifest_free(struct pm_manifest *m);

/*
 * The semantic rules (MS-PCQ 2.2.4.2 and the schema's prose); called by
 * pm_parse_*.  Also resolves what the rules look up (struct_ref).
 */
void pm_validate(struct pm_manifest *m, struct pm_diags *d);

/* Fills the res_*_id fields the way Windows ctrpp numbers its string resources. */
void pm_assign_ids(struct pm_manifest *m);

/* ---- tables ---- */

/* "perf_counter_rawcount" -> PERF_COUNTER_RAWCOUNT; false when unknown. */
bool pm_counter_type(const char *name, uint32_t *ret_type);
/* PERF_COUNTER_RAWCOUNT -> "PERF_COUNTER_RAWCOUNT"; NULL when unknown. */
const char *pm_counter_type_macro(uint32_t type);
/* "{ab8e1320-...}" -> GUID; false when malformed. */
bool pm_parse_guid(const char *text, GUID *ret);

#endif
