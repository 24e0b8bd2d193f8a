/* SPDX-License-Identifier: MIT */
/*
 * PDH's query model over one server query handle.
 *
 * Every counter a pcq_counter needs, its own and the companions its type
 * asks for (BaseCounterId, PerfTimeId, PerfFreqId, MultiId), is one
 * identifier on the server, shared by all counters of the query.  Multiple-
 * instance countersets are always asked for with instance "*" and the
 * instances picked here, so one QueryCounterData answers every path, an
 * instance that appears is seen at the next collect, and a named instance
 * that is not live yet is simply absent (PDH_CSTATUS_NO_INSTANCE), not an
 * error of ValidateCounters.
 *
 * Per counter the query keeps, for every instance of the last sample, the
 * raw values of the last two samples (matched by name and id), so the rate
 * types have their previous sample and the history aggregate keeps the
 * last values of instances that vanished.  Values are computed when asked
 * for, with the caller's flags, from those raw pairs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-conn.h"
#include "client-path.h"
#include "client-resolve.h"
#include "client-wire.h"
#include "perflib.h"

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

/* A counter's items of the previous sample, while the new ones are built. */
struct prev_items {
        struct item *items;
        struct pcq_value *values;
        size_t n;
};

struct pcq_counter {
        pcq_query *q;
        char *path;                     /* as added, owned */
        struct pcq_path p;              /* parsed, owned */
        char *object, *help;            /* owned */
        GUID guid;                      /* the counterset's */
        uint32_t instance_type;
        bool multi, aggregate, history;
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

static void cl_query_set_error(pcq_query *q, const char *fmt, ...)
{
        va_list ap;

        free(q->error);
        va_start(ap, fmt);
        if (vasprintf(&q->error, fmt, ap) < 0)
                q->error = NULL;
        va_end(ap);
}

/* ---- lifetime ---- */

PCQ_API uint32_t pcq_query_new(pcq_conn *c, pcq_query **ret)
{
        pcq_query *q;
        uint32_t e;

        if (!c || !ret)
                return PDH_INVALID_ARGUMENT;
        q = calloc(1, sizeof(*q));
        if (!q)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        q->conn = c;
        e = pcq_open(c, &q->h);
        if (e) {
                free(q);
                return e;
        }
        *ret = q;
        return ERROR_SUCCESS;
}

static void cl_columns_free(struct column *cols, size_t n)
{
        for (size_t i = 0; cols && i < n; i++) {
                for (size_t j = 0; j < cols[i].n; j++)
                        free(cols[i].cells[j].name);
                free(cols[i].cells);
                free(cols[i].names.slot);
        }
        free(cols);
}

static void cl_items_clear(pcq_counter *ctr)
{
        for (size_t i = 0; i < ctr->n_items; i++) {
                free((char *) ctr->values[i].path);
                free((char *) ctr->values[i].instance);
        }
        free(ctr->values);
        free(ctr->items);
        ctr->values = NULL;
        ctr->items = NULL;
        ctr->n_items = 0;
}

static void cl_entries_free(struct entry *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i].name);
        free(v);
}

static void counter_free(pcq_counter *ctr)
{
        if (!ctr)
                return;
        cl_items_clear(ctr);
        cl_entries_free(ctr->entries, ctr->n_entries);
        for (size_t i = 0; i < ctr->n_members; i++) {
                free(ctr->members[i].name);
                free(ctr->members[i].help);
        }
        free(ctr->members);
        pcq_path_done(&ctr->p);
        free(ctr->exact);
        free(ctr->path);
        free(ctr->object);
        free(ctr->help);
        free(ctr);
}

PCQ_API void pcq_query_free(pcq_query *q)
{
        if (!q)
                return;
        for (size_t i = 0; i < q->n_counters; i++)
                counter_free(q->counters[i]);
        free(q->counters);
        cl_columns_free(q->cols, q->n_cols);
        free(q->sids);
        pcq_close(q->h);
        free(q->error);
        free(q);
}

PCQ_API const char *pcq_query_error(const pcq_query *q)
{
        return q && q->error ? q->error : "";
}

PCQ_API uint64_t pcq_query_sample_time(const pcq_query *q)
{
        return q ? q->hdr.perf_time_100ns : 0;
}

/* ---- adding ---- */

static size_t sid_find(const pcq_query *q, const GUID *g, uint32_t id)
{
        for (size_t i = 0; i < q->n_sids; i++)
                if (q->sids[i].counter_id == id && cl_guid_eq(&q->sids[i].guid, g))
                        return i;
        return NONE;
}

