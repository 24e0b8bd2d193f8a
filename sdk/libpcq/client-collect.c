/* SPDX-License-Identifier: MIT */
/*
 * pcq_query_collect: one QueryCounterData, parsed into columns
 * (client-sample.c), then per counter its entries, the raw values of
 * every instance across the last two samples (matched by member, id and
 * name, kept after they vanish for the history aggregate), and its items,
 * the rows pcq_counter_values fills, whose path and instance strings are
 * built once for a steady set of instances.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client-path.h"
#include "client-query.h"

/* A counter's items of the previous sample, while the new ones are built. */
struct prev_items {
        struct item *items;
        struct pcq_value *values;
        size_t n;
};

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

/* Appends one item with its path. */
static uint32_t item_add(pcq_counter *ctr, struct prev_items *old, size_t member, size_t entry,
                         bool total, uint32_t status)
{
        const struct member *m = &ctr->members[member];
        const struct entry *en = entry != NONE ? &ctr->entries[entry] : NULL;
        const char *name = en ? en->name : total ? CL_TOTAL : ctr->p.instance;
        uint32_t occ = en ? en->occurrence : total ? 0 : ctr->p.index;
        struct pcq_value *val = &ctr->values[ctr->n_items];
        struct pcq_path p = ctr->p;
        bool named = ctr->multi && !ctr->single_view;
        char *full = NULL;

        ctr->items[ctr->n_items] = (struct item){ .entry = entry, .member = member,
                                                  .total = total, .status = status };
        *val = (struct pcq_value){ .status = status };
        if (en || total || !ctr->multi) {
                if (item_reuse(old, ctr->n_items, &ctr->items[ctr->n_items],
                               named ? name : NULL, occ, val)) {
                        ctr->n_items++;
                        return ERROR_SUCCESS;
                }
        }
        if (!named) {
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
