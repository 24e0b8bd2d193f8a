/* SPDX-License-Identifier: MIT */
/*
 * ns-catalog.c: the counterset list (ns-catalog.h) and its lookups
 * (ns_count, ns_at, ns_find of ns.h).
 *
 * A counterset's metadata comes from, in order of preference: the
 * self-description of a live provider that publishes it, the installed
 * manifest, and the bare segment descriptor (which has types and sizes but
 * no names: such a counterset is named by its GUID and its counters by
 * their ids).  Its counter list is the segment's when it is live, so that
 * values and metadata always agree; it is the manifest's when nobody
 * publishes it.  Several providers may publish the same counterset (two
 * copies of one program): their instances are merged, each provider's
 * counters mapped by id onto the list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns-catalog.h"

static bool guid_eq(const void *a, const void *b)
{
        return memcmp(a, b, sizeof(GUID)) == 0;
}

static const struct ctrpp_counterset_desc *desc_find(const struct ctrpp_provider_desc *d,
                                                     const GUID *g)
{
        if (!d)
                return NULL;
        for (uint32_t i = 0; i < d->n_countersets; i++)
                if (guid_eq(&d->countersets[i].guid, g))
                        return &d->countersets[i];
        return NULL;
}

static const struct ctrpp_counter_desc *desc_counter(const struct ctrpp_counterset_desc *c,
                                                     uint32_t id)
{
        if (!c)
                return NULL;
        for (uint32_t i = 0; i < c->n_counters; i++)
                if (c->counters[i].id == id)
                        return &c->counters[i];
        return NULL;
}

static const struct ctrpp_provider_desc *prov_desc(struct ns_prov *p)
{
        const struct ctrpp_provider_desc *d;

        if (pl_reader_description(p->r, &d) < 0)
                return NULL;
        p->has_desc = true;
        return d;
}

/* What describes one counterset, found while building. */
struct meta {
        const struct ctrpp_provider_desc *pd;
        const struct ctrpp_counterset_desc *cd;
        const struct pl_counterset *seg;        /* the first live copy, NULL = installed only */
        GUID provider_guid;
};

static const char *str_or(const char *s, const char *fallback)
{
        return s ? s : fallback;
}

static uint32_t id_or_none(uint32_t id)
{
        return id == CTRPP_NO_ID ? NS_NO_ID : id;
}

static void counter_from_desc(struct ns_counter *c, const struct ctrpp_counter_desc *d)
{
        c->id = d->id;
        c->type = d->type;
        c->attrib = d->attrib;
        c->size = d->size;
        c->detail_level = d->detail_level;
        c->default_scale = d->default_scale;
}

/* The metadata that only a description carries, by id. */
static void counter_enrich(struct ns_counter *c, const struct ctrpp_counter_desc *d,
                           const char *fallback_name)
{
        c->base_id = d ? id_or_none(d->base_id) : NS_NO_ID;
        c->perf_time_id = d ? id_or_none(d->perf_time_id) : NS_NO_ID;
        c->perf_freq_id = d ? id_or_none(d->perf_freq_id) : NS_NO_ID;
        c->multi_id = d ? id_or_none(d->multi_counter_id) : NS_NO_ID;
        c->aggregate = d && d->aggregate != CTRPP_NO_AGGREGATE ? (uint32_t) d->aggregate
                                                               : PERF_AGGREGATE_UNDEFINED;
        c->name = str_or(d ? d->name : NULL, fallback_name);
        c->description = str_or(d ? d->description : NULL, "");
}

/* The names used when no description names the counterset or its counters. */
static int fallback_names(struct ns_entry *e, const struct ns_counter *c, uint32_t n)
{
        const GUID *g = &e->pub.guid;

        snprintf(e->guid_text, sizeof(e->guid_text),
                 "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                 g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
                 g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
        e->id_text = calloc(n ? n : 1, sizeof(*e->id_text));
        if (!e->id_text)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++)
                snprintf(e->id_text[i], sizeof(e->id_text[i]), "%u", c[i].id);
        return 0;
}

static int entry_counters(struct ns_entry *e, const struct meta *m)
{
        uint32_t n = m->seg ? m->seg->num_counters : m->cd->n_counters;
        struct ns_counter *c = calloc(n ? n : 1, sizeof(*c));
        uint32_t detail = PERF_DETAIL_ADVANCED;

        if (!c)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                if (m->seg) {
                        const struct pl_seg_counter *s = &m->seg->counters[i];

                        c[i] = (struct ns_counter){ .id = s->id, .type = s->type,
                                .attrib = s->attrib, .size = s->size,
                                .detail_level = s->detail_level, .default_scale = s->scale };
                } else
                        counter_from_desc(&c[i], &m->cd->counters[i]);
                if (c[i].detail_level < detail)
                        detail = c[i].detail_level;
        }
        e->counters = c;
        e->pub.counters = c;
        e->pub.n_counters = n;
        e->pub.detail_level = detail;
        if (fallback_names(e, c, n) < 0)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++)
                counter_enrich(&c[i], desc_counter(m->cd, c[i].id), e->id_text[i]);
        return 0;
}