/* The sid of (g, id), appending it (and its request to *ids) when new. */
static uint32_t sid_want(pcq_query *q, const struct cl_set *s, uint32_t id, struct pcq_buf *ids,
                         size_t *ret)
{
        bool multi = s->reg.instance_type & PERF_COUNTERSET_FLAG_MULTIPLE;
        size_t i = sid_find(q, &s->reg.guid, id);
        struct sid *v;
        uint32_t e;

        if (i == NONE) {
                v = realloc(q->sids, (q->n_sids + 1) * sizeof(*v));
                if (!v)
                        return PDH_MEMORY_ALLOCATION_FAILURE;
                q->sids = v;
                e = pcq_ident_append(ids, &s->reg.guid, id, CL_NO_ID, multi ? "*" : NULL);
                if (e)
                        return e;
                i = q->n_sids++;
                q->sids[i] = (struct sid){ .guid = s->reg.guid, .counter_id = id,
                                           .block = UINT32_MAX };
        }
        *ret = i;
        return ERROR_SUCCESS;
}

/* A companion's sid, or NONE when the type does not need it or it does not exist. */
static uint32_t companion(pcq_query *q, const struct cl_set *s, bool needed, uint32_t id,
                          struct pcq_buf *ids, size_t *ret)
{
        *ret = NONE;
        if (!needed || id == CL_NO_ID || !cl_set_counter_id(s, id))
                return ERROR_SUCCESS;
        return sid_want(q, s, id, ids, ret);
}

static uint32_t member_init(pcq_query *q, const struct cl_set *s, const struct cl_counter *c,
                            struct member *m, struct pcq_buf *ids)
{
        const struct pcq_counter_reg *r = &c->reg;
        uint32_t e;

        m->reg = *r;
        pcq_type_info(r->type, &m->ti);
        m->name = strdup(c->name);
        m->help = strdup(c->help ? c->help : "");
        if (!m->name || !m->help)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        e = sid_want(q, s, r->id, ids, &m->sid);
        if (!e)
                e = companion(q, s, m->ti.needs_base, r->base_id, ids, &m->base);
        if (!e)
                e = companion(q, s, m->ti.needs_perf_time, r->perf_time_id, ids, &m->time);
        if (!e)
                e = companion(q, s, m->ti.needs_perf_time, r->perf_freq_id, ids, &m->freq);
        if (!e)
                e = companion(q, s, m->ti.needs_multi, r->multi_id, ids, &m->multi);
        return e;
}

/* The members of ctr: its one counter, or every listed counter for "*". */
static uint32_t members_init(pcq_query *q, pcq_counter *ctr, const struct cl_set *s,
                             struct pcq_buf *ids)
{
        bool all = !strcmp(ctr->p.counter, "*");
        uint32_t e = ERROR_SUCCESS;

        ctr->members = calloc(s->reg.num_counters + 1, sizeof(*ctr->members));
        if (!ctr->members)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        for (uint32_t i = 0; !e && i < s->reg.num_counters; i++) {
                const struct cl_counter *c = &s->counters[i];

                if (all ? !cl_counter_listed(c) : strcasecmp(c->name, ctr->p.counter) != 0)
                        continue;
                e = member_init(q, s, c, &ctr->members[ctr->n_members++], ids);
        }
        return e;
}

/* Sends the new identifiers; fails on the first one the server refused. */
static uint32_t validate(pcq_query *q, struct pcq_buf *ids, const char *path)
{
        struct pcq_ident_item item;
        pcq_iter it;
        uint32_t e;

        if (!ids->size)
                return ERROR_SUCCESS;
        e = pcq_validate(q->h, ids, true);
        if (e) {
                cl_query_set_error(q, "the server refused the counters of '%s': %s", path,
                                   pcq_status_text(e));
                return e;
        }
        pcq_ident_iter_begin(&it, ids);
        while (!e && pcq_ident_iter_next(&it, &item)) {
                if (item.status && item.status != ERROR_ALREADY_EXISTS) {
                        cl_query_set_error(q, "the server refused counter %u of '%s': %s",
                                           item.counter_id, path,
                                           pcq_status_text(item.status));
                        e = PDH_CSTATUS_NO_COUNTER;
                }
        }
        pcq_iter_done(&it);
        return e;
}

/* Where each sid's block is in QueryCounterData's answer (QueryCounterInfo's Index). */
static uint32_t map_blocks(pcq_query *q)
{
        struct pcq_ident_item item;
        struct pcq_buf b = { 0 };
        pcq_iter it;
        uint32_t e = pcq_counter_info(q->h, &b);

        if (e)
                return e;
        for (size_t i = 0; i < q->n_sids; i++)
                q->sids[i].block = UINT32_MAX;
        pcq_ident_iter_begin(&it, &b);
        while (pcq_ident_iter_next(&it, &item)) {
                size_t i = sid_find(q, &item.counterset, item.counter_id);

                if (i != NONE)
                        q->sids[i].block = item.index;
        }
        e = pcq_iter_error(&it);
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        return e;
}

static uint32_t counter_new(pcq_query *q, const char *path, const struct cl_set *s,
                            struct pcq_path *p, pcq_counter **ret)
{
        pcq_counter *ctr = calloc(1, sizeof(*ctr));
        bool ok = false;

