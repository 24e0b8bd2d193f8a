/* SPDX-License-Identifier: MIT */
/*
 * gen_header (-o) and gen_counters_header (-ch): the provider header in the
 * shape modern Windows ctrpp gives it, and the symbols-only header.
 *
 * What Windows ctrpp writes (jxcore's node_perfctr_provider.h, hpx's
 * hpx_counters.hpp, msquic's prefixed copy) and what we keep of it:
 *
 *   #define <CounterSymbol> (<id>)                   one per counter symbol
 *   GUID <Provider>Guid, <CounterSet>Guid             provider and countersets
 *   HANDLE <Provider>                                 the provider handle
 *   struct { PERF_COUNTERSET_INFO CounterSet;
 *            PERF_COUNTER_INFO Counter0; ... } <CounterSet>Info
 *   CounterCleanup(), CounterInitialize()             inline functions
 *
 * <Provider> is the provider's symbol attribute.  -prefix P goes in front of
 * every variable and function name (PCounterInitialize, P<Provider>Guid,
 * P<CounterSet>Info), never in front of the counter id macros, which are
 * the manifest author's own names.
 *
 * DECLSPEC_SELECTANY (one definition kept out of many) becomes a weak
 * definition, CTRPP_SELECTANY, and FORCEINLINE functions become static
 * inline, so the header can be included in several translation units of one
 * program, C or C++, without link errors or unused-variable warnings.
 *
 * Counters laid out by <structs> (kernel-mode manifests, and user-mode ones
 * that use them) get their Offset from offsetof() of the named struct type,
 * their Size from their type (checked against the field at compile time),
 * and an Update<CounterSet>(Instance, Values...) function that publishes
 * whole structs, as PCW's generated Add functions do on Windows.  Linux has
 * no PCW, so kernel-mode manifests get this same user-mode form; the struct
 * types are the provider's own, declared before this header is included.
 *
 * -legacy writes Vista's four files instead (gen-legacy.c); both forms
 * write their counterset templates with gen-template.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gen-template.h"
#include "gen.h"

/* ---- small writers ---- */


/* "ucs-counters.h" -> "CTRPP_UCS_COUNTERS_H" */
static void put_guard(FILE *f, const char *file_name)
{
        fputs("CTRPP_", f);
        for (const char *s = file_name; *s; s++) {
                char c = *s;
                if (c >= 'a' && c <= 'z')
                        c = (char) (c - 'a' + 'A');
                fputc(gen_is_ident_char(c, false) ? c : '_', f);
        }
}

static int finish(FILE *f)
{
        return ferror(f) ? -EIO : 0;
}

/* ---- names ---- */

/*
 * The names a provider's declarations are built from: its symbol attribute,
 * or (no symbol: kernel-mode manifests, corefx) its providerName made an
 * identifier; the same for countersets, whose derived names are made
 * unique.  All owned.
 */
struct names {
        char *provider;
        char **countersets;
        size_t n_countersets;
};

static void names_done(struct names *n)
{
        for (size_t i = 0; i < n->n_countersets; i++)
                free(n->countersets[i]);
        free(n->countersets);
        free(n->provider);
        *n = (struct names) { 0 };
}


/* A derived counterset name that repeats an earlier one gets _<index>. */
static int make_unique(struct names *n, size_t i)
{
        for (size_t j = 0; j < i; j++)
                if (strcmp(n->countersets[j], n->countersets[i]) == 0) {
                        char *s = NULL;
                        if (asprintf(&s, "%s_%zu", n->countersets[i], i + 1) < 0)
                                return -ENOMEM;
                        free(n->countersets[i]);
                        n->countersets[i] = s;
                        return 0;
                }
        return 0;
}

static int names_init(struct names *n, const struct pm_provider *p)
{
        *n = (struct names) { 0 };
        n->provider = gen_symbol_or(p->symbol, p->name, "Counters");
        n->countersets = calloc(p->n_countersets ? p->n_countersets : 1, sizeof(char *));
        if (!n->provider || !n->countersets) {
                names_done(n);
                return -ENOMEM;
        }
        for (size_t i = 0; i < p->n_countersets; i++) {
                const struct pm_counterset *cs = &p->countersets[i];
                char fallback[32];

                snprintf(fallback, sizeof(fallback), "CounterSet%zu", i + 1);
                n->countersets[i] = gen_symbol_or(cs->symbol, cs->name, fallback);
                n->n_countersets = i + 1;
                if (!n->countersets[i] || make_unique(n, i) < 0) {
                        names_done(n);
                        return -ENOMEM;
                }
        }
        return 0;
}

