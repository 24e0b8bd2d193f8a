/* SPDX-License-Identifier: MIT */
/*
 * "Did you mean" for the schema's messages (schema-hint.c): the value,
 * attribute or element meant, where the schema knows the valid ones.
 */
#ifndef CTRPP_SCHEMA_HINT_H
#define CTRPP_SCHEMA_HINT_H

/*
 * msg, a tidied libxml2 schema message about the element named element,
 * with the nearest valid name added when one is close, or a value set
 * too long to read replaced by its size: a new malloc'd string (msg is
 * freed), or msg itself when there is nothing to add or no memory.
 */
char *pm_schema_hint(char *msg, const char *element);

#endif