        if (!ctr)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        ctr->q = q;
        ctr->p = *p;
        *p = (struct pcq_path){ 0 };
        ctr->guid = s->reg.guid;
        ctr->instance_type = s->reg.instance_type;
        ctr->multi = cl_set_has_instances(s);
        ctr->aggregate = cl_set_aggregate(s);
        ctr->history = s->reg.instance_type == PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY;
        ctr->path = strdup(path);
        ctr->object = strdup(s->name);
        ctr->help = strdup(s->help ? s->help : "");
        if (ctr->multi && ctr->p.instance && !cl_path_has_wildcard(&ctr->p) &&
            (ctr->p.parent || strcasecmp(ctr->p.instance, CL_TOTAL)) &&
            asprintf(&ctr->exact, "%s%s%s", ctr->p.parent ? ctr->p.parent : "",
                     ctr->p.parent ? "/" : "", ctr->p.instance) < 0)
                ctr->exact = NULL;
        else
                ok = true;
        if (!ok || !ctr->path || !ctr->object || !ctr->help) {
                counter_free(ctr);
                return PDH_MEMORY_ALLOCATION_FAILURE;
        }
        *ret = ctr;
        return ERROR_SUCCESS;
}

PCQ_API uint32_t pcq_query_add(pcq_query *q, const char *path, pcq_counter **ret)
{
        struct pcq_buf ids = { 0 };
        const struct cl_set *s;
        pcq_counter *ctr = NULL, **v;
        struct pcq_path p;
        size_t old_sids;
        uint32_t e;

        if (!q || !path || !ret)
                return PDH_INVALID_ARGUMENT;
        free(q->error);
        q->error = NULL;
        e = cl_resolve(q->conn, path, &p, &s, &q->error);
        if (e)
                return e;
        cl_catalog_help(&q->conn->link, (struct cl_set *) s);
        old_sids = q->n_sids;
        e = counter_new(q, path, s, &p, &ctr);
        if (!e)
                e = members_init(q, ctr, s, &ids);
        if (!e)
                e = validate(q, &ids, path);
        if (!e && ids.size)
                e = map_blocks(q);
        if (!e && !(v = realloc(q->counters, (q->n_counters + 1) * sizeof(*v))))
                e = PDH_MEMORY_ALLOCATION_FAILURE;
        pcq_buf_done(&ids);
        pcq_path_done(&p);
        if (e) {
                /* Forgotten here: a later add sends them again, and
                 * ERROR_ALREADY_EXISTS for those the server took is fine. */
                q->n_sids = old_sids;
                counter_free(ctr);
                return e;
        }
        q->counters = v;
        q->counters[q->n_counters++] = ctr;
        *ret = ctr;
        return ERROR_SUCCESS;
}

/* ---- collecting ---- */

static uint32_t cell_add(struct column *col, const struct pcq_data_item *it)
{
        struct cell *c;

        if (col->n == col->cap) {
                size_t cap = col->cap ? 2 * col->cap : 4;

                c = realloc(col->cells, cap * sizeof(*c));
                if (!c)
                        return PDH_MEMORY_ALLOCATION_FAILURE;
                col->cells = c;
                col->cap = cap;
        }
        c = &col->cells[col->n];
        *c = (struct cell){ .id = it->instance_id };
        if (it->size >= 8)
                c->value = cl_le64(it->value);
        else if (it->size >= 4)
                c->value = cl_le32(it->value);
        if (it->instance && !(c->name = strdup(it->instance)))
                return PDH_MEMORY_ALLOCATION_FAILURE;
        col->n++;
        return ERROR_SUCCESS;
}

/* ---- indexes: every match below is O(1), never a scan of a column ---- */

/* FNV-1a of s, ASCII-folded when fold (strcasecmp's equality then implies the hash's). */
static uint32_t cl_str_hash(const char *s, bool fold)
{
        uint32_t h = 2166136261u;

        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;

                if (fold && c >= 'A' && c <= 'Z')
                        c += 'a' - 'A';
                h = (h ^ c) * 16777619u;
        }
        return h;
}

/* Room for n indices at most half full. */
static uint32_t cl_ix_init(struct ix *x, size_t n)
{
        size_t cap = 16;

        while (cap < 2 * n)
                cap *= 2;
        x->slot = calloc(cap, sizeof(*x->slot));
        x->mask = cap - 1;
        return x->slot ? ERROR_SUCCESS : PDH_MEMORY_ALLOCATION_FAILURE;
}

/*
 * The index in the probe sequence of hash h after *pos (start with
 * *pos = SIZE_MAX), NO_CELL at its end: the caller checks each candidate.
 */