/* ---- the provider header ---- */

static bool four_arguments(const struct hctx *h, const struct pm_provider *p)
{
        return p->callback_custom || h->o->notification_callback || h->o->memory_routines;
}

/* The opening of the leading comment; the caller adds to it and closes it. */
static void put_banner(const struct hctx *h, const char *file_name, const char *what)
{
        fprintf(h->f, "/*\n * %s: generated by ctrpp from %s; do not edit.\n *\n", file_name,
                gen_base_name(h->m->file));
        fputs(what, h->f);
}

static void put_selectany(FILE *f)
{
        fputs("/*\n"
              " * Windows' DECLSPEC_SELECTANY: a definition that may appear in every translation\n"
              " * unit that includes this header, one of which the linker keeps.\n"
              " */\n"
              "#ifndef CTRPP_SELECTANY\n"
              "#if defined(__GNUC__) || defined(__clang__)\n"
              "#define CTRPP_SELECTANY __attribute__((weak))\n"
              "#else\n"
              "#error \"this header needs weak symbols (GCC or Clang)\"\n"
              "#endif\n"
              "#endif\n"
              "\n", f);
}

static void put_counter_defines(FILE *f, const struct pm_manifest *m)
{
        bool any = false;

        for (size_t i = 0; i < m->n_providers; i++)
                for (size_t j = 0; j < m->providers[i].n_countersets; j++) {
                        const struct pm_counterset *cs = &m->providers[i].countersets[j];
                        for (size_t k = 0; k < cs->n_counters; k++) {
                                const struct pm_counter *c = &cs->counters[k];
                                if (!c->symbol || !*c->symbol)
                                        continue;
                                fprintf(f, "#define %s (%u)\n", c->symbol, c->id);
                                any = true;
                        }
                }
        if (any)
                fputc('\n', f);
}

/* A GUID variable, under a comment naming what it identifies. */
static void put_guid_variable(const struct hctx *h, const char *what, const char *name,
                              const char *guid_text, const char *variable, const GUID *g)
{
        fprintf(h->f, "/* %s \"", what);
        gen_put_comment_text(h->f, name);
        fputs("\" ", h->f);
        gen_put_comment_text(h->f, guid_text);
        fprintf(h->f, " */\nCTRPP_SELECTANY GUID %s%sGuid =\n        ", h->prefix, variable);
        gen_put_guid(h->f, g);
        fputs(";\n\n", h->f);
}

static void put_guids(const struct hctx *h, const struct pm_provider *p, const struct names *n)
{
        put_guid_variable(h, "Provider", p->name, p->guid_text, n->provider, &p->guid);
        for (size_t i = 0; i < p->n_countersets; i++) {
                const struct pm_counterset *cs = &p->countersets[i];
                put_guid_variable(h, "Counterset", cs->name, cs->guid_text, n->countersets[i],
                                  &cs->guid);
        }
        fprintf(h->f, "/* The provider's handle, while CounterInitialize() has it started. */\n"
                "CTRPP_SELECTANY HANDLE %s%s = NULL;\n\n", h->prefix, n->provider);
}

static int put_template(const struct hctx *h, const struct pm_provider *p,
                        const struct pm_counterset *cs, const struct names *n, size_t i)
{
        bool structs = pm_uses_structs(cs);
        uint32_t tail = 0;
        int r = 0;

        if (structs) {
                pm_put_field_checks(h, cs);
                fputc('\n', h->f);
        }
        fputs("CTRPP_SELECTANY struct {\n        PERF_COUNTERSET_INFO CounterSet;\n", h->f);
        for (size_t k = 0; k < cs->n_counters; k++)
                fprintf(h->f, "        PERF_COUNTER_INFO Counter%zu;\n", k);
        fprintf(h->f, "} %s%sInfo = {\n        { ", h->prefix, n->countersets[i]);
        gen_put_guid(h->f, &cs->guid);
        fputs(",\n          ", h->f);
        gen_put_guid(h->f, &p->guid);
        fprintf(h->f, ",\n          %zu, ", cs->n_counters);
        pm_put_instance_type(h->f, cs->instance_type);
        fputs(" },\n", h->f);
        for (size_t k = 0; k < cs->n_counters && r == 0; k++)
                r = pm_put_counter_info(h, cs, &cs->counters[k], structs, &tail);
        fputs("};\n\n", h->f);
        return r;
}

