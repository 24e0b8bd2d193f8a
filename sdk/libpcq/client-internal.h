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
#include "client-conn.h"
#include "client-path.h"
#include "client-wire.h"

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