static uint32_t cl_ix_next(const struct ix *x, uint32_t h, size_t *pos)
{
        *pos = *pos == SIZE_MAX ? (h & x->mask) : ((*pos + 1) & x->mask);
        return x->slot[*pos] ? x->slot[*pos] - 1 : NO_CELL;
}

/*
 * Numbers the occurrences of equal names (case-insensitive) in col and
 * chains them from a head found by folded name, in one pass.
 */
static uint32_t column_index(struct column *col)
{
        uint32_t e = cl_ix_init(&col->names, col->n);

        for (size_t i = 0; !e && i < col->n; i++) {
                struct cell *c = &col->cells[i];
                size_t pos = SIZE_MAX;
                uint32_t h, j;

                c->next = c->tail = NO_CELL;
                if (!c->name)
                        continue;
                h = cl_str_hash(c->name, true);
                while ((j = cl_ix_next(&col->names, h, &pos)) != NO_CELL &&
                       strcasecmp(col->cells[j].name, c->name))
                        ;
                if (j == NO_CELL) {
                        col->names.slot[pos] = (uint32_t) i + 1;
                        c->tail = (uint32_t) i;
                        continue;
                }
                c->occurrence = col->cells[col->cells[j].tail].occurrence + 1;
                col->cells[col->cells[j].tail].next = (uint32_t) i;
                col->cells[j].tail = (uint32_t) i;
        }
        return e;
}

/* The first cell of col named name (case-insensitive), NO_CELL if none. */
static uint32_t cl_column_find(const struct column *col, const char *name)
{
        size_t pos = SIZE_MAX;
        uint32_t j;

        if (!col->names.slot)
                return NO_CELL;
        while ((j = cl_ix_next(&col->names, cl_str_hash(name, true), &pos)) != NO_CELL &&
               strcasecmp(col->cells[j].name, name))
                ;
        return j;
}

static bool is_error_block(const struct pcq_data_item *it)
{
        return it->block_type != PERF_SINGLE_COUNTER && it->block_type != PERF_MULTIPLE_COUNTERS &&
               it->block_type != PERF_MULTIPLE_INSTANCES && it->block_type != PERF_COUNTERSET;
}

/* The sid of every block of the answer (NONE for blocks no sid asked for). */
static size_t *blocks_to_sids(const pcq_query *q, uint32_t n_blocks)
{
        size_t *v = malloc((n_blocks + 1) * sizeof(*v));

        if (!v)
                return NULL;
        for (uint32_t i = 0; i < n_blocks; i++)
                v[i] = NONE;
        for (size_t i = 0; i < q->n_sids; i++)
                if (q->sids[i].block < n_blocks)
                        v[q->sids[i].block] = i;
        return v;
}

/* The sample in b as one column per sid (*ret_cols, the caller's). */
static uint32_t cl_sample_parse(const pcq_query *q, const struct pcq_buf *b,
                                struct pcq_data_header *hdr, struct column **ret_cols)
{
        struct pcq_data_item item;
        struct column *cols = calloc(q->n_sids + 1, sizeof(*cols));
        size_t *by_block = NULL;
        pcq_iter it;
        uint32_t e = pcq_data_iter_begin(&it, b, hdr);

        if (!e && (!cols || !(by_block = blocks_to_sids(q, hdr->num_counters))))
                e = PDH_MEMORY_ALLOCATION_FAILURE;
        for (size_t i = 0; !e && i < q->n_sids; i++)
                if (q->sids[i].block >= hdr->num_counters)
                        cols[i].status = ERROR_WMI_ITEMID_NOT_FOUND;
        while (!e && pcq_data_iter_next(&it, &item)) {
                size_t sid = item.block < hdr->num_counters ? by_block[item.block] : NONE;

                if (sid == NONE)
                        continue;
                if (is_error_block(&item))
                        cols[sid].status = item.status ? item.status : ERROR_INVALID_DATA;
                else
                        e = cell_add(&cols[sid], &item);
        }
        if (!e && pcq_iter_error(&it))
                e = PDH_INVALID_DATA;
        for (size_t i = 0; !e && i < q->n_sids; i++)
                e = column_index(&cols[i]);
        pcq_iter_done(&it);
        free(by_block);
        if (e) {
                cl_columns_free(cols, q->n_sids);
                return e;
        }
        *ret_cols = cols;
        return ERROR_SUCCESS;
}

static bool same_instance(const char *a, uint32_t a_id, const char *b, uint32_t b_id)
{
        return a_id == b_id && (a && b ? !strcmp(a, b) : !a && !b);
}

/* A companion's value for the instance of cell c (hint: c's index). */
static bool companion_value(const pcq_query *q, size_t sid, size_t hint, const struct cell *c,
                            uint64_t *ret)
{
        const struct column *col;

        if (sid == NONE || sid >= q->n_cols || q->cols[sid].status)
                return false;
        col = &q->cols[sid];
        if (hint < col->n && same_instance(col->cells[hint].name, col->cells[hint].id, c->name, c->id)) {
                *ret = col->cells[hint].value;
                return true;
        }
        for (size_t i = 0; i < col->n; i++)
                if (same_instance(col->cells[i].name, col->cells[i].id, c->name, c->id)) {
                        *ret = col->cells[i].value;
                        return true;
                }
        return false;
}

