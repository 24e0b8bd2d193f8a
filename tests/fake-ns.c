/* SPDX-License-Identifier: MIT */
/* A scripted namespace for the core's tests; see fake-ns.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-ns.h"

struct fake_instance {
        uint32_t id;
        wchar_t *name;
        uint32_t name_len;
        uint64_t *values;
};

struct fake_cs {
        struct ns_counterset cs;        /* what ns_find hands out: first, so it can be cast back */
        struct fake_instance *inst;
        size_t n_inst;
};

struct ns {
        struct fake_cs **sets;          /* each allocated alone, so pointers stay put */
        size_t n_sets;
        struct fake_event *events;
        size_t n_events;
        bool bump;
        bool short_snapshots;
        int snapshot_error;
        size_t mem_cap, mem_used;
};

/* A snapshot and the copies it owns. */
struct fake_snapshot {
        struct ns_snapshot pub;
        struct ns_instance *inst;
};

static void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size ? size : 1);

        if (!p) {
                fprintf(stderr, "fake-ns: out of memory\n");
                abort();
        }
        return p;
}

static void *xmemdup(const void *src, size_t size)
{
        void *p = xcalloc(1, size);

        memcpy(p, src, size);
        return p;
}

struct ns *fake_ns_new(void)
{
        return xcalloc(1, sizeof(struct ns));
}

static void free_instance(struct fake_instance *fi)
{
        free(fi->name);
        free(fi->values);
}

static void free_set(struct fake_cs *fc)
{
        for (size_t i = 0; i < fc->n_inst; i++)
                free_instance(&fc->inst[i]);
        free(fc->inst);
        free(fc);
}

void fake_ns_free(struct ns *ns)
{
        if (!ns)
                return;
        for (size_t i = 0; i < ns->n_sets; i++)
                free_set(ns->sets[i]);
        free(ns->sets);
        fake_ns_clear_events(ns);
        free(ns);
}

static struct fake_cs *find_set(const struct ns *ns, const GUID *guid)
{
        for (size_t i = 0; i < ns->n_sets; i++)
                if (!memcmp(&ns->sets[i]->cs.guid, guid, sizeof(GUID)))
                        return ns->sets[i];
        return NULL;
}

/* The fake_cs behind a pointer the core got from us; aborts on a stranger. */
static struct fake_cs *own_set(const struct ns *ns, const struct ns_counterset *cs)
{
        for (size_t i = 0; i < ns->n_sets; i++)
                if (&ns->sets[i]->cs == cs)
                        return ns->sets[i];
        fprintf(stderr, "fake-ns: a counterset pointer that is not ours\n");
        abort();
}

void fake_ns_add(struct ns *ns, const struct ns_counterset *cs)
{
        struct fake_cs *fc = xcalloc(1, sizeof(*fc));
        struct fake_cs **sets = reallocarray(ns->sets, ns->n_sets + 1, sizeof(*sets));

        if (!sets)
                abort();
        fc->cs = *cs;
        ns->sets = sets;
        ns->sets[ns->n_sets++] = fc;
}

void fake_ns_remove(struct ns *ns, const GUID *guid)
{
        for (size_t i = 0; i < ns->n_sets; i++) {
                if (memcmp(&ns->sets[i]->cs.guid, guid, sizeof(GUID)) != 0)
                        continue;
                free_set(ns->sets[i]);
                memmove(ns->sets + i, ns->sets + i + 1, (ns->n_sets - i - 1) * sizeof(*ns->sets));
                ns->n_sets--;
                return;
        }
}

void fake_ns_add_instance(struct ns *ns, const GUID *cs, uint32_t id, const wchar_t *name,
                          const uint64_t *values)
{
        struct fake_cs *fc = find_set(ns, cs);
        struct fake_instance *fi;
        size_t len = wcslen(name);

        if (!fc)
                abort();
        fi = reallocarray(fc->inst, fc->n_inst + 1, sizeof(*fi));
        if (!fi)
                abort();
        fc->inst = fi;
        fi = &fc->inst[fc->n_inst++];
        fi->id = id;
        fi->name = xmemdup(name, (len + 1) * sizeof(wchar_t));
        fi->name_len = (uint32_t) len;
        fi->values = xcalloc(fc->cs.n_counters, sizeof(uint64_t));
        if (fc->cs.n_counters)
                memcpy(fi->values, values, fc->cs.n_counters * sizeof(uint64_t));
}

bool fake_ns_remove_instance(struct ns *ns, const GUID *cs, uint32_t id, const wchar_t *name)
{
        struct fake_cs *fc = find_set(ns, cs);

        for (size_t i = 0; fc && i < fc->n_inst; i++) {
                if (fc->inst[i].id != id || wcscmp(fc->inst[i].name, name) != 0)
                        continue;
                free_instance(&fc->inst[i]);
                memmove(fc->inst + i, fc->inst + i + 1, (fc->n_inst - i - 1) * sizeof(*fc->inst));
                fc->n_inst--;
                return true;
        }
        return false;
}

void fake_ns_bump_on_snapshot(struct ns *ns, bool on)
{
        ns->bump = on;
}

void fake_ns_fail_snapshots(struct ns *ns, int err)
{
        ns->snapshot_error = err;
}

void fake_ns_short_snapshots(struct ns *ns, bool on)
{
        ns->short_snapshots = on;
}

