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
 *
 * This file owns the query's lifetime and adding a path: resolving it,
 * its members and their identifiers, ValidateCounters and the block map.
 * Collecting is client-sample.c and client-collect.c, the values
 * client-values.c; client-query.h is what the four share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-catalog.h"
#include "client-conn.h"
#include "client-path.h"
#include "client-query.h"
#include "client-resolve.h"
#include "client-wire.h"
#include "perflib.h"

void cl_query_set_error(pcq_query *q, const char *fmt, ...)
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

void cl_items_clear(pcq_counter *ctr)
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

void cl_entries_free(struct entry *v, size_t n)
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
        ctr->single_view = cl_set_global(s) && !ctr->p.instance;
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
