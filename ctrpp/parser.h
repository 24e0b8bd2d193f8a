/* SPDX-License-Identifier: MIT */
/*
 * The parser's state (parse.c), which the parser's pieces share: source.c,
 * element.c, describe.c, xml-error.c and schema-check.c.
 */
#ifndef CTRPP_PARSER_H
#define CTRPP_PARSER_H

#include <stdbool.h>

#include <libxml/tree.h>

#include "perfman.h"
#include "source.h"

struct parser {
        struct pm_diags *d;
        const char *file;               /* m->file */
        struct source src;
        xmlDoc *doc;
        xmlNode *counters;
        const xmlChar *counters_href;   /* its namespace as written, NULL when none */
        xmlNode *string_table;
        bool oom;
        bool xml_errors;                /* libxml2 reported the document ill-formed */
        /* The schema error last reported, to drop libxml2's restatement of it. */
        const xmlNode *last_node;
        char last_attr[64];
};

#endif
