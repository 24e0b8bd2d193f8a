/* SPDX-License-Identifier: MIT */
/*
 * pcq-query.c: a query handle's state (pcq-query.h): its counter
 * specifications and the one reply kept from a sizing call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcq-buf.h"
#include "pcq-query.h"

int pcq_query_new(const uint16_t *machine, struct pcq_query **ret)
{
        struct pcq_query *q = calloc(1, sizeof(*q));
        int r;

        if (!q)
                return -ENOMEM;
        /* A longer name is cut: it is passed on to providers, never matched. */
        r = pcq_utf16z_to_wcs(machine, PCQ_MAX_NAME_UNITS, &q->machine, &q->machine_len);
        if (r < 0) {
                free(q);
                return r;
        }
        *ret = q;
        return 0;
}

void pcq_query_free(struct pcq_query *q)
{
        if (!q)
                return;
        pcq_query_forget(q);
        for (size_t i = 0; i < q->n_items; i++)
                free(q->items[i].name);
        free(q->items);
        free(q->machine);
        free(q);
}

static uint64_t mono_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

void pcq_query_keep(struct pcq_query *q, struct ns *ns, uint8_t *data, uint32_t size)
{
        pcq_query_forget(q);
        q->kept = data;
        q->kept_size = size;
        q->kept_at = mono_ns();
        q->kept_ns = ns;
}

int pcq_query_take_kept(struct pcq_query *q, uint32_t in_size, uint8_t **ret_data,
                        uint32_t *ret_size)
{
        if (!q->kept)
                return 0;
        if (q->kept_size > in_size || mono_ns() - q->kept_at >= PCQ_KEPT_REPLY_NS) {
                pcq_query_forget(q);
                return 0;
        }
        *ret_data = q->kept;
        *ret_size = q->kept_size;
        q->kept = NULL;
        q->kept_size = 0;
        return 1;
}

void pcq_query_forget(struct pcq_query *q)
{
        if (q->kept)
                ns_mem_give(q->kept_ns, q->kept_size);
        free(q->kept);
        q->kept = NULL;
        q->kept_size = 0;
}

bool pcq_item_wildcard_instance(const struct pcq_item *it)
{
        return it->has_name && it->name_len == 1 && it->name[0] == '*';
}

bool pcq_item_same(const struct pcq_item *a, const struct pcq_item *b)
{
        if (memcmp(&a->guid, &b->guid, sizeof(GUID)) != 0 || a->counter_id != b->counter_id ||
            a->has_name != b->has_name)
                return false;
        if (!a->has_name)
                return true;
        return a->instance_id == b->instance_id && a->name_len == b->name_len &&
               memcmp(a->name, b->name, a->name_len * sizeof(uint16_t)) == 0;
}

long pcq_query_find(const struct pcq_query *q, const struct pcq_item *key)
{
        for (size_t i = 0; i < q->n_items; i++)
                if (pcq_item_same(&q->items[i], key))
                        return (long) i;
        return -1;
}

int pcq_query_append(struct pcq_query *q, const struct pcq_item *it)
{
        struct pcq_item copy = *it;
        size_t max = q->max_items && q->max_items < PCQ_QUERY_MAX_ITEMS ? q->max_items
                                                                         : PCQ_QUERY_MAX_ITEMS;

        if (q->n_items >= max)
                return -E2BIG;
        if (q->n_items == q->cap) {
                size_t cap = q->cap ? q->cap * 2 : 8;
                struct pcq_item *items = reallocarray(q->items, cap, sizeof(*items));

                if (!items)
                        return -ENOMEM;
                q->items = items;
                q->cap = cap;
        }
        if (it->has_name) {
                copy.name = malloc((it->name_len + 1) * sizeof(uint16_t));
                if (!copy.name)
                        return -ENOMEM;
                memcpy(copy.name, it->name, it->name_len * sizeof(uint16_t));
                copy.name[it->name_len] = 0;
        } else
                copy.name = NULL;
        q->items[q->n_items++] = copy;
        return 0;
}

void pcq_query_remove(struct pcq_query *q, size_t i)
{
        if (i >= q->n_items)
                return;
        free(q->items[i].name);
        memmove(q->items + i, q->items + i + 1, (q->n_items - i - 1) * sizeof(*q->items));
        q->n_items--;
}
