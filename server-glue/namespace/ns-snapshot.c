/* SPDX-License-Identifier: MIT */
/*
 * ns-snapshot.c: snapshots of a counterset's live instances, merged across
 * the providers that publish it (ns_snapshot, ns_snapshot_free,
 * ns_thread_trim), and notifications to their callbacks (ns_notify): the
 * two things that wait on providers.  A snapshot points into its
 * providers' value buffers and name caches.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ns-catalog.h"
#include "ns-names.h"

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
                ns_reader_remove(pt->p, &pt->reader);
                dead = ns_names_unpark(pt->p);
                pthread_mutex_unlock(&pt->p->name_lock);
                pt->named = false;
        }
        ns_names_free(dead);
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
        ns_reader_add(p, &pt->reader);
        pt->named = true;
        for (uint32_t i = 0; i < pt->v.n_instances && k == 0; i++) {
                const struct pl_value_rec *rec = pl_values_at(&pt->v, i);
                const struct ns_name *nm;

                k = ns_name_of(p, cset_index, rec, scratch, &nm);
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

/*
 * Reads and names each provider's instances.  One that fails (it died, it
 * is corrupt) is left out, and so is one that is unresponsive (stopped, or
 * late within NS_QUIET_NS): a client must not take values it froze at for
 * fresh ones.  Its instances are absent, not the counterset's blocks
 * failed, because other providers' instances of it are still good.
 */
static int snap_parts(struct ns *ns, struct snap *sn, const struct ns_entry *e, unsigned flags)
{
        uint64_t now = ns_mono_ns();
        int r = 0;

        for (size_t k = 0; k < e->n_src && r == 0; k++) {
                struct ns_prov *p = e->src[k].p;
                bool collect = flags & NS_SNAPSHOT_COLLECT;
                struct snap_part *pt = &sn->parts[k];

                pt->p = p;
                pt->n = 0;
                sn->n_parts = k + 1;
                if (ns_prov_unresponsive(ns, p, now)) {
                        pt->v.n_instances = 0;
                        continue;
                }
                ns_io_begin(ns, p);
                /* Names are read under the same reader lock, right after. */
                if (pl_reader_values(p->r, e->src[k].cset_index,
                                     collect ? PL_SNAPSHOT_COLLECT : 0, &pt->v) == 0)
                        r = part_fill(sn, pt, e->src[k].cset_index);
                else
                        pt->v.n_instances = 0;
                ns_io_end(ns, p);
                /* Too slow to dereference its counters in time: what it has are
                 * old values, and it is not waited for again for a while. */
                if (collect && pt->v.refs_stale) {
                        p->quiet_until = ns_mono_ns() + NS_QUIET_NS;
                        sn->n_inst -= pt->n;
                        pt->n = 0;
                }
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
        e = ns_entry_of(cs);
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
        uint64_t now = ns_mono_ns();
        int told = 0, err = 0;

        if (!ns || !cs)
                return -EINVAL;
        e = ns_entry_of(cs);
        for (size_t k = 0; k < e->n_src; k++) {
                struct ns_prov *p = e->src[k].p;
                uint32_t status;
                int r;

                if (!p->callback || ns_prov_unresponsive(ns, p, now))
                        continue;
                /* The reader bounds the wait by the collect timeout. */
                ns_io_begin(ns, p);
                r = pl_reader_notify(p->r, request_code, buffer, size, &status);
                ns_io_end(ns, p);
                if (r == -ETIMEDOUT)
                        p->quiet_until = ns_mono_ns() + NS_QUIET_NS;
                if (r < 0)
                        err = r;
                else
                        told++;
        }
        return told > 0 || err == 0 ? 0 : err;
}
