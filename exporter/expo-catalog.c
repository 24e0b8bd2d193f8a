/* SPDX-License-Identifier: MIT */
/*
 * The registration info of the selected countersets, read with
 * QueryCounterSetRegistrationInfo (codes 1, 9 and 10, with 3 and 5 as
 * fallbacks, 4 and 6 for help) when the list of countersets changes, so
 * that a steady scrape costs two round trips whatever the number of
 * countersets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expo-catalog.h"
#include "expo-opts.h"
#include "perflib.h"

/* Request codes of QueryCounterSetRegistrationInfo (MS-PCQ 3.1.4.1.2). */
#define REQ_COUNTERSET_INFO     1u
#define REQ_COUNTERSET_NAME     3u
#define REQ_COUNTERSET_HELP     4u
#define REQ_COUNTER_NAMES       5u
#define REQ_COUNTER_HELP        6u
#define REQ_ENGLISH_NAME        9u
#define REQ_ENGLISH_NAMES       10u
#define NO_ID                   0xFFFFFFFFu

static void cset_clear(struct expo_cset *cs)
{
        for (size_t i = 0; cs->all && i < cs->n_all; i++) {
                free((char *) cs->all[i].name);
                free((char *) cs->all[i].help);
        }
        free(cs->all);
        free(cs->aggregate);
        free(cs->base_of);
        free(cs->used_base);
        free(cs->column);
        free(cs->counters);
        free(cs->name);
        free(cs->help);
        *cs = (struct expo_cset){ 0 };
}

void expo_catalog_clear(struct expo_catalog *cat)
{
        for (size_t i = 0; i < cat->n; i++)
                cset_clear(&cat->sets[i]);
        free(cat->sets);
        free(cat->guids);
        *cat = (struct expo_catalog){ 0 };
}

bool expo_catalog_same(const struct expo_catalog *cat, const GUID *guids, size_t n)
{
        return cat->guids && cat->n_guids == n && !memcmp(cat->guids, guids, n * sizeof(*guids));
}

/* UTF-16LE (n bytes, maybe NUL-terminated) as UTF-8, malloc'd; NULL on ENOMEM. */
static char *utf16_to_utf8(const uint8_t *p, size_t n)
{
        char *s = malloc(n / 2 * 3 + 1), *o = s;

        for (size_t i = 0; s && i + 1 < n; i += 2) {
                uint32_t c = p[i] | (uint32_t) p[i + 1] << 8;

                if (!c)
                        break;
                if (c >= 0xD800 && c < 0xDC00 && i + 3 < n) {
                        uint32_t lo = p[i + 2] | (uint32_t) p[i + 3] << 8;

                        if (lo >= 0xDC00 && lo < 0xE000) {
                                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                                i += 2;
                        }
                }
                if (c >= 0xD800 && c < 0xE000)
                        c = 0xFFFD;     /* a lone surrogate */
                if (c < 0x80) {
                        *o++ = (char) c;
                } else if (c < 0x800) {
                        *o++ = (char) (0xC0 | c >> 6);
                        *o++ = (char) (0x80 | (c & 0x3F));
                } else if (c < 0x10000) {
                        *o++ = (char) (0xE0 | c >> 12);
                        *o++ = (char) (0x80 | (c >> 6 & 0x3F));
                        *o++ = (char) (0x80 | (c & 0x3F));
                } else {
                        *o++ = (char) (0xF0 | c >> 18);
                        *o++ = (char) (0x80 | (c >> 12 & 0x3F));
                        *o++ = (char) (0x80 | (c >> 6 & 0x3F));
                        *o++ = (char) (0x80 | (c & 0x3F));
                }
        }
        if (s)
                *o = '\0';
        return s;
}

/* A lone string (codes 3, 4, 9), malloc'd; NULL when the server has none. */
static char *lone_string(pcq_conn *c, const GUID *g, uint32_t code, uint32_t *ret_e)
{
        struct pcq_buf b = { 0 };
        char *s;

        *ret_e = pcq_registration_info(c, g, code, 0, &b);
        if (*ret_e)
                return NULL;
        s = utf16_to_utf8(b.data, b.size);
        if (!s)
                *ret_e = PDH_MEMORY_ALLOCATION_FAILURE;
        pcq_buf_done(&b);
        return s;
}

static struct expo_counter *counter_by_id(struct expo_cset *cs, uint32_t id)
{
        for (size_t i = 0; i < cs->n_all; i++)
                if (cs->all[i].id == id)
                        return &cs->all[i];
        return NULL;
}

