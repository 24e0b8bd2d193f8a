/* SPDX-License-Identifier: MIT */
/*
 * One QueryCounterData answer as the query keeps it: a column per server
 * identifier, a cell per instance, its occurrence number among equal
 * names, and an open-addressing index by name, so that every lookup the
 * collect makes is O(1) (client-collect.c also indexes its entries with
 * it).  The columns replace the previous sample's whole.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-query.h"
#include "client-wire.h"
#include "perflib.h"

void cl_columns_free(struct column *cols, size_t n)
{
        for (size_t i = 0; cols && i < n; i++) {
                for (size_t j = 0; j < cols[i].n; j++)
                        free(cols[i].cells[j].name);
                free(cols[i].cells);
                free(cols[i].names.slot);
        }
        free(cols);
}

/* ---- columns ---- */

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
uint32_t cl_str_hash(const char *s, bool fold)
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
uint32_t cl_ix_init(struct ix *x, size_t n)
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
uint32_t cl_ix_next(const struct ix *x, uint32_t h, size_t *pos)
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
uint32_t cl_column_find(const struct column *col, const char *name)
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
uint32_t cl_sample_parse(const pcq_query *q, const struct pcq_buf *b,
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
