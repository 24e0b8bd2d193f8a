/* SPDX-License-Identifier: MIT */
/*
 * ns-snapshot.c: snapshots of a counterset's live instances, merged across
 * the providers that publish it (ns_snapshot, ns_collect,
 * ns_snapshot_free, ns_thread_trim), shared by the requests that want one
 * at the same time, and notifications to their callbacks (ns_notify): the
 * two things that wait on providers.  A snapshot points into its
 * providers' value buffers and name caches.  What snapshots hold is paid
 * from the query memory (ns_mem_take), which the operations' replies
 * share.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "ns-catalog.h"
#include "ns-log.h"
#include "ns-names.h"

/* One provider's part of a snapshot. */
struct snap_part {
        struct ns_prov *p;
        struct pl_values v;             /* its records; the buffer outlives the snapshot */
        bool named;                     /* reader is on p->readers */
        struct ns_reader reader;
        size_t first, n;                /* its instances in the snapshot's inst */
};

/* The snapshot the callers see, and what keeps its memory alive. */
struct snap {
        struct ns_snapshot pub;
        struct ns *ns;
        uint64_t ticket;                /* ns->ticket when its taking began */
        unsigned refs;                  /* holders, under the namespace lock */
        size_t paid;                    /* bytes of it paid from the query memory */
        struct ns_instance *inst;
        size_t n_inst;
        uint64_t *mapped;               /* values of copies laid out differently */
        struct snap_part *parts;
        size_t n_parts;
        size_t inst_cap, mapped_cap, parts_cap;
};

/*
 * The requests for one kind of snapshot of one counterset (ns_snapshot's
 * flags, and SHARE_NOTIFY for ns_collect) that are under way: at most one
 * snapshot is taken at a time; a request that arrives meanwhile waits, and
 * the first of those to wake takes the next one for all of them.  The
 * last one taken is held here (a reference of its own) for those that
 * waited for it, until they have all woken.  Exists while a request is in
 * snap_get for it; nothing is rebuilt then (see waiters), so e stays valid.
 */
struct ns_share {
        const struct ns_entry *e;
        unsigned mode;
        struct snap *taking;
        struct snap *last;
        uint64_t failed;                /* ticket of the last taking that failed, */
        int error;                      /* and its -errno */
        unsigned users;                 /* requests in snap_get */
        pthread_cond_t done;            /* a taking ended */
        struct ns_share *next;
};

#define SHARE_NOTIFY 0x100u

/* The buffer of PERF_COLLECT_START and PERF_COLLECT_END. */
struct collect_note {
        const wchar_t *machine;
        uint32_t size;
};

/*
 * The arrays of a snapshot this thread freed, kept for its next one:
 * perflibd serves each client from a thread of its own, which asks for
 * about the same snapshot again and again.  Only a small one is kept
 * (NS_SPARE_BYTES), and it is not paid for meanwhile: a huge one would
 * hold its memory between calls in every thread that ever read it.
 * ns_thread_trim frees it.
 */
static __thread struct snap *spare;