/* The strings of a code 5, 6 or 10 answer into the counters' names or help. */
static uint32_t counter_strings(pcq_conn *c, struct expo_cset *cs, uint32_t code, bool help)
{
        struct pcq_string_item item;
        struct pcq_buf b = { 0 };
        pcq_iter it;
        uint32_t e = pcq_registration_info(c, &cs->guid, code, 0, &b);

        if (e)
                return e;
        e = pcq_string_iter_begin(&it, &b);
        while (!e && pcq_string_iter_next(&it, &item)) {
                struct expo_counter *ctr = counter_by_id(cs, item.counter_id);
                const char **dst = ctr ? (help ? &ctr->help : &ctr->name) : NULL;

                if (!dst || *dst)
                        continue;
                if (!(*dst = strdup(item.text)))
                        e = PDH_MEMORY_ALLOCATION_FAILURE;
        }
        if (!e)
                e = pcq_iter_error(&it);
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        return e;
}

static uint32_t counter_add(struct expo_cset *cs, const struct pcq_counter_reg *r)
{
        size_t n = cs->n_all + 1;
        struct expo_counter *all = realloc(cs->all, n * sizeof(*all));
        uint32_t *agg;

        if (!all)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        cs->all = all;
        agg = realloc(cs->aggregate, n * sizeof(*agg));
        if (!agg)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        cs->aggregate = agg;
        all[cs->n_all] = (struct expo_counter){
                .id = r->id, .type = r->type, .attrib = r->attrib,
                .default_scale = r->default_scale, .base_id = r->base_id,
        };
        agg[cs->n_all++] = r->aggregate_func;
        return ERROR_SUCCESS;
}

/* Code 1: the counterset's instance type and its counters. */
static uint32_t load_info(pcq_conn *c, struct expo_cset *cs)
{
        struct pcq_counterset_reg set = { 0 };
        struct pcq_counter_reg r;
        struct pcq_buf b = { 0 };
        pcq_iter it;
        uint32_t e = pcq_registration_info(c, &cs->guid, REQ_COUNTERSET_INFO, 0, &b);

        if (e)
                return e;
        e = pcq_reg_iter_begin(&it, &b, &set);
        while (!e && pcq_reg_iter_next(&it, &r))
                e = counter_add(cs, &r);
        if (!e)
                e = pcq_iter_error(&it);
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        cs->instance_type = set.instance_type;
        cs->multi = set.instance_type & PERF_COUNTERSET_FLAG_MULTIPLE;
        return e;
}

static uint32_t load_strings(pcq_conn *c, struct expo_cset *cs)
{
        uint32_t e;

        cs->name = lone_string(c, &cs->guid, REQ_ENGLISH_NAME, &e);
        if (!cs->name && e != ERROR_CONNECTION_ABORTED && e != PDH_MEMORY_ALLOCATION_FAILURE)
                cs->name = lone_string(c, &cs->guid, REQ_COUNTERSET_NAME, &e);
        if (!cs->name)
                return e ? e : ERROR_INVALID_DATA;
        cs->help = lone_string(c, &cs->guid, REQ_COUNTERSET_HELP, &e);
        if (e == ERROR_CONNECTION_ABORTED)
                return e;
        e = counter_strings(c, cs, REQ_ENGLISH_NAMES, false);
        if (e && e != ERROR_CONNECTION_ABORTED)
                e = counter_strings(c, cs, REQ_COUNTER_NAMES, false);
        if (e == ERROR_CONNECTION_ABORTED)
                return e;
        e = counter_strings(c, cs, REQ_COUNTER_HELP, true);
        if (e == ERROR_CONNECTION_ABORTED)
                return e;
        if (!cs->help && !(cs->help = strdup("")))
                return PDH_MEMORY_ALLOCATION_FAILURE;
        for (size_t i = 0; i < cs->n_all; i++)
                if ((!cs->all[i].name && !(cs->all[i].name = strdup(""))) ||
                    (!cs->all[i].help && !(cs->all[i].help = strdup(""))))
                        return PDH_MEMORY_ALLOCATION_FAILURE;
        return ERROR_SUCCESS;
}

static bool is_base(uint32_t type)
{
        struct pcq_type_info ti;

        pcq_type_info(type, &ti);
        return ti.is_base;
}

/* Whether the writer reads a base counter for this type (perflib-exporter(1)). */
static bool uses_base(uint32_t type)
{
        struct pcq_type_info ti;

        pcq_type_info(type, &ti);
        return ti.needs_base || type == PERF_100NSEC_MULTI_TIMER ||
               type == PERF_100NSEC_MULTI_TIMER_INV || type == PERF_COUNTER_MULTI_TIMER ||
               type == PERF_COUNTER_MULTI_TIMER_INV;
}

/*
 * Counter j's base, paired as expo-format.c pairs them: the base counter
 * its BaseCounterId names, else the next base counter in registration
 * order; -1 when it uses none.
 */
