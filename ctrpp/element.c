/* SPDX-License-Identifier: MIT */
/*
 * The document's elements and their attributes: which elements are the
 * counter schema's, where to find <counters> and the string table, and
 * attribute values as text, numbers or keywords, with $(string.X)
 * references resolved.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "element.h"
#include "parser.h"
#include "source.h"
#include "suggest.h"

/* ---- document structure ---- */

bool pm_has_name(const xmlNode *n, const char *local)
{
        return n && n->type == XML_ELEMENT_NODE && strcmp((const char *) n->name, local) == 0;
}

/*
 * Whether n belongs to the counter schema: it shares the namespace of
 * <counters>, or has none (Vista-era manifests use no namespaces at all).
 */
static bool is_ours(const struct parser *p, const xmlNode *n)
{
        if (n->type != XML_ELEMENT_NODE)
                return false;
        if (!n->ns)
                return true;
        return p->counters_href && xmlStrEqual(n->ns->href, p->counters_href);
}

xmlNode *pm_next_ours(const struct parser *p, xmlNode *n, const char *local)
{
        for (; n; n = n->next)
                if (pm_has_name(n, local) && is_ours(p, n))
                        return n;
        return NULL;
}

size_t pm_count_ours(const struct parser *p, xmlNode *parent, const char *local)
{
        size_t n = 0;

        FOREACH_OURS(p, parent, local, it)
                n++;
        return n;
}

static xmlNode *first_child(xmlNode *parent, const char *local)
{
        for (xmlNode *n = parent ? parent->children : NULL; n; n = n->next)
                if (pm_has_name(n, local))
                        return n;
        return NULL;
}

xmlNode *pm_find_descendant(xmlNode *n, const char *local)
{
        for (; n; n = n->next) {
                xmlNode *f;

                if (n->type != XML_ELEMENT_NODE)
                        continue;
                if (pm_has_name(n, local))
                        return n;
                f = pm_find_descendant(n->children, local);
                if (f)
                        return f;
        }
        return NULL;
}

/* The string table of the en-US resources, or of the first ones. */
xmlNode *pm_find_string_table(xmlNode *root)
{
        xmlNode *loc = first_child(root, "localization"), *first = NULL;

        for (xmlNode *r = loc ? loc->children : NULL; r; r = r->next) {
                xmlChar *culture;
                bool en_us;

                if (!pm_has_name(r, "resources"))
                        continue;
                culture = xmlGetNoNsProp(r, (const xmlChar *) "culture");
                en_us = culture && xmlStrcasecmp(culture, (const xmlChar *) "en-US") == 0;
                xmlFree(culture);
                if (en_us)
                        return first_child(r, "stringTable");
                if (!first)
                        first = r;
        }
        return first_child(first, "stringTable");
}

/* ---- attribute values ---- */

char *pm_dup_or_oom(struct parser *p, const char *s)
{
        char *c = strdup(s);

        if (!c)
                p->oom = true;
        return c;
}

char *pm_get_prop(struct parser *p, const xmlNode *n, const char *name)
{
        const xmlAttr *a = xmlHasNsProp(n, (const xmlChar *) name, NULL);
        const xmlNode *t = a ? a->children : NULL;
        xmlChar *v;
        char *s;

        if (!a)
                return NULL;
        /* The common case, one text node, without libxml2's copy of a copy. */
        if (a->type == XML_ATTRIBUTE_NODE && t && t->type == XML_TEXT_NODE && !t->next)
                return pm_dup_or_oom(p, t->content ? (const char *) t->content : "");
        v = xmlGetNoNsProp(n, (const xmlChar *) name);
        if (!v) {
                p->oom = true;
                return NULL;
        }
        s = pm_dup_or_oom(p, (const char *) v);
        xmlFree(v);
        return s;
}

/* The id inside "$(string.ID)", or NULL when text is not such a reference. */
const char *pm_string_ref(const char *text, size_t *ret_len)
{
        size_t n = strlen(text);

        if (n < 11 || strncmp(text, "$(string.", 9) != 0 || text[n - 1] != ')')
                return NULL;
        *ret_len = n - 10;
        return text + 9;
}

