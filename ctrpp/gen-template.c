/* SPDX-License-Identifier: MIT */
/*
 * A counterset's template in the provider header, shared by its modern and
 * its -legacy form: each counter's PERF_COUNTER_INFO values as the
 * PERF_* macros Windows ctrpp writes, wrapped the way it wraps them, and the
 * Offset of a counter in a counterset laid out by <structs>, with the
 * compile-time checks of its field.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gen-template.h"
#include "gen.h"

/* ---- counter template values ---- */

static const char *instance_type_macro(uint32_t t)
{
        switch (t) {
        case PERF_COUNTERSET_SINGLE_INSTANCE:
                return "PERF_COUNTERSET_SINGLE_INSTANCE";
        case PERF_COUNTERSET_MULTI_INSTANCES:
                return "PERF_COUNTERSET_MULTI_INSTANCES";
        case PERF_COUNTERSET_SINGLE_AGGREGATE:
                return "PERF_COUNTERSET_SINGLE_AGGREGATE";
        case PERF_COUNTERSET_MULTI_AGGREGATE:
                return "PERF_COUNTERSET_MULTI_AGGREGATE";
        case PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY:
                return "PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY";
        case PERF_COUNTERSET_INSTANCE_AGGREGATE:
                return "PERF_COUNTERSET_INSTANCE_AGGREGATE";
        default:
                return NULL;
        }
}

void pm_put_instance_type(FILE *f, uint32_t t)
{
        const char *m = instance_type_macro(t);

        if (m)
                fputs(m, f);
        else
                fprintf(f, "%u", t);
}

static void put_type(FILE *f, uint32_t type)
{
        const char *m = pm_counter_type_macro(type);

        if (m)
                fputs(m, f);
        else
                fprintf(f, "0x%08x", type);
}

static void put_attrib(FILE *f, uint64_t attrib)
{
        static const char *const names[] = {
                "PERF_ATTRIB_BY_REFERENCE", "PERF_ATTRIB_NO_DISPLAYABLE",
                "PERF_ATTRIB_NO_GROUP_SEPARATOR", "PERF_ATTRIB_DISPLAY_AS_REAL",
                "PERF_ATTRIB_DISPLAY_AS_HEX",
        };
        bool any = false;

        for (unsigned bit = 0; bit < 5; bit++)
                if (attrib & UINT64_C(1) << bit) {
                        fprintf(f, "%s%s", any ? " | " : "", names[bit]);
                        any = true;
                }
        if (attrib >> 5)
                fprintf(f, "%s0x%" PRIx64 "ULL", any ? " | " : "", attrib >> 5 << 5);
        else if (!any)
                fputc('0', f);
}

static void put_size(FILE *f, uint32_t size)
{
        if (size == 4)
                fputs("sizeof(ULONG)", f);
        else if (size == 8)
                fputs("sizeof(ULONGLONG)", f);
        else
                fprintf(f, "%u", size);
}

static void put_detail(FILE *f, uint32_t level)
{
        if (level == PERF_DETAIL_NOVICE)
                fputs("PERF_DETAIL_NOVICE", f);
        else if (level == PERF_DETAIL_ADVANCED)
                fputs("PERF_DETAIL_ADVANCED", f);
        else
                fprintf(f, "%u", level);
}

/* ---- struct layout ---- */

/*
 * A counterset is laid out by its structs when any of its counters names a
 * field.  Its counter data then holds each declared struct in turn, each at
 * a multiple of 8 bytes, and after them the counters that name no field.
 */
bool pm_uses_structs(const struct pm_counterset *cs)
{
        for (size_t i = 0; i < cs->n_counters; i++)
                if (cs->counters[i].struct_ref > 0 && cs->counters[i].field)
                        return true;
        return false;
}

static const struct pm_struct *struct_of(const struct pm_counterset *cs, const struct pm_counter *c)
{
        if (!c->field || c->struct_ref == 0 || c->struct_ref > cs->n_structs)
                return NULL;
        return &cs->structs[c->struct_ref - 1];
}

/* Where the k-th struct starts: the sizes before it, each rounded up to 8. */
static void put_struct_base(FILE *f, const struct pm_counterset *cs, size_t k)
{
        if (k == 0)
                fputc('0', f);
        for (size_t i = 0; i < k; i++)
                fprintf(f, "%sCTRPP_ALIGN8(sizeof(%s))", i ? " + " : "", cs->structs[i].type);
}

/*
 * The Offset of counter c.  offsetof for a struct field; in a struct-laid
 * counterset, the field-less ones follow the structs, each aligned to its
 * size (tail counts their bytes); 0 everywhere else, which lets
 * PerfSetCounterSetInfo lay the counters out itself.
 */
