/* SPDX-License-Identifier: MIT */
/*
 * expo-format.h: counters as Prometheus text 0.0.4 and OpenMetrics 1.0
 * (expo-format.c).  Families are perflib_<object>_<counter>, named by
 * expo_family_name; what each counter type becomes (gauge, counter,
 * summary, numerator and base) is the table in perflib-exporter(1), and
 * the code's one switch.  Raw values, never rates.  Hidden symbols, expo_
 * prefix.
 */
#ifndef EXPO_FORMAT_H
#define EXPO_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expo-model.h"

enum expo_syntax {
        EXPO_PROMETHEUS,                /* text/plain; version=0.0.4 */
        EXPO_OPENMETRICS,               /* application/openmetrics-text; version=1.0.0 */
};

/* The Content-Type header of a syntax. */
const char *expo_content_type(enum expo_syntax s);

/* A growing text buffer; a failed append sticks (error), later ones do nothing. */
struct expo_buf {
        char *data;                     /* owned; NUL-terminated when len > 0 */
        size_t len, cap;
        int error;                      /* 0, or -ENOMEM once an append failed */
};
void expo_buf_done(struct expo_buf *b);

/*
 * The family name for a counter of an object: "perflib_" + object + "_" +
 * counter, "%" as "percent", lower case, each run of characters outside
 * [a-z0-9] one "_", none at either end.  0, -ENAMETOOLONG (size too
 * small), -EINVAL (nothing left of a part).
 */
int expo_family_name(const char *object, const char *counter, char *buf, size_t size);

/*
 * The family names one scrape has used so far: two countersets whose
 * names come out the same ("Processor" from two providers) must not write
 * one family twice, which would make the whole scrape unparsable.
 */
struct expo_names;
struct expo_names *expo_names_new(void);
void expo_names_free(struct expo_names *t);

struct expo_write_opts {
        enum expo_syntax syntax;
        bool with_total;                /* export the _Total instance too */
        struct expo_names *taken;       /* borrowed: names of the scrape's earlier sets; NULL: none */
};

/*
 * Appends every family of s to out (HELP, TYPE, UNIT where known, the
 * samples), instance_name labels on multi-instance sets (instance_id too
 * only where two instances share a name).  A family whose name is taken
 * (by this set, by o->taken, or by the health families) gets "_2", "_3"
 * ..., and its names go into o->taken.  0, or out->error.
 */
int expo_write_set(struct expo_buf *out, const struct expo_set *s,
                   const struct expo_write_opts *o);

/* The exporter's own health, per counterset and overall. */
struct expo_set_health {
        const char *set;                /* the counterset's name */
        double duration_seconds;        /* of its last scrape */
        uint64_t errors_total;          /* scrapes of it that failed, since start */
};
struct expo_health {
        bool up;                        /* perflibd answered this scrape */
        const struct expo_set_health *sets;
        size_t n_sets;
};

/*
 * Appends perflib_exporter_up, perflib_exporter_scrape_duration_seconds
 * and perflib_exporter_scrape_errors_total{counterset=...}, and with
 * OpenMetrics the final "# EOF".  0, or out->error.
 */
int expo_write_health(struct expo_buf *out, const struct expo_health *h, enum expo_syntax s);

#endif /* EXPO_FORMAT_H */
