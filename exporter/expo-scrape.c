/* SPDX-License-Identifier: MIT */
/*
 * One scrape: EnumerateCounterSet (to notice countersets that came or
 * went, and then read the registration info again), then one
 * QueryCounterData for every selected counterset on one query handle, so
 * that the values of a scrape are one snapshot and one round trip.  A
 * block with an error status fails its counterset alone; a broken
 * connection makes perflib_exporter_up 0, and the next scrape connects
 * again.  The libpcq connection is not thread-safe: scrapes take turns.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expo-catalog.h"
#include "expo-opts.h"
#include "perflib.h"
#include "expo-scrape.h"

#define NO_ID                   0xFFFFFFFFu
#define LOG_INTERVAL_S          60      /* between two lines about failed scrapes */

struct expo_scraper {
        pthread_mutex_t lock;
        struct expo_scraper_config cfg;
        pcq_conn *conn;                 /* NULL: connect at the next scrape */
        pcq_handle *h;                  /* NULL: open and validate again */
        struct expo_catalog cat;
        bool stale;                     /* read the registration info again */
        time_t last_log;
        unsigned long unlogged;         /* failures since the last line */
};

/* One counterset's values in this scrape, laid out as expo_set wants them. */
struct scratch {
        struct expo_instance *inst;
        char **names;                   /* owned, inst[i].name's */
        uint64_t *raw;
        bool *has;
        size_t n, cap;
        uint32_t status;                /* an error block's, or 0 */
        size_t hint, last;              /* where the last value was in cs->all */
};

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* A failed scrape, said at most once a minute however often it fails. */
static void log_failure(struct expo_scraper *s, const char *what, const char *why)
{
        time_t now = time(NULL);

        if (s->last_log && now - s->last_log < LOG_INTERVAL_S) {
                s->unlogged++;
                return;
        }
        if (s->unlogged)
                expo_log(EXPO_WARN, "scrape failed: %s: %s (and %lu more failures since the last report)",
                         what, why, s->unlogged);
        else
                expo_log(EXPO_WARN, "scrape failed: %s: %s", what, why);
        s->last_log = now;
        s->unlogged = 0;
}

static void disconnect(struct expo_scraper *s)
{
        pcq_close(s->h);
        s->h = NULL;
        pcq_conn_free(s->conn);
        s->conn = NULL;
}

/* A call's error: the connection is dropped when it broke. */
static void call_failed(struct expo_scraper *s, const char *what, uint32_t e)
{
        log_failure(s, what, pcq_status_text(e));
        if (e == ERROR_CONNECTION_ABORTED)
                disconnect(s);
}

static bool connect_server(struct expo_scraper *s)
{
        uint32_t e;

        if (s->conn)
                return true;
        e = pcq_connect(s->cfg.server, s->cfg.timeout_ms, &s->conn);
        if (e) {
                log_failure(s, "connecting to perflibd", *pcq_connect_error() ?
                            pcq_connect_error() : pcq_status_text(e));
                return false;
        }
        s->stale = true;
        expo_log(EXPO_INFO, "connected to perflibd%s%s", s->cfg.server ? " at " : "",
                 s->cfg.server ? s->cfg.server : "");
        return true;
}

int expo_scraper_new(const struct expo_scraper_config *cfg, struct expo_scraper **ret)
{
        struct expo_scraper *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->cfg = *cfg;
        pthread_mutex_init(&s->lock, NULL);
        *ret = s;
        return 0;
}

void expo_scraper_free(struct expo_scraper *s)
{
        if (!s)
                return;
        disconnect(s);
        expo_catalog_clear(&s->cat);
        pthread_mutex_destroy(&s->lock);
        free(s);
}

int expo_scraper_check(struct expo_scraper *s)
{
        int r;

        pthread_mutex_lock(&s->lock);
        if (!connect_server(s))
                r = -ECONNREFUSED;
        else
                r = expo_select_check(s->cfg.select, s->conn);
        pthread_mutex_unlock(&s->lock);
        return r;
}