/* Function names: <prefix>CounterInitialize, or per provider when a manifest has several. */
static void put_function_name(const struct hctx *h, const struct names *n, const char *what)
{
        fprintf(h->f, "%s%s%s", h->prefix, h->m->n_providers > 1 ? n->provider : "", what);
}

static void put_cleanup(const struct hctx *h, const struct names *n)
{
        const char *handle = n->provider;

        fputs("static inline VOID\n", h->f);
        put_function_name(h, n, "CounterCleanup");
        fprintf(h->f,
                "(VOID)\n"
                "{\n"
                "        if (%1$s%2$s != NULL) {\n"
                "                PerfStopProvider(%1$s%2$s);\n"
                "                %1$s%2$s = NULL;\n"
                "        }\n"
                "}\n\n", h->prefix, handle);
}

/*
 * The resource file (-rc) defines <prefix><Provider>_Description.  A weak
 * reference lets a program built without it link all the same; it then
 * runs but does not describe itself to readers.
 */
static void put_description_declaration(const struct hctx *h, const struct names *n)
{
        fprintf(h->f,
                "/* The provider's self-description, from the resource file (ctrpp -rc). */\n"
                "extern const struct ctrpp_provider_desc %s%s_Description __attribute__((weak));\n"
                "\n", h->prefix, n->provider);
}

/* Publishing the description; a failure undoes CounterInitialize. */
static void put_publish(const struct hctx *h, const struct names *n)
{
        fprintf(h->f,
                "\n"
                "        if (&%1$s%2$s_Description != NULL) {\n"
                "                int r = pl_set_provider_description(%1$s%2$s, &%1$s%2$s_Description);\n"
                "                if (r < 0) {\n"
                "                        ", h->prefix, n->provider);
        put_function_name(h, n, "CounterCleanup");
        fputs("();\n"
              "                        return r == -ENOMEM || r == -E2BIG ? ERROR_NOT_ENOUGH_MEMORY\n"
              "                                                           : ERROR_INVALID_DATA;\n"
              "                }\n"
              "        }\n", h->f);
}

static void put_initialize(const struct hctx *h, const struct pm_provider *p, const struct names *n)
{
        bool four = four_arguments(h, p);

        fputs("static inline ULONG\n", h->f);
        put_function_name(h, n, "CounterInitialize");
        if (four)
                fputs("(PERFLIBREQUEST NotificationCallback, PERF_MEM_ALLOC MemoryAllocationFunction,\n"
                      "                  PERF_MEM_FREE MemoryFreeFunction, PVOID MemoryFunctionsContext)\n",
                      h->f);
        else
                fputs("(VOID)\n", h->f);
        fputs("{\n"
              "        ULONG Status;\n"
              "        PERF_PROVIDER_CONTEXT ProviderContext;\n"
              "\n"
              "        ZeroMemory(&ProviderContext, sizeof(PERF_PROVIDER_CONTEXT));\n"
              "        ProviderContext.ContextSize = sizeof(PERF_PROVIDER_CONTEXT);\n", h->f);
        if (four)
                fputs("        ProviderContext.ControlCallback = NotificationCallback;\n"
                      "        ProviderContext.MemAllocRoutine = MemoryAllocationFunction;\n"
                      "        ProviderContext.MemFreeRoutine = MemoryFreeFunction;\n"
                      "        ProviderContext.pMemContext = MemoryFunctionsContext;\n", h->f);
        fprintf(h->f,
                "\n"
                "        Status = PerfStartProviderEx(&%1$s%2$sGuid, &ProviderContext, &%1$s%2$s);\n"
                "        if (Status != ERROR_SUCCESS) {\n"
                "                %1$s%2$s = NULL;\n"
                "                return Status;\n"
                "        }\n", h->prefix, n->provider);
        for (size_t i = 0; i < p->n_countersets; i++) {
                fprintf(h->f,
                        "\n"
                        "        Status = PerfSetCounterSetInfo(%1$s%2$s, &%1$s%3$sInfo.CounterSet,\n"
                        "                                       sizeof %1$s%3$sInfo);\n"
                        "        if (Status != ERROR_SUCCESS) {\n"
                        "                ", h->prefix, n->provider, n->countersets[i]);
                put_function_name(h, n, "CounterCleanup");
                fputs("();\n"
                      "                return Status;\n"
                      "        }\n", h->f);
        }
        put_publish(h, n);
        fputs("\n        return ERROR_SUCCESS;\n}\n\n", h->f);
}

