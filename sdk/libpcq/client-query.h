/* SPDX-License-Identifier: MIT */
/*
 * client-query.h: the query of pcq.h section 3 as its four files share
 * it: what a pcq_query and a pcq_counter hold, and the few helpers more
 * than one of them calls.  client-query.c adds counters, client-sample.c
 * turns one QueryCounterData answer into columns, client-collect.c updates
 * the counters from them and client-values.c computes what they show.
 * Nothing outside the query includes this; hidden symbols, cl_ prefix.
 */
#ifndef PCQ_CLIENT_QUERY_H
#define PCQ_CLIENT_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcq.h"

/* No index: a missing sid, entry or block. */
#define NONE SIZE_MAX

/* One identifier on the server. */
struct sid {
        GUID guid;
        uint32_t counter_id;
        uint32_t block;                 /* its block in QueryCounterData, UINT32_MAX if none */
};

/* One instance's value in one block of a sample. */
struct cell {
        char *name;                     /* owned; NULL for single-instance blocks */
        uint32_t id;
        uint32_t occurrence;            /* PDH's #n among equal names of the column */
        uint32_t next, tail;            /* chain of equal names (NO_CELL ends; tail: heads only) */
        uint64_t value;
};

#define NO_CELL UINT32_MAX

/* Open addressing over array indices (stored + 1, 0 is empty). */
struct ix {
        uint32_t *slot;                 /* owned */
        size_t mask;
};

struct column {
        uint32_t status;                /* Win32 status of the block, 0 if fine */
        struct cell *cells;             /* owned */
        size_t n, cap;
        struct ix names;                /* heads of the equal-name chains, by folded name */
};

/* One counter of a pcq_counter (several for a "\*" path). */
struct member {
        struct pcq_counter_reg reg;
        struct pcq_type_info ti;
        char *name, *help;              /* owned */
        size_t sid, base, time, freq, multi;    /* indices into q->sids, NONE if none */
};

/* One instance of one member, across the last two samples. */
struct entry {
        char *name;                     /* owned; "" for single-instance sets */
        uint32_t id, occurrence;
        size_t member;
        struct pcq_raw cur, prev;
        bool has_prev;
        bool live;                      /* in the last sample (else kept for history) */
};

struct item {
        size_t entry;                   /* NONE for _Total and missing instances */
        size_t member;
        bool total;
        uint32_t status;                /* for a missing instance */
};

struct pcq_counter {
        pcq_query *q;
        char *path;                     /* as added, owned */
        struct pcq_path p;              /* parsed, owned */
        char *object, *help;            /* owned */
        GUID guid;                      /* the counterset's */
        uint32_t instance_type;
        bool multi, aggregate, history;
        bool single_view;               /* global aggregate, no instance: Windows' one value */
        struct member *members;         /* owned */
        size_t n_members;
        struct entry *entries;          /* owned */
        size_t n_entries;
        char *exact;                    /* owned; the one instance name the path names, else NULL */
        struct item *items;             /* owned, parallel to values */
        struct pcq_value *values;       /* owned, with owned path and instance strings */
        size_t n_items;
};

struct pcq_query {
        pcq_conn *conn;                 /* borrowed */
        pcq_handle *h;                  /* owned */
        struct sid *sids;
        size_t n_sids;
        pcq_counter **counters;         /* owned */
        size_t n_counters;
        struct column *cols;            /* the last sample, one per sid of then */
        size_t n_cols;
        struct pcq_data_header hdr;
        bool collected;
        char *error;
};

/* ---- client-query.c ---- */

/* Replaces q's error sentence (pcq_query_error). */
void cl_query_set_error(pcq_query *q, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Frees ctr's items and their strings. */
void cl_items_clear(pcq_counter *ctr);
void cl_entries_free(struct entry *v, size_t n);

/* ---- client-sample.c ---- */

void cl_columns_free(struct column *cols, size_t n);
/* The sample in b as one column per sid of q (*ret_cols, the caller's). */
uint32_t cl_sample_parse(const pcq_query *q, const struct pcq_buf *b,
                         struct pcq_data_header *hdr, struct column **ret_cols);
/* The first cell of col named name (case-insensitive), NO_CELL if none. */
uint32_t cl_column_find(const struct column *col, const char *name);

/* FNV-1a of s, ASCII-folded when fold. */
uint32_t cl_str_hash(const char *s, bool fold);
/* Room for n indices at most half full. */
uint32_t cl_ix_init(struct ix *x, size_t n);
/* The next index in the probe sequence of hash h (*pos = SIZE_MAX first), NO_CELL at its end. */
uint32_t cl_ix_next(const struct ix *x, uint32_t h, size_t *pos);

#endif /* PCQ_CLIENT_QUERY_H */
