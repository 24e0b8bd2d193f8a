/* SPDX-License-Identifier: MIT */
/*
 * The namespace over live segments and installed manifests (ns.h,
 * ns-live.h).
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ns-names.h"
#include "ns-prov.h"
#include "pcq-utf.h"
#include "reader.h"

/* One provider's copy of a counterset. */
struct ns_src {
        struct ns_prov *p;
        uint32_t cset_index;            /* in the provider's segment */
        uint32_t *map;                  /* ns counter i -> segment counter map[i]; NULL = identity */
};

struct ns_entry {
        struct ns_counterset pub;
        struct ns_counter *counters;
        struct ns_src *src;
        size_t n_src;
        /* Names when nothing else names them: the GUID, and each counter's id. */
        char guid_text[39];
        char (*id_text)[11];
};

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

static void entries_free(struct ns *ns)
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
                GUID provider = { 0 };

                p->n_csets = n;
                pl_reader_provider(p->r, &provider, NULL);
                for (int k = 0; k < n; k++) {
                        const struct pl_counterset *c;

                        /* A malformed descriptor hides that counterset, not the provider. */
                        if (pl_reader_counterset(p->r, (uint32_t) k, &c) < 0)
                                continue;
                        if (items_push(it, &(struct item){ .guid = c->guid, .p = p,
                                                           .cset_index = (uint32_t) k,
                                                           .seg = c,
                                                           .provider = provider }) < 0)
                                return -ENOMEM;
                }
        }
        for (size_t i = 0; i < ns->n_installed; i++) {
                const struct ctrpp_provider_desc *d = ns->installed[i];

                for (uint32_t k = 0; d && k < d->n_countersets; k++) {
                        struct item x = { .installed = d };

                        memcpy(&x.guid, &d->countersets[k].guid, sizeof(GUID));
                        if (items_push(it, &x) < 0)
                                return -ENOMEM;
                }
        }
        if (it->n > 1)
                qsort(it->v, it->n, sizeof(*it->v), item_cmp);
        return 0;
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