/* ---- the query handle: one identifier per counterset, every counter, every instance ---- */

static struct expo_cset *cset_by_guid(struct expo_catalog *cat, const GUID *g)
{
        for (size_t i = 0; i < cat->n; i++)
                if (!memcmp(&cat->sets[i].guid, g, sizeof(*g)))
                        return &cat->sets[i];
        return NULL;
}

static uint32_t add_idents(struct expo_scraper *s, struct pcq_buf *ids)
{
        uint32_t e = ERROR_SUCCESS;

        for (size_t i = 0; !e && i < s->cat.n; i++) {
                struct expo_cset *cs = &s->cat.sets[i];

                cs->block = UINT32_MAX;
                e = pcq_ident_append(ids, &cs->guid, NO_ID, NO_ID, cs->multi ? "*" : NULL);
        }
        return e;
}

/* Where each counterset's block is in QueryCounterData's answer (QueryCounterInfo's Index). */
static uint32_t map_blocks(struct expo_scraper *s)
{
        struct pcq_ident_item item;
        struct pcq_buf b = { 0 };
        pcq_iter it;
        uint32_t e = pcq_counter_info(s->h, &b);

        if (e)
                return e;
        pcq_ident_iter_begin(&it, &b);
        while (pcq_ident_iter_next(&it, &item)) {
                struct expo_cset *cs = cset_by_guid(&s->cat, &item.counterset);

                if (cs)
                        cs->block = item.index;
        }
        e = pcq_iter_error(&it);
        pcq_iter_done(&it);
        pcq_buf_done(&b);
        return e;
}

static bool open_handle(struct expo_scraper *s)
{
        struct pcq_buf ids = { 0 };
        const char *what = "opening a query";
        uint32_t e = pcq_open(s->conn, &s->h);

        if (!e && !(e = add_idents(s, &ids)) && ids.size) {
                what = "adding the countersets to the query";
                e = pcq_validate(s->h, &ids, true);
                if (!e) {
                        what = "reading the query's layout";
                        e = map_blocks(s);
                }
        }
        pcq_buf_done(&ids);
        if (!e)
                return true;
        call_failed(s, what, e);
        pcq_close(s->h);
        s->h = NULL;
        return false;
}

/* Connected, the catalog current, the query open: whether to go on. */
static bool prepare(struct expo_scraper *s)
{
        GUID *guids = NULL;
        size_t n = 0;
        uint32_t e;
        int r;

        if (!connect_server(s))
                return false;
        e = pcq_enum_countersets(s->conn, &guids, &n);
        if (e) {
                call_failed(s, "listing the countersets", e);
                return false;
        }
        if (!s->stale && expo_catalog_same(&s->cat, guids, n)) {
                free(guids);
        } else {
                pcq_close(s->h);
                s->h = NULL;
                r = expo_catalog_load(s->conn, s->cfg.select, guids, n, &s->cat, &s->cat);
                if (r < 0) {
                        log_failure(s, "reading the registration info", strerror(-r));
                        if (r == -ECONNRESET)
                                disconnect(s);
                        return false;
                }
                s->stale = false;
                expo_log(EXPO_DEBUG, "%zu countersets, %zu of them exported", n, s->cat.n);
        }
        return s->h || open_handle(s);
}

/* ---- the values ---- */

static void scratch_free(struct scratch *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++) {
                for (size_t j = 0; j < v[i].n; j++)
                        free(v[i].names[j]);
                free(v[i].inst);
                free(v[i].names);
                free(v[i].raw);
                free(v[i].has);
        }
        free(v);
}

static int scratch_grow(struct scratch *sc, size_t n_counters)
{
        size_t cap = sc->cap ? 2 * sc->cap : 4;
        struct expo_instance *inst = realloc(sc->inst, cap * sizeof(*inst));
        char **names;
        uint64_t *raw;
        bool *has;

        if (!inst)
                return -ENOMEM;
        sc->inst = inst;
        if (!(names = realloc(sc->names, cap * sizeof(*names))))
                return -ENOMEM;
        sc->names = names;
        if (!(raw = realloc(sc->raw, (cap * n_counters + 1) * sizeof(*raw))))
                return -ENOMEM;
        sc->raw = raw;
        if (!(has = realloc(sc->has, (cap * n_counters + 1) * sizeof(*has))))
                return -ENOMEM;
        sc->has = has;
        sc->cap = cap;
        return 0;
}

