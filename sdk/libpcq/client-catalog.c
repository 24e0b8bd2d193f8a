/* SPDX-License-Identifier: MIT */
/*
 * The catalog of one connection: every counterset with its registration
 * info and its English names (QueryCounterSetRegistrationInfo codes 1, 9
 * and 10, with 3 and 5 as fallbacks), so that paths can be resolved
 * without a round trip per name.  It is loaded on first use and reloaded
 * when a name is not found, since providers come and go; help texts are
 * loaded per counterset only when someone asks for them.  It fetches
 * through the connection's link (client-link.h) and knows nothing of the
 * connection that keeps it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-catalog.h"
#include "client-link.h"
#include "client-wire.h"
#include "perflib.h"

/* Request codes of QueryCounterSetRegistrationInfo (MS-PCQ 3.1.4.1.2). */
#define CL_REQ_COUNTERSET_INFO  1u
#define CL_REQ_COUNTERSET_NAME  3u
#define CL_REQ_COUNTERSET_HELP  4u
#define CL_REQ_COUNTER_NAMES    5u
#define CL_REQ_COUNTER_HELP     6u
#define CL_REQ_ENGLISH_NAME     9u
#define CL_REQ_ENGLISH_NAMES    10u

static void set_clear(struct cl_set *s)
{
        for (uint32_t i = 0; s->counters && i < s->reg.num_counters; i++) {
                free(s->counters[i].name);
                free(s->counters[i].help);
        }
        free(s->counters);
        free(s->name);
        free(s->help);
        *s = (struct cl_set){ 0 };
}

void cl_catalog_clear(struct cl_catalog *cat)
{
        for (size_t i = 0; i < cat->n; i++)
                set_clear(&cat->sets[i]);
        free(cat->sets);
        *cat = (struct cl_catalog){ 0 };
}

/* A lone NUL-terminated string (codes 3, 4, 9), malloc'd, or NULL. */
static char *lone_string(struct cl_link *c, const GUID *g, uint32_t code)
{
        struct pcq_buf b = { 0 };
        char *s;

        if (cl_link_registration_info(c, g, code, 0, &b) != ERROR_SUCCESS)
                return NULL;
        s = b.data ? cl_utf16_to_utf8(b.data, b.size / 2, NULL) : strdup("");
        pcq_buf_done(&b);
        return s;
}

/* Stores the strings of a code 5, 6 or 10 block in the counters' name or help. */
static uint32_t counter_strings(struct cl_link *c, struct cl_set *s, uint32_t code, bool help)
{
        struct pcq_string_item item;
        struct pcq_buf b = { 0 };
        pcq_iter it;
        uint32_t e = cl_link_registration_info(c, &s->reg.guid, code, 0, &b);

        if (e)
                return e;
        e = pcq_string_iter_begin(&it, &b);
        while (!e && pcq_string_iter_next(&it, &item)) {
                struct cl_counter *ctr = (struct cl_counter *) cl_set_counter_id(s, item.counter_id);
                char **dst = ctr ? (help ? &ctr->help : &ctr->name) : NULL;

                if (!dst || *dst)
                        continue;
                *dst = strdup(item.text);
                if (!*dst)
                        e = PDH_MEMORY_ALLOCATION_FAILURE;
        }
        if (!e)
                e = pcq_iter_error(&it);
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        return e;
}

/* Registration info (code 1) into s. */
static uint32_t set_info(struct cl_link *c, const GUID *g, struct cl_set *s)
{
        struct pcq_counter_reg reg;
        struct pcq_buf b = { 0 };
        pcq_iter it;
        uint32_t e = cl_link_registration_info(c, g, CL_REQ_COUNTERSET_INFO, 0, &b), n = 0;

        if (e)
                return e;
        e = pcq_reg_iter_begin(&it, &b, &s->reg);
        if (!e && s->reg.num_counters > b.size / CL_REG_COUNTER_SIZE)
                e = ERROR_INVALID_DATA;
        if (!e && !(s->counters = calloc(s->reg.num_counters + 1, sizeof(*s->counters))))
                e = PDH_MEMORY_ALLOCATION_FAILURE;
        while (!e && pcq_reg_iter_next(&it, &reg))
                s->counters[n++].reg = reg;
        if (!e)
                e = pcq_iter_error(&it);
        s->reg.num_counters = n;
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        return e;
}