static int rebuild(struct ns *ns)
{
        struct items it = { 0 };
        struct ns_entry *v = NULL;
        size_t n = 0;
        int ret = items_collect(ns, &it);

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
        entries_free(ns);
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

int ns_new(const char *runtime_dir, struct ns **ret)
{
        struct ns *ns;

        if (!runtime_dir || !ret)
                return -EINVAL;
        ns = calloc(1, sizeof(*ns));
        if (!ns)
                return -ENOMEM;
        ns->runtime_dir = strdup(runtime_dir);
        if (!ns->runtime_dir) {
                free(ns);
                return -ENOMEM;
        }
        ns->rescan = ns->dirty = true;
        pthread_mutex_init(&ns->lock, NULL);
        pthread_cond_init(&ns->idle, NULL);
        *ret = ns;
        return 0;
}

void ns_set_threaded(struct ns *ns)
{
        ns->threaded = true;
}

void ns_lock(struct ns *ns)
{
        pthread_mutex_lock(&ns->lock);
}

void ns_unlock(struct ns *ns)
{
        pthread_mutex_unlock(&ns->lock);
}

void ns_wait_idle(struct ns *ns)
{
        while (ns->waiters > 0)
                pthread_cond_wait(&ns->idle, &ns->lock);
}

void ns_free(struct ns *ns)
{
        if (!ns)
                return;
        /* What this thread kept of its snapshots goes with the namespace. */
        ns_thread_trim();
        entries_free(ns);
        for (size_t i = 0; i < ns->n_provs; i++)
                prov_free(ns->provs[i]);
        free(ns->provs);
        free(ns->runtime_dir);
        pthread_cond_destroy(&ns->idle);
        pthread_mutex_destroy(&ns->lock);
        free(ns);
}

void ns_set_installed(struct ns *ns, const struct ctrpp_provider_desc *const *descs, size_t n)
{
        ns->installed = descs;
        ns->n_installed = n;
        ns->dirty = true;
}

void ns_runtime_changed(struct ns *ns)
{
        ns->rescan = true;
}

/*
 * Whether the runtime directory may hold a provider not scanned yet.  The
 * server also learns this from inotify, but a request can be dispatched
 * before the event that announced its provider: one stat(2) per refresh
 * makes "announced before the request" mean "served by the request".  The
 * file system's clock is coarse (a tick), so a change within the last
 * 50 ms of the last one may not have moved the mtime: rescan then too.
 */
static bool runtime_dir_changed(struct ns *ns)
{
        struct timespec now;
        struct stat st;
        int64_t age_ns;

        if (stat(ns->runtime_dir, &st) < 0)
                return false;
        clock_gettime(CLOCK_REALTIME, &now);
        age_ns = (int64_t) (now.tv_sec - st.st_mtim.tv_sec) * 1000000000 +
                 (now.tv_nsec - st.st_mtim.tv_nsec);
        if (st.st_mtim.tv_sec == ns->dir_mtime.tv_sec &&
            st.st_mtim.tv_nsec == ns->dir_mtime.tv_nsec && age_ns > 50000000)
                return false;
        ns->dir_mtime = st.st_mtim;
        return true;
}

int ns_refresh(struct ns *ns)
{
        int ret;

        if (!ns)
                return -EINVAL;
        /*
         * While some thread waits on a provider, only new providers are
         * added: reaping and rebuilding free what that thread holds, and
         * touch readers it may be using.  They happen at the next refresh
         * with nobody waiting, at most a collect bound later.
         */
        if (ns->waiters == 0)
                provs_reap(ns);
        if (runtime_dir_changed(ns))
                ns->rescan = true;
        if (ns->rescan) {
                /* A missing runtime directory just means no provider yet. */
                ret = pl_scan(ns->runtime_dir, prov_add, ns, NULL);
                if (ret < 0 && ret != -ENOENT)
                        return ret;
                ns->rescan = false;
        }
        if (ns->waiters > 0)
                return 0;
        provs_check(ns);
        if (!ns->dirty)
                return 0;
        ret = rebuild(ns);
        /* The old list may point into readers just closed: never serve it. */
        if (ret < 0)
                entries_free(ns);
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

static const struct ns_entry *entry_of(const struct ns_counterset *cs)
{
        return (const struct ns_entry *) ((const char *) cs - offsetof(struct ns_entry, pub));
}

/* One provider's part of a snapshot. */
struct snap_part {
        struct ns_prov *p;
        struct pl_values v;             /* its records; the buffer outlives the snapshot */
        bool named;                     /* reader is on p->readers */
        struct ns_reader reader;
        size_t first, n;                /* its instances in the snapshot's inst */
};

/* The snapshot the caller sees, and what keeps its memory alive. */
struct snap {
        struct ns_snapshot pub;
        struct ns_instance *inst;
        size_t n_inst;
        uint64_t *mapped;               /* values of copies laid out differently */
        struct snap_part *parts;
        size_t n_parts;
        size_t inst_cap, mapped_cap, parts_cap;
};

/*
 * The arrays of this thread's last snapshot, kept for its next one: perflibd
 * serves each client from a thread of its own, which asks for about the
 * same snapshot again and again.  ns_thread_trim frees them.
 */
static __thread struct snap *spare;

static void part_done(struct snap_part *pt)
{
        struct ns_name *dead = NULL;

        if (pt->named) {
                pthread_mutex_lock(&pt->p->name_lock);
                reader_remove(pt->p, &pt->reader);
                dead = names_unpark(pt->p);
                pthread_mutex_unlock(&pt->p->name_lock);
                pt->named = false;
        }
        names_free(dead);
}

static void snap_free(struct snap *sn)
{
        if (!sn)
                return;
        for (size_t i = 0; i < sn->parts_cap; i++)
                pl_reader_values_done(&sn->parts[i].v);
        free(sn->parts);
        free(sn->inst);
        free(sn->mapped);
        free(sn);
}

void ns_snapshot_free(struct ns_snapshot *s)
{
        struct snap *sn = (struct snap *) s;

        if (!sn)
                return;
        for (size_t i = 0; i < sn->n_parts; i++)
                part_done(&sn->parts[i]);
        sn->n_parts = 0;
        if (spare) {
                snap_free(sn);
                return;
        }
        spare = sn;
}

void ns_thread_trim(void)
{
        snap_free(spare);
        spare = NULL;
}

/* p[0..*cap) grown to n elements of size (contents not kept); 0 or -ENOMEM. */
static int array_reserve(void **p, size_t *cap, size_t n, size_t size)
{
        void *v;

        if (n == 0)
                n = 1;
        if (n <= *cap)
                return 0;
        if (n > SIZE_MAX / size)
                return -ENOMEM;
        v = malloc(n * size);
        if (!v)
                return -ENOMEM;
        free(*p);
        *p = v;
        *cap = n;
        return 0;
}

/* Room for n parts, the buffers of those there kept and the new ones zeroed. */
static int parts_reserve(struct snap *sn, size_t n)
{
        struct snap_part *v;

        if (n <= sn->parts_cap)
                return 0;
        v = realloc(sn->parts, n * sizeof(*v));
        if (!v)
                return -ENOMEM;
        memset(v + sn->parts_cap, 0, (n - sn->parts_cap) * sizeof(*v));
        sn->parts = v;
        sn->parts_cap = n;
        return 0;
}

/* Room for n more instances after those already there, which are kept. */
static int inst_reserve(struct snap *sn, size_t n)
{
        struct ns_instance *v;
        size_t cap = sn->inst_cap ? sn->inst_cap : 64;

        if (n > SIZE_MAX / sizeof(*v) - sn->n_inst)
                return -ENOMEM;
        n += sn->n_inst;
        if (n <= sn->inst_cap)
                return 0;
        while (cap < n)
                cap *= 2;
        v = realloc(sn->inst, cap * sizeof(*v));
        if (!v)
                return -ENOMEM;
        sn->inst = v;
        sn->inst_cap = cap;
        return 0;
}

/*
 * Names every record of pt and appends an instance for each one still
 * there; the snapshot is a reader of the names until freed.  Under p->lock.
 */
static int part_fill(struct snap *sn, struct snap_part *pt, uint32_t cset_index)
{
        static __thread wchar_t scratch[PL_SEG_MAX_NAME_BYTES / sizeof(wchar_t)];
        struct ns_prov *p = pt->p;
        struct ns_instance *x;
        int k = 0;

        if (inst_reserve(sn, pt->v.n_instances) < 0)
                return -ENOMEM;
        x = sn->inst + sn->n_inst;
        pt->first = sn->n_inst;
        pthread_mutex_lock(&p->name_lock);
        reader_add(p, &pt->reader);
        pt->named = true;
        for (uint32_t i = 0; i < pt->v.n_instances && k == 0; i++) {
                const struct pl_value_rec *rec = pl_values_at(&pt->v, i);
                const struct ns_name *nm;

                k = name_of(p, cset_index, rec, scratch, &nm);
                if (!nm)
                        continue;
                *x++ = (struct ns_instance){ .id = rec->instance_id, .name = nm->name,
                                             .name_len = nm->name_len, .values = rec->values,
                                             .name16 = nm->u16, .name16_size = nm->u16_size };
        }
        pthread_mutex_unlock(&p->name_lock);
        pt->n = (size_t) (x - (sn->inst + sn->n_inst));
        sn->n_inst += pt->n;
        return k;
}

/* Reads and names each provider's instances; one that fails (it died, it is corrupt) is left out. */
static int snap_parts(struct ns *ns, struct snap *sn, const struct ns_entry *e, unsigned flags)
{
        int r = 0;

        for (size_t k = 0; k < e->n_src && r == 0; k++) {
                struct ns_prov *p = e->src[k].p;
                bool collect = (flags & NS_SNAPSHOT_COLLECT) && mono_ns() >= p->quiet_until;
                struct snap_part *pt = &sn->parts[k];

                pt->p = p;
                pt->n = 0;
                io_begin(ns, p);
                /* Names are read under the same reader lock, right after. */
                if (pl_reader_values(p->r, e->src[k].cset_index,
                                     collect ? PL_SNAPSHOT_COLLECT : 0, &pt->v) == 0)
                        r = part_fill(sn, pt, e->src[k].cset_index);
                else
                        pt->v.n_instances = 0;
                io_end(ns, p);
                sn->n_parts = k + 1;
                /* A provider too slow to dereference its counters in time serves its
                 * last values, and is not waited for again for a while. */
                if (collect && pt->v.refs_stale)
                        p->quiet_until = mono_ns() + NS_QUIET_NS;
        }
        return r;
}

/* Values of the copies whose counters are laid out differently, in ns order. */
static int snap_map(struct snap *sn, const struct ns_entry *e)
{
        uint32_t nc = e->pub.n_counters;
        size_t n_mapped = 0;
        uint64_t *m;

        for (size_t k = 0; k < sn->n_parts; k++)
                if (e->src[k].map)
                        n_mapped += sn->parts[k].n * nc;
        if (n_mapped == 0)
                return 0;
        if (array_reserve((void **) &sn->mapped, &sn->mapped_cap, n_mapped, sizeof(*m)) < 0)
                return -ENOMEM;
        m = sn->mapped;
        for (size_t k = 0; k < sn->n_parts; k++) {
                const uint32_t *map = e->src[k].map;
                uint32_t nv = sn->parts[k].v.num_values;

                for (size_t i = sn->parts[k].first; map && i < sn->parts[k].first + sn->parts[k].n;
                     i++) {
                        for (uint32_t c = 0; c < nc; c++)
                                m[c] = map[c] < nv ? sn->inst[i].values[map[c]] : 0;
                        sn->inst[i].values = m;
                        m += nc;
                }
        }
        return 0;
}

int ns_snapshot(struct ns *ns, const struct ns_counterset *cs, unsigned flags,
                struct ns_snapshot **ret)
{
        const struct ns_entry *e;
        struct snap *sn;

        if (!ns || !cs || !ret || (flags & ~NS_SNAPSHOT_COLLECT))
                return -EINVAL;
        e = entry_of(cs);
        sn = spare ? spare : calloc(1, sizeof(*sn));
        spare = NULL;
        if (!sn)
                return -ENOMEM;
        sn->pub = (struct ns_snapshot){ .n_counters = cs->n_counters };
        sn->n_inst = 0;
        if (parts_reserve(sn, e->n_src) < 0 || snap_parts(ns, sn, e, flags) < 0 ||
            sn->n_inst > UINT32_MAX || snap_map(sn, e) < 0)
                goto oom;
        sn->pub.n_instances = (uint32_t) sn->n_inst;
        sn->pub.instances = sn->inst;
        *ret = &sn->pub;
        return 0;
oom:
        ns_snapshot_free(&sn->pub);
        return -ENOMEM;
}

int ns_notify(struct ns *ns, const struct ns_counterset *cs, uint32_t request_code,
              const void *buffer, uint32_t size)
{
        const struct ns_entry *e;
        uint64_t now = mono_ns();
        int told = 0, err = 0;

        if (!ns || !cs)
                return -EINVAL;
        e = entry_of(cs);
        for (size_t k = 0; k < e->n_src; k++) {
                struct ns_prov *p = e->src[k].p;
                uint32_t status;
                int r;

                if (!p->callback || now < p->quiet_until)
                        continue;
                /* The reader bounds the wait by the collect timeout. */
                io_begin(ns, p);
                r = pl_reader_notify(p->r, request_code, buffer, size, &status);
                io_end(ns, p);
                if (r == -ETIMEDOUT)
                        p->quiet_until = mono_ns() + NS_QUIET_NS;
                if (r < 0)
                        err = r;
                else
                        told++;
        }
        return told > 0 || err == 0 ? 0 : err;
}
