/* SPDX-License-Identifier: MIT */
/*
 * -legacy: the four files Windows Vista's ctrpp writes (the Windows SDK
 * 6.0 PerflibV2SampleProvider was built with them), names and forms kept so
 * that a project's build files and its own code work unchanged:
 *
 *   <base>.h    PROVIDER_GUID_<base>_<p>, CTRSET_GUID_<base>_<p>_<c> and
 *               the variables they initialize (ProviderGuid_..., CtrSetGuid_...,
 *               CtrSet_..., dwCtrSet_..., hDataSource_<base>_<p>), defined
 *               where __INIT_<base>_IMP is defined and extern elsewhere;
 *               PerfAutoInitialize() and PerfAutoCleanup() declared.
 *   <base>.c    defines __INIT_<base>_IMP, includes <base>.h, and defines
 *               ControlCallback_<base>_<p> (callback="custom" or
 *               -NotificationCallback), PerfAutoInitialize, PerfAutoCleanup.
 *   <base>.rc   the STRINGTABLE, IDS_<base>_%05d ids, as Vista wrote it.
 *   <base>_r.h  those ids' #defines.
 *
 * <base> is the manifest's file name without its extension, made an
 * identifier.  The functions are ordinary external definitions, as
 * Windows', so a project that keeps Microsoft's generated .c compiles it
 * against this header instead of ours.  What Linux adds: <base>.c also
 * carries the resource file's data (<Provider>_Description, gen-resource.c)
 * and PerfAutoInitialize publishes it, so the countersets show their names
 * with no install step, as the modern form's do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gen-template.h"
#include "gen.h"

/* The manifest's file name without its extension: the files' names.  Owned by the caller. */
static char *legacy_file_base(const struct pm_manifest *m)
{
        char *copy = strdup(gen_base_name(m->file));

        if (!copy)
                return NULL;
        char *dot = strrchr(copy, '.');
        if (dot && dot != copy)
                *dot = '\0';
        return copy;
}

/* That name made an identifier: the symbols' <base>.  Owned by the caller, NULL on ENOMEM. */
static char *legacy_base(const struct pm_manifest *m)
{
        char *copy = legacy_file_base(m), *base;

        if (!copy)
                return NULL;
        base = gen_symbol_or(copy, NULL, "Counters");
        free(copy);
        return base;
}

static bool has_callback(const struct gen_options *o, const struct pm_provider *p)
{
        return p->callback_custom || o->notification_callback;
}

static int finish(FILE *f, char *base, int r)
{
        free(base);
        if (r == 0 && ferror(f))
                r = -EIO;
        return r;
}

/* ---- <base>.h ---- */

static void put_guid_macro(FILE *f, const char *what, const char *base, size_t p, size_t c,
                           const GUID *g)
{
        fprintf(f, "#define %s_%s_%zu", what, base, p);
        if (c)
                fprintf(f, "_%zu", c);
        fputc(' ', f);
        gen_put_guid(f, g);
        fputc('\n', f);
}

static int put_counterset(const struct hctx *h, const char *base, const struct pm_provider *p,
                          size_t pi, size_t ci)
{
        const struct pm_counterset *cs = &p->countersets[ci - 1];
        bool structs = pm_uses_structs(cs);
        uint32_t tail = 0;
        FILE *f = h->f;
        int r = 0;

        if (structs) {
                pm_put_field_checks(h, cs);
                fputc('\n', f);
        }
        fprintf(f, "typedef struct _CTRSET_%s_%zu_%zu {\n", base, pi, ci);
        fprintf(f, "        PERF_COUNTERSET_INFO CtSet_%s_%zu_%zu;\n", base, pi, ci);
        for (size_t k = 0; k < cs->n_counters; k++)
                fprintf(f, "        PERF_COUNTER_INFO Ctr_%s_%zu_%zu_%zu;\n", base, pi, ci, k + 1);
        fprintf(f, "} CTRSET_%1$s_%2$zu_%3$zu, *PCTRSET_%1$s_%2$zu_%3$zu;\n\n"
                "#ifdef __INIT_%1$s_IMP\n", base, pi, ci);
        put_guid_macro(f, "CTRSET_GUID", base, pi, ci, &cs->guid);
        fprintf(f, "GUID CtrSetGuid_%1$s_%2$zu_%3$zu = CTRSET_GUID_%1$s_%2$zu_%3$zu;\n"
                "CTRSET_%1$s_%2$zu_%3$zu CtrSet_%1$s_%2$zu_%3$zu = {\n"
                "        { CTRSET_GUID_%1$s_%2$zu_%3$zu, PROVIDER_GUID_%1$s_%2$zu, %4$zu, ",
                base, pi, ci, cs->n_counters);
        pm_put_instance_type(f, cs->instance_type);
        fputs(" },\n", f);
        for (size_t k = 0; k < cs->n_counters && r == 0; k++)
                r = pm_put_counter_info(h, cs, &cs->counters[k], structs, &tail);
        fprintf(f, "};\n\nULONG dwCtrSet_%1$s_%2$zu_%3$zu = sizeof(CTRSET_%1$s_%2$zu_%3$zu);\n"
                "#else\n"
                "extern GUID CtrSetGuid_%1$s_%2$zu_%3$zu;\n"
                "extern CTRSET_%1$s_%2$zu_%3$zu CtrSet_%1$s_%2$zu_%3$zu;\n"
                "extern ULONG dwCtrSet_%1$s_%2$zu_%3$zu;\n"
                "#endif\n\n", base, pi, ci);
        return r;
}