/* The pcq_raw of member m for the instance of cell i of its column. */
static void raw_of(const pcq_query *q, const struct member *m, size_t i, struct pcq_raw *r)
{
        const struct cell *c = &q->cols[m->sid].cells[i];
        bool ok = true;

        *r = (struct pcq_raw){
                .status = PDH_CSTATUS_VALID_DATA, .first = c->value, .multi = 1,
                .perf_time = q->hdr.perf_time, .perf_freq = q->hdr.perf_freq,
                .time_100ns = q->hdr.perf_time_100ns,
        };
        if (m->ti.needs_base)
                ok = companion_value(q, m->base, i, c, &r->second);
        if (ok && m->ti.needs_perf_time)
                ok = companion_value(q, m->time, i, c, &r->second) &&
                     companion_value(q, m->freq, i, c, &r->freq);
        if (ok && m->ti.needs_multi)
                ok = companion_value(q, m->multi, i, c, &r->multi);
        if (!ok)
                r->status = PDH_CSTATUS_INVALID_DATA;
}

static bool entry_is(const struct entry *en, size_t member, uint32_t id, const char *name)
{
        return en->member == member && en->id == id && en->name && !strcmp(en->name, name);
}

static uint32_t entry_hash(size_t member, uint32_t id, const char *name)
{
        return cl_str_hash(name, false) ^ id * 2654435761u ^ (uint32_t) member * 40503u;
}

/* Indexes ctr's entries of the previous sample, once, on the first miss. */
static uint32_t old_index(const pcq_counter *ctr, struct ix *x)
{
        uint32_t e;

        if (x->slot)
                return ERROR_SUCCESS;
        e = cl_ix_init(x, ctr->n_entries);
        for (size_t i = 0; !e && i < ctr->n_entries; i++) {
                const struct entry *en = &ctr->entries[i];
                size_t pos = SIZE_MAX;

                if (!en->name)
                        continue;
                while (cl_ix_next(x, entry_hash(en->member, en->id, en->name), &pos) != NO_CELL)
                        ;
                x->slot[pos] = (uint32_t) i + 1;
        }
        return e;
}

/*
 * ctr's entry of the previous sample for (member, id, name): instances
 * mostly come in the same order, so the same position is tried first.
 */
static uint32_t old_entry(pcq_counter *ctr, struct ix *x, size_t hint, size_t member,
                          uint32_t id, const char *name, struct entry **ret)
{
        size_t pos = SIZE_MAX;
        uint32_t j, e;

        *ret = NULL;
        if (hint < ctr->n_entries && entry_is(&ctr->entries[hint], member, id, name)) {
                *ret = &ctr->entries[hint];
                return ERROR_SUCCESS;
        }
        e = old_index(ctr, x);
        while (!e && (j = cl_ix_next(x, entry_hash(member, id, name), &pos)) != NO_CELL)
                if (entry_is(&ctr->entries[j], member, id, name)) {
                        *ret = &ctr->entries[j];
                        break;
                }
        return e;
}

/*
 * Appends the entry of cell i of member mi's column to v; an instance
 * seen before takes over its old entry's name (old->name then NULL).
 */
static uint32_t entry_add(const pcq_query *q, pcq_counter *ctr, size_t mi, size_t i,
                          struct entry *v, size_t *n, bool *kept, struct ix *old)
{
        const struct member *m = &ctr->members[mi];
        const struct cell *c = &q->cols[m->sid].cells[i];
        const char *name = c->name ? c->name : "";
        struct entry *en = &v[*n], *o;
        uint32_t e;

        *en = (struct entry){ .id = c->id, .occurrence = c->occurrence, .member = mi,
                              .live = true };
        raw_of(q, m, i, &en->cur);
        e = old_entry(ctr, old, *n, mi, c->id, name, &o);
        if (e)
                return e;
        if (o) {
                kept[o - ctr->entries] = true;
                en->prev = o->cur;
                en->has_prev = o->live;
                en->name = o->name;
                o->name = NULL;
        } else if (!(en->name = strdup(name))) {
                return PDH_MEMORY_ALLOCATION_FAILURE;
        }
        (*n)++;
        return ERROR_SUCCESS;
}

/* How many cells of member mi's column ctr takes at most. */
static size_t member_cells(const pcq_query *q, const pcq_counter *ctr, size_t mi)
{
        const struct column *col = &q->cols[ctr->members[mi].sid];
        size_t n = 0;

        if (col->status || !ctr->exact)
                return col->status ? 0 : col->n;
        for (uint32_t i = cl_column_find(col, ctr->exact); i != NO_CELL; i = col->cells[i].next)
                n++;
        return n;
}

