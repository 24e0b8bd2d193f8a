/* SPDX-License-Identifier: MIT */
/*
 * Naming the element a diagnostic is about, as a reader of the manifest
 * knows it: by its symbol, name or id, and what it is in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "describe.h"
#include "element.h"
#include "parser.h"

static char *describe_counterset(const struct parser *p, const xmlNode *n)
{
        static const char *const by[] = { "symbol", "name", "guid" };
        char *r = NULL;

        for (size_t i = 0; i < N_ELEMENTS(by) && !r; i++) {
                xmlChar *v = pm_resolved_prop(p, n, by[i]);
                if (v && *v && asprintf(&r, "counterset '%s'", (const char *) v) < 0)
                        r = NULL;
                xmlFree(v);
        }
        return r ? r : strdup("counterset");
}

static char *describe_counter(const struct parser *p, const xmlNode *n)
{
        xmlChar *id = xmlGetNoNsProp(n, (const xmlChar *) "id");
        xmlChar *sym = xmlGetNoNsProp(n, (const xmlChar *) "symbol");
        char *cs = pm_has_name(n->parent, "counterSet") ? describe_counterset(p, n->parent) : NULL;
        char *r;

        if (asprintf(&r, "counter%s%s%s%s%s%s%s", id ? " " : "", id ? (const char *) id : "",
                     sym && *sym ? " (" : "", sym && *sym ? (const char *) sym : "",
                     sym && *sym ? ")" : "", cs ? " in " : "", cs ? cs : "") < 0)
                r = NULL;
        xmlFree(id);
        xmlFree(sym);
        free(cs);
        return r;
}

static char *describe_provider(const xmlNode *n)
{
        xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *) "symbol");
        char *r;

        if (!v || !*v) {
                xmlFree(v);
                v = xmlGetNoNsProp(n, (const xmlChar *) "providerGuid");
        }
        if (!v || !*v || asprintf(&r, "provider %s", (const char *) v) < 0)
                r = strdup("provider");
        xmlFree(v);
        return r;
}

/* What a diagnostic about element n names: "counter 3 (SYM) in counterset 'X'". */
char *pm_describe(const struct parser *p, const xmlNode *n)
{
        char *owner, *r;

        if (pm_has_name(n, "counter"))
                return describe_counter(p, n);
        if (pm_has_name(n, "counterSet"))
                return describe_counterset(p, n);
        if (pm_has_name(n, "provider"))
                return describe_provider(n);
        if (pm_has_name(n, "counters"))
                return strdup("<counters>");
        if (pm_has_name(n, "counterAttributes") || pm_has_name(n, "counterAttribute") ||
            pm_has_name(n, "structs") || pm_has_name(n, "struct")) {
                const xmlNode *o = n->parent;
                while (o && !pm_has_name(o, "counter") && !pm_has_name(o, "counterSet"))
                        o = o->parent;
                owner = o ? pm_describe(p, o) : NULL;
                if (!owner || asprintf(&r, "<%s> of %s", (const char *) n->name, owner) < 0)
                        r = NULL;
                free(owner);
                return r;
        }
        owner = n->parent && n->parent->type == XML_ELEMENT_NODE ? pm_describe(p, n->parent) : NULL;
        if (asprintf(&r, "<%s>%s%s", (const char *) n->name, owner ? " in " : "",
                     owner ? owner : "") < 0)
                r = NULL;
        free(owner);
        return r;
}
