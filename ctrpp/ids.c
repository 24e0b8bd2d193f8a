/* SPDX-License-Identifier: MIT */
/*
 * pm_assign_ids: the string resource ids of counterset and counter names and
 * descriptions, numbered the way Windows ctrpp numbers its .rc string table.
 *
 * The rule, read off real ctrpp outputs committed beside their manifests
 * (jxcore/jxcore tools/msvs/genfiles/node_perfctr_provider.{h,rc} with
 * corpus #12, STEllAR-GROUP/hpx examples/heartbeat/hpx_counters.rc with
 * corpus #10, and the Vista-era PerflibV2SampleProvider.rc and _r.h with
 * corpus #9, which agree exactly):
 *
 *   - Each provider numbers its entities in document order: a counterset,
 *     then each of its counters, then the next counterset.
 *   - Each entity takes a block of four ids starting at 1: name = n,
 *     n + 1 = the same name again, marked "{Locked}" (the English name that
 *     is never localized), description = n + 2, and n + 3 unused.  So a
 *     counterset with two counters gets 1/3, its counters 5/7 and 9/11, and
 *     the next counterset 13/15.
 *
 * Explicit ids (nameID, descriptionID of schemaVersion 2.0) are used as
 * written.  The manifests that carry them follow the same block layout
 * (xdp-for-windows: nameID 2000, descriptionID 2002, next counter 2004), so
 * numbering goes on after the block of the highest explicit id: an entity
 * without ids that follows one with nameID 108/descriptionID 110 gets 112/114
 * (the spec's user-mode example leaves exactly that room).  An entity with
 * only one of the two explicit ids gets the other in the same block
 * (descriptionID = nameID + 2, or nameID = descriptionID - 2).
 *
 * resourceBase (schemaVersion 1.x): the first block starts at resourceBase
 * instead of 1.  No public ctrpp output with resourceBase exists to confirm
 * this; it is the reading under which the default base is 1.
 *
 * Entities without a name or description still take their block, so that
 * adding a name later does not renumber everything after it.
 */
#include "perfman.h"

#define IDS_PER_ENTITY 4u
#define DESCRIPTION_OFFSET 2u

struct numbering {
        uint32_t next;          /* first id of the next free block */
};

/*
 * The block an entity's ids live in: its own from nameID or descriptionID
 * when it has one (a lone descriptionID D implies the block D - 2), the
 * running one otherwise.
 */
static uint32_t entity_block(const struct numbering *n, const struct pm_u32 *name_id,
                             const struct pm_u32 *description_id)
{
        if (name_id->set)
                return name_id->value;
        if (description_id->set && description_id->value >= DESCRIPTION_OFFSET)
                return description_id->value - DESCRIPTION_OFFSET;
        return n->next;
}

/* Takes the entity's ids and moves numbering past them. */
static void number_entity(struct numbering *n, const struct pm_u32 *name_id,
                          const struct pm_u32 *description_id, uint32_t *ret_name,
                          uint32_t *ret_description)
{
        uint32_t block = entity_block(n, name_id, description_id);
        uint32_t name = name_id->set ? name_id->value : block;
        uint32_t description = description_id->set ? description_id->value :
                               block + DESCRIPTION_OFFSET;

        /*
         * Numbering goes on after the highest block taken so far, so an
         * entity without ids never lands on one with explicit ids before it.
         * (Unsigned wrap-around near UINT32_MAX is harmless: such ids are not
         * valid resource ids anyway.)
         */
        if (name + IDS_PER_ENTITY > n->next)
                n->next = name + IDS_PER_ENTITY;
        if (description + (IDS_PER_ENTITY - DESCRIPTION_OFFSET) > n->next)
                n->next = description + (IDS_PER_ENTITY - DESCRIPTION_OFFSET);
        *ret_name = name;
        *ret_description = description;
}

static void assign_provider(struct pm_provider *p)
{
        struct numbering n = { .next = p->resource_base.set ? p->resource_base.value : 1 };

        for (size_t i = 0; i < p->n_countersets; i++) {
                struct pm_counterset *cs = &p->countersets[i];

                number_entity(&n, &cs->name_id, &cs->description_id, &cs->res_name_id,
                              &cs->res_description_id);
                for (size_t j = 0; j < cs->n_counters; j++) {
                        struct pm_counter *c = &cs->counters[j];

                        number_entity(&n, &c->name_id, &c->description_id, &c->res_name_id,
                                      &c->res_description_id);
                }
        }
}

void pm_assign_ids(struct pm_manifest *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n_providers; i++)
                assign_provider(&m->providers[i]);
}