static int put_provider(const struct hctx *h, const char *base, size_t pi)
{
        const struct pm_provider *p = &h->m->providers[pi - 1];
        FILE *f = h->f;
        int r = 0;

        fprintf(f, "#ifdef __INIT_%s_IMP\n", base);
        put_guid_macro(f, "PROVIDER_GUID", base, pi, 0, &p->guid);
        fprintf(f, "GUID ProviderGuid_%1$s_%2$zu = PROVIDER_GUID_%1$s_%2$zu;\n"
                "#else\nextern GUID ProviderGuid_%1$s_%2$zu;\n#endif\n\n", base, pi);
        for (size_t ci = 1; ci <= p->n_countersets && r == 0; ci++)
                r = put_counterset(h, base, p, pi, ci);
        fprintf(f, "#ifdef __INIT_%1$s_IMP\nHANDLE hDataSource_%1$s_%2$zu = NULL;\n"
                "#else\nextern HANDLE hDataSource_%1$s_%2$zu;\n#endif\n\n", base, pi);
        if (has_callback(h->o, p))
                fprintf(f, "ULONG ControlCallback_%s_%zu(ULONG RequestCode, PVOID pBuffer, "
                        "ULONG BufferSize);\n\n", base, pi);
        return r;
}

int gen_legacy_header(const struct pm_manifest *m, const struct gen_options *o, FILE *f)
{
        struct scratch scratch = { 0 };
        struct hctx h = { .m = m, .o = o, .f = f, .prefix = "", .scratch = &scratch };
        char *base = legacy_base(m);
        int r = 0;

        if (!base)
                return -ENOMEM;
        fprintf(f,
                "/*\n"
                " * %1$s.h: generated by ctrpp -legacy from %2$s; do not edit.\n"
                " *\n"
                " * The Vista-era form: %1$s.c defines __INIT_%1$s_IMP before it includes\n"
                " * this header, which then defines the GUIDs, templates and handles; every\n"
                " * other file sees them extern.  PerfAutoInitialize() starts the providers\n"
                " * and sets their countersets, PerfAutoCleanup() stops them.\n"
                " *\n"
                " * Build against perflib: pkg-config --cflags --libs perflib.\n"
                " */\n"
                "#ifndef _%1$s_H\n#define _%1$s_H\n\n"
                "#include <stddef.h>\n\n#include <perflib.h>\n\n"
                "/* Windows' name for the request perflib calls PERF_ENUMERATE_INSTANCES. */\n"
                "#ifndef PERF_ENUM_INSTANCES\n#define PERF_ENUM_INSTANCES PERF_ENUMERATE_INSTANCES\n"
                "#endif\n\n", base, gen_base_name(m->file));
        if (pm_any_structs(m))
                pm_put_struct_macros(f);
        fputs("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", f);
        for (size_t pi = 1; pi <= m->n_providers && r == 0; pi++)
                r = put_provider(&h, base, pi);
        fprintf(f, "ULONG PerfAutoInitialize(void);\nULONG PerfAutoCleanup(void);\n\n"
                "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
        pm_scratch_done(&scratch);
        return finish(f, base, r);
}

/* ---- <base>.c ---- */

static const char *const requests[][2] = {
        { "PERF_ADD_COUNTER", "a consumer added one of the provider's counters to a query" },
        { "PERF_REMOVE_COUNTER", "a consumer removed it" },
        { "PERF_ENUM_INSTANCES", "a consumer is about to list a counterset's instances" },
        { "PERF_COLLECT_START", "a consumer is about to read the counters" },
        { "PERF_COLLECT_END", "it has read them" },
};

static void put_callback(FILE *f, const char *base, size_t pi)
{
        fprintf(f,
                "/*\n"
                " * Called before perflib answers a consumer; an error return refuses the\n"
                " * request.  Fill in the cases the provider needs.\n"
                " */\n"
                "ULONG\nControlCallback_%s_%zu(ULONG RequestCode, PVOID pBuffer, ULONG BufferSize)\n"
                "{\n"
                "        ULONG Status = ERROR_SUCCESS;\n\n"
                "        (void) pBuffer;\n"
                "        (void) BufferSize;\n"
                "        switch (RequestCode) {\n", base, pi);
        for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
                fprintf(f, "        case %s:\n                /* %s */\n                break;\n",
                        requests[i][0], requests[i][1]);
        fputs("        default:\n"
              "                Status = ERROR_INVALID_PARAMETER;\n"
              "                break;\n"
              "        }\n"
              "        return Status;\n"
              "}\n\n", f);
}

static void put_initialize_provider(FILE *f, const struct gen_options *o, const char *base,
                                    const struct pm_provider *p, size_t pi, const char *desc)
{
        fprintf(f, "        Status = PerfStartProvider(&ProviderGuid_%1$s_%2$zu, ", base, pi);
        if (has_callback(o, p))
                fprintf(f, "ControlCallback_%s_%zu,\n", base, pi);
        else
                fputs("NULL,\n", f);
        fprintf(f, "                                   &hDataSource_%1$s_%2$zu);\n"
                "        if (Status != ERROR_SUCCESS) {\n"
                "                hDataSource_%1$s_%2$zu = NULL;\n"
                "                goto Cleanup;\n"
                "        }\n", base, pi);
        for (size_t ci = 1; ci <= p->n_countersets; ci++)
                fprintf(f, "        Status = PerfSetCounterSetInfo(hDataSource_%1$s_%2$zu,\n"
                        "                                       &CtrSet_%1$s_%2$zu_%3$zu.CtSet_%1$s_%2$zu_%3$zu,\n"
                        "                                       dwCtrSet_%1$s_%2$zu_%3$zu);\n"
                        "        if (Status != ERROR_SUCCESS)\n"
                        "                goto Cleanup;\n", base, pi, ci);
        fprintf(f, "        r = pl_set_provider_description(hDataSource_%s_%zu, &%s_Description);\n"
                "        if (r < 0) {\n"
                "                Status = r == -ENOMEM || r == -E2BIG ? ERROR_NOT_ENOUGH_MEMORY\n"
                "                                                     : ERROR_INVALID_DATA;\n"
                "                goto Cleanup;\n"
                "        }\n\n", base, pi, desc);
}

static int put_functions(FILE *f, const struct pm_manifest *m, const struct gen_options *o,
                         const char *base)
{
        fputs("ULONG\nPerfAutoCleanup(void)\n{\n", f);
        for (size_t pi = 1; pi <= m->n_providers; pi++)
                fprintf(f, "        if (hDataSource_%1$s_%2$zu != NULL) {\n"
                        "                PerfStopProvider(hDataSource_%1$s_%2$zu);\n"
                        "                hDataSource_%1$s_%2$zu = NULL;\n"
                        "        }\n", base, pi);
        fputs("        return ERROR_SUCCESS;\n}\n\n", f);
        fputs("/* Starts every provider with its countersets and description; all or none. */\n"
              "ULONG\nPerfAutoInitialize(void)\n{\n"
              "        ULONG Status = ERROR_SUCCESS;\n        int r;\n\n", f);
        for (size_t pi = 1; pi <= m->n_providers; pi++) {
                const struct pm_provider *p = &m->providers[pi - 1];
                char *desc = gen_symbol_or(p->symbol, p->name, "Counters");
                if (!desc)
                        return -ENOMEM;
                put_initialize_provider(f, o, base, p, pi, desc);
                free(desc);
        }
        fputs("        return ERROR_SUCCESS;\n\n"
              "Cleanup:\n"
              "        PerfAutoCleanup();\n"
              "        return Status;\n"
              "}\n", f);
        return 0;
}

int gen_legacy_source(const struct pm_manifest *m, const struct gen_options *o, FILE *f)
{
        char *base = legacy_base(m), *file = legacy_file_base(m);
        int r;

        if (!base || !file) {
                free(file);
                return finish(f, base, -ENOMEM);
        }
        fprintf(f,
                "/*\n"
                " * %3$s.c: generated by ctrpp -legacy from %2$s; do not edit.\n"
                " *\n"
                " * Defines what %3$s.h declares: its variables, PerfAutoInitialize() and\n"
                " * PerfAutoCleanup(), and the providers' descriptions, which\n"
                " * PerfAutoInitialize() publishes so readers see the countersets' names.\n"
                " */\n"
                "#define __INIT_%1$s_IMP\n"
                "#include \"%3$s.h\"\n\n"
                "#include <errno.h>\n\n", base, gen_base_name(m->file), file);
        free(file);
        r = gen_put_descriptions(m, "", f);
        for (size_t pi = 1; pi <= m->n_providers && r == 0; pi++)
                if (has_callback(o, &m->providers[pi - 1]))
                        put_callback(f, base, pi);
        if (r == 0)
                r = put_functions(f, m, o, base);
        return finish(f, base, r);
}

/* ---- <base>.rc and <base>_r.h ---- */

/* Calls put(f, base, id, text, locked) for every string of the table, in document order. */
static void for_each_string(FILE *f, const struct pm_manifest *m, const char *base,
                            void (*put)(FILE *, const char *, uint32_t, const char *, bool))
{
        for (size_t pi = 0; pi < m->n_providers; pi++)
                for (size_t ci = 0; ci < m->providers[pi].n_countersets; ci++) {
                        const struct pm_counterset *cs = &m->providers[pi].countersets[ci];
                        put(f, base, cs->res_name_id, cs->name, false);
                        put(f, base, cs->res_name_id + 1, cs->name, true);
                        put(f, base, cs->res_description_id, cs->description, false);
                        for (size_t k = 0; k < cs->n_counters; k++) {
                                const struct pm_counter *c = &cs->counters[k];
                                put(f, base, c->res_name_id, c->name, false);
                                put(f, base, c->res_name_id + 1, c->name, true);
                                put(f, base, c->res_description_id, c->description, false);
                        }
                }
}

static void put_rc_string(FILE *f, const char *base, uint32_t id, const char *text, bool locked)
{
        fprintf(f, "    IDS_%s_%05u \"", base, id);
        /* A resource script doubles its quotes; newlines would end the entry. */
        for (const char *s = text ? text : ""; *s; s++)
                if (*s == '"')
                        fputs("\"\"", f);
                else
                        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
        fputs(locked ? "\" // {Locked} means don't localize\n" : "\"\n", f);
}

static void put_id_define(FILE *f, const char *base, uint32_t id, const char *text, bool locked)
{
        (void) text;
        (void) locked;
        fprintf(f, "#define IDS_%s_%05u %10u\n", base, id, id);
}

int gen_legacy_rc(const struct pm_manifest *m, const struct gen_options *o, FILE *f)
{
        char *base = legacy_base(m), *file = legacy_file_base(m);

        (void) o;
        if (!base || !file) {
                free(file);
                return finish(f, base, -ENOMEM);
        }
        fprintf(f, "//\n// %1$s.rc: generated by ctrpp -legacy from %2$s; do not edit.\n"
                "// The string table, for build files that list it; on Linux the provider\n"
                "// carries its strings itself (%1$s.c).\n//\n"
                "#include \"%1$s_r.h\"\n\nSTRINGTABLE\nBEGIN\n", file, gen_base_name(m->file));
        free(file);
        for_each_string(f, m, base, put_rc_string);
        fputs("END\n", f);
        return finish(f, base, 0);
}

int gen_legacy_ids(const struct pm_manifest *m, const struct gen_options *o, FILE *f)
{
        char *base = legacy_base(m);

        (void) o;
        if (!base)
                return -ENOMEM;
        fprintf(f, "/*\n * %s_r.h: generated by ctrpp -legacy from %s; do not edit.\n"
                " * The string table's ids (%s.rc).\n */\n", base, gen_base_name(m->file), base);
        for_each_string(f, m, base, put_id_define);
        return finish(f, base, 0);
}
