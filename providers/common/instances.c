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

static int key_cmp(const struct pv_inst *e, uint32_t id, const char *name)
{
        if (e->id != id)
                return e->id < id ? -1 : 1;
        return strcmp(e->name, name);
}

/* The position of (id, name), or where it goes; *found says which. */
static size_t find(const struct pv_instset *s, uint32_t id, const char *name, bool *found)
{
        size_t lo = 0, hi = s->n;

        /* Collections mostly list instances in the order they were created. */
        if (s->n > 0 && key_cmp(&s->v[s->n - 1], id, name) < 0) {
                *found = false;
                return s->n;
        }
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int k = key_cmp(&s->v[mid], id, name);

                if (k == 0) {
                        *found = true;
                        return mid;
                }
                if (k < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

static int insert(struct pv_instset *s, size_t pos, const char *name, uint32_t id)
{
        PPERF_COUNTERSET_INSTANCE inst;
        char *copy;

        if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 16;
                struct pv_inst *v = realloc(s->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                s->v = v;
                s->cap = cap;
        }
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        inst = PerfCreateInstanceUtf8(s->provider, &s->cset, name, id);
        if (!inst) {
                free(copy);
                return GetLastError() == ERROR_OUTOFMEMORY ? -ENOMEM : -EINVAL;
        }
        memmove(&s->v[pos + 1], &s->v[pos], (s->n - pos) * sizeof(*s->v));
        s->v[pos] = (struct pv_inst) { .id = id, .name = copy, .inst = inst };
        s->n++;
        return 0;
}

int pv_instset_get(struct pv_instset *s, const char *name, uint32_t id,
                   PPERF_COUNTERSET_INSTANCE *ret)
{
        bool found;
        size_t pos;
        int r;

        if (!s || !name || !ret)
                return -EINVAL;
        pos = find(s, id, name, &found);
        if (!found && (r = insert(s, pos, name, id)) < 0)
                return r;
        s->v[pos].seen = true;
        *ret = s->v[pos].inst;
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
