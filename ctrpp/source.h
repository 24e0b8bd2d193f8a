/* SPDX-License-Identifier: MIT */
/*
 * The manifest's text and where things are in it (source.c): its line
 * starts and start tags, which put diagnostics at an element's '<' or an
 * attribute's name.
 */
#ifndef CTRPP_SOURCE_H
#define CTRPP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "perfman.h"

struct parser;

/* A start tag: from its '<' to just past its '>'. */
struct tag {
        size_t start, end;
        size_t name_len;
};

struct source {
        const char *text;       /* UTF-8, without a BOM */
        size_t size;
        size_t *line_starts;
        size_t n_lines;
        struct tag *tags;
        size_t n_tags, cap_tags;
        /* The tags matched libxml2's elements one to one (their _private). */
        bool tags_ok;
};

bool pm_is_space(char c);

/* Sets p->src.text and p->src.size. */
int pm_source_text(struct parser *p, const void *data, size_t size, char **ret_owned);
int pm_index_lines(struct source *s);
/* Indexes the start tags and matches them with p->doc's elements. */
int pm_index_source(struct parser *p);
void pm_source_done(struct source *s);

struct pm_loc pm_loc_at(const struct parser *p, size_t off);
struct pm_loc pm_node_loc(const struct parser *p, const xmlNode *n);
/* At the attribute's name; at its element when the tags are not known. */
struct pm_loc pm_attr_loc(const struct parser *p, const xmlNode *n, const char *name);
unsigned pm_tag_column(const struct parser *p, unsigned line, const char *name);

#endif