/*
 * Appends the live entries of member mi from the new sample: a path that
 * names one instance only looks up the cells of that name, every #n of
 * it, so that an instance keeps its previous sample when duplicates of
 * its name change order (member_items picks the #n the path names).
 */
static uint32_t live_entries(const pcq_query *q, pcq_counter *ctr, size_t mi, struct entry *v,
                             size_t *n, bool *kept, struct ix *old)
{
        const struct column *col = &q->cols[ctr->members[mi].sid];
        uint32_t e = ERROR_SUCCESS;

        if (col->status)
                return ERROR_SUCCESS;
        if (!ctr->exact) {
                for (size_t i = 0; !e && i < col->n; i++)
                        e = entry_add(q, ctr, mi, i, v, n, kept, old);
                return e;
        }
        for (uint32_t i = cl_column_find(col, ctr->exact); !e && i != NO_CELL;
             i = col->cells[i].next)
                e = entry_add(q, ctr, mi, i, v, n, kept, old);
        return e;
}

/*
 * Rebuilds ctr->entries from the new sample, keeping vanished ones for
 * history.  On failure ctr keeps no entries and no items (names may have
 * moved), and the next collect starts afresh.
 */
static uint32_t entries_update(const pcq_query *q, pcq_counter *ctr)
{
        size_t cap = ctr->n_entries, n = 0;
        struct ix old = { 0 };
        struct entry *v;
        bool *kept;
        uint32_t e = ERROR_SUCCESS;

        for (size_t i = 0; i < ctr->n_members; i++)
                cap += member_cells(q, ctr, i);
        v = calloc(cap + 1, sizeof(*v));
        kept = calloc(ctr->n_entries + 1, sizeof(*kept));
        if (!v || !kept) {
                free(v);
                free(kept);
                return PDH_MEMORY_ALLOCATION_FAILURE;
        }
        for (size_t i = 0; !e && i < ctr->n_members; i++)
                e = live_entries(q, ctr, i, v, &n, kept, &old);
        for (size_t i = 0; !e && ctr->history && i < ctr->n_entries; i++) {
                if (kept[i])
                        continue;
                v[n] = ctr->entries[i];
                v[n++].live = false;
                ctr->entries[i].name = NULL;    /* moved */
        }
        free(kept);
        free(old.slot);
        if (e) {
                cl_entries_free(v, n);
                v = NULL;
                n = 0;
                cl_items_clear(ctr);
        }
        cl_entries_free(ctr->entries, ctr->n_entries);
        ctr->entries = v;
        ctr->n_entries = n;
        return e;
}

static uint32_t pdh_status(uint32_t win32)
{
        switch (win32) {
        case ERROR_WMI_GUID_NOT_FOUND:
                return PDH_CSTATUS_NO_OBJECT;
        case ERROR_WMI_ITEMID_NOT_FOUND:
                return PDH_CSTATUS_NO_COUNTER;
        case ERROR_WMI_INSTANCE_NOT_FOUND:
        case ERROR_PATH_NOT_FOUND:
                return PDH_CSTATUS_NO_INSTANCE;
        default:
                return PDH_CSTATUS_INVALID_DATA;
        }
}

/* Appends one item with its path. */
/* Whether an item's instance string reads name (NULL: none) with #occ. */
static bool instance_is(const char *s, const char *name, uint32_t occ)
{
        char suffix[16];
        size_t len;

        if (!s || !name)
                return !s && !name;
        len = strlen(name);
        if (strncmp(s, name, len))
                return false;
        if (!occ)
                return !s[len];
        snprintf(suffix, sizeof(suffix), "#%u", occ);
        return !strcmp(s + len, suffix);
}

/*
 * Moves the strings of the previous sample's item at the same position
 * into val when that item showed the same thing: the paths of a steady
 * set of instances are built once.
 */
static bool item_reuse(struct prev_items *old, size_t i, const struct item *it,
                       const char *name, uint32_t occ, struct pcq_value *val)
{
        struct pcq_value *o;

        if (!old || i >= old->n || old->items[i].member != it->member ||
            old->items[i].total != it->total ||
            (old->items[i].entry == NONE) != (it->entry == NONE) ||
            (it->entry == NONE && !it->total && old->items[i].status != it->status))
                return false;
        o = &old->values[i];
        if (!o->path || !instance_is(o->instance, name, occ))
                return false;
        val->path = o->path;
        val->instance = o->instance;
        o->path = o->instance = NULL;
        return true;
}

