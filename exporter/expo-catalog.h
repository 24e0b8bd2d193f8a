/* SPDX-License-Identifier: MIT */
/*
 * expo-catalog.h: the registration info of perflibd's countersets as the
 * scrape keeps it between scrapes (expo-catalog.c): names, help, counter
 * types, and which counters the selection exports.  Hidden symbols,
 * expo_ prefix.
 */
#ifndef EXPO_CATALOG_H
#define EXPO_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expo-model.h"
#include "expo-select.h"
#include "pcq.h"

struct expo_cset {
        GUID guid;
        char *name, *help;              /* owned */
        uint32_t instance_type;
        bool multi;
        bool narrow;                    /* the selection picks values one by one */
        /* Every counter as registered; the strings are owned here. */
        struct expo_counter *all;
        uint32_t *aggregate;            /* AggregateFunc of each */
        int32_t *base_of;               /* index in all of its base counter, -1: none */
        bool *used_base;                /* a base some counter's base_of names */
        int32_t *column;                /* its index in counters, -1: not exported */
        size_t n_all;
        /* The exported ones, copies of all[] (strings shared with it). */
        struct expo_counter *counters;
        size_t n_counters;
        /* The scrape's own bookkeeping, kept across reloads by GUID. */
        uint32_t block;                 /* in QueryCounterData's answer; UINT32_MAX none */
        uint64_t errors_total;
        double duration_seconds;
};

struct expo_catalog {
        struct expo_cset *sets;         /* owned, the selected countersets */
        size_t n;
        GUID *guids;                    /* what EnumerateCounterSet said at load */
        size_t n_guids;
};

/*
 * Loads the registration info of every counterset of guids (n of them,
 * ownership taken) that sel selects into *ret, replacing what it held
 * (also on failure).  A counterset that fails to load is left out (it
 * went away meanwhile); errors_total carries over from old (which may be
 * ret) by GUID.  0, -ECONNRESET when the connection broke, -ENOMEM.
 */
int expo_catalog_load(pcq_conn *c, const struct expo_select *sel, GUID *guids, size_t n,
                      const struct expo_catalog *old, struct expo_catalog *ret);
void expo_catalog_clear(struct expo_catalog *cat);

/* Whether guids (n) is the list the catalog was loaded from. */
bool expo_catalog_same(const struct expo_catalog *cat, const GUID *guids, size_t n);

/* The exported column of counter id in cs, -1 if none; hint: the likely index in all. */
int32_t expo_cset_column(const struct expo_cset *cs, uint32_t id, size_t *hint);

#endif /* EXPO_CATALOG_H */