/* The value of string id (len bytes) in the string table, NULL when it has none. */
xmlChar *pm_lookup_string(const struct parser *p, const char *id, size_t len)
{
        for (xmlNode *s = p->string_table ? p->string_table->children : NULL; s; s = s->next) {
                xmlChar *sid;
                bool match;

                if (!pm_has_name(s, "string"))
                        continue;
                sid = xmlGetNoNsProp(s, (const xmlChar *) "id");
                match = sid && xmlStrlen(sid) == (int) len && memcmp(sid, id, len) == 0;
                xmlFree(sid);
                if (match)
                        return xmlGetNoNsProp(s, (const xmlChar *) "value");
        }
        return NULL;
}

void pm_offer_string_ids(const struct parser *p, struct sg_suggest *sg)
{
        for (xmlNode *s = p->string_table ? p->string_table->children : NULL; s; s = s->next) {
                xmlChar *sid = pm_has_name(s, "string") ? xmlGetNoNsProp(s, BAD_CAST "id") : NULL;

                if (sid)
                        sg_offer(sg, (const char *) sid, (size_t) xmlStrlen(sid));
                xmlFree(sid);
        }
}

/* An attribute's value with a $(string.X) reference replaced; NULL when absent. */
xmlChar *pm_resolved_prop(const struct parser *p, const xmlNode *n, const char *name)
{
        xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *) name), *r;
        const char *id;
        size_t len;

        if (!v)
                return NULL;
        id = pm_string_ref((const char *) v, &len);
        r = id ? pm_lookup_string(p, id, len) : NULL;
        if (!r)
                return v;
        xmlFree(v);
        return r;
}

static bool parse_u32(const char *s, uint32_t *ret)
{
        uint64_t v = 0;
        size_t n = strlen(s);
        unsigned base = 10, digits = 0;

        while (n > 0 && pm_is_space(s[n - 1]))
                n--;
        while (n > 0 && pm_is_space(*s))
                s++, n--;
        if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                base = 16;
                s += 2, n -= 2;
                if (n > 8)
                        return false;
        }
        for (; n > 0; s++, n--, digits++) {
                int h = *s >= '0' && *s <= '9' ? *s - '0' :
                        base == 16 && *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
                        base == 16 && *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
                if (h < 0)
                        return false;
                v = v * base + (unsigned) h;
                if (v > UINT32_MAX)
                        return false;
        }
        if (digits == 0)
                return false;
        *ret = (uint32_t) v;
        return true;
}

bool pm_parse_i32(const char *s, int32_t *ret)
{
        char *end;
        long v;

        while (pm_is_space(*s))
                s++;
        if (!*s)
                return false;
        errno = 0;
        v = strtol(s, &end, 10);
        while (pm_is_space(*end))
                end++;
        if (errno || *end || v < INT32_MIN || v > INT32_MAX)
                return false;
        *ret = (int32_t) v;
        return true;
}

/* An absent attribute is placed at its element, without the search for it. */
struct pm_u32 pm_get_u32(struct parser *p, const xmlNode *n, const char *name)
{
        struct pm_u32 u = { 0 };
        char *s = pm_get_prop(p, n, name);

        if (s && parse_u32(s, &u.value))
                u.set = true;
        u.loc = s ? pm_attr_loc(p, n, name) : pm_node_loc(p, n);
        free(s);
        return u;
}

/* The value of the keyword attribute name; dflt when absent or not a keyword. */
int pm_get_keyword(struct parser *p, const xmlNode *n, const char *name,
                       const struct keyword *k, size_t nk, int dflt)
{
        char *s = pm_get_prop(p, n, name);
        int v = dflt;

        for (size_t i = 0; s && i < nk; i++)
                if (strcmp(s, k[i].name) == 0)
                        v = k[i].value;
        free(s);
        return v;
}