static uint32_t item_add(pcq_counter *ctr, struct prev_items *old, size_t member, size_t entry,
                         bool total, uint32_t status)
{
        const struct member *m = &ctr->members[member];
        const struct entry *en = entry != NONE ? &ctr->entries[entry] : NULL;
        const char *name = en ? en->name : total ? CL_TOTAL : ctr->p.instance;
        uint32_t occ = en ? en->occurrence : total ? 0 : ctr->p.index;
        struct pcq_value *val = &ctr->values[ctr->n_items];
        struct pcq_path p = ctr->p;
        char *full = NULL;

        ctr->items[ctr->n_items] = (struct item){ .entry = entry, .member = member,
                                                  .total = total, .status = status };
        *val = (struct pcq_value){ .status = status };
        if (en || total || !ctr->multi) {
                if (item_reuse(old, ctr->n_items, &ctr->items[ctr->n_items],
                               ctr->multi ? name : NULL, occ, val)) {
                        ctr->n_items++;
                        return ERROR_SUCCESS;
                }
        }
        if (!ctr->multi) {
                name = NULL;
        } else if (!en && !total && p.parent) {
                if (asprintf(&full, "%s/%s", p.parent, p.instance) < 0)
                        return PDH_MEMORY_ALLOCATION_FAILURE;
                name = full;
        }
        val->path = cl_item_path(&p, ctr->object, name, occ, m->name);
        if (name && occ) {
                char *t = NULL;

                val->instance = asprintf(&t, "%s#%u", name, occ) < 0 ? NULL : t;
        } else if (name) {
                val->instance = strdup(name);
        }
        free(full);
        if (!val->path || (name && !val->instance)) {
                free((char *) val->path);
                free((char *) val->instance);
                return PDH_MEMORY_ALLOCATION_FAILURE;
        }
        ctr->n_items++;
        return ERROR_SUCCESS;
}

/* The items of member mi of a multiple-instance counter. */
static uint32_t member_items(pcq_query *q, pcq_counter *ctr, struct prev_items *old, size_t mi)
{
        const struct column *col = &q->cols[ctr->members[mi].sid];
        bool only_total = ctr->aggregate && !ctr->p.instance;
        size_t before = ctr->n_items;
        uint32_t e = ERROR_SUCCESS;

        for (size_t i = 0; !e && !only_total && i < ctr->n_entries; i++) {
                const struct entry *en = &ctr->entries[i];

                if (en->member == mi && en->live &&
                    cl_instance_matches(&ctr->p, en->name, en->occurrence))
                        e = item_add(ctr, old, mi, i, false, 0);
        }
        if (!e && ctr->aggregate && (only_total || cl_instance_matches(&ctr->p, CL_TOTAL, 0)))
                e = item_add(ctr, old, mi, NONE, true, 0);
        if (!e && ctr->n_items == before && ctr->p.instance && !cl_path_has_wildcard(&ctr->p)) {
                cl_query_set_error(q, "no instance '%s' of counterset '%s' is live",
                                   ctr->p.instance, ctr->object);
                e = item_add(ctr, old, mi, NONE, false,
                             col->status ? pdh_status(col->status) : PDH_CSTATUS_NO_INSTANCE);
        }
        return e;
}

static uint32_t items_fill(pcq_query *q, pcq_counter *ctr, struct prev_items *old)
{
        uint32_t e = ERROR_SUCCESS;

        for (size_t mi = 0; !e && mi < ctr->n_members; mi++) {
                const struct column *col = &q->cols[ctr->members[mi].sid];
                size_t first = NONE;

                if (ctr->multi) {
                        e = member_items(q, ctr, old, mi);
                        continue;
                }
                for (size_t i = 0; i < ctr->n_entries && first == NONE; i++)
                        if (ctr->entries[i].member == mi && ctr->entries[i].live)
                                first = i;
                e = item_add(ctr, old, mi, first, false,
                             first != NONE ? 0 :
                             col->status ? pdh_status(col->status) : PDH_CSTATUS_NO_INSTANCE);
        }
        return e;
}

/* Rebuilds ctr's items, taking over the strings of the unchanged ones. */
static uint32_t items_update(pcq_query *q, pcq_counter *ctr)
{
        size_t cap = ctr->n_entries + 2 * ctr->n_members;
        struct prev_items old = { ctr->items, ctr->values, ctr->n_items };
        uint32_t e;

        ctr->items = calloc(cap + 1, sizeof(*ctr->items));
        ctr->values = calloc(cap + 1, sizeof(*ctr->values));
        ctr->n_items = 0;
        e = ctr->items && ctr->values ? items_fill(q, ctr, &old) : PDH_MEMORY_ALLOCATION_FAILURE;
        if (e)
                cl_items_clear(ctr);
        for (size_t i = 0; i < old.n; i++) {
                free((char *) old.values[i].path);
                free((char *) old.values[i].instance);
        }
        free(old.items);
        free(old.values);
        return e;
}