/*
 * <prefix>Update<CounterSet>(Instance, Values...): the struct-based
 * provider's way to publish a whole struct, as PCW's generated Add function
 * is on Windows.  It goes through the counter-value calls, by id, so it
 * needs no knowledge of the layout, converts each field to the counter's
 * size whatever the field's own type, and leaves reference counters alone.
 */
/* A counter the Update function sets: a field's value, by value. */
static bool updated(const struct pm_counter *c, size_t struct_index)
{
        return c->struct_ref == struct_index + 1 && c->field && (c->size == 4 || c->size == 8) &&
               !(c->attrib & PERF_ATTRIB_BY_REFERENCE);
}

static void put_update(const struct hctx *h, const struct pm_counterset *cs,
                       const struct names *n, size_t i)
{
        bool single = cs->n_structs == 1, any = false;

        for (size_t k = 0; k < cs->n_structs; k++)
                for (size_t j = 0; j < cs->n_counters; j++)
                        any = any || updated(&cs->counters[j], k);

        fprintf(h->f, "static inline ULONG\n%sUpdate%s(PPERF_COUNTERSET_INSTANCE Instance",
                h->prefix, n->countersets[i]);
        for (size_t k = 0; k < cs->n_structs; k++)
                fprintf(h->f, ", const %s *%s", cs->structs[k].type,
                        single ? "Values" : cs->structs[k].name);
        fputs(any ? ")\n{\n        ULONG Status;\n\n" : ")\n{\n        (void) Instance;\n", h->f);
        for (size_t k = 0; k < cs->n_structs; k++) {
                const char *param = single ? "Values" : cs->structs[k].name;
                bool open = false;

                for (size_t j = 0; j < cs->n_counters; j++) {
                        const struct pm_counter *c = &cs->counters[j];
                        bool large = c->size == 8;
                        if (!updated(c, k))
                                continue;
                        if (!open)
                                fprintf(h->f, "        if (%s != NULL) {\n", param);
                        open = true;
                        fprintf(h->f,
                                "                Status = PerfSet%sCounterValue(%s%s, Instance, %u,\n"
                                "                                %*s(%s) %s->%s);\n"
                                "                if (Status != ERROR_SUCCESS)\n"
                                "                        return Status;\n",
                                large ? "ULongLong" : "ULong", h->prefix, n->provider, c->id,
                                large ? 22 : 18, "", large ? "ULONGLONG" : "ULONG", param, c->field);
                }
                if (open)
                        fputs("        }\n", h->f);
                else
                        fprintf(h->f, "        (void) %s;\n", param);
        }
        fputs("        return ERROR_SUCCESS;\n}\n\n", h->f);
}

static int put_provider(const struct hctx *h, const struct pm_provider *p)
{
        struct names n;
        int r = names_init(&n, p);

        if (r < 0)
                return r;
        put_guids(h, p, &n);
        for (size_t i = 0; i < p->n_countersets && r == 0; i++) {
                const struct pm_counterset *cs = &p->countersets[i];
                fputs("/* The template of counterset \"", h->f);
                gen_put_comment_text(h->f, cs->name);
                fprintf(h->f, "\", instances=\"%s\" */\n",
                        cs->instances_name ? cs->instances_name : "single");
                r = put_template(h, p, cs, &n, i);
        }
        if (r < 0) {
                names_done(&n);
                return r;
        }
        put_description_declaration(h, &n);
        put_cleanup(h, &n);
        put_initialize(h, p, &n);
        for (size_t i = 0; i < p->n_countersets; i++)
                if (pm_uses_structs(&p->countersets[i]))
                        put_update(h, &p->countersets[i], &n, i);
        names_done(&n);
        return 0;
}

