/* SPDX-License-Identifier: MIT */
/* Naming the element a diagnostic is about (describe.c). */
#ifndef CTRPP_DESCRIBE_H
#define CTRPP_DESCRIBE_H

#include <libxml/tree.h>

struct parser;

/* Owned by the caller; NULL when out of memory. */
char *pm_describe(const struct parser *p, const xmlNode *n);

#endif
