/* SPDX-License-Identifier: MIT */
/*
 * expo-format.c: one scraped counterset as Prometheus text 0.0.4 or
 * OpenMetrics 1.0.  Raw values only: a scraper computes rates from two
 * scrapes, so nothing here keeps state between calls.  The rule for every
 * counter type is rules[] below; perflib-exporter(1) has the same table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perflib.h"
#include "winperf.h"
#include "expo-format.h"

/* A family name; its candidates, family and sample names have room for suffixes. */
#define EXPO_NAME_MAX 512
#define CAND_MAX (EXPO_NAME_MAX + 16)
#define FAM_MAX (CAND_MAX + 16)
#define SAMPLE_MAX (FAM_MAX + 16)

/* What a counter type becomes. */
enum kind {
        K_GAUGE,        /* the raw value */
        K_COUNTER,      /* the raw value, a counter: <f>_total */
        K_TIME,         /* a time, counter in seconds: <f>_seconds_total */
        K_QUEUE,        /* queue length x time: counter, scaled to seconds */
        K_FRACTION,     /* numerator <f>_total and base <f>_base_total */
        K_AVERAGE,      /* summary <f>_sum (scaled), <f>_count = base */
        K_RATIO,        /* gauge C / B */
        K_ELAPSED,      /* gauge of seconds since the raw start time */
};

/* The unit the raw value counts in. */
enum scale {
        S_ONE,          /* exact integer */
        S_100NS,        /* 100 ns: / 1e7 */
        S_FREQ,         /* perf_freq ticks: / perf_freq */
};

#define F_BASE          0x01u   /* needs a base counter */
#define F_MULTI_BASE    0x02u   /* B1 (instances summed) as a gauge <f>_base, if found */
#define F_INVERSE       0x04u   /* an _INV type: the raw, non-inverted time */

struct rule {
        uint32_t type;
        enum kind kind;
        enum scale scale;
        unsigned flags;
};

/*
 * The one table.  Types not here (text, no-data, the bases themselves,
 * PERF_COUNTER_HISTOGRAM_TYPE, anything unknown) get no family: a missing
 * family is better than a wrong number.  PERF_OBJECT_TIMER types use the
 * sample's perf_freq: the model carries no per-object clock.
 */
static const struct rule rules[] = {
        { PERF_COUNTER_RAWCOUNT, K_GAUGE, S_ONE, 0 },
        { PERF_COUNTER_LARGE_RAWCOUNT, K_GAUGE, S_ONE, 0 },
        { PERF_COUNTER_RAWCOUNT_HEX, K_GAUGE, S_ONE, 0 },
        { PERF_COUNTER_LARGE_RAWCOUNT_HEX, K_GAUGE, S_ONE, 0 },
        { PERF_COUNTER_COUNTER, K_COUNTER, S_ONE, 0 },
        { PERF_COUNTER_BULK_COUNT, K_COUNTER, S_ONE, 0 },
        { PERF_SAMPLE_COUNTER, K_COUNTER, S_ONE, 0 },
        { PERF_COUNTER_DELTA, K_COUNTER, S_ONE, 0 },
        { PERF_COUNTER_LARGE_DELTA, K_COUNTER, S_ONE, 0 },
        { PERF_100NSEC_TIMER, K_TIME, S_100NS, 0 },
        { PERF_100NSEC_TIMER_INV, K_TIME, S_100NS, F_INVERSE },
        { PERF_100NSEC_MULTI_TIMER, K_TIME, S_100NS, F_MULTI_BASE },
        { PERF_100NSEC_MULTI_TIMER_INV, K_TIME, S_100NS, F_MULTI_BASE | F_INVERSE },
        { PERF_COUNTER_TIMER, K_TIME, S_FREQ, 0 },
        { PERF_COUNTER_TIMER_INV, K_TIME, S_FREQ, F_INVERSE },
        { PERF_COUNTER_MULTI_TIMER, K_TIME, S_FREQ, F_MULTI_BASE },
        { PERF_COUNTER_MULTI_TIMER_INV, K_TIME, S_FREQ, F_MULTI_BASE | F_INVERSE },
        { PERF_OBJ_TIME_TIMER, K_TIME, S_FREQ, 0 },
        /* Their time base is a timestamp; the scraper's own clock serves. */
        { PERF_PRECISION_SYSTEM_TIMER, K_TIME, S_FREQ, 0 },
        { PERF_PRECISION_100NS_TIMER, K_TIME, S_100NS, 0 },
        { PERF_PRECISION_OBJECT_TIMER, K_TIME, S_FREQ, 0 },
        { PERF_COUNTER_QUEUELEN_TYPE, K_QUEUE, S_FREQ, 0 },
        { PERF_COUNTER_LARGE_QUEUELEN_TYPE, K_QUEUE, S_FREQ, 0 },
        { PERF_COUNTER_100NS_QUEUELEN_TYPE, K_QUEUE, S_100NS, 0 },
        { PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, K_QUEUE, S_FREQ, 0 },
        { PERF_SAMPLE_FRACTION, K_FRACTION, S_ONE, F_BASE },
        { PERF_AVERAGE_BULK, K_AVERAGE, S_ONE, F_BASE },
        { PERF_AVERAGE_TIMER, K_AVERAGE, S_FREQ, F_BASE },
        { PERF_RAW_FRACTION, K_RATIO, S_ONE, F_BASE },
        { PERF_LARGE_RAW_FRACTION, K_RATIO, S_ONE, F_BASE },
        { PERF_ELAPSED_TIME, K_ELAPSED, S_FREQ, 0 },
};

