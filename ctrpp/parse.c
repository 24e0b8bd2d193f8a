/* SPDX-License-Identifier: MIT */
/*
 * Reading a manifest into the model.  libxml2 parses the document, the
 * embedded counter schema validates its <counters> subtree, and the model is
 * then built from whatever could be read, even when the schema found
 * problems, so that pm_validate can report everything else in the same run.
 *
 * The pieces: source.c reads the text and locates things in it,
 * element.c reads elements and attributes, describe.c names an element
 * for a diagnostic, xml-error.c turns libxml2's messages into
 * diagnostics, schema-check.c runs the schema.  This file parses the
 * document, builds the model and frees it, and holds the entry points.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "describe.h"
#include "element.h"
#include "parser.h"
#include "perfman.h"
#include "schema-check.h"
#include "source.h"
#include "suggest.h"
#include "xml-error.h"

/* ---- the document ---- */

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
                loc = pm_loc_at(p, (size_t) (at - p->src.text));
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
        if (!pm_has_name(root, "instrumentationManifest")) {
                struct pm_loc loc = pm_node_loc(p, root);
                pm_diag(p->d, PM_ERROR, &loc, "the root element is <%s>, not <instrumentationManifest>",
                        (const char *) root->name);
        }
        p->counters = pm_has_name(root, "counters") ? root :
                      pm_find_descendant(root->children, "counters");
        if (!p->counters) {
                struct pm_loc loc = pm_node_loc(p, root);
                pm_diag(p->d, PM_ERROR, &loc, "the manifest has no <counters> element");
                return -EBADMSG;
        }
        p->counters_href = p->counters->ns ? p->counters->ns->href : NULL;
        p->string_table = pm_find_string_table(root);
        return 0;
}

/* ---- the model ---- */

/* A $(string.X) reference to an id the string table lacks, and the id meant. */
static void unknown_string(struct parser *p, const xmlNode *n, const char *name, const char *v,
                           const char *id, size_t len)
{
        struct pm_loc loc = pm_attr_loc(p, n, name);
        char *label = pm_describe(p, n), typed[SG_MAX_NAME + 1];
        struct sg_suggest sg;

        snprintf(typed, sizeof(typed), "%.*s", (int) len, id);
        sg_begin(&sg, len <= SG_MAX_NAME ? typed : NULL);
        if (len <= SG_MAX_NAME)
                pm_offer_string_ids(p, &sg);
        pm_diag(p->d, PM_ERROR, &loc, "%s: %s \"%s\" refers to string '%.*s', which the "
                "<localization> string table does not define%s", label ? label : "?", name, v,
                (int) len, id, sg_hint(&sg));
        free(label);
}

/* name or description, $(string.X) resolved; an unresolved reference is kept as written. */
static char *get_text(struct parser *p, const xmlNode *n, const char *name)
{
        char *v = pm_get_prop(p, n, name), *r;
        const char *id;
        xmlChar *s;
        size_t len;

        id = v ? pm_string_ref(v, &len) : NULL;
        if (!id)
                return v;
        s = pm_lookup_string(p, id, len);
        if (!s) {
                unknown_string(p, n, name, v, id, len);
                return v;
        }
        r = pm_dup_or_oom(p, (const char *) s);
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
                        int bit = pm_get_keyword(p, a, "name", attribs, N_ELEMENTS(attribs), -1);
                        /* A repeated one is the schema's to report; the first keeps its place. */
                        if (bit < 0 || (c->attrib & UINT64_C(1) << bit))
                                continue;
                        c->attrib |= UINT64_C(1) << bit;
                        c->attrib_loc[bit] = pm_node_loc(p, a);
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
        struct pm_u32 id = pm_get_u32(p, n, "id");
        char *scale = pm_get_prop(p, n, "defaultScale");

        c->loc = pm_node_loc(p, n);
        c->id = id.value;
        c->symbol = pm_get_prop(p, n, "symbol");
        c->uri = pm_get_prop(p, n, "uri");
        c->name = get_text(p, n, "name");
        c->description = get_text(p, n, "description");
        c->name_id = pm_get_u32(p, n, "nameID");
        c->description_id = pm_get_u32(p, n, "descriptionID");
        c->type_name = pm_get_prop(p, n, "type");
        /* Unknown types are the schema's to report, perf_counter_composite pm_validate's. */
        if (pm_counter_type(c->type_name, &c->type))
                c->size = size_of_type(c->type);
        c->base_id = pm_get_u32(p, n, "baseID");
        c->perf_time_id = pm_get_u32(p, n, "perfTimeID");
        c->perf_freq_id = pm_get_u32(p, n, "perfFreqID");
        c->multi_counter_id = pm_get_u32(p, n, "multiCounterID");
        c->detail_level = (uint32_t) pm_get_keyword(p, n, "detailLevel", details,
                                                    N_ELEMENTS(details), 0);
        if (!scale || !pm_parse_i32(scale, &c->default_scale))
                c->default_scale = 0;
        free(scale);
        c->aggregate = pm_get_keyword(p, n, "aggregate", aggregates, N_ELEMENTS(aggregates),
                                   PM_AGG_ABSENT);
        c->struct_name = pm_get_prop(p, n, "struct");
        c->field = pm_get_prop(p, n, "field");
        build_attributes(p, n, c);
}

