/* SPDX-License-Identifier: MIT */
/* The embedded counter schema, run over the <counters> subtree (schema-check.c). */
#ifndef CTRPP_SCHEMA_CHECK_H
#define CTRPP_SCHEMA_CHECK_H

struct parser;

/* What the schema finds goes to p->d: 0 then, -ENOMEM when it could not run. */
int pm_validate_schema(struct parser *p);

#endif
