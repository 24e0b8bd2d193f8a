/* SPDX-License-Identifier: MIT */
/*
 * gen_resource (-rc): what Windows ctrpp writes as a .rc string table
 * becomes C data linked into the provider.  Every name and description
 * with its resource id (ids.c numbers them as Windows does), plus what the
 * header does not carry (uri, baseID, perfTimeID, perfFreqID,
 * multiCounterID, aggregate, providerName, applicationIdentity), so the
 * provider describes itself and no install step is needed.
 *
 * The data is a few plain const structs whose types the generated file
 * defines itself, under a guard (CTRPP_DESCRIPTION_VERSION) that the SDK's
 * reader can share; strings are UTF-8.  Each provider is exported as one
 * weak, default-visibility symbol, <prefix><Provider>_Description, named
 * like the header's variables (<Provider> = the provider symbol, or its
 * providerName made an identifier).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* The struct types live in the SDK (perflib-description.h); only this is generated. */
static const char types[] =
        "/* One definition kept out of any number linked in; visible to the SDK's reader. */\n"
        "#ifndef CTRPP_DESCRIPTION_EXPORT\n"
        "#define CTRPP_DESCRIPTION_EXPORT __attribute__((weak, visibility(\"default\")))\n"
        "#endif\n"
        "\n";

struct rctx {
        const struct pm_manifest *m;
        const char *prefix;
        FILE *f;
        bool *oom;                      /* set when a name could not be made */
};

static void put_provider_name(const struct rctx *r, const struct pm_provider *p)
{
        char *name = gen_symbol_or(p->symbol, p->name, "Counters");

        fputs(r->prefix, r->f);
        if (name)
                fputs(name, r->f);
        else
                *r->oom = true;
        free(name);
}

/* A C string literal, or NULL. */
static void put_string(FILE *f, const char *s)
{
        if (s)
                gen_put_string(f, s);
        else
                fputs("NULL", f);
}

static void put_id(FILE *f, const char *field, const struct pm_u32 *id)
{
        if (id->set)
                fprintf(f, ".%s = %u", field, id->value);
        else
                fprintf(f, ".%s = CTRPP_NO_ID", field);
}

/*
 * The static arrays are named after the exported symbol too
 * (<prefix><Provider>_counters_<counterset, 1-based>), so that even two
 * resource files included in one translation unit do not collide.
 */
static void put_counters_name(const struct rctx *r, const struct pm_provider *p, size_t ci)
{
        put_provider_name(r, p);
        fprintf(r->f, "_counters_%zu", ci + 1);
}

static void put_counter(const struct rctx *r, const struct pm_counter *c)
{
        FILE *f = r->f;

        fprintf(f, "        {\n                .id = %u, .symbol = ", c->id);
        put_string(f, c->symbol);
        fputs(",\n                .uri = ", f);
        put_string(f, c->uri);
        fputs(",\n                .name = ", f);
        put_string(f, c->name);
        fprintf(f, ", .name_id = %u,\n                .description = ", c->res_name_id);
        put_string(f, c->description);
        fprintf(f, ", .description_id = %u,\n", c->res_description_id);
        fprintf(f, "                .type = 0x%08x /* ", c->type);
        gen_put_comment_text(f, c->type_name);
        fprintf(f, " */, .attrib = 0x%" PRIx64 ", .size = %u,\n", c->attrib, c->size);
        fprintf(f, "                .detail_level = %u, .default_scale = %d, .aggregate = ",
                c->detail_level, c->default_scale);
        if (c->aggregate == PM_AGG_ABSENT)
                fputs("CTRPP_NO_AGGREGATE,\n                ", f);
        else
                fprintf(f, "%d,\n                ", (int) c->aggregate);
        put_id(f, "base_id", &c->base_id);
        fputs(", ", f);
        put_id(f, "perf_time_id", &c->perf_time_id);
        fputs(",\n                ", f);
        put_id(f, "perf_freq_id", &c->perf_freq_id);
        fputs(", ", f);
        put_id(f, "multi_counter_id", &c->multi_counter_id);
        fputs(",\n        },\n", f);
}

static void put_counters(const struct rctx *r, const struct pm_provider *p,
                         const struct pm_counterset *cs, size_t ci)
{
        if (cs->n_counters == 0)
                return;
        fputs("/* The counters of \"", r->f);
        gen_put_comment_text(r->f, cs->name);
        fputs("\" */\nstatic const struct ctrpp_counter_desc ", r->f);
        put_counters_name(r, p, ci);
        fputs("[] = {\n", r->f);
        for (size_t i = 0; i < cs->n_counters; i++)
                put_counter(r, &cs->counters[i]);
        fputs("};\n\n", r->f);
}