PCQ_API uint32_t pcq_query_collect(pcq_query *q)
{
        struct pcq_data_header hdr;
        struct column *cols = NULL;
        struct pcq_buf b = { 0 };
        uint32_t e;

        if (!q)
                return PDH_INVALID_ARGUMENT;
        e = pcq_counter_data(q->h, &b);
        if (!e)
                e = cl_sample_parse(q, &b, &hdr, &cols);
        pcq_buf_done(&b);
        if (e)
                return e;
        cl_columns_free(q->cols, q->n_cols);
        q->cols = cols;
        q->n_cols = q->n_sids;
        q->hdr = hdr;
        q->collected = true;
        for (size_t i = 0; !e && i < q->n_counters; i++) {
                e = entries_update(q, q->counters[i]);
                if (!e)
                        e = items_update(q, q->counters[i]);
        }
        return e;
}

/* ---- values ---- */

static uint32_t entry_value(const pcq_counter *ctr, const struct entry *en, uint32_t flags,
                            double *ret)
{
        const struct member *m = &ctr->members[en->member];

        return pcq_calculate(m->reg.type, m->reg.default_scale, en->has_prev ? &en->prev : NULL,
                             &en->cur, flags, ret);
}

/* Whether ctr's path picks instances of its counterset (anything but _Total alone). */
static bool names_instances(const pcq_counter *ctr)
{
        return ctr->p.instance && (ctr->p.parent || strcasecmp(ctr->p.instance, CL_TOTAL));
}

/*
 * Whether an instance counts toward the _Total of a multiple-instance
 * aggregate counter: MS-PCQ leaves the set of instances to the client, and
 * ours is the instances the query's paths of that counterset name (each
 * exact name or wildcard), or every instance when they name none but
 * _Total.  The global types always aggregate every instance.
 */
static bool in_client_set(const pcq_counter *ctr, const struct entry *en)
{
        const pcq_query *q = ctr->q;
        bool named = false;

        if (ctr->instance_type != PERF_COUNTERSET_MULTI_AGGREGATE)
                return true;
        for (size_t i = 0; i < q->n_counters; i++) {
                const pcq_counter *o = q->counters[i];

                if (!cl_guid_eq(&o->guid, &ctr->guid) || !names_instances(o))
                        continue;
                if (cl_instance_matches(&o->p, en->name, en->occurrence))
                        return true;
                named = true;
        }
        return !named;
}

/* _Total of member mi over every instance (and, for history, the vanished ones). */
static uint32_t total_value(const pcq_counter *ctr, size_t mi, uint32_t flags, double *ret)
{
        double *v = malloc((ctr->n_entries + 1) * sizeof(*v));
        size_t n = 0;
        uint32_t e;

        if (!v)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        for (size_t i = 0; i < ctr->n_entries; i++)
                if (ctr->entries[i].member == mi && in_client_set(ctr, &ctr->entries[i]) &&
                    entry_value(ctr, &ctr->entries[i], flags, &v[n]) == PDH_CSTATUS_VALID_DATA)
                        n++;
        e = n ? pcq_aggregate(ctr->members[mi].reg.aggregate_func, v, n, ret) :
                PDH_CSTATUS_INVALID_DATA;
        free(v);
        return e;
}

PCQ_API uint32_t pcq_counter_values(pcq_counter *ctr, uint32_t flags,
                                    const struct pcq_value **ret_items, size_t *ret_n)
{
        if (!ctr || !ret_items || !ret_n)
                return PDH_INVALID_ARGUMENT;
        if (!ctr->q->collected)
                return PDH_NO_DATA;
        for (size_t i = 0; i < ctr->n_items; i++) {
                const struct item *it = &ctr->items[i];
                struct pcq_value *val = &ctr->values[i];
                double v = 0;

                if (it->entry != NONE) {
                        val->status = entry_value(ctr, &ctr->entries[it->entry], flags, &v);
                        val->raw_first = ctr->entries[it->entry].cur.first;
                } else if (it->total) {
                        val->status = total_value(ctr, it->member, flags, &v);
                } else {
                        val->status = it->status;
                }
                val->value = val->status == PDH_CSTATUS_VALID_DATA ? v : 0;
        }
        *ret_items = ctr->values;
        *ret_n = ctr->n_items;
        return ERROR_SUCCESS;
}

PCQ_API void pcq_counter_describe(const pcq_counter *ctr, struct pcq_counter_desc *ret)
{
        const struct member *m;

        if (!ctr || !ret)
                return;
        m = ctr->n_members ? &ctr->members[0] : NULL;
        *ret = (struct pcq_counter_desc){
                .path = ctr->path,
                .object = ctr->object,
                .counter = ctr->n_members == 1 ? m->name : ctr->p.counter,
                .help = ctr->n_members == 1 ? m->help : ctr->help,
                .type = m ? m->reg.type : 0,
                .attrib = m ? m->reg.attrib : 0,
                .default_scale = m ? m->reg.default_scale : 0,
                .detail_level = m ? m->reg.detail_level : 0,
                .instance_type = ctr->instance_type,
        };
}