/* Starts the instance of item in sc. */
static int instance_add(struct scratch *sc, const struct expo_cset *cs,
                        const struct pcq_data_item *item)
{
        char *name = NULL;
        int r;

        if (sc->n == sc->cap && (r = scratch_grow(sc, cs->n_counters)) < 0)
                return r;
        if (item->instance && !(name = strdup(item->instance)))
                return -ENOMEM;
        sc->names[sc->n] = name;
        sc->inst[sc->n] = (struct expo_instance){ .id = item->instance_id, .name = name };
        memset(&sc->has[sc->n * cs->n_counters], 0, cs->n_counters * sizeof(bool));
        sc->n++;
        return 0;
}

static bool same_instance(const struct scratch *sc, const struct pcq_data_item *item)
{
        const struct expo_instance *in = &sc->inst[sc->n - 1];

        if (in->id != item->instance_id)
                return false;
        return in->name && item->instance ? !strcmp(in->name, item->instance) :
                                            !in->name && !item->instance;
}

static uint64_t value_of(const struct pcq_data_item *item)
{
        const uint8_t *p = item->value;
        uint64_t v = 0;

        for (uint32_t i = item->size >= 8 ? 8 : 4; i-- > 0;)
                v = v << 8 | p[i];
        return v;
}

/* One value of the answer into its counterset's scratch; -ESTALE: reload the catalog. */
static int value_add(struct scratch *sc, const struct expo_cset *cs,
                     const struct pcq_data_item *item)
{
        size_t at;
        int32_t col = expo_cset_column(cs, item->counter_id, &sc->hint);
        int r;

        if (col == -2)
                return -ESTALE;
        /* Values come instance by instance, counters in order: a new
         * instance is a new id or name, or counters starting again. */
        at = sc->hint - 1;
        if (!sc->n || !same_instance(sc, item) || at <= sc->last) {
                r = instance_add(sc, cs, item);
                if (r < 0)
                        return r;
        }
        sc->last = at;
        if (col < 0 || (item->size != 4 && item->size != 8))
                return 0;
        sc->raw[(sc->n - 1) * cs->n_counters + (size_t) col] = value_of(item);
        sc->has[(sc->n - 1) * cs->n_counters + (size_t) col] = true;
        return 0;
}

static bool is_value_block(uint32_t type)
{
        return type == PCQ_BLOCK_SINGLE_COUNTER || type == PCQ_BLOCK_MULTIPLE_COUNTERS ||
               type == PCQ_BLOCK_MULTIPLE_INSTANCES || type == PCQ_BLOCK_COUNTERSET;
}

/* The answer b into one scratch per counterset of the catalog (index = set's). */
static int parse_answer(struct expo_scraper *s, const struct pcq_buf *b, struct scratch *v,
                        struct pcq_data_header *hdr)
{
        struct pcq_data_item item;
        pcq_iter it;
        size_t i = SIZE_MAX;
        int r = 0;

        if (pcq_data_iter_begin(&it, b, hdr))
                return -EBADMSG;
        while (r >= 0 && pcq_data_iter_next(&it, &item)) {
                /* Blocks come whole: the previous item's counterset first. */
                if (i >= s->cat.n || s->cat.sets[i].block != item.block)
                        for (i = 0; i < s->cat.n && s->cat.sets[i].block != item.block; i++)
                                ;
                if (i == s->cat.n)
                        continue;
                /* A single-instance counterset with no provider running
                 * has no instance: no values, and no failure either. */
                if (!is_value_block(item.block_type) &&
                    item.status != ERROR_WMI_INSTANCE_NOT_FOUND)
                        v[i].status = item.status ? item.status : ERROR_INVALID_DATA;
                else if (is_value_block(item.block_type) && !v[i].status)
                        r = value_add(&v[i], &s->cat.sets[i], &item);
                if (r == -ESTALE) {
                        /* A counter the registration info did not have. */
                        s->stale = true;
                        r = 0;
                }
        }
        if (r >= 0 && pcq_iter_error(&it))
                r = -EBADMSG;
        pcq_iter_done(&it);
        return r;
}