static int build_structs(struct parser *p, xmlNode *n, struct pm_counterset *cs)
{
        size_t total = 0;

        FOREACH_OURS(p, n, "structs", list)
                total += pm_count_ours(p, list, "struct");
        if (total == 0)
                return 0;
        cs->structs = calloc(total, sizeof(*cs->structs));
        if (!cs->structs)
                return -ENOMEM;
        FOREACH_OURS(p, n, "structs", list)
                FOREACH_OURS(p, list, "struct", s) {
                        struct pm_struct *st = &cs->structs[cs->n_structs++];
                        st->loc = pm_node_loc(p, s);
                        st->name = pm_get_prop(p, s, "name");
                        st->type = pm_get_prop(p, s, "type");
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
        size_t total = pm_count_ours(p, n, "counter");

        cs->loc = pm_node_loc(p, n);
        cs->guid_text = pm_get_prop(p, n, "guid");
        if (!cs->guid_text || !pm_parse_guid(cs->guid_text, &cs->guid))
                cs->guid = (GUID) { 0 };
        cs->symbol = pm_get_prop(p, n, "symbol");
        cs->uri = pm_get_prop(p, n, "uri");
        cs->name = get_text(p, n, "name");
        cs->description = get_text(p, n, "description");
        cs->name_id = pm_get_u32(p, n, "nameID");
        cs->description_id = pm_get_u32(p, n, "descriptionID");
        cs->instances_name = pm_get_prop(p, n, "instances");
        if (!cs->instances_name)
                cs->instances_name = pm_dup_or_oom(p, "single");
        cs->instance_type = (uint32_t) pm_get_keyword(p, n, "instances", instances,
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
        size_t total = pm_count_ours(p, n, "counterSet");
        char *s;

        pv->loc = pm_node_loc(p, n);
        pv->guid_text = pm_get_prop(p, n, "providerGuid");
        if (!pv->guid_text || !pm_parse_guid(pv->guid_text, &pv->guid))
                pv->guid = (GUID) { 0 };
        pv->symbol = pm_get_prop(p, n, "symbol");
        pv->name = pm_get_prop(p, n, "providerName");
        if (!pv->name)
                pv->name = pm_dup_or_oom(p, "Counters");
        pv->application_identity = pm_get_prop(p, n, "applicationIdentity");
        s = pm_get_prop(p, n, "callback");
        pv->callback_custom = s && strcmp(s, "custom") == 0;
        free(s);
        s = pm_get_prop(p, n, "providerType");
        pv->kernel_mode = s && strcmp(s, "kernelMode") == 0;
        free(s);
        pv->resource_base = pm_get_u32(p, n, "resourceBase");
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
        size_t total = pm_count_ours(p, p->counters, "provider");

        m->counters_loc = pm_node_loc(p, p->counters);
        m->schema_version = pm_get_prop(p, p->counters, "schemaVersion");
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
        xmlSetStructuredErrorFunc(p, pm_on_xml_error);
        r = pm_source_text(p, data, size, &converted);
        if (r == 0)
                r = pm_index_lines(&p->src);
        if (r == 0)
                r = parse_xml(p, converted != NULL);
        if (r == 0)
                r = refuse_dtd(p);
        if (r == 0)
                r = pm_index_source(p);
        if (r == 0)
                r = find_counters(p);
        xmlSetStructuredErrorFunc(p, pm_ignore_xml_error);
        if (r == 0)
                r = pm_validate_schema(p);
        if (r == 0)
                r = build_manifest(p, m);
        xmlSetStructuredErrorFunc(saved_ctx, saved);
        xmlFreeDoc(p->doc);
        pm_source_done(&p->src);
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
