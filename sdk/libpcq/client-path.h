/* SPDX-License-Identifier: MIT */
/*
 * client-path.h: what the client-*.c files of libpcq use of counter paths
 * beyond pcq.h's parse and format: the path of one listed or queried item
 * and the match of an instance against a path's instance part
 * (client-path.c).  Pure functions over struct pcq_path; hidden symbols.
 */
#ifndef PCQ_CLIENT_PATH_H
#define PCQ_CLIENT_PATH_H

#include <stdbool.h>
#include <stdint.h>

#include "pcq.h"

/* "_Total": the instance the client adds to aggregate countersets. */
#define CL_TOTAL "_Total"

/*
 * The path of one item: p with the object, counter and instance replaced
 * (instance NULL: none), occurrence as #index.  Malloc'd, the caller's.
 */
char *cl_item_path(const struct pcq_path *p, const char *object, const char *instance,
                   uint32_t occurrence, const char *counter);

/*
 * Whether an instance matches a path's instance part: "*" every one,
 * "prefix*" by prefix, else the exact name (with the parent as
 * "parent/name") and the occurrence #index; the parent may be "*" or
 * "prefix*" too, and "name#*" matches every occurrence of name.
 */
bool cl_instance_matches(const struct pcq_path *p, const char *name, uint32_t occurrence);
/* Whether p's instance or parent part holds a wildcard. */
bool cl_path_has_wildcard(const struct pcq_path *p);

#endif /* PCQ_CLIENT_PATH_H */