/* Whether a counter that uses base j has a value in has (one instance's). */
static bool base_used(const struct expo_cset *cs, size_t j, const bool *has)
{
        for (size_t u = 0; u < cs->n_all; u++)
                if (cs->base_of[u] == (int32_t) j && cs->column[u] >= 0 && has[cs->column[u]])
                        return true;
        return false;
}

/*
 * A single-instance counterset that several providers serve (global
 * aggregation): one instance, as PDH shows it, summed where the counter's
 * AggregateFunc says total and the first provider's value otherwise.
 */
static void collapse(struct scratch *sc, const struct expo_cset *cs)
{
        size_t n = cs->n_counters;

        for (size_t i = 1; i < sc->n; i++) {
                for (size_t j = 0; j < cs->n_all; j++) {
                        int32_t k = cs->column[j];

                        if (k < 0 || !sc->has[i * n + (size_t) k])
                                continue;
                        if (!sc->has[k])
                                sc->raw[k] = sc->raw[i * n + (size_t) k];
                        else if (cs->aggregate[j] == PERF_AGGREGATE_TOTAL)
                                sc->raw[k] += sc->raw[i * n + (size_t) k];
                        sc->has[k] = true;
                }
                free(sc->names[i]);
        }
        free(sc->names[0]);
        sc->names[0] = NULL;
        sc->inst[0].name = NULL;
        sc->n = 1;
}

/*
 * Leaves out the values of the instances the --counters paths do not
 * name; a base goes with the counters that use it.
 */
static void narrow(struct scratch *sc, const struct expo_cset *cs, const struct expo_select *sel)
{
        for (size_t i = 0; i < sc->n; i++) {
                bool *has = &sc->has[i * cs->n_counters];
                int32_t k;

                for (size_t j = 0; j < cs->n_all; j++)
                        if ((k = cs->column[j]) >= 0 && has[k] && !cs->used_base[j])
                                has[k] = expo_select_value(sel, cs->name, cs->all[j].name,
                                                           sc->inst[i].name);
                for (size_t j = 0; j < cs->n_all; j++)
                        if ((k = cs->column[j]) >= 0 && cs->used_base[j])
                                has[k] = has[k] && base_used(cs, j, has);
        }
}

static int write_set(struct expo_scraper *s, struct expo_cset *cs, struct scratch *sc,
                     const struct pcq_data_header *hdr, struct expo_write_opts *o,
                     struct expo_buf *out)
{
        struct expo_set set = {
                .name = cs->name, .help = cs->help, .multi = cs->multi,
                .counters = cs->counters, .n_counters = cs->n_counters,
                .instances = sc->inst, .n_instances = sc->n, .raw = sc->raw, .has = sc->has,
                .perf_time = hdr->perf_time, .perf_freq = hdr->perf_freq,
                .perf_time_100ns = hdr->perf_time_100ns,
        };

        if (!cs->multi && sc->n > 1)
                collapse(sc, cs);
        if (cs->narrow)
                narrow(sc, cs, s->cfg.select);
        set.n_instances = sc->n;
        return expo_write_set(out, &set, o);
}

/*
 * Writes every counterset of the answer; one that has no block or an
 * error block counts as an error of its own.  Its duration: the shared
 * round trip and its own share of the work.
 */
