/* SPDX-License-Identifier: MIT */
/*
 * What a collected counter shows: each item's value computed from its
 * raw pair with the caller's flags (pcq-calc.c's math), the _Total the
 * client adds to aggregate countersets over the instances it picks, and
 * pcq_counter_describe.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-path.h"
#include "client-query.h"
#include "client-wire.h"
#include "perflib.h"

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