static int entry_fill(struct ns_entry *e, const GUID *g, const struct meta *m)
{
        e->pub.guid = *g;
        e->pub.instance_type = m->seg ? m->seg->instance_type : m->cd->instance_type;
        e->pub.live = e->n_src > 0;
        if (entry_counters(e, m) < 0)
                return -ENOMEM;
        e->pub.name = str_or(m->cd ? m->cd->name : NULL, e->guid_text);
        e->pub.description = str_or(m->cd ? m->cd->description : NULL, "");
        if (m->pd)
                memcpy(&e->pub.provider_guid, &m->pd->guid, sizeof(GUID));
        else
                e->pub.provider_guid = m->provider_guid;
        e->pub.provider_name = str_or(m->pd ? m->pd->name : NULL, "");
        return 0;
}

static void entry_done(struct ns_entry *e)
{
        for (size_t i = 0; i < e->n_src; i++)
                free(e->src[i].map);
        free(e->src);
        free(e->counters);
        free(e->id_text);
}

void ns_entries_free(struct ns *ns)
{
        for (size_t i = 0; i < ns->n_entries; i++)
                entry_done(&ns->entries[i]);
        free(ns->entries);
        ns->entries = NULL;
        ns->n_entries = 0;
}

/* One copy of a counterset found while building: live (p set) or installed. */
struct item {
        GUID guid;
        struct ns_prov *p;
        uint32_t cset_index;
        const struct pl_counterset *seg;
        const struct ctrpp_provider_desc *installed;
        GUID provider;                  /* of a live copy */
        uid_t uid;                      /* its provider's owner, or the installed owner */
        size_t order;                   /* keeps discovery order among equals */
};

static int item_cmp(const void *a, const void *b)
{
        const struct item *x = a, *y = b;
        int k = memcmp(&x->guid, &y->guid, sizeof(GUID));

        if (k != 0)
                return k;
        if (!x->p != !y->p)
                return x->p ? -1 : 1;   /* live copies first */
        /* Then by provider, so that the layout served does not depend on readdir. */
        if (x->p && (k = memcmp(&x->provider, &y->provider, sizeof(GUID))) != 0)
                return k;
        return x->order < y->order ? -1 : x->order > y->order;
}

struct items {
        struct item *v;
        size_t n, cap;
};

static int items_push(struct items *it, const struct item *x)
{
        if (it->n == it->cap) {
                size_t cap = it->cap ? it->cap * 2 : 64;
                struct item *v = realloc(it->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                it->v = v;
                it->cap = cap;
        }
        it->v[it->n] = *x;
        it->v[it->n].order = it->n;
        it->n++;
        return 0;
}

static int items_collect(struct ns *ns, struct items *it)
{
        for (size_t i = 0; i < ns->n_provs; i++) {
                struct ns_prov *p = ns->provs[i];
                int n = pl_reader_counterset_count(p->r);
                const struct ctrpp_provider_desc *d;
                GUID provider = { 0 };

                p->n_csets = n;
                /* Seen even if refused: ns_provs_check would rebuild for it at every refresh. */
                p->has_desc = pl_reader_description(p->r, &d) == 0;
                if (!p->has_owner) {
                        ns_owner_report_unknown(ns, p);
                        continue;
                }
                pl_reader_provider(p->r, &provider, NULL);
                for (int k = 0; k < n; k++) {
                        const struct pl_counterset *c;

                        /* A malformed descriptor hides that counterset, not the provider. */
                        if (pl_reader_counterset(p->r, (uint32_t) k, &c) < 0)
                                continue;
                        if (items_push(it, &(struct item){ .guid = c->guid, .p = p,
                                                           .cset_index = (uint32_t) k,
                                                           .seg = c, .uid = p->owner,
                                                           .provider = provider }) < 0)
                                return -ENOMEM;
                }
        }
        for (size_t i = 0; i < ns->n_installed; i++) {
                const struct ctrpp_provider_desc *d = ns->installed[i];

                for (uint32_t k = 0; d && k < d->n_countersets; k++) {
                        struct item x = { .installed = d, .uid = ns->installed_owners ?
                                                              ns->installed_owners[i] : 0 };

                        memcpy(&x.guid, &d->countersets[k].guid, sizeof(GUID));
                        if (items_push(it, &x) < 0)
                                return -ENOMEM;
                }
        }
        if (it->n > 1)
                qsort(it->v, it->n, sizeof(*it->v), item_cmp);
        return 0;
}

/*
 * Leaves in it only the copies the ownership rules accept, reporting the
 * others (ns-owner.h); the order stays, so equal GUIDs stay adjacent.
 */
static int items_judge(struct ns *ns, struct items *it)
{
        struct ns_copy *c = calloc(it->n ? it->n : 1, sizeof(*c));
        size_t j = 0;
        int r;

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < it->n; i++)
                c[i] = (struct ns_copy) { .guid = it->v[i].guid, .uid = it->v[i].uid,
                                          .installed = !it->v[i].p, .order = it->v[i].order };
        r = ns_owner_decide(ns, c, it->n);
        for (size_t i = 0; r == 0 && i < it->n; i++) {
                if (c[i].verdict == NS_ACCEPTED)
                        it->v[j++] = it->v[i];
                else
                        ns_owner_report(ns, it->v[i].p, &c[i]);
        }
        if (r == 0)
                it->n = j;
        free(c);
        return r;
}