static void put_offset(FILE *f, const struct pm_counterset *cs, const struct pm_counter *c,
                       bool structs, uint32_t *tail)
{
        const struct pm_struct *s = struct_of(cs, c);

        if (s) {
                size_t k = (size_t) (s - cs->structs);
                if (k > 0) {
                        put_struct_base(f, cs, k);
                        fputs(" + ", f);
                }
                fprintf(f, "offsetof(%s, %s)", s->type, c->field);
        } else if (structs) {
                uint32_t a = c->size >= 8 ? 8 : c->size ? c->size : 1;
                *tail = (*tail + a - 1) / a * a;
                put_struct_base(f, cs, cs->n_structs);
                fprintf(f, " + %u", *tail);
                *tail += c->size;
        } else
                fputc('0', f);
}

void pm_scratch_done(struct scratch *s)
{
        if (s->m)
                fclose(s->m);
        free(s->text);
}

/* The scratch stream, empty; NULL when out of memory. */
static FILE *scratch_reset(struct scratch *s)
{
        if (!s->m)
                s->m = open_memstream(&s->text, &s->size);
        else if (fseeko(s->m, 0, SEEK_SET) != 0)
                return NULL;
        return s->m;
}

/*
 * Writes the ", "-separated items of text (one per line there) after
 * "        { ", wrapped before WRAP_COLUMN under the first item, then " },".
 */
#define WRAP_COLUMN 100

static void put_wrapped(FILE *f, char *text)
{
        size_t col = 10;
        bool first = true;
        char *save = NULL;

        fputs("        { ", f);
        for (char *item = strtok_r(text, "\n", &save); item; first = false) {
                char *next = strtok_r(NULL, "\n", &save);
                /* "," after every item but the last, which " }," follows. */
                size_t len = strlen(item) + (next ? 1 : 3);
                if (!first && col + 1 + len > WRAP_COLUMN) {
                        fputs("\n          ", f);
                        col = 10;
                } else if (!first) {
                        fputc(' ', f);
                        col++;
                }
                fprintf(f, "%s%s", item, next ? "," : "");
                col += strlen(item) + 1;
                item = next;
        }
        fputs(" },\n", f);
}

int pm_put_counter_info(const struct hctx *h, const struct pm_counterset *cs,
                            const struct pm_counter *c, bool structs, uint32_t *tail)
{
        FILE *m = scratch_reset(h->scratch);

        if (!m)
                return -ENOMEM;
        fprintf(m, "%u\n", c->id);
        put_type(m, c->type);
        fputc('\n', m);
        put_attrib(m, c->attrib);
        fputc('\n', m);
        put_size(m, c->size);
        fputc('\n', m);
        put_detail(m, c->detail_level);
        fprintf(m, "\n%d\n", c->default_scale);
        put_offset(m, cs, c, structs, tail);
        if (fflush(m) != 0 || !h->scratch->text)
                return -ENOMEM;
        /*
         * size is where this counter's text ends; an earlier, longer one may
         * follow it.  The buffer always holds one byte past the longest text.
         */
        h->scratch->text[h->scratch->size] = '\0';
        put_wrapped(h->f, h->scratch->text);
        return 0;
}

/*
 * A counter's field must hold its value and be aligned to its size, which
 * PerfSetCounterSetInfo demands: checked at compile time.  A wider field
 * (xdp's UINT64 fields behind perf_counter_rawcount) passes: readers see its
 * first Size bytes, its low-order part on a little-endian machine, and
 * Update<CounterSet>() converts it properly on any.
 */
void pm_put_field_checks(const struct hctx *h, const struct pm_counterset *cs)
{
        for (size_t i = 0; i < cs->n_counters; i++) {
                const struct pm_counter *c = &cs->counters[i];
                const struct pm_struct *s = struct_of(cs, c);
                if (s && c->size > 0)
                        fprintf(h->f, "CTRPP_CHECK_FIELD(%s, %s, %u);\n", s->type, c->field, c->size);
        }
}

/* ---- the macros struct-laid-out templates use ---- */

bool pm_any_structs(const struct pm_manifest *m)
{
        for (size_t i = 0; i < m->n_providers; i++)
                for (size_t j = 0; j < m->providers[i].n_countersets; j++)
                        if (pm_uses_structs(&m->providers[i].countersets[j]))
                                return true;
        return false;
}

static const char struct_macros[] =
        "/* n rounded up to a multiple of 8: where the next struct starts. */\n"
        "#ifndef CTRPP_ALIGN8\n"
        "#define CTRPP_ALIGN8(n) (((n) + 7) / 8 * 8)\n"
        "#endif\n"
        "\n"
        "/* The field of a counter can hold its value, at an offset perflib accepts. */\n"
        "#ifndef CTRPP_CHECK_FIELD\n"
        "#define CTRPP_CHECK_FIELD(type, field, size) \\\n"
        "        PERFLIB_STATIC_ASSERT(sizeof(((type *) 0)->field) >= (size) && \\\n"
        "                              offsetof(type, field) % (size) == 0, \\\n"
        "                              #type \".\" #field \" cannot hold its counter\")\n"
        "#endif\n"
        "\n";

void pm_put_struct_macros(FILE *f)
{
        fputs(struct_macros, f);
}