static uint32_t load_set(struct cl_link *c, const GUID *g, struct cl_set *s)
{
        uint32_t e = set_info(c, g, s);

        if (e)
                return e;
        s->name = lone_string(c, g, CL_REQ_ENGLISH_NAME);
        if (!s->name)
                s->name = lone_string(c, g, CL_REQ_COUNTERSET_NAME);
        if (!s->name)
                return ERROR_INVALID_DATA;
        if (counter_strings(c, s, CL_REQ_ENGLISH_NAMES, false) != ERROR_SUCCESS)
                (void) counter_strings(c, s, CL_REQ_COUNTER_NAMES, false);
        for (uint32_t i = 0; i < s->reg.num_counters; i++)
                if (!s->counters[i].name && !(s->counters[i].name = strdup("")))
                        return PDH_MEMORY_ALLOCATION_FAILURE;
        return ERROR_SUCCESS;
}

uint32_t cl_catalog_load(struct cl_catalog *catalog, struct cl_link *c, bool refresh)
{
        struct cl_catalog cat = { 0 };
        GUID *guids = NULL;
        size_t n = 0;
        uint32_t e;

        if (catalog->loaded && !refresh)
                return ERROR_SUCCESS;
        e = cl_link_enum_countersets(c, &guids, &n);
        if (e)
                return e;
        cat.sets = calloc(n + 1, sizeof(*cat.sets));
        if (!cat.sets) {
                free(guids);
                return PDH_MEMORY_ALLOCATION_FAILURE;
        }
        for (size_t i = 0; i < n; i++) {
                e = load_set(c, &guids[i], &cat.sets[cat.n]);
                if (e == ERROR_CONNECTION_ABORTED || e == PDH_MEMORY_ALLOCATION_FAILURE)
                        break;
                /* A counterset that went away meanwhile is simply not listed. */
                if (e) {
                        set_clear(&cat.sets[cat.n]);
                        e = ERROR_SUCCESS;
                        continue;
                }
                cat.n++;
        }
        free(guids);
        if (e) {
                cl_catalog_clear(&cat);
                return e;
        }
        cl_catalog_clear(catalog);
        *catalog = cat;
        catalog->loaded = true;
        return ERROR_SUCCESS;
}

static const struct cl_set *find(const struct cl_catalog *cat, const char *name)
{
        for (size_t i = 0; i < cat->n; i++)
                if (!strcasecmp(cat->sets[i].name, name))
                        return &cat->sets[i];
        return NULL;
}

const struct cl_set *cl_catalog_find(struct cl_catalog *catalog, struct cl_link *c,
                                     const char *name)
{
        const struct cl_set *s;

        if (cl_catalog_load(catalog, c, false) != ERROR_SUCCESS)
                return NULL;
        s = find(catalog, name);
        if (!s && cl_catalog_load(catalog, c, true) == ERROR_SUCCESS)
                s = find(catalog, name);
        return s;
}

const struct cl_counter *cl_set_counter(const struct cl_set *s, const char *name)
{
        for (uint32_t i = 0; i < s->reg.num_counters; i++)
                if (!strcasecmp(s->counters[i].name, name))
                        return &s->counters[i];
        return NULL;
}

const struct cl_counter *cl_set_counter_id(const struct cl_set *s, uint32_t id)
{
        for (uint32_t i = 0; i < s->reg.num_counters; i++)
                if (s->counters[i].reg.id == id)
                        return &s->counters[i];
        return NULL;
}

void cl_catalog_help(struct cl_link *c, struct cl_set *s)
{
        if (s->help_loaded)
                return;
        s->help_loaded = true;
        s->help = lone_string(c, &s->reg.guid, CL_REQ_COUNTERSET_HELP);
        (void) counter_strings(c, s, CL_REQ_COUNTER_HELP, true);
}

bool cl_counter_listed(const struct cl_counter *ctr)
{
        struct pcq_type_info ti;

        pcq_type_info(ctr->reg.type, &ti);
        return !ti.is_base && !(ctr->reg.attrib & PERF_ATTRIB_NO_DISPLAYABLE);
}

bool cl_set_has_instances(const struct cl_set *s)
{
        return s->reg.instance_type != PERF_COUNTERSET_SINGLE_INSTANCE;
}

bool cl_set_global(const struct cl_set *s)
{
        return s->reg.instance_type == PERF_COUNTERSET_SINGLE_AGGREGATE ||
               s->reg.instance_type == PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY;
}

bool cl_set_aggregate(const struct cl_set *s)
{
        return cl_set_global(s) || s->reg.instance_type == PERF_COUNTERSET_MULTI_AGGREGATE;
}
