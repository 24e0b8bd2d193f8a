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

/* MS-PCQ 2.2.4 structure sizes (the core's reading, pcq-core.c item 1). */
#define CL_REG_SET_SIZE         32u
#define CL_REG_COUNTER_SIZE     48u
#define CL_IDENT_SIZE           40u
#define CL_DATA_HEADER_SIZE     48u
#define CL_NO_ID                0xFFFFFFFFu

/* Request codes of QueryCounterSetRegistrationInfo (MS-PCQ 3.1.4.1.2). */
#define CL_REQ_COUNTERSET_INFO  1u
#define CL_REQ_COUNTERSET_NAME  3u
#define CL_REQ_COUNTERSET_HELP  4u
#define CL_REQ_COUNTER_NAMES    5u
#define CL_REQ_COUNTER_HELP     6u
#define CL_REQ_ENGLISH_NAME     9u
#define CL_REQ_ENGLISH_NAMES    10u

static inline uint16_t cl_le16(const uint8_t *p)
{
        return (uint16_t) (p[0] | p[1] << 8);
}

static inline uint32_t cl_le32(const uint8_t *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static inline uint64_t cl_le64(const uint8_t *p)
{
        return cl_le32(p) | (uint64_t) cl_le32(p + 4) << 32;
}

static inline void cl_put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/* A GUID as the wire has it: Data1-3 little-endian, Data4 as bytes. */
void cl_guid_read(const uint8_t *p, GUID *ret);
void cl_guid_write(uint8_t *p, const GUID *g);
bool cl_guid_eq(const GUID *a, const GUID *b);

/*
 * UTF-16LE units at p (at most max_units, stopping at a NUL) as a malloc'd
 * UTF-8 string, the caller's; unpaired surrogates become U+FFFD.  NULL on
 * allocation failure.  *ret_terminated says whether a NUL was found.
 */
char *cl_utf16_to_utf8(const uint8_t *p, size_t max_units, bool *ret_terminated);

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
        char *machine;                  /* owned; szMachine sent, NULL for local */
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

/*
 * Whether an instance matches a path's instance part: "*" every one,
 * "prefix*" by prefix, else the exact name (with the parent as
 * "parent/name") and the occurrence #index.
 */
bool cl_instance_matches(const struct pcq_path *p, const char *name, uint32_t occurrence);

/* A growing NULL-terminated string vector. */
struct cl_strv {
        char **v;
        size_t n, cap;
};
/* Takes ownership of s (freed on failure). */
uint32_t cl_strv_push(struct cl_strv *sv, char *s);

/*
 * The path of one item: p with the object, counter and instance replaced
 * (instance NULL: none), occurrence as #index.  Malloc'd, the caller's.
 */
char *cl_item_path(const struct pcq_path *p, const char *object, const char *instance,
                   uint32_t occurrence, const char *counter);

/*
 * Resolves a path against c's catalog: parses it into *ret_path (the
 * caller's: pcq_path_done), checks its host and finds its counterset
 * (*ret_set, valid until the catalog reloads) and, unless the counter is
 * "*", its counter.  On failure *ret_error (may be NULL) gets a malloc'd
 * sentence naming the part that failed, the caller's.
 */
uint32_t cl_resolve(pcq_conn *c, const char *path, struct pcq_path *ret_path,
                    const struct cl_set **ret_set, char **ret_error);

/* "_Total": the instance the client adds to aggregate countersets. */
#define CL_TOTAL "_Total"

#endif /* PCQ_CLIENT_INTERNAL_H */
