/* SPDX-License-Identifier: MIT */
/*
 * The body of the provider header with -legacy: the Vista-era names
 * (ProviderGuid_<manifest>_1, CtrSet_<manifest>_1_1,
 * hDataSource_<manifest>_1, PerfAutoInitialize, PerfAutoCleanup), as
 * inline functions in this one header rather than Vista's separate .c
 * file.  gen-header.c writes what surrounds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gen-legacy.h"
#include "gen-template.h"
#include "gen.h"

/* The Vista-era names (-legacy): <manifest base name>_<provider>[_<counterset>]. */
struct legacy {
        char *base;
};

static int put_legacy_provider(const struct hctx *h, const struct legacy *l,
                               const struct pm_provider *p, size_t pi)
{
        FILE *f = h->f;
        int r = 0;

        fprintf(f, "CTRPP_SELECTANY GUID ProviderGuid_%s_%zu =\n        ", l->base, pi + 1);
        gen_put_guid(f, &p->guid);
        fputs(";\n\n", f);
        for (size_t i = 0; i < p->n_countersets && r == 0; i++) {
                const struct pm_counterset *cs = &p->countersets[i];
                bool structs = pm_uses_structs(cs);
                uint32_t tail = 0;

                fprintf(f, "CTRPP_SELECTANY GUID CtrSetGuid_%s_%zu_%zu =\n        ", l->base, pi + 1,
                        i + 1);
                gen_put_guid(f, &cs->guid);
                fputs(";\n\n", f);
                if (structs) {
                        pm_put_field_checks(h, cs);
                        fputc('\n', f);
                }
                fprintf(f, "typedef struct _CTRSET_%s_%zu_%zu {\n", l->base, pi + 1, i + 1);
                fprintf(f, "        PERF_COUNTERSET_INFO CtSet_%s_%zu_%zu;\n", l->base, pi + 1, i + 1);
                for (size_t k = 0; k < cs->n_counters; k++)
                        fprintf(f, "        PERF_COUNTER_INFO Ctr_%s_%zu_%zu_%zu;\n", l->base, pi + 1,
                                i + 1, k + 1);
                fprintf(f, "} CTRSET_%1$s_%2$zu_%3$zu, *PCTRSET_%1$s_%2$zu_%3$zu;\n\n", l->base, pi + 1,
                        i + 1);
                fprintf(f, "CTRPP_SELECTANY CTRSET_%1$s_%2$zu_%3$zu CtrSet_%1$s_%2$zu_%3$zu = {\n        { ",
                        l->base, pi + 1, i + 1);
                gen_put_guid(f, &cs->guid);
                fputs(",\n          ", f);
                gen_put_guid(f, &p->guid);
                fprintf(f, ",\n          %zu, ", cs->n_counters);
                pm_put_instance_type(f, cs->instance_type);
                fputs(" },\n", f);
                for (size_t k = 0; k < cs->n_counters && r == 0; k++)
                        r = pm_put_counter_info(h, cs, &cs->counters[k], structs, &tail);
                fputs("};\n\n", f);
                fprintf(f, "CTRPP_SELECTANY ULONG dwCtrSet_%1$s_%2$zu_%3$zu =\n"
                        "        sizeof(CTRSET_%1$s_%2$zu_%3$zu);\n\n", l->base, pi + 1, i + 1);
        }
        fprintf(f, "CTRPP_SELECTANY HANDLE hDataSource_%s_%zu = NULL;\n\n", l->base, pi + 1);
        return r;
}

static void put_legacy_functions(const struct hctx *h, const struct legacy *l)
{
        FILE *f = h->f;

        fputs("static inline ULONG\nPerfAutoCleanup(void)\n{\n", f);
        for (size_t pi = 0; pi < h->m->n_providers; pi++)
                fprintf(f,
                        "        if (hDataSource_%1$s_%2$zu != NULL) {\n"
                        "                PerfStopProvider(hDataSource_%1$s_%2$zu);\n"
                        "                hDataSource_%1$s_%2$zu = NULL;\n"
                        "        }\n", l->base, pi + 1);
        fputs("        return ERROR_SUCCESS;\n}\n\n", f);
        fputs("static inline ULONG\nPerfAutoInitialize(void)\n{\n        ULONG Status;\n", f);
        for (size_t pi = 0; pi < h->m->n_providers; pi++) {
                const struct pm_provider *p = &h->m->providers[pi];
                fprintf(f,
                        "\n"
                        "        Status = PerfStartProvider(&ProviderGuid_%1$s_%2$zu, NULL,\n"
                        "                                   &hDataSource_%1$s_%2$zu);\n"
                        "        if (Status != ERROR_SUCCESS) {\n"
                        "                hDataSource_%1$s_%2$zu = NULL;\n"
                        "                PerfAutoCleanup();\n"
                        "                return Status;\n"
                        "        }\n", l->base, pi + 1);
                for (size_t i = 0; i < p->n_countersets; i++)
                        fprintf(f,
                                "        Status = PerfSetCounterSetInfo(hDataSource_%1$s_%2$zu,\n"
                                "                                       &CtrSet_%1$s_%2$zu_%3$zu.CtSet_%1$s_%2$zu_%3$zu,\n"
                                "                                       dwCtrSet_%1$s_%2$zu_%3$zu);\n"
                                "        if (Status != ERROR_SUCCESS) {\n"
                                "                PerfAutoCleanup();\n"
                                "                return Status;\n"
                                "        }\n", l->base, pi + 1, i + 1);
        }
        fputs("\n        return ERROR_SUCCESS;\n}\n\n", f);
}

int pm_put_legacy_body(const struct hctx *h)
{
        struct legacy l = { 0 };
        char *copy = strdup(gen_base_name(h->m->file));
        int r = 0;

        if (!copy)
                return -ENOMEM;
        char *dot = strrchr(copy, '.');
        if (dot && dot != copy)
                *dot = '\0';
        l.base = gen_identifier_from(copy);
        free(copy);
        if (!l.base)
                l.base = strdup("Counters");
        if (!l.base)
                return -ENOMEM;
        for (size_t pi = 0; pi < h->m->n_providers && r == 0; pi++)
                r = put_legacy_provider(h, &l, &h->m->providers[pi], pi);
        if (r == 0)
                put_legacy_functions(h, &l);
        free(l.base);
        return r;
}