static const struct rule *rule_of(uint32_t type)
{
        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
                if (rules[i].type == type)
                        return &rules[i];
        return NULL;
}

static bool is_base_type(uint32_t type)
{
        return type == PERF_SAMPLE_BASE || type == PERF_AVERAGE_BASE ||
               type == PERF_COUNTER_MULTI_BASE || type == PERF_RAW_BASE ||
               type == PERF_LARGE_RAW_BASE;
}

const char *expo_content_type(enum expo_syntax s)
{
        return s == EXPO_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                     : "text/plain; version=0.0.4; charset=utf-8";
}

void expo_buf_done(struct expo_buf *b)
{
        free(b->data);
        *b = (struct expo_buf) { 0 };
}

static bool buf_reserve(struct expo_buf *b, size_t more)
{
        if (b->error)
                return false;
        if (b->len + more < b->cap)
                return true;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + more)
                cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
                b->error = -ENOMEM;
                return false;
        }
        b->data = p;
        b->cap = cap;
        return true;
}

static void buf_add(struct expo_buf *b, const char *s, size_t n)
{
        if (!buf_reserve(b, n))
                return;
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
}

static void buf_puts(struct expo_buf *b, const char *s)
{
        buf_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void buf_printf(struct expo_buf *b, const char *fmt, ...)
{
        char small[128];
        va_list ap;

        va_start(ap, fmt);
        int n = vsnprintf(small, sizeof(small), fmt, ap);
        va_end(ap);
        if (n < 0) {
                if (!b->error)
                        b->error = -ENOMEM;
                return;
        }
        if ((size_t) n < sizeof(small)) {
                buf_add(b, small, (size_t) n);
                return;
        }
        if (!buf_reserve(b, (size_t) n))
                return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t) n;
}

/*
 * Both syntaxes escape backslash and newline; OpenMetrics escapes '"' in
 * HELP too, and both escape it in label values (quoted).
 */
static void buf_escaped(struct expo_buf *b, const char *s, bool quote)
{
        for (;;) {
                size_t n = strcspn(s, quote ? "\\\n\"" : "\\\n");

                buf_add(b, s, n);
                s += n;
                if (!*s)
                        return;
                buf_add(b, *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : "\\\"", 2);
                s++;
        }
}

/*
 * Appends one part of a family name: "%" as the word "percent", a run of
 * anything outside [a-z0-9] (non-ASCII bytes included) as one "_" owed to
 * the next word, so none is left at either end.
 */
