/* SPDX-License-Identifier: MIT */
/* Shared between libperfman's own files; not for its users. */
#ifndef PERFMAN_INTERNAL_H
#define PERFMAN_INTERNAL_H

#include "perfman.h"

/* counterman.xsd, NUL-terminated (schema.c, generated at build time). */
extern const char pm_schema_xsd[];

#endif
