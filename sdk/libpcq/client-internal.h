/* SPDX-License-Identifier: MIT */
/*
 * client-internal.h: what the client-*.c files of libpcq share and nobody
 * else sees (every symbol here is hidden by -fvisibility=hidden and left
 * out of libpcq.sym).  Names use the cl_ prefix so that they never look
 * like the public pcq_ API.
 */
#ifndef PCQ_CLIENT_INTERNAL_H
#define PCQ_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcq.h"
#include "perflibv2.h"
#include "client-wire.h"
#include "client-path.h"

/* Request codes of QueryCounterSetRegistrationInfo (MS-PCQ 3.1.4.1.2). */
#define CL_REQ_COUNTERSET_INFO  1u
#define CL_REQ_COUNTERSET_NAME  3u
#define CL_REQ_COUNTERSET_HELP  4u
#define CL_REQ_COUNTER_NAMES    5u
#define CL_REQ_COUNTER_HELP     6u
#define CL_REQ_ENGLISH_NAME     9u
#define CL_REQ_ENGLISH_NAMES    10u

/* ---- the per-connection catalog of countersets (client-catalog.c) ---- */

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

struct pcq_conn {
        struct pv2_client *client;      /* owned */
        char *host;                     /* owned; "" for local */
        char *machine;                  /* owned; szMachine sent: TCP's host name, else NULL */
        uint32_t size_hint[8];          /* last lpData size per opnum */
        struct cl_catalog catalog;
};

struct pcq_handle {
        pcq_conn *conn;                 /* borrowed */
        struct pv2_handle h;
};

/* Drops everything the catalog holds. */
void cl_catalog_clear(struct cl_catalog *cat);
/* Loads the catalog if it is not loaded, or reloads it when refresh. */
uint32_t cl_catalog_load(pcq_conn *c, bool refresh);
/*
 * The counterset named name (case-insensitive), loading the catalog and
 * reloading it once when the name is not found.  NULL when none; the
 * pointer is valid until the next load.
 */
const struct cl_set *cl_catalog_find(pcq_conn *c, const char *name);
/* The counter of s named name (case-insensitive), or NULL. */
const struct cl_counter *cl_set_counter(const struct cl_set *s, const char *name);
const struct cl_counter *cl_set_counter_id(const struct cl_set *s, uint32_t id);
/* Loads the help texts of s once (errors leave them NULL). */
void cl_catalog_help(pcq_conn *c, struct cl_set *s);

/* Whether a counter shows up in listings: not a base, not no-display. */
bool cl_counter_listed(const struct cl_counter *ctr);
/* Whether the counterset has instances in paths (anything but single). */
bool cl_set_has_instances(const struct cl_set *s);
/* Whether the client computes a _Total for it (global, multi aggregate, history). */
bool cl_set_aggregate(const struct cl_set *s);

/* ---- instance names (client-list.c) ---- */

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
/* *ret (malloc'd array, the caller's: cl_instances_free) may be empty. */
uint32_t cl_instances(pcq_conn *c, const GUID *set, struct cl_instance **ret, size_t *ret_n);
void cl_instances_free(struct cl_instance *v, size_t n);
/* Numbers the occurrences of equal names in v. */
void cl_instances_number(struct cl_instance *v, size_t n);

/* A growing NULL-terminated string vector. */
struct cl_strv {
        char **v;
        size_t n, cap;
};
/* Takes ownership of s (freed on failure). */
uint32_t cl_strv_push(struct cl_strv *sv, char *s);

/*
 * Resolves a path against c's catalog: parses it into *ret_path (the
 * caller's: pcq_path_done), checks its host and finds its counterset
 * (*ret_set, valid until the catalog reloads) and, unless the counter is
 * "*", its counter.  On failure *ret_error (may be NULL) gets a malloc'd
 * sentence naming the part that failed, the caller's.
 */
uint32_t cl_resolve(pcq_conn *c, const char *path, struct pcq_path *ret_path,
                    const struct cl_set **ret_set, char **ret_error);

#endif /* PCQ_CLIENT_INTERNAL_H */