static int name_part(const char *s, char *buf, size_t size, size_t *len)
{
        size_t start = *len;
        bool sep = true;

        for (; *s; s++) {
                char c = *s;

                if (c >= 'A' && c <= 'Z')
                        c = (char) (c - 'A' + 'a');
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (!alnum && c != '%') {
                        sep = true;
                        continue;
                }
                const char *word = alnum ? &c : "percent";
                size_t n = alnum ? 1 : strlen("percent");
                if (*len + sep + n >= size)
                        return -ENAMETOOLONG;
                if (sep)
                        buf[(*len)++] = '_';
                memcpy(buf + *len, word, n);
                *len += n;
                sep = !alnum;
        }
        return *len > start ? 0 : -EINVAL;
}

int expo_family_name(const char *object, const char *counter, char *buf, size_t size)
{
        size_t len = strlen("perflib");
        int r;

        if (!object || !counter)
                return -EINVAL;
        if (size <= len)
                return -ENAMETOOLONG;
        memcpy(buf, "perflib", len);
        r = name_part(object, buf, size, &len);
        if (r < 0)
                return r;
        r = name_part(counter, buf, size, &len);
        if (r < 0)
                return r;
        buf[len] = '\0';
        return 0;
}

/* The names a family takes: its own, its samples', its base family's. */
struct plan {
        const struct rule *rule;
        size_t k, base;                 /* counter; base counter, or SIZE_MAX */
        char fam[FAM_MAX];              /* OpenMetrics family name */
        char base_fam[FAM_MAX];         /* "" when none */
};

/* Names already taken in this scrape (and the health families'): owned strings. */
struct expo_names {
        char **v;
        size_t n;
};

static const char *const health_names[] = {
        "perflib_exporter_up", "perflib_exporter_scrape_duration_seconds",
        "perflib_exporter_scrape_errors", "perflib_exporter_scrape_errors_total",
};

static void names_done(struct expo_names *t)
{
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i]);
        free(t->v);
        *t = (struct expo_names) { 0 };
}

struct expo_names *expo_names_new(void)
{
        return calloc(1, sizeof(struct expo_names));
}

void expo_names_free(struct expo_names *t)
{
        if (!t)
                return;
        names_done(t);
        free(t);
}

static bool names_has(const struct expo_names *t, const char *s)
{
        for (size_t i = 0; i < sizeof(health_names) / sizeof(health_names[0]); i++)
                if (strcmp(health_names[i], s) == 0)
                        return true;
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->v[i], s) == 0)
                        return true;
        return false;
}