void fake_ns_set_memory(struct ns *ns, size_t cap)
{
        ns->mem_cap = cap;
}

size_t fake_ns_memory_used(const struct ns *ns)
{
        return ns->mem_used;
}

static void log_event(struct ns *ns, enum fake_event_kind kind, const GUID *cs, uint32_t code,
                      const void *buffer, uint32_t size)
{
        struct fake_event *ev = reallocarray(ns->events, ns->n_events + 1, sizeof(*ev));

        if (!ev)
                abort();
        ns->events = ev;
        ns->events[ns->n_events++] = (struct fake_event){
                .kind = kind,
                .cs = *cs,
                .code = code,
                .buffer = buffer ? xmemdup(buffer, size) : NULL,
                .size = size,
        };
}

size_t fake_ns_events(const struct ns *ns, const struct fake_event **ret)
{
        *ret = ns->events;
        return ns->n_events;
}

void fake_ns_clear_events(struct ns *ns)
{
        for (size_t i = 0; i < ns->n_events; i++)
                free(ns->events[i].buffer);
        free(ns->events);
        ns->events = NULL;
        ns->n_events = 0;
}

size_t fake_ns_count(const struct ns *ns, enum fake_event_kind kind, uint32_t code)
{
        size_t n = 0;

        for (size_t i = 0; i < ns->n_events; i++)
                n += ns->events[i].kind == kind && ns->events[i].code == code;
        return n;
}

/* ---- ns.h ---- */

size_t ns_count(const struct ns *ns)
{
        return ns->n_sets;
}

const struct ns_counterset *ns_at(const struct ns *ns, size_t i)
{
        return i < ns->n_sets ? &ns->sets[i]->cs : NULL;
}

const struct ns_counterset *ns_find(const struct ns *ns, const GUID *guid)
{
        struct fake_cs *fc = find_set(ns, guid);

        return fc ? &fc->cs : NULL;
}

int ns_snapshot(struct ns *ns, const struct ns_counterset *cs, unsigned flags,
                struct ns_snapshot **ret)
{
        struct fake_cs *fc = own_set(ns, cs);
        struct fake_snapshot *s;

        log_event(ns, FAKE_SNAPSHOT, &cs->guid, flags, NULL, 0);
        if (ns->snapshot_error)
                return ns->snapshot_error;
        s = xcalloc(1, sizeof(*s));
        s->inst = xcalloc(fc->n_inst, sizeof(*s->inst));
        for (size_t i = 0; i < fc->n_inst; i++) {
                const struct fake_instance *fi = &fc->inst[i];

                s->inst[i] = (struct ns_instance){
                        .id = fi->id,
                        .name_len = fi->name_len,
                        .name = xmemdup(fi->name, (fi->name_len + 1) * sizeof(wchar_t)),
                        .values = xcalloc(cs->n_counters, sizeof(uint64_t)),
                };
                if (cs->n_counters)
                        memcpy((uint64_t *) s->inst[i].values, fi->values,
                               cs->n_counters * sizeof(uint64_t));
                for (uint32_t k = 0; ns->bump && k < cs->n_counters; k++)
                        fi->values[k]++;
        }
        s->pub.n_instances = (uint32_t) fc->n_inst;
        s->pub.n_counters = cs->n_counters - (ns->short_snapshots && cs->n_counters);
        s->pub.instances = s->inst;
        *ret = &s->pub;
        return 0;
}

void ns_snapshot_free(struct ns_snapshot *pub)
{
        struct fake_snapshot *s = (struct fake_snapshot *) pub;

        if (!s)
                return;
        for (uint32_t i = 0; i < s->pub.n_instances; i++) {
                free((void *) s->inst[i].name);
                free((void *) s->inst[i].values);
        }
        free(s->inst);
        free(s);
}

int ns_notify(struct ns *ns, const struct ns_counterset *cs, uint32_t request_code,
              const void *buffer, uint32_t size)
{
        (void) own_set(ns, cs);
        log_event(ns, FAKE_NOTIFY, &cs->guid, request_code, buffer, size);
        return 0;
}

/* As the real one, unshared: the core's tests run one request at a time. */
int ns_collect(struct ns *ns, const struct ns_counterset *cs, const wchar_t *machine,
               size_t machine_len, struct ns_snapshot **ret)
{
        uint32_t size = (uint32_t) ((machine ? machine_len + 1 : 1) * sizeof(wchar_t));
        int r;

        if (!machine)
                machine = L"";
        (void) ns_notify(ns, cs, PERF_COLLECT_START, machine, size);
        r = ns_snapshot(ns, cs, NS_SNAPSHOT_COLLECT, ret);
        (void) ns_notify(ns, cs, PERF_COLLECT_END, machine, size);
        return r;
}

int ns_mem_try(struct ns *ns, size_t bytes)
{
        if (ns->mem_cap && bytes > ns->mem_cap - ns->mem_used)
                return -ENOMEM;
        ns->mem_used += bytes;
        return 0;
}

int ns_mem_take(struct ns *ns, size_t bytes)
{
        return ns_mem_try(ns, bytes);
}

void ns_mem_give(struct ns *ns, size_t bytes)
{
        if (bytes > ns->mem_used) {
                fprintf(stderr, "fake-ns: %zu bytes given back, %zu taken\n", bytes, ns->mem_used);
                abort();
        }
        ns->mem_used -= bytes;
}
