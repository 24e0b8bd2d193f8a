/* SPDX-License-Identifier: MIT */
/*
 * The schema says what is wrong, libxml2's way: "The value 'x' is not an
 * element of the set {...}." (all 38 counter types, for one typo), "The
 * attribute 'x' is not allowed.", "This element is not expected.
 * Expected is ( ... ).".  Most of these are typos, and the valid names
 * are at hand: in the message itself, or in the schema's complexType of
 * the element (the schema names each element's type after it).  So each
 * ends with the nearest one (sdk/common's suggest.h), and a long set
 * gives way to it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "perfman-internal.h"
#include "schema-hint.h"
#include "suggest.h"

/* Sets longer than this are not worth reading once the value meant is known. */
#define SHORT_SET 8

#define XS_NS "http://www.w3.org/2001/XMLSchema"

static bool is_xs(const xmlNode *n, const char *local)
{
        return n->type == XML_ELEMENT_NODE && n->ns && xmlStrEqual(n->ns->href, BAD_CAST XS_NS) &&
               xmlStrEqual(n->name, BAD_CAST local);
}

/* The quoted text after prefix in msg: its start, *len its length. */
static const char *quoted_after(const char *msg, const char *prefix, size_t *len)
{
        const char *a = strstr(msg, prefix), *end;

        if (!a)
                return NULL;
        a += strlen(prefix);
        end = strchr(a, '\'');
        if (!end)
                return NULL;
        *len = (size_t) (end - a);
        return a;
}

/* Every attribute the schema's complexType of element declares, offered to sg. */
static void offer_attributes(const xmlNode *n, struct sg_suggest *sg)
{
        for (; n; n = n->next) {
                xmlChar *name;

                if (n->type != XML_ELEMENT_NODE || is_xs(n, "element"))
                        continue;       /* a nested element's attributes are its own */
                if (is_xs(n, "attribute") && (name = xmlGetNoNsProp(n, BAD_CAST "name"))) {
                        sg_offer(sg, (const char *) name, (size_t) xmlStrlen(name));
                        xmlFree(name);
                }
                offer_attributes(n->children, sg);
        }
}

static void offer_schema_attributes(const char *element, struct sg_suggest *sg)
{
        xmlDoc *doc = xmlReadMemory(pm_schema_xsd, (int) strlen(pm_schema_xsd), "counterman.xsd",
                                    NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
                                    XML_PARSE_NOWARNING);
        xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;

        for (xmlNode *n = root ? root->children : NULL; n; n = n->next) {
                xmlChar *name = is_xs(n, "complexType") ? xmlGetNoNsProp(n, BAD_CAST "name") : NULL;
                bool match = name && xmlStrEqual(name, BAD_CAST element);

                xmlFree(name);
                if (match)
                        offer_attributes(n->children, sg);
        }
        xmlFreeDoc(doc);
}

/* Offers each 'quoted' name of "{'a', 'b'}" at set; their count. */
static size_t offer_set(const char *set, const char *end, struct sg_suggest *sg)
{
        size_t n = 0;

        for (const char *q = strchr(set, '\''); q && q < end; ) {
                const char *close = strchr(q + 1, '\'');

                if (!close || close > end)
                        break;
                sg_offer(sg, q + 1, (size_t) (close - q - 1));
                n++;
                q = strchr(close + 1, '\'');
        }
        return n;
}

/* Offers each name of "( a, b )" at list. */
static void offer_list(const char *list, const char *end, struct sg_suggest *sg)
{
        for (const char *p = list + 1; p < end;) {
                size_t len;

                p += strspn(p, " ,");
                len = strcspn(p, " ,)");
                if (len && p + len <= end)
                        sg_offer(sg, p, len);
                p += len ? len : 1;
        }
}

/* msg up to cut, then tail: malloc'd, msg freed (msg itself when out of memory). */
static char *rewrite(char *msg, size_t cut, const char *tail)
{
        char *r;

        if (asprintf(&r, "%.*s%s", (int) cut, msg, tail) < 0)
                return msg;
        free(msg);
        return r;
}

/* "The value 'x' is not an element of the set {...}." */
static char *hint_value(char *msg, const char *typed, size_t typed_len)
{
        const char *set = strstr(msg, "an element of the set {");
        const char *end = set ? strchr(set, '}') : NULL;
        char tail[SG_MAX_NAME + 96], word[SG_MAX_NAME + 1];
        struct sg_suggest sg;
        size_t n;

        if (!end || typed_len > SG_MAX_NAME)
                return msg;
        memcpy(word, typed, typed_len);
        word[typed_len] = 0;
        sg_begin(&sg, word);
        n = offer_set(set, end, &sg);
        if (!sg_best(&sg))
                return msg;
        if (n <= SHORT_SET)
                return rewrite(msg, (size_t) (end + 1 - msg), sg_hint(&sg));
        snprintf(tail, sizeof(tail), "one of the %zu values the schema allows%s", n,
                 sg_hint(&sg));
        return rewrite(msg, (size_t) (set - msg), tail);
}

char *pm_schema_hint(char *msg, const char *element)
{
        struct sg_suggest sg;
        const char *typed, *list;
        size_t len;

        if (!msg)
                return msg;
        if ((typed = quoted_after(msg, "The value '", &len)) && strstr(msg, "the set {"))
                return hint_value(msg, typed, len);
        if ((typed = quoted_after(msg, "The attribute '", &len)) && strstr(msg, "is not allowed") &&
            len <= SG_MAX_NAME && element) {
                char word[SG_MAX_NAME + 1];

                memcpy(word, typed, len);
                word[len] = 0;
                sg_begin(&sg, word);
                offer_schema_attributes(element, &sg);
        } else if (element && strstr(msg, "This element is not expected") &&
                   (list = strchr(msg, '('))) {
                sg_begin(&sg, element);
                offer_list(list, strchr(list, ')') ? strchr(list, ')') : list + strlen(list), &sg);
        } else
                return msg;
        if (!sg_best(&sg))
                return msg;
        len = strlen(msg);
        return rewrite(msg, len && msg[len - 1] == '.' ? len - 1 : len, sg_hint(&sg));
}