static int names_add(struct expo_names *t, const char *s)
{
        char **v = realloc(t->v, (t->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        t->v = v;
        if (!(v[t->n] = strdup(s)))
                return -ENOMEM;
        t->n++;
        return 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && strcmp(s + a - b, suffix) == 0;
}

static bool is_counter_kind(enum kind k)
{
        return k == K_COUNTER || k == K_TIME || k == K_QUEUE || k == K_FRACTION;
}

static bool in_seconds(const struct rule *r)
{
        return r->kind == K_TIME || r->kind == K_ELAPSED ||
               (r->kind == K_AVERAGE && r->scale != S_ONE);
}

/* Every name a plan's families and samples use: at most 6. */
static size_t plan_names(const struct plan *p, char out[][SAMPLE_MAX])
{
        size_t n = 0;

        snprintf(out[n++], SAMPLE_MAX, "%s", p->fam);
        if (is_counter_kind(p->rule->kind))
                snprintf(out[n++], SAMPLE_MAX, "%s_total", p->fam);
        if (p->rule->kind == K_AVERAGE) {
                snprintf(out[n++], SAMPLE_MAX, "%s_sum", p->fam);
                snprintf(out[n++], SAMPLE_MAX, "%s_count", p->fam);
        }
        if (p->base_fam[0]) {
                snprintf(out[n++], SAMPLE_MAX, "%s", p->base_fam);
                snprintf(out[n++], SAMPLE_MAX, "%s_total", p->base_fam);
        }
        return n;
}

/* The base of counter k: by base_id if it names a base counter, else the next base. */
static size_t find_base(const struct expo_set *s, size_t k)
{
        for (size_t j = 0; j < s->n_counters; j++)
                if (j != k && s->counters[j].id == s->counters[k].base_id &&
                    is_base_type(s->counters[j].type))
                        return j;
        for (size_t j = k + 1; j < s->n_counters; j++)
                if (is_base_type(s->counters[j].type))
                        return j;
        return SIZE_MAX;
}

/*
 * Names counter k's families: the first of F, F_2, F_3 ... (before any
 * unit suffix) none of whose names an earlier family of the set took.
 * 1 planned, 0 left out (no rule, no base, no name, not for display),
 * -ENOMEM.  Counters marked PERF_ATTRIB_NO_DISPLAYABLE are the time and
 * frequency bases of others (PerfTimeId, PerfFreqId): Windows lists them
 * nowhere, and the sample's header already carries the clocks they stand
 * for.
 */
static int plan_counter(const struct expo_set *s, size_t k, struct expo_names *taken, struct plan *p)
{
        char f[EXPO_NAME_MAX], cand[CAND_MAX], all[6][SAMPLE_MAX];

        *p = (struct plan) { .rule = rule_of(s->counters[k].type), .k = k, .base = SIZE_MAX };
        if (s->counters[k].attrib & PERF_ATTRIB_NO_DISPLAYABLE)
                return 0;
        if (!p->rule || expo_family_name(s->name, s->counters[k].name, f, sizeof(f)) < 0)
                return 0;
        if (p->rule->flags & (F_BASE | F_MULTI_BASE))
                p->base = find_base(s, k);
        if ((p->rule->flags & F_BASE) && p->base == SIZE_MAX)
                return 0;
        for (unsigned i = 1;; i++) {
                bool clash = false;

                if (i == 1)
                        snprintf(cand, sizeof(cand), "%s", f);
                else
                        snprintf(cand, sizeof(cand), "%s_%u", f, i);
                snprintf(p->fam, sizeof(p->fam), in_seconds(p->rule) && !has_suffix(cand, "_seconds") ?
                         "%s_seconds" : "%s", cand);
                if (p->base != SIZE_MAX && p->rule->kind != K_AVERAGE && p->rule->kind != K_RATIO)
                        snprintf(p->base_fam, sizeof(p->base_fam), "%s_base", cand);
                size_t n = plan_names(p, all);
                for (size_t j = 0; j < n && !clash; j++)
                        clash = names_has(taken, all[j]);
                if (clash)
                        continue;
                for (size_t j = 0; j < n; j++)
                        if (names_add(taken, all[j]) < 0)
                                return -ENOMEM;
                return 1;
        }
}

/* A sample's value: an exact integer, or a computed double. */
struct value {
        bool integer;
        uint64_t u;
        double d;
};

static void buf_value(struct expo_buf *b, const struct value *v)
{
        if (v->integer)
                buf_printf(b, " %" PRIu64 "\n", v->u);
        else
                buf_printf(b, " %.17g\n", v->d);
}

/* Counter k of instance i, 32-bit types masked as pcq_calculate does; false if missing. */
static bool raw_of(const struct expo_set *s, size_t i, size_t k, uint64_t *ret)
{
        size_t at = i * s->n_counters + k;

        if (k == SIZE_MAX || (s->has && !s->has[at]))
                return false;
        *ret = s->raw[at];
        if ((s->counters[k].type & 0x300u) == PERF_SIZE_DWORD)
                *ret &= UINT32_MAX;
        return true;
}

static bool scaled(const struct expo_set *s, enum scale sc, uint64_t raw, struct value *v)
{
        *v = (struct value) { .integer = sc == S_ONE, .u = raw };
        if (sc == S_100NS)
                v->d = (double) raw / 1e7;
        else if (sc == S_FREQ) {
                if (!s->perf_freq)
                        return false;
                v->d = (double) raw / (double) s->perf_freq;
        }
        return true;
}

struct ctx {
        struct expo_buf *out;
        const struct expo_set *s;
        const struct expo_write_opts *o;
        const bool *dup;                /* per instance: its name is shared */
};

static bool instance_written(const struct ctx *c, size_t i)
{
        const char *name = c->s->instances[i].name;
        return !c->s->multi || c->o->with_total || !name || strcmp(name, "_Total") != 0;
}

static void sample(const struct ctx *c, size_t i, const char *name, const char *suffix,
                   const struct value *v)
{
        const struct expo_instance *in = &c->s->instances[i];

        buf_puts(c->out, name);
        buf_puts(c->out, suffix);
        if (c->s->multi) {
                buf_puts(c->out, "{instance_name=\"");
                buf_escaped(c->out, in->name ? in->name : "", true);
                if (c->dup[i])
                        buf_printf(c->out, "\",instance_id=\"%" PRIu32, in->id);
                buf_puts(c->out, "\"}");
        }
        buf_value(c->out, v);
}

static void header(const struct ctx *c, const char *fam, const char *type, bool seconds,
                   const struct expo_counter *ctr, const char *note)
{
        bool om = c->o->syntax == EXPO_OPENMETRICS;
        const char *total = !om && strcmp(type, "counter") == 0 ? "_total" : "";

        buf_printf(c->out, "# HELP %s%s ", fam, total);
        buf_escaped(c->out, ctr->help && ctr->help[0] ? ctr->help : ctr->name, om);
        if (note)
                buf_escaped(c->out, note, om);
        buf_printf(c->out, "\n# TYPE %s%s %s\n", fam, total, type);
        if (om && seconds)
                buf_printf(c->out, "# UNIT %s seconds\n", fam);
}

static const char *type_name(enum kind k)
{
        if (is_counter_kind(k))
                return "counter";
        return k == K_AVERAGE ? "summary" : "gauge";
}

/* The main sample(s) of instance i; false: left out (missing, no clock, zero base). */
static bool main_sample(const struct ctx *c, const struct plan *p, size_t i)
{
        const struct expo_set *s = c->s;
        struct value v, n;
        uint64_t raw, base = 0;

        if (!raw_of(s, i, p->k, &raw))
                return false;
        if ((p->rule->flags & F_BASE) && !raw_of(s, i, p->base, &base))
                return false;
        switch (p->rule->kind) {
        case K_GAUGE:
        case K_COUNTER: case K_TIME: case K_QUEUE: case K_FRACTION:
                if (!scaled(s, p->rule->scale, raw, &v))
                        return false;
                sample(c, i, p->fam, p->rule->kind == K_GAUGE ? "" : "_total", &v);
                return true;
        case K_AVERAGE:
                if (!scaled(s, p->rule->scale, raw, &v))
                        return false;
                n = (struct value) { .integer = true, .u = base };
                sample(c, i, p->fam, "_sum", &v);
                sample(c, i, p->fam, "_count", &n);
                return true;
        case K_RATIO:
                if (!base)
                        return false;
                v = (struct value) { .d = (double) raw / (double) base };
                sample(c, i, p->fam, "", &v);
                return true;
        case K_ELAPSED:
                if (!s->perf_freq || raw > s->perf_time)
                        return false;
                v = (struct value) { .d = (double) (s->perf_time - raw) / (double) s->perf_freq };
                sample(c, i, p->fam, "", &v);
                return true;
        }
        return false;
}

static void write_plan(const struct ctx *c, const struct plan *p)
{
        const struct expo_counter *ctr = &c->s->counters[p->k];
        const char *note = p->rule->flags & F_INVERSE ?
                " (exported as the measured time, not inverted)" : NULL;
        uint64_t raw;

        header(c, p->fam, type_name(p->rule->kind), in_seconds(p->rule), ctr, note);
        for (size_t i = 0; i < c->s->n_instances; i++)
                if (instance_written(c, i))
                        main_sample(c, p, i);
        if (!p->base_fam[0])
                return;
        /* A sample fraction's base is a delta (a counter); a multi timer's B1 a gauge. */
        bool counter = p->rule->kind == K_FRACTION;
        header(c, p->base_fam, counter ? "counter" : "gauge", false, &c->s->counters[p->base], NULL);
        for (size_t i = 0; i < c->s->n_instances; i++) {
                struct value v = { .integer = true };
                if (instance_written(c, i) && raw_of(c->s, i, p->base, &raw)) {
                        v.u = raw;
                        sample(c, i, p->base_fam, counter ? "_total" : "", &v);
                }
        }
}

struct named {
        const char *name;
        size_t i;
};

static int named_cmp(const void *a, const void *b)
{
        return strcmp(((const struct named *) a)->name, ((const struct named *) b)->name);
}

/* dup[i]: another instance has instance i's name.  Returns an owned array, NULL on ENOMEM. */
static bool *shared_names(const struct expo_set *s)
{
        bool *dup = calloc(s->n_instances ? s->n_instances : 1, sizeof(*dup));
        struct named *v = calloc(s->n_instances ? s->n_instances : 1, sizeof(*v));

        if (!dup || !v) {
                free(dup);
                free(v);
                return NULL;
        }
        for (size_t i = 0; i < s->n_instances; i++)
                v[i] = (struct named) { s->instances[i].name ? s->instances[i].name : "", i };
        qsort(v, s->n_instances, sizeof(*v), named_cmp);
        for (size_t i = 1; i < s->n_instances; i++)
                if (strcmp(v[i - 1].name, v[i].name) == 0)
                        dup[v[i - 1].i] = dup[v[i].i] = true;
        free(v);
        return dup;
}

int expo_write_set(struct expo_buf *out, const struct expo_set *s,
                   const struct expo_write_opts *o)
{
        struct expo_names local = { 0 }, *taken = o->taken ? o->taken : &local;
        struct plan *p = malloc(sizeof(*p));
        bool *dup = shared_names(s);
        int r = 0;

        if (!p || !dup) {
                r = -ENOMEM;
                goto fail;
        }
        struct ctx c = { .out = out, .s = s, .o = o, .dup = dup };
        for (size_t k = 0; k < s->n_counters && !out->error; k++) {
                r = plan_counter(s, k, taken, p);
                if (r < 0)
                        goto fail;
                if (r > 0)
                        write_plan(&c, p);
        }
        r = 0;
fail:
        if (r < 0 && !out->error)
                out->error = r;
        names_done(&local);
        free(dup);
        free(p);
        return out->error;
}

int expo_write_health(struct expo_buf *out, const struct expo_health *h, enum expo_syntax s)
{
        bool om = s == EXPO_OPENMETRICS;

        buf_printf(out, "# HELP perflib_exporter_up Whether perflibd answered this scrape (1) or not (0).\n"
                   "# TYPE perflib_exporter_up gauge\nperflib_exporter_up %d\n", h->up ? 1 : 0);
        buf_puts(out, "# HELP perflib_exporter_scrape_duration_seconds How long the last scrape of a counterset took.\n"
                 "# TYPE perflib_exporter_scrape_duration_seconds gauge\n");
        if (om)
                buf_puts(out, "# UNIT perflib_exporter_scrape_duration_seconds seconds\n");
        for (size_t i = 0; i < h->n_sets; i++) {
                buf_puts(out, "perflib_exporter_scrape_duration_seconds{counterset=\"");
                buf_escaped(out, h->sets[i].set, true);
                buf_printf(out, "\"} %.17g\n", h->sets[i].duration_seconds);
        }
        const char *errs = om ? "perflib_exporter_scrape_errors" : "perflib_exporter_scrape_errors_total";
        buf_printf(out, "# HELP %s Scrapes of a counterset that failed since the exporter started.\n"
                   "# TYPE %s counter\n", errs, errs);
        for (size_t i = 0; i < h->n_sets; i++) {
                buf_puts(out, "perflib_exporter_scrape_errors_total{counterset=\"");
                buf_escaped(out, h->sets[i].set, true);
                buf_printf(out, "\"} %" PRIu64 "\n", h->sets[i].errors_total);
        }
        if (om)
                buf_puts(out, "# EOF\n");
        return out->error;
}
