/* SPDX-License-Identifier: MIT */
/*
 * Reading a manifest into the model.  libxml2 parses the document, the
 * embedded counter schema validates its <counters> subtree, and the model is
 * then built from whatever could be read, even when the schema found
 * problems, so that pm_validate can report everything else in the same run.
 *
 * libxml2 knows an element's line only where its start tag ends, and an
 * attribute's not at all, while a manifest spreads each start tag over many
 * lines.  So the source is scanned for start tags as well, and the n-th tag
 * is matched with the n-th element: diagnostics then point at the '<' of an
 * element or at the name of an attribute.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

#include "perfman-internal.h"

#define COUNTERS_NS "http://schemas.microsoft.com/win/2005/12/counters"

/* libxml2 2.12 made the error handlers take a const error. */
#if LIBXML_VERSION >= 21200
typedef const xmlError *xml_error_t;
#else
typedef xmlErrorPtr xml_error_t;
#endif

/* ---- where things are in the source ---- */

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

static bool starts_at(const struct source *s, size_t i, const char *what)
{
        size_t n = strlen(what);

        return i + n <= s->size && memcmp(s->text + i, what, n) == 0;
}

static size_t skip_past(const struct source *s, size_t i, const char *end)
{
        size_t n = strlen(end);

        for (; i + n <= s->size; i++)
                if (memcmp(s->text + i, end, n) == 0)
                        return i + n;
        return s->size;
}

