/* SPDX-License-Identifier: MIT */
/* Instances that follow what the kernel lists (instances.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"

void pv_instset_init(struct pv_instset *s, HANDLE provider, const GUID *cset)
{
        *s = (struct pv_instset) { .provider = provider, .cset = *cset };
}

static size_t slot_of(const struct pv_instset *s, uint32_t id)
{
        /* Multiplicative hashing: consecutive PIDs spread over the whole index. */
        uint32_t h = id * UINT32_C(2654435761);

        return (size_t) (h ^ h >> 16) & s->mask;
}

/* The index entry of (id, name), or the free entry where it goes. */
static size_t probe(const struct pv_instset *s, uint32_t id, const char *name)
{
        size_t i = slot_of(s, id);

        while (s->index[i]) {
                const struct pv_inst *e = &s->v[s->index[i] - 1];

                if (e->id == id && strcmp(e->name, name) == 0)
                        break;
                i = (i + 1) & s->mask;
        }
        return i;
}

/* Enters v[0..n) into the cleared index. */
static void index_fill(struct pv_instset *s)
{
        for (size_t k = 0; k < s->n; k++)
                s->index[probe(s, s->v[k].id, s->v[k].name)] = (uint32_t) k + 1;
}

/* Room for one more instance; the index stays at least twice as large as v. */
static int reserve(struct pv_instset *s)
{
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct pv_inst *v;
        uint32_t *index;

        if (s->n < s->cap)
                return 0;
        if (cap > UINT32_MAX / 4)
                return -ENOMEM;
        /* The index first: a larger one serves the present array as well, should
         * the array not grow. */
        index = calloc(2 * cap, sizeof(*index));
        if (!index)
                return -ENOMEM;
        free(s->index);
        s->index = index;
        s->mask = 2 * cap - 1;
        index_fill(s);
        v = realloc(s->v, cap * sizeof(*v));
        if (!v)
                return -ENOMEM;
        s->v = v;
        s->cap = cap;
        return 0;
}

/* Appends (name, id) to the set and to its index. */
static int insert(struct pv_instset *s, const char *name, uint32_t id)
{
        PPERF_COUNTERSET_INSTANCE inst;
        char *copy;
        int r;

        if ((r = reserve(s)) < 0)
                return r;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        inst = PerfCreateInstanceUtf8(s->provider, &s->cset, name, id);
        if (!inst) {
                free(copy);
                return GetLastError() == ERROR_OUTOFMEMORY ? -ENOMEM : -EINVAL;
        }
        s->v[s->n] = (struct pv_inst) { .id = id, .name = copy, .inst = inst };
        s->index[probe(s, id, name)] = (uint32_t) ++s->n;
        return 0;
}

int pv_instset_get(struct pv_instset *s, const char *name, uint32_t id,
                   PPERF_COUNTERSET_INSTANCE *ret)
{
        struct pv_inst *e;
        size_t i;
        int r;

        if (!s || !name || !ret)
                return -EINVAL;
        i = s->index ? probe(s, id, name) : 0;
        if (s->index && s->index[i])
                e = &s->v[s->index[i] - 1];
        else if ((r = insert(s, name, id)) < 0)
                return r;
        else
                e = &s->v[s->n - 1];
        e->seen = true;
        *ret = e->inst;
        return 0;
}

size_t pv_instset_sweep(struct pv_instset *s)
{
        size_t kept = 0, gone;

        for (size_t i = 0; i < s->n; i++) {
                struct pv_inst *e = &s->v[i];

                if (!e->seen) {
                        (void) PerfDeleteInstance(s->provider, e->inst);
                        free(e->name);
                        continue;
                }
                e->seen = false;
                s->v[kept++] = *e;
        }
        gone = s->n - kept;
        s->n = kept;
        if (gone && s->index) {
                /* Positions moved: the index is built again, O(n). */
                memset(s->index, 0, (s->mask + 1) * sizeof(*s->index));
                index_fill(s);
        }
        return gone;
}

void pv_instset_done(struct pv_instset *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++)
                s->v[i].seen = false;
        (void) pv_instset_sweep(s);
        free(s->v);
        free(s->index);
        *s = (struct pv_instset) { 0 };
}

void pv_set_values(HANDLE provider, PPERF_COUNTERSET_INSTANCE inst,
                   const PERF_COUNTERSET_INFO *tmpl, const uint64_t *values, size_t n_values)
{
        const PERF_COUNTER_INFO *c = (const PERF_COUNTER_INFO *) (tmpl + 1);

        for (ULONG i = 0; i < tmpl->NumCounters; i++) {
                if (c[i].CounterId >= n_values)
                        continue;
                if (c[i].Size == sizeof(ULONG))
                        (void) PerfSetULongCounterValue(provider, inst, c[i].CounterId,
                                                        (ULONG) values[c[i].CounterId]);
                else
                        (void) PerfSetULongLongCounterValue(provider, inst, c[i].CounterId,
                                                            values[c[i].CounterId]);
        }
}

ULONG pv_single_instance(HANDLE provider, const GUID *cset, void (*cleanup)(void),
                         PPERF_COUNTERSET_INSTANCE *ret)
{
        PPERF_COUNTERSET_INSTANCE inst = PerfCreateInstanceUtf8(provider, cset, "", 0);

        if (!inst) {
                ULONG status = GetLastError();

                cleanup();
                return status;
        }
        *ret = inst;
        return ERROR_SUCCESS;
}