static int32_t base_index(const struct expo_cset *cs, size_t j)
{
        if (!uses_base(cs->all[j].type))
                return -1;
        for (size_t i = 0; i < cs->n_all; i++)
                if (i != j && cs->all[i].id == cs->all[j].base_id && is_base(cs->all[i].type))
                        return (int32_t) i;
        for (size_t i = j + 1; i < cs->n_all; i++)
                if (is_base(cs->all[i].type))
                        return (int32_t) i;
        return -1;
}

/*
 * The exported counters: those the selection names, and the bases of
 * those (a base alone is not selected by its own name: "\Set\Hit Ratio"
 * brings its base).
 */
static uint32_t select_counters(struct expo_cset *cs, const struct expo_select *sel)
{
        cs->base_of = calloc(cs->n_all + 1, sizeof(*cs->base_of));
        cs->used_base = calloc(cs->n_all + 1, sizeof(*cs->used_base));
        cs->column = calloc(cs->n_all + 1, sizeof(*cs->column));
        cs->counters = calloc(cs->n_all + 1, sizeof(*cs->counters));
        if (!cs->base_of || !cs->used_base || !cs->column || !cs->counters)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        cs->narrow = expo_select_narrow(sel, cs->name);
        for (size_t j = 0; j < cs->n_all; j++) {
                cs->base_of[j] = base_index(cs, j);
                cs->column[j] = !is_base(cs->all[j].type) &&
                                expo_select_value(sel, cs->name, cs->all[j].name, NULL) ? 0 : -1;
        }
        for (size_t j = 0; j < cs->n_all; j++) {
                if (cs->base_of[j] < 0)
                        continue;
                cs->used_base[cs->base_of[j]] = true;
                if (cs->column[j] == 0)
                        cs->column[cs->base_of[j]] = 0;
        }
        for (size_t j = 0; j < cs->n_all; j++) {
                if (cs->column[j] < 0)
                        continue;
                cs->column[j] = (int32_t) cs->n_counters;
                cs->counters[cs->n_counters++] = cs->all[j];
        }
        return ERROR_SUCCESS;
}

/* One counterset; 0, 1 when sel leaves it out, or a Win32 error. */
static uint32_t load_set(pcq_conn *c, const struct expo_select *sel, struct expo_cset *cs)
{
        uint32_t e = load_info(c, cs);

        if (!e)
                e = load_strings(c, cs);
        if (e)
                return e;
        if (!expo_select_set(sel, cs->name))
                return 1;
        return select_counters(cs, sel);
}

static uint64_t old_errors(const struct expo_catalog *old, const GUID *g)
{
        for (size_t i = 0; old && i < old->n; i++)
                if (!memcmp(&old->sets[i].guid, g, sizeof(*g)))
                        return old->sets[i].errors_total;
        return 0;
}

int expo_catalog_load(pcq_conn *c, const struct expo_select *sel, GUID *guids, size_t n,
                      const struct expo_catalog *old, struct expo_catalog *ret)
{
        struct expo_catalog cat = { .guids = guids, .n_guids = n };
        uint32_t e = ERROR_SUCCESS;

        cat.sets = calloc(n + 1, sizeof(*cat.sets));
        if (!cat.sets)
                e = PDH_MEMORY_ALLOCATION_FAILURE;
        for (size_t i = 0; !e && i < n; i++) {
                struct expo_cset *cs = &cat.sets[cat.n];

                *cs = (struct expo_cset){ .guid = guids[i], .block = UINT32_MAX };
                e = load_set(c, sel, cs);
                if (e == ERROR_CONNECTION_ABORTED || e == PDH_MEMORY_ALLOCATION_FAILURE)
                        break;
                if (e) {
                        if (e != 1)
                                expo_log(EXPO_DEBUG, "counterset %zu of %zu left out: %s", i + 1, n,
                                         pcq_status_text(e));
                        cset_clear(cs);
                        e = ERROR_SUCCESS;
                        continue;
                }
                cs->errors_total = old_errors(old, &cs->guid);
                cat.n++;
        }
        expo_catalog_clear(ret);
        if (e) {
                expo_catalog_clear(&cat);
                return e == ERROR_CONNECTION_ABORTED ? -ECONNRESET : -ENOMEM;
        }
        *ret = cat;
        return 0;
}

int32_t expo_cset_column(const struct expo_cset *cs, uint32_t id, size_t *hint)
{
        size_t i = *hint;

        if (i >= cs->n_all || cs->all[i].id != id)
                for (i = 0; i < cs->n_all && cs->all[i].id != id; i++)
                        ;
        if (i == cs->n_all)
                return -2;      /* not registered: the catalog is stale */
        *hint = i + 1;
        return cs->column[i];
}