static void put_counterset(const struct rctx *r, const struct pm_provider *p,
                           const struct pm_counterset *cs, size_t ci)
{
        FILE *f = r->f;

        fputs("        {\n                .guid = ", f);
        gen_put_guid(f, &cs->guid);
        fputs(",\n                .symbol = ", f);
        put_string(f, cs->symbol);
        fputs(", .uri = ", f);
        put_string(f, cs->uri);
        fputs(",\n                .name = ", f);
        put_string(f, cs->name);
        fprintf(f, ", .name_id = %u,\n                .description = ", cs->res_name_id);
        put_string(f, cs->description);
        fprintf(f, ", .description_id = %u,\n", cs->res_description_id);
        fprintf(f, "                .instance_type = %u, .instances = ", cs->instance_type);
        put_string(f, cs->instances_name ? cs->instances_name : "single");
        fprintf(f, ",\n                .n_counters = %zu, .counters = ", cs->n_counters);
        if (cs->n_counters)
                put_counters_name(r, p, ci);
        else
                fputs("NULL", f);
        fputs(",\n        },\n", f);
}

static void put_provider(const struct rctx *r, const struct pm_provider *p)
{
        FILE *f = r->f;

        for (size_t i = 0; i < p->n_countersets; i++)
                put_counters(r, p, &p->countersets[i], i);
        if (p->n_countersets) {
                fputs("static const struct ctrpp_counterset_desc ", f);
                put_provider_name(r, p);
                fputs("_countersets[] = {\n", f);
                for (size_t i = 0; i < p->n_countersets; i++)
                        put_counterset(r, p, &p->countersets[i], i);
                fputs("};\n\n", f);
        }

        fputs("/* Provider \"", f);
        gen_put_comment_text(f, p->name);
        fputs("\" ", f);
        gen_put_comment_text(f, p->guid_text);
        fputs(" */\nextern const struct ctrpp_provider_desc ", f);
        put_provider_name(r, p);
        fputs("_Description;\nCTRPP_DESCRIPTION_EXPORT const struct ctrpp_provider_desc ", f);
        put_provider_name(r, p);
        fputs("_Description = {\n"
              "        .version = CTRPP_DESCRIPTION_VERSION,\n"
              "        .size = sizeof(struct ctrpp_provider_desc),\n"
              "        .guid = ", f);
        gen_put_guid(f, &p->guid);
        fputs(",\n        .name = ", f);
        put_string(f, p->name);
        fputs(", .symbol = ", f);
        put_string(f, p->symbol);
        fputs(",\n        .application_identity = ", f);
        put_string(f, p->application_identity);
        fprintf(f, ",\n        .callback_custom = %d, .kernel_mode = %d, ", p->callback_custom,
                p->kernel_mode);
        put_id(f, "resource_base", &p->resource_base);
        fputs(",\n        .schema_version = ", f);
        put_string(f, r->m->schema_version);
        fputs(", .manifest = ", f);
        put_string(f, gen_base_name(r->m->file));
        fprintf(f, ",\n        .n_countersets = %zu, .countersets = ", p->n_countersets);
        if (p->n_countersets) {
                put_provider_name(r, p);
                fputs("_countersets", f);
        } else
                fputs("NULL", f);
        fputs(",\n};\n\n", f);
}

int gen_resource(const struct pm_manifest *m, const struct gen_options *o, FILE *f)
{
        const char *name = o->resource_name ? o->resource_name : "strings.c";

        fprintf(f,
                "/*\n"
                " * %s: generated by ctrpp from %s; do not edit.\n"
                " *\n"
                " * The provider's string table and metadata, as C data: Linux's counterpart of\n"
                " * the .rc file Windows ctrpp writes.  Compile it and link it into the\n"
                " * provider.  <Provider>_Description (weak, so several copies link) holds every\n"
                " * counterset and counter name and description with the resource ids Windows\n"
                " * gives them, and what the header leaves out: uri, baseID, perfTimeID,\n"
                " * perfFreqID, multiCounterID, aggregate, providerName, applicationIdentity.\n"
                " */\n"
                "#include <stddef.h>\n"
                "\n"
                "#include <perflib.h>\n"
                "\n", name, gen_base_name(m->file));
        return gen_put_descriptions(m, o->prefix, f);
}

int gen_put_descriptions(const struct pm_manifest *m, const char *prefix, FILE *f)
{
        bool oom = false;
        struct rctx r = { .m = m, .prefix = prefix ? prefix : "", .f = f, .oom = &oom };

        fputs(types, f);
        for (size_t i = 0; i < m->n_providers; i++)
                put_provider(&r, &m->providers[i]);
        if (oom)
                return -ENOMEM;
        return ferror(f) ? -EIO : 0;
}
