/* SPDX-License-Identifier: MIT */
/*
 * Browsing: the live instances of a counterset with PDH's #n numbering of
 * duplicate names, the two path lists typeperf prints (pcq_list_paths,
 * pcq_expand_path, freed with pcq_strv_free), and whether a path names
 * something live (pcq_validate_path).  Paths are resolved by
 * client-resolve.c and written by client-path.c; why one fails goes to
 * the connection's error (pcq_conn_error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-catalog.h"
#include "client-conn.h"
#include "client-path.h"
#include "client-resolve.h"
#include "suggest.h"

/*
 * The live instances of a counterset, in server order, each with its
 * PDH occurrence number: the first "name" is 0, the second one 1 (written
 * "name#1"), and so on.
 */
struct cl_instance {
        char *name;                     /* owned */
        uint32_t id;
        uint32_t occurrence;
};

/* A growing NULL-terminated string vector. */
struct cl_strv {
        char **v;
        size_t n, cap;
};

/* ---- instances ---- */

static void cl_instances_free(struct cl_instance *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i].name);
        free(v);
}

/* Numbers the occurrences of equal names in v. */
static void cl_instances_number(struct cl_instance *v, size_t n)
{
        /* Quadratic, but instance lists are short and this keeps server order. */
        for (size_t i = 0; i < n; i++) {
                v[i].occurrence = 0;
                for (size_t j = 0; j < i; j++)
                        if (!strcasecmp(v[j].name, v[i].name))
                                v[i].occurrence++;
        }
}

/* *ret (malloc'd array, the caller's: cl_instances_free) may be empty. */
static uint32_t cl_instances(pcq_conn *c, const GUID *set, struct cl_instance **ret, size_t *ret_n)
{
        struct pcq_instance_item item;
        struct cl_instance *v = NULL, *nv;
        struct pcq_buf b = { 0 };
        size_t n = 0;
        pcq_iter it;
        uint32_t e = pcq_enum_instances(c, set, &b);

        if (e == ERROR_WMI_INSTANCE_NOT_FOUND)
                e = ERROR_SUCCESS;      /* none live: an empty list */
        if (e)
                return e;
        pcq_instance_iter_begin(&it, &b);
        while (pcq_instance_iter_next(&it, &item)) {
                nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv || !(nv[n].name = strdup(item.name))) {
                        v = nv ? nv : v;
                        e = PDH_MEMORY_ALLOCATION_FAILURE;
                        break;
                }
                v = nv;
                v[n++].id = item.id;
        }
        if (!e)
                e = pcq_iter_error(&it);
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        if (e) {
                cl_instances_free(v, n);
                return e;
        }
        cl_instances_number(v, n);
        *ret = v;
        *ret_n = n;
        return ERROR_SUCCESS;
}

/* ---- string vectors ---- */

/* Takes ownership of s (freed on failure). */
static uint32_t cl_strv_push(struct cl_strv *sv, char *s)
{
        if (!s)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        if (sv->n + 2 > sv->cap) {
                size_t cap = sv->cap ? 2 * sv->cap : 16;
                char **v = realloc(sv->v, cap * sizeof(*v));

                if (!v) {
                        free(s);
                        return PDH_MEMORY_ALLOCATION_FAILURE;
                }
                sv->v = v;
                sv->cap = cap;
        }
        sv->v[sv->n++] = s;
        sv->v[sv->n] = NULL;
        return ERROR_SUCCESS;
}

PCQ_API void pcq_strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

/* Hands sv's vector to *ret (an empty one when nothing was pushed). */
static uint32_t strv_finish(struct cl_strv *sv, uint32_t e, char ***ret)
{
        if (!e && !sv->v && !(sv->v = calloc(1, sizeof(char *))))
                e = PDH_MEMORY_ALLOCATION_FAILURE;
        if (e) {
                pcq_strv_free(sv->v);
                return e;
        }
        *ret = sv->v;
        return ERROR_SUCCESS;
}

/* ---- listing ---- */

/*
 * Whether p shows s with no instance part: a single-instance set, or a
 * global aggregate one read without an instance (Windows lists those as
 * single-instance; naming their instances is our extension).
 */
static bool shown_single(const struct pcq_path *p, const struct cl_set *s)
{
        return !cl_set_has_instances(s) || (cl_set_global(s) && !p->instance);
}

/* The paths of one counter: "(*)", or each live instance (and _Total). */
static uint32_t counter_paths(const pcq_conn *c, const struct pcq_path *p, const struct cl_set *s,
                              const struct cl_counter *ctr, const struct cl_instance *inst,
                              size_t n_inst, bool with_instances, struct cl_strv *out)
{
        uint32_t e = ERROR_SUCCESS;

        (void) c;
        if (shown_single(p, s))
                return cl_strv_push(out, cl_item_path(p, s->name, NULL, 0, ctr->name));
        if (!with_instances)
                return cl_strv_push(out, cl_item_path(p, s->name, "*", 0, ctr->name));
        for (size_t i = 0; !e && i < n_inst; i++)
                if (cl_instance_matches(p, inst[i].name, inst[i].occurrence))
                        e = cl_strv_push(out, cl_item_path(p, s->name, inst[i].name,
                                                           inst[i].occurrence, ctr->name));
        if (!e && cl_set_aggregate(s) && n_inst > 0 && cl_instance_matches(p, CL_TOTAL, 0))
                e = cl_strv_push(out, cl_item_path(p, s->name, CL_TOTAL, 0, ctr->name));
        return e;
}

