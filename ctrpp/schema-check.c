/* SPDX-License-Identifier: MIT */
/*
 * The embedded counter schema (counterman.xsd, compiled into schema.c),
 * checked against a copy of the <counters> subtree, and what it finds
 * reported against the original elements.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <libxml/xmlschemas.h>

#include "describe.h"
#include "element.h"
#include "parser.h"
#include "perfman-internal.h"
#include "schema-check.h"
#include "schema-hint.h"
#include "source.h"
#include "xml-error.h"

#define COUNTERS_NS "http://schemas.microsoft.com/win/2005/12/counters"

static pthread_mutex_t schema_lock = PTHREAD_MUTEX_INITIALIZER;
static xmlSchema *schema;

/* The embedded schema, parsed on first use and then shared (libxml2 allows that). */
static xmlSchema *counter_schema(void)
{
        xmlSchemaParserCtxt *pc;
        xmlSchema *s;

        pthread_mutex_lock(&schema_lock);
        if (!schema) {
                pc = xmlSchemaNewMemParserCtxt(pm_schema_xsd, (int) strlen(pm_schema_xsd));
                if (pc) {
                        xmlSchemaSetParserStructuredErrors(pc, pm_ignore_xml_error, NULL);
                        schema = xmlSchemaParse(pc);
                        xmlSchemaFreeParserCtxt(pc);
                }
        }
        s = schema;
        pthread_mutex_unlock(&schema_lock);
        return s;
}

/* The attribute a schema message is about ("attribute 'x'"), into buf. */
static const char *message_attribute(const char *msg, char *buf, size_t size)
{
        const char *a = msg ? strstr(msg, "attribute '") : NULL;
        const char *end;

        if (!a)
                return NULL;
        a += strlen("attribute '");
        end = strchr(a, '\'');
        if (!end || (size_t) (end - a) >= size)
                return NULL;
        memcpy(buf, a, (size_t) (end - a));
        buf[end - a] = 0;
        return buf;
}

/*
 * Whether a schema message only follows from one already reported: libxml2
 * restates a failed facet as "'v' is not a valid value of the ... type", and
 * an invalid or missing key field gives two more.
 */
static bool is_consequence(struct parser *p, const xmlNode *n, const char *attr, const char *msg)
{
        bool same = n && n == p->last_node && attr && strcmp(attr, p->last_attr) == 0;

        if (!msg || strstr(msg, "No precomputed value available") ||
            strstr(msg, "Not all fields of key identity-constraint"))
                return true;
        p->last_node = n;
        snprintf(p->last_attr, sizeof(p->last_attr), "%s", attr ? attr : "");
        return same && strstr(msg, "is not a valid value of the");
}

/* "Element 'counter', attribute 'x': ..." becomes "counter 1 (SYM) in ..., attribute 'x': ...". */
static void report_schema_error(struct parser *p, const xmlNode *orig, const char *attr,
                                const char *msg)
{
        struct pm_loc loc = orig ? (attr ? pm_attr_loc(p, orig, attr) : pm_node_loc(p, orig)) :
                                   pm_node_loc(p, p->counters);
        char *label = orig ? pm_describe(p, orig) : NULL;
        const char *rest = msg;

        if (strncmp(msg, "Element '", 9) == 0 && strchr(msg + 9, '\'')) {
                rest = strchr(msg + 9, '\'') + 1;
                rest += *rest == ':' ? 1 : 0;
                while (*rest == ' ')
                        rest++;
        }
        if (label)
                pm_diag(p->d, PM_ERROR, &loc, "%s%s%s", label, *rest == ',' ? "" : ": ", rest);
        else
                pm_diag(p->d, PM_ERROR, &loc, "%s", msg);
        free(label);
}

