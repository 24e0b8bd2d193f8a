/* SPDX-License-Identifier: MIT */
/*
 * reg-desc.c: a manifest's provider as the struct ctrpp_provider_desc that
 * ctrpp's resource generator (ctrpp/gen-resource.c) writes as C text, built
 * at run time for the providers installed with lodctr.  Field for field the
 * same values, so that perflibd serves an installed provider exactly as it
 * serves the self-description of one that runs.
 *
 * The description is a tree of separate allocations, all owned by its root
 * and freed by reg_desc_free; the SDK's struct declares its pointers const
 * because generated descriptions are read-only data, hence the casts there.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reg-desc.h"

/* strdup that keeps NULL and remembers running out of memory. */
static const char *copy_str(const char *s, bool *oom)
{
        char *c;

        if (!s)
                return NULL;
        c = strdup(s);
        if (!c)
                *oom = true;
        return c;
}

static uint32_t id_or_none(const struct pm_u32 *id)
{
        return id->set ? id->value : CTRPP_NO_ID;
}

static struct ctrpp_guid desc_guid(const GUID *g)
{
        struct ctrpp_guid d = { .data1 = g->Data1, .data2 = g->Data2, .data3 = g->Data3 };

        memcpy(d.data4, g->Data4, sizeof(d.data4));
        return d;
}

static void fill_counter(struct ctrpp_counter_desc *d, const struct pm_counter *c, bool *oom)
{
        *d = (struct ctrpp_counter_desc) {
                .id = c->id,
                .type = c->type,
                .attrib = c->attrib,
                .size = c->size,
                .detail_level = c->detail_level,
                .default_scale = c->default_scale,
                .aggregate = c->aggregate == PM_AGG_ABSENT ? CTRPP_NO_AGGREGATE
                                                           : (int32_t) c->aggregate,
                .base_id = id_or_none(&c->base_id),
                .perf_time_id = id_or_none(&c->perf_time_id),
                .perf_freq_id = id_or_none(&c->perf_freq_id),
                .multi_counter_id = id_or_none(&c->multi_counter_id),
                .name_id = c->res_name_id,
                .description_id = c->res_description_id,
                .symbol = copy_str(c->symbol, oom),
                .uri = copy_str(c->uri, oom),
                .name = copy_str(c->name, oom),
                .description = copy_str(c->description, oom),
        };
}

static void fill_counterset(struct ctrpp_counterset_desc *d, const struct pm_counterset *cs,
                            bool *oom)
{
        struct ctrpp_counter_desc *counters = NULL;

        if (cs->n_counters > 0) {
                counters = calloc(cs->n_counters, sizeof(*counters));
                if (!counters)
                        *oom = true;
        }
        *d = (struct ctrpp_counterset_desc) {
                .guid = desc_guid(&cs->guid),
                .instance_type = cs->instance_type,
                .name_id = cs->res_name_id,
                .description_id = cs->res_description_id,
                .n_counters = counters ? (uint32_t) cs->n_counters : 0,
                .counters = counters,
                .symbol = copy_str(cs->symbol, oom),
                .uri = copy_str(cs->uri, oom),
                .name = copy_str(cs->name, oom),
                .description = copy_str(cs->description, oom),
                .instances = copy_str(cs->instances_name ? cs->instances_name : "single", oom),
        };
        for (uint32_t i = 0; i < d->n_counters; i++)
                fill_counter(&counters[i], &cs->counters[i], oom);
}

int reg_desc_build(const struct pm_manifest *m, const struct pm_provider *p,
                   const char *manifest_name, struct ctrpp_provider_desc **ret)
{
        struct ctrpp_counterset_desc *sets = NULL;
        struct ctrpp_provider_desc *d;
        bool oom = false;

        if (!m || !p || !ret)
                return -EINVAL;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        if (p->n_countersets > 0 && !(sets = calloc(p->n_countersets, sizeof(*sets))))
                oom = true;
        *d = (struct ctrpp_provider_desc) {
                .version = CTRPP_DESCRIPTION_VERSION,
                .size = sizeof(struct ctrpp_provider_desc),
                .guid = desc_guid(&p->guid),
                .callback_custom = p->callback_custom,
                .kernel_mode = p->kernel_mode,
                .resource_base = id_or_none(&p->resource_base),
                .n_countersets = sets ? (uint32_t) p->n_countersets : 0,
                .countersets = sets,
                .name = copy_str(p->name, &oom),
                .symbol = copy_str(p->symbol, &oom),
                .application_identity = copy_str(p->application_identity, &oom),
                .schema_version = copy_str(m->schema_version, &oom),
                .manifest = copy_str(manifest_name, &oom),
        };
        for (uint32_t i = 0; i < d->n_countersets; i++)
                fill_counterset(&sets[i], &p->countersets[i], &oom);
        if (oom) {
                reg_desc_free(d);
                return -ENOMEM;
        }
        *ret = d;
        return 0;
}

static void free_counterset(const struct ctrpp_counterset_desc *cs)
{
        for (uint32_t i = 0; i < cs->n_counters; i++) {
                const struct ctrpp_counter_desc *c = &cs->counters[i];
                free((void *) c->symbol);
                free((void *) c->uri);
                free((void *) c->name);
                free((void *) c->description);
        }
        free((void *) cs->counters);
        free((void *) cs->symbol);
        free((void *) cs->uri);
        free((void *) cs->name);
        free((void *) cs->description);
        free((void *) cs->instances);
}

void reg_desc_free(struct ctrpp_provider_desc *d)
{
        if (!d)
                return;
        for (uint32_t i = 0; i < d->n_countersets; i++)
                free_counterset(&d->countersets[i]);
        free((void *) d->countersets);
        free((void *) d->name);
        free((void *) d->symbol);
        free((void *) d->application_identity);
        free((void *) d->schema_version);
        free((void *) d->manifest);
        free(d);
}