static int write_sets(struct expo_scraper *s, struct scratch *v, const struct pcq_data_header *hdr,
                      double round_trip, enum expo_syntax syntax, struct expo_buf *out)
{
        struct expo_write_opts o = { .syntax = syntax, .with_total = s->cfg.with_total,
                                     .taken = expo_names_new() };
        int r = o.taken ? 0 : -ENOMEM;

        for (size_t i = 0; i < s->cat.n && r == 0; i++) {
                struct expo_cset *cs = &s->cat.sets[i];
                double t0 = now_s();

                if (cs->block == UINT32_MAX || v[i].status) {
                        cs->errors_total++;
                        expo_log(EXPO_DEBUG, "counterset '%s': %s", cs->name,
                                 v[i].status ? pcq_status_text(v[i].status) : "not in the query");
                        continue;
                }
                r = write_set(s, cs, &v[i], hdr, &o, out);
                if (r == 0)
                        cs->duration_seconds = round_trip + (now_s() - t0);
        }
        expo_names_free(o.taken);
        return r;
}

static void count_errors(struct expo_scraper *s)
{
        for (size_t i = 0; i < s->cat.n; i++)
                s->cat.sets[i].errors_total++;
}

/* QueryCounterData and the families; false when perflibd is gone. */
static bool query(struct expo_scraper *s, enum expo_syntax syntax, struct expo_buf *out)
{
        struct pcq_data_header hdr = { 0 };
        struct scratch *v = calloc(s->cat.n + 1, sizeof(*v));
        struct pcq_buf b = { 0 };
        double t0 = now_s();
        uint32_t e = v ? pcq_counter_data(s->h, &b) : PDH_MEMORY_ALLOCATION_FAILURE;
        int r;

        if (e) {
                call_failed(s, "querying the counters", e);
                count_errors(s);
                if (s->h && e != PDH_MEMORY_ALLOCATION_FAILURE) {
                        pcq_close(s->h);        /* opened again at the next scrape */
                        s->h = NULL;
                }
                free(v);
                return s->conn != NULL;
        }
        r = parse_answer(s, &b, v, &hdr);
        if (r >= 0)
                r = write_sets(s, v, &hdr, now_s() - t0, syntax, out);
        if (r < 0) {
                log_failure(s, "reading the counters", strerror(-r));
                count_errors(s);
        }
        scratch_free(v, s->cat.n);
        pcq_buf_done(&b);
        return true;
}

/*
 * The counterset label of set i: its name, and for a name an earlier set
 * already has (two providers' "Processor"), "NAME #2", "#3" ..., since one
 * series twice would make the scrape unparsable.  Malloc'd or NULL.
 */
static char *health_label(const struct expo_catalog *cat, size_t i)
{
        size_t size = strlen(cat->sets[i].name) + 16;
        unsigned same = 1;
        char *label = malloc(size);

        for (size_t j = 0; j < i; j++)
                same += strcmp(cat->sets[j].name, cat->sets[i].name) == 0;
        if (label && same == 1)
                snprintf(label, size, "%s", cat->sets[i].name);
        else if (label)
                snprintf(label, size, "%s #%u", cat->sets[i].name, same);
        return label;
}

static void health_done(struct expo_set_health *hs, size_t n)
{
        for (size_t i = 0; hs && i < n; i++)
                free((char *)hs[i].set);
        free(hs);
}

int expo_scrape(struct expo_scraper *s, enum expo_syntax syntax, struct expo_buf *out)
{
        struct expo_set_health *hs;
        struct expo_health h = { 0 };
        int r = 0;

        pthread_mutex_lock(&s->lock);
        h.up = prepare(s) && query(s, syntax, out);
        hs = calloc(s->cat.n + 1, sizeof(*hs));
        for (size_t i = 0; hs && i < s->cat.n; i++) {
                hs[i] = (struct expo_set_health){
                        .set = health_label(&s->cat, i),
                        .duration_seconds = s->cat.sets[i].duration_seconds,
                        .errors_total = s->cat.sets[i].errors_total,
                };
                if (!hs[i].set)
                        r = -ENOMEM;
        }
        h.sets = hs;
        h.n_sets = s->cat.n;
        if (!hs)
                r = -ENOMEM;
        if (r == 0)
                r = expo_write_health(out, &h, syntax);
        pthread_mutex_unlock(&s->lock);
        health_done(hs, s->cat.n);
        return r < 0 ? r : out->error;
}