static void on_schema_error(void *userdata, xml_error_t e)
{
        struct parser *p = userdata;
        const xmlNode *n = e->node;
        const char *attr = NULL;
        char buf[64], *msg;

        if (n && n->type == XML_ATTRIBUTE_NODE) {
                snprintf(buf, sizeof(buf), "%s", (const char *) n->name);
                attr = buf;
                n = n->parent;
        } else
                attr = message_attribute(e->message, buf, sizeof(buf));
        /* n is in the copy; _private leads back to the original element. */
        n = n && n->type == XML_ELEMENT_NODE ? n->_private : NULL;
        if (is_consequence(p, n, attr, e->message))
                return;
        msg = pm_tidy_message(e->message);
        if (!msg) {
                p->oom = true;
                return;
        }
        msg = pm_schema_hint(msg, n ? (const char *) n->name : NULL);
        pm_elide_values(msg);
        report_schema_error(p, n, attr, msg);
        free(msg);
}

static xmlNode *first_element(xmlNode *n)
{
        while (n && n->type != XML_ELEMENT_NODE)
                n = n->next;
        return n;
}

/* Points each copied element at its original: the copy mirrors its structure. */
static void link_copies(xmlNode *orig, xmlNode *copy)
{
        xmlNode *a = first_element(orig->children), *b = first_element(copy->children);

        copy->_private = orig;
        for (; a && b; a = first_element(a->next), b = first_element(b->next))
                link_copies(a, b);
}

/* The schema sees every element of ours in its namespace, names resolved. */
static void prepare_copy(struct parser *p, xmlNode *n, xmlNs *ns)
{
        static const char *const texts[] = { "name", "description" };

        for (; n; n = n->next) {
                if (n->type != XML_ELEMENT_NODE)
                        continue;
                if (!n->ns || (p->counters_href && xmlStrEqual(n->ns->href, p->counters_href)))
                        n->ns = ns;
                for (size_t i = 0; i < N_ELEMENTS(texts) &&
                     (pm_has_name(n, "counter") || pm_has_name(n, "counterSet")); i++) {
                        xmlChar *v = pm_resolved_prop(p, n, texts[i]);
                        /* Only $(string.X) references change; most names do not. */
                        xmlChar *was = v ? xmlGetNoNsProp(n, (const xmlChar *) texts[i]) : NULL;
                        if (v && !xmlStrEqual(v, was) && !xmlSetProp(n, (const xmlChar *) texts[i], v))
                                p->oom = true;
                        xmlFree(was);
                        xmlFree(v);
                }
                prepare_copy(p, n->children, ns);
        }
}

static xmlNs *counters_ns(xmlNode *root)
{
        xmlNs *ns = xmlSearchNsByHref(root->doc, root, (const xmlChar *) COUNTERS_NS);

        if (!ns)
                ns = xmlNewNs(root, (const xmlChar *) COUNTERS_NS, NULL);
        if (!ns)        /* the default prefix is taken by another namespace */
                ns = xmlNewNs(root, (const xmlChar *) COUNTERS_NS, (const xmlChar *) "pm-counters");
        return ns;
}

int pm_validate_schema(struct parser *p)
{
        xmlSchema *s = counter_schema();
        xmlSchemaValidCtxt *v = NULL;
        xmlDoc *doc = NULL;
        xmlNode *copy;
        xmlNs *ns;
        struct pm_loc loc = pm_node_loc(p, p->counters);
        int r = -ENOMEM;

        if (!s) {
                pm_diag(p->d, PM_ERROR, &loc, "internal error: the embedded counter schema does not load");
                return 0;
        }
        doc = xmlNewDoc((const xmlChar *) "1.0");
        copy = doc ? xmlDocCopyNode(p->counters, doc, 1) : NULL;
        if (!copy)
                goto fail;
        xmlDocSetRootElement(doc, copy);
        link_copies(p->counters, copy);
        ns = counters_ns(copy);
        if (!ns)
                goto fail;
        prepare_copy(p, copy, ns);
        v = xmlSchemaNewValidCtxt(s);
        if (!v)
                goto fail;
        xmlSchemaSetValidStructuredErrors(v, on_schema_error, p);
        if (xmlSchemaValidateDoc(v, doc) < 0)
                pm_diag(p->d, PM_ERROR, &loc, "internal error: schema validation failed");
        r = 0;
fail:
        xmlSchemaFreeValidCtxt(v);
        xmlFreeDoc(doc);
        return r;
}
