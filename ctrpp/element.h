/* SPDX-License-Identifier: MIT */
/*
 * The document's elements and their attributes (element.c).  Strings are
 * owned by the caller; an allocation that fails sets p->oom.
 */
#ifndef CTRPP_ELEMENT_H
#define CTRPP_ELEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "perfman.h"

struct parser;

bool pm_has_name(const xmlNode *n, const char *local);
/* The first element from n on named local that is the counter schema's. */
xmlNode *pm_next_ours(const struct parser *p, xmlNode *n, const char *local);

#define FOREACH_OURS(p, parent, local, it) \
        for (xmlNode *it = pm_next_ours(p, (parent)->children, local); it; \
             it = pm_next_ours(p, it->next, local))

size_t pm_count_ours(const struct parser *p, xmlNode *parent, const char *local);
xmlNode *pm_find_descendant(xmlNode *n, const char *local);
xmlNode *pm_find_string_table(xmlNode *root);

char *pm_dup_or_oom(struct parser *p, const char *s);
/* An attribute's value as written; NULL when absent. */
char *pm_get_prop(struct parser *p, const xmlNode *n, const char *name);
const char *pm_string_ref(const char *text, size_t *ret_len);
xmlChar *pm_lookup_string(const struct parser *p, const char *id, size_t len);
struct sg_suggest;
/* Offers every id of the string table to sg (suggest.h), for a reference to none. */
void pm_offer_string_ids(const struct parser *p, struct sg_suggest *sg);
xmlChar *pm_resolved_prop(const struct parser *p, const xmlNode *n, const char *name);
bool pm_parse_i32(const char *s, int32_t *ret);
struct pm_u32 pm_get_u32(struct parser *p, const xmlNode *n, const char *name);

struct keyword {
        const char *name;
        int value;
};

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

int pm_get_keyword(struct parser *p, const xmlNode *n, const char *name,
                const struct keyword *k, size_t nk, int dflt);

#endif