/* Every path of s matching p's counter and instance parts. */
static uint32_t set_paths(pcq_conn *c, const struct pcq_path *p, const struct cl_set *s,
                          bool with_instances, struct cl_strv *out)
{
        struct cl_instance *inst = NULL;
        size_t n_inst = 0;
        uint32_t e = ERROR_SUCCESS;

        if (with_instances && !shown_single(p, s))
                e = cl_instances(c, &s->reg.guid, &inst, &n_inst);
        for (uint32_t i = 0; !e && i < s->reg.num_counters; i++) {
                const struct cl_counter *ctr = &s->counters[i];

                if (strcmp(p->counter, "*") ? strcasecmp(p->counter, ctr->name) != 0 :
                                              !cl_counter_listed(ctr))
                        continue;
                e = counter_paths(c, p, s, ctr, inst, n_inst, with_instances, out);
        }
        cl_instances_free(inst, n_inst);
        return e;
}

/* A new call on c: the error of the last one no longer applies. */
static void error_clear(pcq_conn *c)
{
        free(c->error);
        c->error = NULL;
}

PCQ_API uint32_t pcq_list_paths(pcq_conn *c, const char *object, bool with_instances,
                                char ***ret)
{
        struct pcq_path p = { .instance = (char *) "*", .counter = (char *) "*" };
        struct cl_strv out = { 0 };
        const struct cl_set *named;
        uint32_t e;

        if (!c || !ret)
                return PDH_INVALID_ARGUMENT;
        error_clear(c);
        p.host = *c->host ? c->host : NULL;
        e = cl_catalog_load(&c->catalog, &c->link, true);
        if (!e && object)
                e = cl_resolve_set(c, object, &named, &c->error);
        for (size_t i = 0; !e && i < c->catalog.n; i++) {
                const struct cl_set *s = &c->catalog.sets[i];

                if (object && strcasecmp(object, s->name))
                        continue;
                /* A listing shows a global aggregate set as single-instance. */
                p.instance = cl_set_global(s) ? NULL : (char *) "*";
                e = set_paths(c, &p, s, with_instances, &out);
        }
        return strv_finish(&out, e, ret);
}

/* An instance as a path writes it: "parent/name#n", the parts there are. */
static char *instance_text(const char *parent, const char *name, uint32_t occurrence)
{
        char *s;

        if (asprintf(&s, "%s%s%s", parent ? parent : "", parent ? "/" : "", name) < 0)
                return NULL;
        if (occurrence) {
                char *t = s;

                if (asprintf(&s, "%s#%u", t, occurrence) < 0)
                        s = NULL;
                free(t);
        }
        return s;
}

/* The live instance nearest to the one p names, offered to sg. */
static void offer_instances(pcq_conn *c, const struct cl_set *s, struct sg_suggest *sg)
{
        struct cl_instance *inst = NULL;
        size_t n = 0;

        if (cl_instances(c, &s->reg.guid, &inst, &n) != ERROR_SUCCESS)
                return;
        for (size_t i = 0; i < n; i++) {
                char *t = instance_text(NULL, inst[i].name, inst[i].occurrence);

                if (t)
                        sg_offer(sg, t, strlen(t));
                free(t);
        }
        if (n && cl_set_aggregate(s))
                sg_offer(sg, CL_TOTAL, strlen(CL_TOTAL));
        cl_instances_free(inst, n);
}

/* PDH_CSTATUS_NO_INSTANCE for p, which matched nothing, and why in c->error. */
static uint32_t no_instance(pcq_conn *c, const struct pcq_path *p, const struct cl_set *s)
{
        char *typed = instance_text(p->parent, p->instance ? p->instance : "", p->index);
        struct sg_suggest sg;

        if (!typed)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        if (!p->instance) {
                cl_say(&c->error, "counterset '%s' has instances and the path names none "
                       "(\\%s(*)\\%s for all of them)", s->name, s->name, p->counter);
        } else if (cl_path_has_wildcard(p)) {
                cl_say(&c->error, "no live instance of counterset '%s' matches '%s'", s->name,
                       typed);
        } else {
                sg_begin(&sg, typed);
                offer_instances(c, s, &sg);
                cl_say(&c->error, "no instance '%s' of counterset '%s' is live%s", typed,
                       s->name, sg_hint(&sg));
        }
        free(typed);
        return PDH_CSTATUS_NO_INSTANCE;
}

/* The paths path stands for into *out; with must_match, none is an error. */
static uint32_t expand(pcq_conn *c, const char *path, bool must_match, struct cl_strv *out)
{
        const struct cl_set *s;
        struct pcq_path p;
        uint32_t e;

        error_clear(c);
        e = cl_resolve(c, path, &p, &s, &c->error);
        if (e)
                return e;
        /* Single-instance sets have no instance part to expand. */
        e = set_paths(c, &p, s, true, out);
        if (!e && must_match && out->n == 0)
                e = no_instance(c, &p, s);
        pcq_path_done(&p);
        return e;
}

PCQ_API uint32_t pcq_expand_path(pcq_conn *c, const char *path, char ***ret)
{
        struct cl_strv out = { 0 };

        if (!c || !path || !ret)
                return PDH_INVALID_ARGUMENT;
        return strv_finish(&out, expand(c, path, false, &out), ret);
}

PCQ_API uint32_t pcq_validate_path(pcq_conn *c, const char *path)
{
        struct cl_strv out = { 0 };
        uint32_t e;

        if (!c || !path)
                return PDH_INVALID_ARGUMENT;
        e = expand(c, path, true, &out);
        pcq_strv_free(out.v);
        return e;
}