int ns_mem_try(struct ns *ns, size_t bytes)
{
        size_t used = __atomic_load_n(&ns->query_used, __ATOMIC_RELAXED);

        do {
                if (ns->query_memory && bytes > ns->query_memory - used)
                        return -ENOMEM;
        } while (!__atomic_compare_exchange_n(&ns->query_used, &used, used + bytes, true,
                                              __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return 0;
}

int ns_mem_take(struct ns *ns, size_t bytes)
{
        if (ns_mem_try(ns, bytes) == 0)
                return 0;
        ns_log(ns, LOG_WARNING, "refusing a query: %zu bytes more would pass the %zu of "
               "query memory (--query-memory), %zu held", bytes, ns->query_memory,
               ns_query_memory_used(ns));
        return -ENOMEM;
}

void ns_mem_give(struct ns *ns, size_t bytes)
{
        __atomic_sub_fetch(&ns->query_used, bytes, __ATOMIC_RELAXED);
}

void ns_set_query_memory(struct ns *ns, size_t bytes)
{
        ns->query_memory = bytes;
}

size_t ns_query_memory_used(const struct ns *ns)
{
        return __atomic_load_n(&ns->query_used, __ATOMIC_RELAXED);
}

/* Pays for bytes more of sn before they are allocated. */
static int snap_pay(struct snap *sn, size_t bytes)
{
        if (bytes == 0)
                return 0;
        if (ns_mem_take(sn->ns, bytes) < 0)
                return -ENOMEM;
        sn->paid += bytes;
        return 0;
}

/* What sn's arrays hold, its value records included. */
static size_t snap_bytes(const struct snap *sn)
{
        size_t n = sizeof(*sn) + sn->inst_cap * sizeof(*sn->inst) +
                   sn->mapped_cap * sizeof(*sn->mapped) + sn->parts_cap * sizeof(*sn->parts);

        for (size_t i = 0; i < sn->parts_cap; i++)
                n += sn->parts[i].v.cap;
        return n;
}

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

/* Lets go of what sn names and pays for; its arrays become the spare or go. */
static void snap_release(struct snap *sn)
{
        for (size_t i = 0; i < sn->n_parts; i++)
                part_done(&sn->parts[i]);
        sn->n_parts = 0;
        ns_mem_give(sn->ns, sn->paid);
        sn->paid = 0;
        if (spare || snap_bytes(sn) > NS_SPARE_BYTES) {
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

/* A snapshot to fill, its arrays (the spare's, when there is one) paid for. */
static struct snap *snap_new(struct ns *ns)
{
        struct snap *sn = spare ? spare : calloc(1, sizeof(*sn));

        spare = NULL;
        if (!sn)
                return NULL;
        sn->ns = ns;
        sn->refs = 1;
        if (snap_pay(sn, snap_bytes(sn)) < 0) {
                snap_release(sn);
                return NULL;
        }
        return sn;
}

/* sn's array p[0..*cap) grown to n elements of size (contents not kept); 0 or -ENOMEM. */
static int array_reserve(struct snap *sn, void **p, size_t *cap, size_t n, size_t size)
{
        void *v;

        if (n == 0)
                n = 1;
        if (n <= *cap)
                return 0;
        if (n > SIZE_MAX / size || snap_pay(sn, (n - *cap) * size) < 0)
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
        if (n > SIZE_MAX / sizeof(*v) || snap_pay(sn, (n - sn->parts_cap) * sizeof(*v)) < 0)
                return -ENOMEM;
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

        if (n > SIZE_MAX / 2 / sizeof(*v) - sn->n_inst)
                return -ENOMEM;
        n += sn->n_inst;
        if (n <= sn->inst_cap)
                return 0;
        while (cap < n)
                cap *= 2;
        if (snap_pay(sn, (cap - sn->inst_cap) * sizeof(*v)) < 0)
                return -ENOMEM;
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
 * Reads one provider's records into pt and names them, under its lock.
 * The reader grows the records' buffer as it goes: what it grew by is paid
 * for once it is done, which is the most a read passes the cap by.
 */
static int part_read(struct ns *ns, struct snap *sn, struct snap_part *pt,
                     const struct ns_src *src, bool collect)
{
        size_t had = pt->v.cap;
        int k, r;

        ns_io_begin(ns, pt->p);
        k = pl_reader_values(pt->p->r, src->cset_index, collect ? PL_SNAPSHOT_COLLECT : 0,
                             &pt->v);
        r = snap_pay(sn, pt->v.cap - had);
        if (k < 0)
                pt->v.n_instances = 0;
        else if (r == 0)
                /* Names are read under the same reader lock, right after. */
                r = part_fill(sn, pt, src->cset_index);
        ns_io_end(ns, pt->p);
        return r;
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
        bool collect = flags & NS_SNAPSHOT_COLLECT;
        int r = 0;

        for (size_t k = 0; k < e->n_src && r == 0; k++) {
                struct snap_part *pt = &sn->parts[k];

                pt->p = e->src[k].p;
                pt->n = 0;
                pt->v.n_instances = 0;
                sn->n_parts = k + 1;
                if (ns_prov_unresponsive(ns, pt->p, now))
                        continue;
                r = part_read(ns, sn, pt, &e->src[k], collect);
                /* Too slow to dereference its counters in time: what it has are
                 * old values, and it is not waited for again for a while. */
                if (collect && pt->v.refs_stale) {
                        ns_prov_missed(ns, pt->p);
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
        if (array_reserve(sn, (void **) &sn->mapped, &sn->mapped_cap, n_mapped, sizeof(*m)) < 0)
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

/*
 * Fills sn with cs's instances, telling the providers around it when
 * note is given.  The namespace lock is let go while providers are waited on.
 */
static int snap_fill(struct ns *ns, struct snap *sn, const struct ns_counterset *cs,
                     unsigned flags, const struct collect_note *note)
{
        const struct ns_entry *e = ns_entry_of(cs);
        int r;

        sn->pub = (struct ns_snapshot){ .n_counters = cs->n_counters };
        sn->n_inst = 0;
        if (note)
                (void) ns_notify(ns, cs, PERF_COLLECT_START, note->machine, note->size);
        r = parts_reserve(sn, e->n_src);
        if (r == 0)
                r = snap_parts(ns, sn, e, flags);
        if (r == 0 && sn->n_inst > UINT32_MAX)
                r = -ENOMEM;
        if (r == 0)
                r = snap_map(sn, e);
        /* Providers hear the end of a collection whatever became of it. */
        if (note)
                (void) ns_notify(ns, cs, PERF_COLLECT_END, note->machine, note->size);
        sn->pub.n_instances = (uint32_t) sn->n_inst;
        sn->pub.instances = sn->inst;
        return r < 0 ? -ENOMEM : 0;
}

/* The share of e's snapshots of this mode, made when there is none; share_put lets go. */
static struct ns_share *share_get(struct ns *ns, const struct ns_entry *e, unsigned mode)
{
        struct ns_share *sh;

        for (sh = ns->shares; sh; sh = sh->next)
                if (sh->e == e && sh->mode == mode) {
                        sh->users++;
                        return sh;
                }
        sh = calloc(1, sizeof(*sh));
        if (!sh)
                return NULL;
        sh->users = 1;
        sh->e = e;
        sh->mode = mode;
        pthread_cond_init(&sh->done, NULL);
        sh->next = ns->shares;
        ns->shares = sh;
        return sh;
}

static void snap_unref(struct snap *sn)
{
        if (--sn->refs == 0)
                snap_release(sn);
}

/* A request leaves snap_get: the last one of sh lets go of it too. */
static void share_put(struct ns *ns, struct ns_share *sh)
{
        struct ns_share **pp = &ns->shares;

        if (--sh->users > 0)
                return;
        if (sh->last)
                snap_unref(sh->last);
        while (*pp != sh)
                pp = &(*pp)->next;
        *pp = sh->next;
        pthread_cond_destroy(&sh->done);
        free(sh);
}

/*
 * Waits for sh's taking to end.  Counted as a wait on a provider (which
 * the taker is doing): nothing is rebuilt or freed meanwhile.
 */
static int share_wait(struct ns *ns, struct ns_share *sh)
{
        /* Unthreaded, nobody else can be taking it: a caller's bug. */
        if (!ns->threaded)
                return -EDEADLK;
        ns->waiters++;
        pthread_cond_wait(&sh->done, &ns->lock);
        if (--ns->waiters == 0)
                pthread_cond_broadcast(&ns->idle);
        return 0;
}

/* Takes the next snapshot of sh, for every request waiting for it too. */
static int share_take(struct ns *ns, struct ns_share *sh, const struct ns_counterset *cs,
                      const struct collect_note *note, struct snap **ret)
{
        struct snap *sn = snap_new(ns);
        int r;

        if (!sn)
                return -ENOMEM;
        sn->ticket = ++ns->ticket;
        sh->taking = sn;
        r = snap_fill(ns, sn, cs, sh->mode & NS_SNAPSHOT_COLLECT, note);
        sh->taking = NULL;
        if (r < 0) {
                sh->failed = sn->ticket;
                sh->error = r;
                snap_release(sn);
        } else {
                /* An older one lives on with its holders, no longer handed out. */
                if (sh->last)
                        snap_unref(sh->last);
                sh->last = sn;
                sn->refs++;
                *ret = sn;
        }
        if (ns->threaded)
                pthread_cond_broadcast(&sh->done);
        return r;
}

/*
 * A snapshot of mode that began after this call did: the last one taken
 * when it is that recent, else the one being taken after waiting for it,
 * else one taken now.  A request that waited for a taking that began
 * before it arrived takes or waits for the next.
 */
static int snap_get(struct ns *ns, const struct ns_counterset *cs, unsigned mode,
                    const struct collect_note *note, struct ns_snapshot **ret)
{
        uint64_t arrival = ++ns->ticket;
        struct ns_share *sh = share_get(ns, ns_entry_of(cs), mode);
        struct snap *sn = NULL;
        int r = 0;

        if (!sh)
                return -ENOMEM;
        while (r == 0 && !sn) {
                if (sh->last && sh->last->ticket > arrival) {
                        sn = sh->last;
                        sn->refs++;
                } else if (sh->taking) {
                        r = share_wait(ns, sh);
                } else if (sh->failed > arrival) {
                        r = sh->error;
                } else {
                        r = share_take(ns, sh, cs, note, &sn);
                }
        }
        share_put(ns, sh);
        if (r < 0)
                return r;
        *ret = &sn->pub;
        return 0;
}

int ns_snapshot(struct ns *ns, const struct ns_counterset *cs, unsigned flags,
                struct ns_snapshot **ret)
{
        if (!ns || !cs || !ret || (flags & ~NS_SNAPSHOT_COLLECT))
                return -EINVAL;
        return snap_get(ns, cs, flags, NULL, ret);
}

int ns_collect(struct ns *ns, const struct ns_counterset *cs, const wchar_t *machine,
               size_t machine_len, struct ns_snapshot **ret)
{
        struct collect_note note = { machine ? machine : L"", 0 };

        if (!ns || !cs || !ret || machine_len >= UINT32_MAX / sizeof(wchar_t))
                return -EINVAL;
        note.size = (uint32_t) ((machine ? machine_len + 1 : 1) * sizeof(wchar_t));
        return snap_get(ns, cs, NS_SNAPSHOT_COLLECT | SHARE_NOTIFY, &note, ret);
}

void ns_snapshot_free(struct ns_snapshot *s)
{
        if (s)
                snap_unref((struct snap *) s);
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
                        ns_prov_missed(ns, p);
                if (r < 0)
                        err = r;
                else
                        told++;
        }
        return told > 0 || err == 0 ? 0 : err;
}