/* From an opening quote: just past the closing one. */
static size_t skip_quoted(const struct source *s, size_t i)
{
        const char *q = memchr(s->text + i + 1, s->text[i], s->size - i - 1);

        return q ? (size_t) (q - s->text) + 1 : s->size;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* From the '<' of a start tag: past its '>' ('>' may appear in quoted values). */
static size_t skip_start_tag(const struct source *s, size_t i)
{
        for (i++; i < s->size;) {
                char c = s->text[i];

                if (c == '"' || c == '\'')
                        i = skip_quoted(s, i);
                else if (c == '>')
                        return i + 1;
                else
                        i++;
        }
        return s->size;
}

static int push_tag(struct source *s, size_t start, size_t end)
{
        size_t n = 0;

        if (s->n_tags == s->cap_tags) {
                size_t cap = s->cap_tags ? s->cap_tags * 2 : 64;
                struct tag *t = realloc(s->tags, cap * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                s->tags = t;
                s->cap_tags = cap;
        }
        while (start + 1 + n < end && !is_space(s->text[start + 1 + n]) &&
               s->text[start + 1 + n] != '/' && s->text[start + 1 + n] != '>')
                n++;
        s->tags[s->n_tags++] = (struct tag) { .start = start, .end = end, .name_len = n };
        return 0;
}

static int index_tags(struct source *s)
{
        for (size_t i = 0; i < s->size;) {
                const char *lt = memchr(s->text + i, '<', s->size - i);

                if (!lt)
                        break;
                i = (size_t) (lt - s->text);
                if (starts_at(s, i, "<!--"))
                        i = skip_past(s, i + 4, "-->");
                else if (starts_at(s, i, "<![CDATA["))
                        i = skip_past(s, i + 9, "]]>");
                else if (starts_at(s, i, "<!"))    /* no DTD gets this far (refuse_dtd) */
                        i = skip_past(s, i + 2, ">");
                else if (starts_at(s, i, "<?"))
                        i = skip_past(s, i + 2, "?>");
                else if (starts_at(s, i, "</"))
                        i = skip_past(s, i + 2, ">");
                else {
                        size_t end = skip_start_tag(s, i);
                        if (push_tag(s, i, end) < 0)
                                return -ENOMEM;
                        i = end;
                }
        }
        return 0;
}

static int index_lines(struct source *s)
{
        size_t n = 1;

        for (size_t i = 0; i < s->size; i++)
                n += s->text[i] == '\n';
        s->line_starts = malloc(n * sizeof(*s->line_starts));
        if (!s->line_starts)
                return -ENOMEM;
        s->line_starts[0] = 0;
        s->n_lines = 1;
        for (size_t i = 0; i < s->size; i++)
                if (s->text[i] == '\n')
                        s->line_starts[s->n_lines++] = i + 1;
        return 0;
}

static bool tag_names(const struct source *s, const struct tag *t, const xmlNode *n)
{
        const char *p = s->text + t->start + 1;
        size_t len = t->name_len;

        if (n->ns && n->ns->prefix) {
                size_t pl = strlen((const char *) n->ns->prefix);
                if (len <= pl || memcmp(p, n->ns->prefix, pl) != 0 || p[pl] != ':')
                        return false;
                p += pl + 1;
                len -= pl + 1;
        }
        return strlen((const char *) n->name) == len && memcmp(p, n->name, len) == 0;
}

/* Gives each element (in document order) its tag; false when they disagree. */
static bool match_tags(struct source *s, xmlNode *n, size_t *k)
{
        for (; n; n = n->next) {
                if (n->type != XML_ELEMENT_NODE)
                        continue;
                if (*k >= s->n_tags || !tag_names(s, &s->tags[*k], n))
                        return false;
                n->_private = &s->tags[(*k)++];
                if (!match_tags(s, n->children, k))
                        return false;
        }
        return true;
}

static void source_done(struct source *s)
{
        free(s->line_starts);
        free(s->tags);
}

/* ---- the parser's state ---- */

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

static struct pm_loc loc_at(const struct parser *p, size_t off)
{
        const struct source *s = &p->src;
        size_t lo = 0, hi = s->n_lines;
        unsigned col = 1;

        /* The last line starting at or before off. */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (s->line_starts[mid] <= off)
                        lo = mid;
                else
                        hi = mid;
        }
        for (size_t i = s->line_starts[lo]; i < off; i++)
                col += ((unsigned char) s->text[i] & 0xC0) != 0x80;  /* characters, not bytes */
        return (struct pm_loc) { .file = p->file, .line = (unsigned) lo + 1, .col = col };
}

static struct pm_loc node_loc(const struct parser *p, const xmlNode *n)
{
        long line;

        if (p->src.tags_ok && n->_private)
                return loc_at(p, ((const struct tag *) n->_private)->start);
        line = xmlGetLineNo(n);
        return (struct pm_loc) { .file = p->file, .line = line > 0 ? (unsigned) line : 0 };
}

/* Offset of attribute name in a start tag, or 0 when it has none. */
static size_t find_attribute(const struct source *s, const struct tag *t, const char *name)
{
        size_t len = strlen(name);

        for (size_t i = t->start + 1 + t->name_len; i < t->end;) {
                size_t a;

                while (i < t->end && is_space(s->text[i]))
                        i++;
                a = i;
                while (i < t->end && !is_space(s->text[i]) && !strchr("=/>", s->text[i]))
                        i++;
                if (i == a)
                        return 0;
                if (i - a == len && memcmp(s->text + a, name, len) == 0)
                        return a;
                while (i < t->end && s->text[i] != '"' && s->text[i] != '\'')
                        i++;
                if (i < t->end)
                        i = skip_quoted(s, i);
        }
        return 0;
}

static struct pm_loc attr_loc(const struct parser *p, const xmlNode *n, const char *name)
{
        size_t off = 0;

        if (p->src.tags_ok && n->_private)
                off = find_attribute(&p->src, n->_private, name);
        return off ? loc_at(p, off) : node_loc(p, n);
}

/* ---- document structure ---- */

static bool has_name(const xmlNode *n, const char *local)
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

static xmlNode *next_ours(const struct parser *p, xmlNode *n, const char *local)
{
        for (; n; n = n->next)
                if (has_name(n, local) && is_ours(p, n))
                        return n;
        return NULL;
}

#define FOREACH_OURS(p, parent, local, it) \
        for (xmlNode *it = next_ours(p, (parent)->children, local); it; \
             it = next_ours(p, it->next, local))

static size_t count_ours(const struct parser *p, xmlNode *parent, const char *local)
{
        size_t n = 0;

        FOREACH_OURS(p, parent, local, it)
                n++;
        return n;
}

static xmlNode *first_child(xmlNode *parent, const char *local)
{
        for (xmlNode *n = parent ? parent->children : NULL; n; n = n->next)
                if (has_name(n, local))
                        return n;
        return NULL;
}

static xmlNode *find_descendant(xmlNode *n, const char *local)
{
        for (; n; n = n->next) {
                xmlNode *f;

                if (n->type != XML_ELEMENT_NODE)
                        continue;
                if (has_name(n, local))
                        return n;
                f = find_descendant(n->children, local);
                if (f)
                        return f;
        }
        return NULL;
}

/* The string table of the en-US resources, or of the first ones. */
static xmlNode *find_string_table(xmlNode *root)
{
        xmlNode *loc = first_child(root, "localization"), *first = NULL;

        for (xmlNode *r = loc ? loc->children : NULL; r; r = r->next) {
                xmlChar *culture;
                bool en_us;

                if (!has_name(r, "resources"))
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


static char *dup_or_oom(struct parser *p, const char *s)
{
        char *c = strdup(s);

        if (!c)
                p->oom = true;
        return c;
}

static char *get_prop(struct parser *p, const xmlNode *n, const char *name)
{
        const xmlAttr *a = xmlHasNsProp(n, (const xmlChar *) name, NULL);
        const xmlNode *t = a ? a->children : NULL;
        xmlChar *v;
        char *s;

        if (!a)
                return NULL;
        /* The common case, one text node, without libxml2's copy of a copy. */
        if (a->type == XML_ATTRIBUTE_NODE && t && t->type == XML_TEXT_NODE && !t->next)
                return dup_or_oom(p, t->content ? (const char *) t->content : "");
        v = xmlGetNoNsProp(n, (const xmlChar *) name);
        if (!v) {
                p->oom = true;
                return NULL;
        }
        s = dup_or_oom(p, (const char *) v);
        xmlFree(v);
        return s;
}

/* The id inside "$(string.ID)", or NULL when text is not such a reference. */
static const char *string_ref(const char *text, size_t *ret_len)
{
        size_t n = strlen(text);

        if (n < 11 || strncmp(text, "$(string.", 9) != 0 || text[n - 1] != ')')
                return NULL;
        *ret_len = n - 10;
        return text + 9;
}

/* The value of string id (len bytes) in the string table, NULL when it has none. */
static xmlChar *lookup_string(const struct parser *p, const char *id, size_t len)
{
        for (xmlNode *s = p->string_table ? p->string_table->children : NULL; s; s = s->next) {
                xmlChar *sid;
                bool match;

                if (!has_name(s, "string"))
                        continue;
                sid = xmlGetNoNsProp(s, (const xmlChar *) "id");
                match = sid && xmlStrlen(sid) == (int) len && memcmp(sid, id, len) == 0;
                xmlFree(sid);
                if (match)
                        return xmlGetNoNsProp(s, (const xmlChar *) "value");
        }
        return NULL;
}

/* An attribute's value with a $(string.X) reference replaced; NULL when absent. */
static xmlChar *resolved_prop(const struct parser *p, const xmlNode *n, const char *name)
{
        xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *) name), *r;
        const char *id;
        size_t len;

        if (!v)
                return NULL;
        id = string_ref((const char *) v, &len);
        r = id ? lookup_string(p, id, len) : NULL;
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

        while (n > 0 && is_space(s[n - 1]))
                n--;
        while (n > 0 && is_space(*s))
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

static bool parse_i32(const char *s, int32_t *ret)
{
        char *end;
        long v;

        while (is_space(*s))
                s++;
        if (!*s)
                return false;
        errno = 0;
        v = strtol(s, &end, 10);
        while (is_space(*end))
                end++;
        if (errno || *end || v < INT32_MIN || v > INT32_MAX)
                return false;
        *ret = (int32_t) v;
        return true;
}

/* An absent attribute is placed at its element, without the search for it. */
static struct pm_u32 get_u32(struct parser *p, const xmlNode *n, const char *name)
{
        struct pm_u32 u = { 0 };
        char *s = get_prop(p, n, name);

        if (s && parse_u32(s, &u.value))
                u.set = true;
        u.loc = s ? attr_loc(p, n, name) : node_loc(p, n);
        free(s);
        return u;
}

struct keyword {
        const char *name;
        int value;
};

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/* The value of the keyword attribute name; dflt when absent or not a keyword. */
static int get_keyword(struct parser *p, const xmlNode *n, const char *name,
                       const struct keyword *k, size_t nk, int dflt)
{
        char *s = get_prop(p, n, name);
        int v = dflt;

        for (size_t i = 0; s && i < nk; i++)
                if (strcmp(s, k[i].name) == 0)
                        v = k[i].value;
        free(s);
        return v;
}

/* ---- naming what a diagnostic is about ---- */

static char *describe_counterset(const struct parser *p, const xmlNode *n)
{
        static const char *const by[] = { "symbol", "name", "guid" };
        char *r = NULL;

        for (size_t i = 0; i < N_ELEMENTS(by) && !r; i++) {
                xmlChar *v = resolved_prop(p, n, by[i]);
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
        char *cs = has_name(n->parent, "counterSet") ? describe_counterset(p, n->parent) : NULL;
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
static char *describe(const struct parser *p, const xmlNode *n)
{
        char *owner, *r;

        if (has_name(n, "counter"))
                return describe_counter(p, n);
        if (has_name(n, "counterSet"))
                return describe_counterset(p, n);
        if (has_name(n, "provider"))
                return describe_provider(n);
        if (has_name(n, "counters"))
                return strdup("<counters>");
        if (has_name(n, "counterAttributes") || has_name(n, "counterAttribute") ||
            has_name(n, "structs") || has_name(n, "struct")) {
                const xmlNode *o = n->parent;
                while (o && !has_name(o, "counter") && !has_name(o, "counterSet"))
                        o = o->parent;
                owner = o ? describe(p, o) : NULL;
                if (!owner || asprintf(&r, "<%s> of %s", (const char *) n->name, owner) < 0)
                        r = NULL;
                free(owner);
                return r;
        }
        owner = n->parent && n->parent->type == XML_ELEMENT_NODE ? describe(p, n->parent) : NULL;
        if (asprintf(&r, "<%s>%s%s", (const char *) n->name, owner ? " in " : "",
                     owner ? owner : "") < 0)
                r = NULL;
        free(owner);
        return r;
}

/* ---- libxml2's own errors ---- */

/*
 * From the quote at s: the quoted text, shortened when long (the schema
 * quotes whole values).  *w trails s in the same buffer.
 */
static const char *copy_quoted(const char *s, char **w)
{
        const char *close = strchr(s + 1, '\'');
        size_t len;

        if (!close)
                return s;
        len = (size_t) (close - s) + 1;
        if (len > 64) {
                size_t keep = 40;
                while (((unsigned char) s[keep] & 0xC0) == 0x80)   /* whole characters */
                        keep--;
                memmove(*w, s, keep);
                memcpy(*w + keep, "...'", 4);
                *w += keep + 4;
        } else {
                memmove(*w, s, len);
                *w += len;
        }
        return close + 1;
}

/*
 * A libxml2 message on one line (what some add on further lines quotes
 * the source, which the location already points at), without namespace
 * names and "[facet 'x'] ".
 */
static char *tidy_message(const char *msg)
{
        char *r = strdup(msg ? msg : "unknown error"), *w = r;

        if (!r)
                return NULL;
        r[strcspn(r, "\n")] = 0;
        for (const char *s = r; *s;) {
                const char *close = *s == '{' ? strchr(s, '}') : NULL;
                if (close && memmem(s, (size_t) (close - s), "://", 3))
                        s = close + 1;
                else if (strncmp(s, "[facet '", 8) == 0 && (close = strstr(s, "'] ")))
                        s = close + 3;
                else
                        *w++ = *s++;
        }
        while (w > r && is_space(w[-1]))
                w--;
        *w = 0;
        return r;
}

/* The schema quotes whole values: long ones are shortened, in place. */
static void elide_values(char *msg)
{
        char *w = msg;

        for (const char *s = msg; *s;)
                if (*s == '\'' && strchr(s + 1, '\''))
                        s = copy_quoted(s, &w);
                else
                        *w++ = *s++;
        *w = 0;
}

/* Column of the last "<name" on line, 0 when there is none. */
static unsigned tag_column(const struct parser *p, unsigned line, const char *name)
{
        const struct source *s = &p->src;
        size_t start, end, len = name ? strlen(name) : 0, found = SIZE_MAX;

        if (!name || line == 0 || line > s->n_lines)
                return 0;
        start = s->line_starts[line - 1];
        end = line < s->n_lines ? s->line_starts[line] : s->size;
        for (size_t i = start; i + 1 + len <= end; i++)
                if (s->text[i] == '<' && memcmp(s->text + i + 1, name, len) == 0 &&
                    (i + 1 + len == end || is_space(s->text[i + 1 + len]) ||
                     strchr("/>", s->text[i + 1 + len])))
                        found = i;
        return found == SIZE_MAX ? 0 : loc_at(p, found).col;
}

static struct pm_loc xml_error_loc(const struct parser *p, xml_error_t e)
{
        struct pm_loc loc = { .file = p->file, .line = e->line > 0 ? (unsigned) e->line : 0,
                              .col = e->int2 > 0 ? (unsigned) e->int2 : 0 };

        /* Found where the tag should have ended; its start is more use. */
        if (e->code == XML_ERR_GT_REQUIRED && e->int1 > 0) {
                loc.line = (unsigned) e->int1;
                loc.col = tag_column(p, loc.line, e->str1);
        }
        return loc;
}

/* Everything libxml2 reports while it reads the document comes here. */
static void on_xml_error(void *userdata, xml_error_t e)
{
        struct parser *p = userdata;
        struct pm_loc loc = xml_error_loc(p, e);
        char *msg = tidy_message(e->message);

        if (e->level != XML_ERR_WARNING)
                p->xml_errors = true;
        pm_diag(p->d, e->level == XML_ERR_WARNING ? PM_WARNING : PM_ERROR, &loc, "%s",
                msg ? msg : "out of memory");
        free(msg);
}

static void ignore_xml_error(void *userdata, xml_error_t e)
{
        (void) userdata;
        (void) e;
}

/* ---- reading ---- */

static bool has_utf16_bom(const unsigned char *b, size_t n, bool *ret_big_endian)
{
        if (n < 2 || !((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF)))
                return false;
        *ret_big_endian = b[0] == 0xFE;
        return true;
}

static char *put_utf8(char *w, uint32_t c)
{
        if (c < 0x80)
                *w++ = (char) c;
        else if (c < 0x800) {
                *w++ = (char) (0xC0 | c >> 6);
                *w++ = (char) (0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
                *w++ = (char) (0xE0 | c >> 12);
                *w++ = (char) (0x80 | (c >> 6 & 0x3F));
                *w++ = (char) (0x80 | (c & 0x3F));
        } else {
                *w++ = (char) (0xF0 | c >> 18);
                *w++ = (char) (0x80 | (c >> 12 & 0x3F));
                *w++ = (char) (0x80 | (c >> 6 & 0x3F));
                *w++ = (char) (0x80 | (c & 0x3F));
        }
        return w;
}

/*
 * Windows tools often save manifests as UTF-16.  They are read as UTF-8 so
 * that the tag scan above sees the same text as libxml2.  -EILSEQ when the
 * text is not UTF-16.
 */
static int utf16_to_utf8(const unsigned char *b, size_t n, bool be, char **ret, size_t *ret_n)
{
        char *out, *w;

        if (n % 2)
                return -EILSEQ;
        out = w = malloc(n / 2 * 3 + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 2; i < n; i += 2) {
                uint32_t c = be ? (uint32_t) b[i] << 8 | b[i + 1] : (uint32_t) b[i + 1] << 8 | b[i];

                if (c >= 0xD800 && c < 0xDC00 && i + 3 < n) {
                        uint32_t lo = be ? (uint32_t) b[i + 2] << 8 | b[i + 3] :
                                           (uint32_t) b[i + 3] << 8 | b[i + 2];
                        if (lo < 0xDC00 || lo >= 0xE000)
                                goto fail;
                        c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                        i += 2;
                } else if (c >= 0xD800 && c < 0xE000)
                        goto fail;
                w = put_utf8(w, c);
        }
        *w = 0;
        *ret = out;
        *ret_n = (size_t) (w - out);
        return 0;
fail:
        free(out);
        return -EILSEQ;
}

/*
 * The document's text as UTF-8 without a BOM: *ret_owned is set when it had
 * to be converted (and must be freed).
 */
static int source_text(struct parser *p, const void *data, size_t size, char **ret_owned)
{
        const unsigned char *b = data;
        bool be;
        int r;

        *ret_owned = NULL;
        if (has_utf16_bom(b, size, &be)) {
                r = utf16_to_utf8(b, size, be, ret_owned, &p->src.size);
                if (r == -EILSEQ)
                        pm_diag(p->d, PM_ERROR, &(struct pm_loc) { .file = p->file },
                                "the document starts with a UTF-16 byte order mark but is not UTF-16");
                if (r < 0)
                        return r == -EILSEQ ? -EBADMSG : r;
                p->src.text = *ret_owned;
                return 0;
        }
        if (size >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
                b += 3, size -= 3;
        p->src.text = (const char *) b;
        p->src.size = size;
        return 0;
}

static int parse_xml(struct parser *p, bool converted)
{
        int options = XML_PARSE_NONET | XML_PARSE_BIG_LINES;

        if (p->src.size == 0) {
                pm_diag(p->d, PM_ERROR, &(struct pm_loc) { .file = p->file }, "the document is empty");
                return -EBADMSG;
        }
        if (p->src.size > INT_MAX) {
                pm_diag(p->d, PM_ERROR, &(struct pm_loc) { .file = p->file }, "the document is too large");
                return -EBADMSG;
        }
        /* A converted document's encoding declaration no longer holds. */
        if (converted)
                options |= XML_PARSE_IGNORE_ENC;
        p->doc = xmlReadMemory(p->src.text, (int) p->src.size, p->file,
                               converted ? "UTF-8" : NULL, options);
        if (!p->doc || p->xml_errors) {
                if (!p->xml_errors)
                        pm_diag(p->d, PM_ERROR, &(struct pm_loc) { .file = p->file },
                                "the document cannot be read as XML");
                return -EBADMSG;
        }
        return 0;
}

static int index_source(struct parser *p)
{
        size_t k = 0;

        if (index_tags(&p->src) < 0)
                return -ENOMEM;
        p->src.tags_ok = match_tags(&p->src, xmlDocGetRootElement(p->doc), &k) &&
                         k == p->src.n_tags;
        return 0;
}

/*
 * A DTD could declare entities, whose references libxml2's schema validator
 * cannot handle and whose expansion is a risk; manifests never have one, and
 * Windows' XML reader prohibits them by default.
 */
static int refuse_dtd(struct parser *p)
{
        const char *at;
        struct pm_loc loc = { .file = p->file };

        if (!p->doc->intSubset && !p->doc->extSubset)
                return 0;
        at = memmem(p->src.text, p->src.size, "<!DOCTYPE", 9);
        if (at)
                loc = loc_at(p, (size_t) (at - p->src.text));
        pm_diag(p->d, PM_ERROR, &loc, "a manifest may not have a DOCTYPE declaration");
        return -EBADMSG;
}

static int find_counters(struct parser *p)
{
        xmlNode *root = xmlDocGetRootElement(p->doc);

        if (!root) {
                pm_diag(p->d, PM_ERROR, &(struct pm_loc) { .file = p->file }, "the document is empty");
                return -EBADMSG;
        }
        if (!has_name(root, "instrumentationManifest")) {
                struct pm_loc loc = node_loc(p, root);
                pm_diag(p->d, PM_ERROR, &loc, "the root element is <%s>, not <instrumentationManifest>",
                        (const char *) root->name);
        }
        p->counters = has_name(root, "counters") ? root : find_descendant(root->children, "counters");
        if (!p->counters) {
                struct pm_loc loc = node_loc(p, root);
                pm_diag(p->d, PM_ERROR, &loc, "the manifest has no <counters> element");
                return -EBADMSG;
        }
        p->counters_href = p->counters->ns ? p->counters->ns->href : NULL;
        p->string_table = find_string_table(root);
        return 0;
}

/* ---- the schema ---- */

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
                        xmlSchemaSetParserStructuredErrors(pc, ignore_xml_error, NULL);
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
        struct pm_loc loc = orig ? (attr ? attr_loc(p, orig, attr) : node_loc(p, orig)) :
                                   node_loc(p, p->counters);
        char *label = orig ? describe(p, orig) : NULL;
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
        msg = tidy_message(e->message);
        if (!msg) {
                p->oom = true;
                return;
        }
        elide_values(msg);
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
                     (has_name(n, "counter") || has_name(n, "counterSet")); i++) {
                        xmlChar *v = resolved_prop(p, n, texts[i]);
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

static int validate_schema(struct parser *p)
{
        xmlSchema *s = counter_schema();
        xmlSchemaValidCtxt *v = NULL;
        xmlDoc *doc = NULL;
        xmlNode *copy;
        xmlNs *ns;
        struct pm_loc loc = node_loc(p, p->counters);
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

/* ---- the model ---- */

/* name or description, $(string.X) resolved; an unresolved reference is kept as written. */
static char *get_text(struct parser *p, const xmlNode *n, const char *name)
{
        char *v = get_prop(p, n, name), *r, *label;
        const char *id;
        xmlChar *s;
        size_t len;

        id = v ? string_ref(v, &len) : NULL;
        if (!id)
                return v;
        s = lookup_string(p, id, len);
        if (!s) {
                struct pm_loc loc = attr_loc(p, n, name);
                label = describe(p, n);
                pm_diag(p->d, PM_ERROR, &loc, "%s: %s \"%s\" refers to string '%.*s', which the "
                        "<localization> string table does not define", label ? label : "?", name,
                        v, (int) len, id);
                free(label);
                return v;
        }
        r = dup_or_oom(p, (const char *) s);
        xmlFree(s);
        free(v);
        return r;
}

static uint32_t size_of_type(uint32_t type)
{
        /* PERF_SIZE_VARIABLE_LEN has both size bits set: it is their mask. */
        switch (type & PERF_SIZE_VARIABLE_LEN) {
        case PERF_SIZE_DWORD:
                return 4;
        case PERF_SIZE_LARGE:
                return 8;
        default:
                return 0;
        }
}

static void build_attributes(struct parser *p, xmlNode *n, struct pm_counter *c)
{
        /* Bit i is PERF_ATTRIB_* 1 << i. */
        static const struct keyword attribs[] = {
                { "reference", 0 }, { "noDisplay", 1 }, { "noDigitGrouping", 2 },
                { "displayAsReal", 3 }, { "displayAsHex", 4 },
        };

        FOREACH_OURS(p, n, "counterAttributes", list)
                FOREACH_OURS(p, list, "counterAttribute", a) {
                        int bit = get_keyword(p, a, "name", attribs, N_ELEMENTS(attribs), -1);
                        /* A repeated one is the schema's to report; the first keeps its place. */
                        if (bit < 0 || (c->attrib & UINT64_C(1) << bit))
                                continue;
                        c->attrib |= UINT64_C(1) << bit;
                        c->attrib_loc[bit] = node_loc(p, a);
                }
}

static void build_counter(struct parser *p, xmlNode *n, struct pm_counter *c)
{
        static const struct keyword details[] = {
                { "standard", PERF_DETAIL_NOVICE }, { "advanced", PERF_DETAIL_ADVANCED },
        };
        static const struct keyword aggregates[] = {
                { "undefined", PM_AGG_UNDEFINED }, { "sum", PM_AGG_SUM }, { "avg", PM_AGG_AVG },
                { "min", PM_AGG_MIN }, { "max", PM_AGG_MAX },
        };
        struct pm_u32 id = get_u32(p, n, "id");
        char *scale = get_prop(p, n, "defaultScale");

        c->loc = node_loc(p, n);
        c->id = id.value;
        c->symbol = get_prop(p, n, "symbol");
        c->uri = get_prop(p, n, "uri");
        c->name = get_text(p, n, "name");
        c->description = get_text(p, n, "description");
        c->name_id = get_u32(p, n, "nameID");
        c->description_id = get_u32(p, n, "descriptionID");
        c->type_name = get_prop(p, n, "type");
        /* Unknown types are the schema's to report, perf_counter_composite pm_validate's. */
        if (pm_counter_type(c->type_name, &c->type))
                c->size = size_of_type(c->type);
        c->base_id = get_u32(p, n, "baseID");
        c->perf_time_id = get_u32(p, n, "perfTimeID");
        c->perf_freq_id = get_u32(p, n, "perfFreqID");
        c->multi_counter_id = get_u32(p, n, "multiCounterID");
        c->detail_level = (uint32_t) get_keyword(p, n, "detailLevel", details, N_ELEMENTS(details), 0);
        if (!scale || !parse_i32(scale, &c->default_scale))
                c->default_scale = 0;
        free(scale);
        c->aggregate = get_keyword(p, n, "aggregate", aggregates, N_ELEMENTS(aggregates),
                                   PM_AGG_ABSENT);
        c->struct_name = get_prop(p, n, "struct");
        c->field = get_prop(p, n, "field");
        build_attributes(p, n, c);
}

static int build_structs(struct parser *p, xmlNode *n, struct pm_counterset *cs)
{
        size_t total = 0;

        FOREACH_OURS(p, n, "structs", list)
                total += count_ours(p, list, "struct");
        if (total == 0)
                return 0;
        cs->structs = calloc(total, sizeof(*cs->structs));
        if (!cs->structs)
                return -ENOMEM;
        FOREACH_OURS(p, n, "structs", list)
                FOREACH_OURS(p, list, "struct", s) {
                        struct pm_struct *st = &cs->structs[cs->n_structs++];
                        st->loc = node_loc(p, s);
                        st->name = get_prop(p, s, "name");
                        st->type = get_prop(p, s, "type");
                }
        return 0;
}

static int build_counterset(struct parser *p, xmlNode *n, struct pm_counterset *cs)
{
        static const struct keyword instances[] = {
                { "single", PERF_COUNTERSET_SINGLE_INSTANCE },
                { "multiple", PERF_COUNTERSET_MULTI_INSTANCES },
                { "globalAggregate", PERF_COUNTERSET_SINGLE_AGGREGATE },
                { "multipleAggregate", PERF_COUNTERSET_MULTI_AGGREGATE },
                { "globalAggregateHistory", PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY },
        };
        size_t total = count_ours(p, n, "counter");

        cs->loc = node_loc(p, n);
        cs->guid_text = get_prop(p, n, "guid");
        if (!cs->guid_text || !pm_parse_guid(cs->guid_text, &cs->guid))
                cs->guid = (GUID) { 0 };
        cs->symbol = get_prop(p, n, "symbol");
        cs->uri = get_prop(p, n, "uri");
        cs->name = get_text(p, n, "name");
        cs->description = get_text(p, n, "description");
        cs->name_id = get_u32(p, n, "nameID");
        cs->description_id = get_u32(p, n, "descriptionID");
        cs->instances_name = get_prop(p, n, "instances");
        if (!cs->instances_name)
                cs->instances_name = dup_or_oom(p, "single");
        cs->instance_type = (uint32_t) get_keyword(p, n, "instances", instances,
                                                   N_ELEMENTS(instances), 0);
        if (build_structs(p, n, cs) < 0)
                return -ENOMEM;
        if (total == 0)
                return 0;
        cs->counters = calloc(total, sizeof(*cs->counters));
        if (!cs->counters)
                return -ENOMEM;
        FOREACH_OURS(p, n, "counter", c)
                build_counter(p, c, &cs->counters[cs->n_counters++]);
        return 0;
}

static int build_provider(struct parser *p, xmlNode *n, struct pm_provider *pv)
{
        size_t total = count_ours(p, n, "counterSet");
        char *s;

        pv->loc = node_loc(p, n);
        pv->guid_text = get_prop(p, n, "providerGuid");
        if (!pv->guid_text || !pm_parse_guid(pv->guid_text, &pv->guid))
                pv->guid = (GUID) { 0 };
        pv->symbol = get_prop(p, n, "symbol");
        pv->name = get_prop(p, n, "providerName");
        if (!pv->name)
                pv->name = dup_or_oom(p, "Counters");
        pv->application_identity = get_prop(p, n, "applicationIdentity");
        s = get_prop(p, n, "callback");
        pv->callback_custom = s && strcmp(s, "custom") == 0;
        free(s);
        s = get_prop(p, n, "providerType");
        pv->kernel_mode = s && strcmp(s, "kernelMode") == 0;
        free(s);
        pv->resource_base = get_u32(p, n, "resourceBase");
        if (total == 0)
                return 0;
        pv->countersets = calloc(total, sizeof(*pv->countersets));
        if (!pv->countersets)
                return -ENOMEM;
        FOREACH_OURS(p, n, "counterSet", cs)
                if (build_counterset(p, cs, &pv->countersets[pv->n_countersets++]) < 0)
                        return -ENOMEM;
        return 0;
}

static int build_manifest(struct parser *p, struct pm_manifest *m)
{
        size_t total = count_ours(p, p->counters, "provider");

        m->counters_loc = node_loc(p, p->counters);
        m->schema_version = get_prop(p, p->counters, "schemaVersion");
        if (total > 0) {
                m->providers = calloc(total, sizeof(*m->providers));
                if (!m->providers)
                        return -ENOMEM;
        }
        FOREACH_OURS(p, p->counters, "provider", pv)
                if (build_provider(p, pv, &m->providers[m->n_providers++]) < 0)
                        return -ENOMEM;
        /* Strings that could not be copied were noted on the way. */
        return p->oom ? -ENOMEM : 0;
}

/* ---- freeing ---- */

static void counter_free(struct pm_counter *c)
{
        free(c->symbol);
        free(c->uri);
        free(c->name);
        free(c->description);
        free(c->type_name);
        free(c->struct_name);
        free(c->field);
}

static void counterset_free(struct pm_counterset *cs)
{
        free(cs->guid_text);
        free(cs->symbol);
        free(cs->uri);
        free(cs->name);
        free(cs->description);
        free(cs->instances_name);
        for (size_t i = 0; i < cs->n_structs; i++) {
                free(cs->structs[i].name);
                free(cs->structs[i].type);
        }
        free(cs->structs);
        for (size_t i = 0; i < cs->n_counters; i++)
                counter_free(&cs->counters[i]);
        free(cs->counters);
}

static void provider_free(struct pm_provider *pv)
{
        free(pv->guid_text);
        free(pv->symbol);
        free(pv->name);
        free(pv->application_identity);
        for (size_t i = 0; i < pv->n_countersets; i++)
                counterset_free(&pv->countersets[i]);
        free(pv->countersets);
}

void pm_manifest_free(struct pm_manifest *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n_providers; i++)
                provider_free(&m->providers[i]);
        free(m->providers);
        free(m->schema_version);
        free(m->file);
        free(m);
}

/* ---- entry points ---- */

/* Diagnostics of a manifest that is not returned must not point into it. */
static void rebase_diags(struct pm_diags *d, size_t from, const char *old, const char *name)
{
        for (size_t i = from; i < d->n; i++)
                if (d->items[i].loc.file == old)
                        d->items[i].loc.file = name;
}

static int parse_document(struct parser *p, const void *data, size_t size, struct pm_manifest *m)
{
        xmlStructuredErrorFunc saved = xmlStructuredError;
        void *saved_ctx = xmlStructuredErrorContext;
        char *converted = NULL;
        int r;

        /* Nothing of libxml2's may reach stderr: every report becomes a diagnostic. */
        xmlSetStructuredErrorFunc(p, on_xml_error);
        r = source_text(p, data, size, &converted);
        if (r == 0)
                r = index_lines(&p->src);
        if (r == 0)
                r = parse_xml(p, converted != NULL);
        if (r == 0)
                r = refuse_dtd(p);
        if (r == 0)
                r = index_source(p);
        if (r == 0)
                r = find_counters(p);
        xmlSetStructuredErrorFunc(p, ignore_xml_error);
        if (r == 0)
                r = validate_schema(p);
        if (r == 0)
                r = build_manifest(p, m);
        xmlSetStructuredErrorFunc(saved_ctx, saved);
        xmlFreeDoc(p->doc);
        source_done(&p->src);
        free(converted);
        return r;
}

int pm_parse_memory(const char *name, const void *data, size_t size, struct pm_diags *d,
                    struct pm_manifest **ret)
{
        struct pm_manifest *m = calloc(1, sizeof(*m));
        struct parser p = { .d = d };
        size_t first = d->n;
        int r;

        if (!name)
                name = "<memory>";
        xmlInitParser();
        if (!m || !(m->file = strdup(name))) {
                free(m);
                return -ENOMEM;
        }
        p.file = m->file;
        r = parse_document(&p, data, size, m);
        if (r < 0) {
                rebase_diags(d, first, m->file, name);
                pm_manifest_free(m);
                return r;
        }
        pm_validate(m, d);
        *ret = m;
        return 0;
}

static int read_all(int fd, char **ret, size_t *ret_size)
{
        size_t size = 0, cap = 64 * 1024;
        char *buf = malloc(cap), *n;
        ssize_t k;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (size == cap) {
                        if (cap >= (size_t) INT_MAX) {
                                free(buf);
                                return -EFBIG;
                        }
                        n = realloc(buf, cap *= 2);
                        if (!n) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = n;
                }
                k = read(fd, buf + size, cap - size);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        free(buf);
                        return -errno;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
        }
        *ret = buf;
        *ret_size = size;
        return 0;
}

int pm_parse_file(const char *path, struct pm_diags *d, struct pm_manifest **ret)
{
        char *data = NULL;
        size_t size = 0;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_all(fd, &data, &size);
        close(fd);
        if (r < 0)
                return r;
        r = pm_parse_memory(path, data, size, d, ret);
        free(data);
        return r;
}