/* Where ns counter i sits in one provider's copy; NULL when in the same place. */
static int src_map(const struct ns_entry *e, const struct pl_counterset *seg, uint32_t **ret)
{
        uint32_t n = e->pub.n_counters, *map;
        bool same = seg->num_counters == n;

        for (uint32_t i = 0; same && i < n; i++)
                same = seg->counters[i].id == e->counters[i].id;
        if (same) {
                *ret = NULL;
                return 0;
        }
        map = malloc((n ? n : 1) * sizeof(*map));
        if (!map)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                map[i] = UINT32_MAX;
                for (uint32_t j = 0; j < seg->num_counters; j++)
                        if (seg->counters[j].id == e->counters[i].id)
                                map[i] = j;
        }
        *ret = map;
        return 0;
}

/* Builds one entry from the group it->v[lo, hi) of equal GUIDs. */
static int entry_build(struct ns_entry *e, const struct item *v, size_t lo, size_t hi)
{
        struct meta m = { 0 };
        size_t n_live = 0;

        for (size_t i = lo; i < hi; i++) {
                if (v[i].p) {
                        const struct ctrpp_provider_desc *pd = prov_desc(v[i].p);

                        if (!m.seg) {
                                m.seg = v[i].seg;
                                pl_reader_provider(v[i].p->r, &m.provider_guid, NULL);
                        }
                        if (!m.cd && desc_find(pd, &v[i].guid)) {
                                m.pd = pd;
                                m.cd = desc_find(pd, &v[i].guid);
                        }
                        n_live++;
                } else {
                        e->pub.installed = true;
                        if (!m.cd) {
                                m.pd = v[i].installed;
                                m.cd = desc_find(m.pd, &v[i].guid);
                        }
                }
        }
        e->src = calloc(n_live ? n_live : 1, sizeof(*e->src));
        if (!e->src)
                return -ENOMEM;
        e->n_src = n_live;
        if (entry_fill(e, &v[lo].guid, &m) < 0)
                return -ENOMEM;
        for (size_t i = lo, k = 0; i < hi; i++) {
                if (!v[i].p)
                        continue;
                e->src[k] = (struct ns_src){ .p = v[i].p, .cset_index = v[i].cset_index };
                if (src_map(e, v[i].seg, &e->src[k].map) < 0)
                        return -ENOMEM;
                k++;
        }
        return 0;
}

int ns_rebuild(struct ns *ns)
{
        struct items it = { 0 };
        struct ns_entry *v = NULL;
        size_t n = 0;
        int ret = items_collect(ns, &it);

        if (ret == 0)
                ret = items_judge(ns, &it);
        if (ret < 0)
                goto fail;
        v = calloc(it.n ? it.n : 1, sizeof(*v));
        if (!v) {
                ret = -ENOMEM;
                goto fail;
        }
        for (size_t lo = 0, hi; lo < it.n; lo = hi) {
                for (hi = lo + 1; hi < it.n && guid_eq(&it.v[hi].guid, &it.v[lo].guid); hi++)
                        ;
                ret = entry_build(&v[n++], it.v, lo, hi);
                if (ret < 0)
                        goto fail;
        }
        ns_entries_free(ns);
        ns->entries = v;
        ns->n_entries = n;
        ns->dirty = false;
        free(it.v);
        return 0;
fail:
        for (size_t i = 0; i < n; i++)
                entry_done(&v[i]);
        free(v);
        free(it.v);
        return ret;
}

size_t ns_count(const struct ns *ns)
{
        return ns->n_entries;
}

const struct ns_counterset *ns_at(const struct ns *ns, size_t i)
{
        return i < ns->n_entries ? &ns->entries[i].pub : NULL;
}

const struct ns_counterset *ns_find(const struct ns *ns, const GUID *guid)
{
        size_t lo = 0, hi = ns->n_entries;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int k = memcmp(&ns->entries[mid].pub.guid, guid, sizeof(GUID));

                if (k == 0)
                        return &ns->entries[mid].pub;
                if (k < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}