static const char struct_note[] =
        " * Some countersets are laid out by the structs the manifest names (<structs>,\n"
        " * struct and field attributes): a counter's Offset is offsetof() its field and\n"
        " * its Size comes from its type, checked against the field.  An instance's\n"
        " * counter data, right after its PERF_COUNTERSET_INSTANCE, holds each struct of\n"
        " * the counterset in <structs> order, each at a multiple of 8 bytes, then the\n"
        " * counters that name no field.  It ends with the last counter, so do not copy\n"
        " * whole structs into it: Update<CounterSet>() publishes a struct's counters,\n"
        " * as the PCW Add functions do on Windows.  The struct types are the\n"
        " * provider's own: include their declarations before this header.\n"
        " * Kernel-mode manifests get this same form, since Linux has no PCW.\n"
        " *\n";

static const char *header_file_name(const struct pm_manifest *m, const struct gen_options *o)
{
        return o->header_name ? o->header_name : gen_base_name(m->file);
}

int gen_header(const struct pm_manifest *m, const struct gen_options *o, FILE *f)
{
        struct scratch scratch = { 0 };
        struct hctx h = { .m = m, .o = o, .f = f, .prefix = o->prefix ? o->prefix : "",
                          .scratch = &scratch };
        const char *name = header_file_name(m, o);
        int r = 0;

        put_banner(&h, name,
                   " * The provider's GUID and handle, one PERF_COUNTERSET_INFO + PERF_COUNTER_INFO\n"
                   " * template per counterset, and CounterInitialize() / CounterCleanup(), which\n"
                   " * start the provider with its countersets and stop it.\n"
                   " *\n");
        fputs(" * This header may be included in several translation units of one program,\n"
              " * C or C++: its variables are weak definitions (CTRPP_SELECTANY, Linux's\n"
              " * DECLSPEC_SELECTANY) and its functions are static inline.\n"
              " *\n", f);
        if (pm_any_structs(m))
                fputs(struct_note, f);
        fputs(" * Build against perflib: pkg-config --cflags --libs perflib.\n */\n", f);
        fputs("#ifndef ", f);
        put_guard(f, name);
        fputs("\n#define ", f);
        put_guard(f, name);
        fputs("\n\n#include <errno.h>\n#include <stddef.h>\n\n#include <perflib.h>\n\n", f);
        put_selectany(f);
        if (pm_any_structs(m))
                pm_put_struct_macros(f);
        fputs("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", f);
        put_counter_defines(f, m);
        for (size_t i = 0; i < m->n_providers && r == 0; i++)
                r = put_provider(&h, &m->providers[i]);
        pm_scratch_done(&scratch);
        if (r < 0)
                return r;
        fputs("#ifdef __cplusplus\n}\n#endif\n\n#endif\n", f);
        return finish(f);
}

/* ---- the symbols header (-ch) ---- */

static int put_symbols(FILE *f, const struct pm_provider *p)
{
        struct names n;
        int r = names_init(&n, p);

        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_countersets; i++) {
                const struct pm_counterset *cs = &p->countersets[i];
                fprintf(f, "/* Counterset %s */\n#define %s_NAME ", n.countersets[i], n.countersets[i]);
                gen_put_string(f, cs->name);
                fprintf(f, "\n#define %s_GUID ", n.countersets[i]);
                gen_put_guid(f, &cs->guid);
                fputc('\n', f);
                for (size_t k = 0; k < cs->n_counters; k++) {
                        const struct pm_counter *c = &cs->counters[k];
                        if (c->symbol && *c->symbol)
                                fprintf(f, "#define %s (%u)\n", c->symbol, c->id);
                }
                fputc('\n', f);
        }
        names_done(&n);
        return 0;
}

int gen_counters_header(const struct pm_manifest *m, const struct gen_options *o, FILE *f)
{
        const char *name = o->counters_header_name ? o->counters_header_name : "counters.h";
        struct hctx h = { .m = m, .o = o, .f = f, .prefix = "" };
        int r = 0;

        put_banner(&h, name,
                   " * The manifest's symbols: for each counterset, <Symbol>_NAME (its name, UTF-8)\n"
                   " * and <Symbol>_GUID (an initializer for a GUID), and the id of every counter\n"
                   " * that has a symbol.  Constants only, so it may be included anywhere,\n"
                   " * alongside the provider header too.\n");
        fputs(" */\n#ifndef ", f);
        put_guard(f, name);
        fputs("\n#define ", f);
        put_guard(f, name);
        fputs("\n\n", f);
        for (size_t i = 0; i < m->n_providers && r == 0; i++)
                r = put_symbols(f, &m->providers[i]);
        if (r < 0)
                return r;
        fputs("#endif\n", f);
        return finish(f);
}
