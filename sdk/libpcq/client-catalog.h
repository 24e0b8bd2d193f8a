/* SPDX-License-Identifier: MIT */
/*
 * client-catalog.h: the catalog of one server's countersets
 * (client-catalog.c), loaded through a link and kept by the connection;
 * the listing and query code of libpcq resolve names against it.  It
 * knows links, not connections.  Hidden symbols, cl_ prefix.
 */
#ifndef PCQ_CLIENT_CATALOG_H
#define PCQ_CLIENT_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcq.h"

struct cl_link;

struct cl_counter {
        struct pcq_counter_reg reg;
        char *name;                     /* owned; "" when the server sent none */
        char *help;                     /* owned; NULL until cl_catalog_help */
};

struct cl_set {
        struct pcq_counterset_reg reg;
        char *name;                     /* owned */
        char *help;                     /* owned; NULL until cl_catalog_help */
        struct cl_counter *counters;    /* owned, reg.num_counters of them */
        bool help_loaded;
};

struct cl_catalog {
        struct cl_set *sets;            /* owned */
        size_t n;
        bool loaded;
};

/* Drops everything the catalog holds. */
void cl_catalog_clear(struct cl_catalog *cat);
/* Loads cat from l if it is not loaded, or reloads it when refresh. */
uint32_t cl_catalog_load(struct cl_catalog *cat, struct cl_link *l, bool refresh);
/*
 * The counterset named name (case-insensitive), loading the catalog and
 * reloading it once when the name is not found.  NULL when none; the
 * pointer is valid until the next load.
 */
const struct cl_set *cl_catalog_find(struct cl_catalog *cat, struct cl_link *l,
                                     const char *name);
/* The counter of s named name (case-insensitive), or NULL. */
const struct cl_counter *cl_set_counter(const struct cl_set *s, const char *name);
const struct cl_counter *cl_set_counter_id(const struct cl_set *s, uint32_t id);
/* Loads the help texts of s once from l (errors leave them NULL). */
void cl_catalog_help(struct cl_link *l, struct cl_set *s);

/* Whether a counter shows up in listings: not a base, not no-display. */
bool cl_counter_listed(const struct cl_counter *ctr);
/* Whether the counterset has instances in paths (anything but single). */
bool cl_set_has_instances(const struct cl_set *s);
/* Whether the client computes a _Total for it (global, multi aggregate, history). */
bool cl_set_aggregate(const struct cl_set *s);
/*
 * Whether it is a global aggregate (with or without history): a
 * single-instance set to its readers, as Windows shows it, whose one value
 * the client aggregates over every instance the providers create.
 */
bool cl_set_global(const struct cl_set *s);

#endif /* PCQ_CLIENT_CATALOG_H */
