/* SPDX-License-Identifier: MIT */
/*
 * client-resolve.h: a counter path resolved against a connection's
 * catalog (client-resolve.c), for the listing and the query code of
 * libpcq.  Hidden symbol, cl_ prefix.
 */
#ifndef PCQ_CLIENT_RESOLVE_H
#define PCQ_CLIENT_RESOLVE_H

#include <stdint.h>

#include "client-catalog.h"
#include "pcq.h"

/*
 * Resolves a path against c's catalog: parses it into *ret_path (the
 * caller's: pcq_path_done), checks its host and finds its counterset
 * (*ret_set, valid until the catalog reloads) and, unless the counter is
 * "*", its counter.  On failure *ret_error (may be NULL) gets a malloc'd
 * sentence naming the part that failed, the caller's.
 */
uint32_t cl_resolve(pcq_conn *c, const char *path, struct pcq_path *ret_path,
                    const struct cl_set **ret_set, char **ret_error);
/*
 * The counterset named object (*ret_set as cl_resolve's), or
 * PDH_CSTATUS_NO_OBJECT with the sentence, and the nearest name, in
 * *ret_error (may be NULL).
 */
uint32_t cl_resolve_set(pcq_conn *c, const char *object, const struct cl_set **ret_set,
                        char **ret_error);
/* Replaces *ret_error (when not NULL) by the malloc'd sentence fmt makes. */
void cl_say(char **ret_error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* PCQ_CLIENT_RESOLVE_H */
