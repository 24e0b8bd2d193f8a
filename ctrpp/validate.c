/* SPDX-License-Identifier: MIT */
/*
 * The rules a manifest must follow beyond what the schema can say: MS-PCQ
 * 2.2.4.2 (base counters, PerfTimeId/PerfFreqId, MultiId, attribute
 * combinations) and the schema's prose (unique GUIDs, ids and symbols).
 * Every rule reports every violation; nothing stops at the first.
 *
 * Where Microsoft's own example manifest breaks a MUST (noDigitGrouping
 * with displayAsHex), the rule is a warning so that the example compiles.
 */
#include <stdlib.h>
#include <string.h>

#include "perfman.h"
#include "suggest.h"

struct vctx {
        struct pm_diags *d;
        const struct pm_provider *p;
        struct pm_counterset *cs;
};

/* ---- naming things in messages ---- */

static const char *cs_label(const struct pm_counterset *cs)
{
        if (cs->symbol && *cs->symbol)
                return cs->symbol;
        if (cs->name && *cs->name)
                return cs->name;
        return cs->guid_text ? cs->guid_text : "?";
}

/* "counter 3 (MY_COUNTER)" or "counter 3"; points into a static buffer. */
static const char *ctr_label(const struct pm_counter *c)
{
        static char buf[600];

        if (c->symbol && *c->symbol)
                snprintf(buf, sizeof(buf), "counter %u (%s)", c->id, c->symbol);
        else if (c->name && *c->name)
                snprintf(buf, sizeof(buf), "counter %u (\"%.500s\")", c->id, c->name);
        else
                snprintf(buf, sizeof(buf), "counter %u", c->id);
        return buf;
}

#define ERR(v, loc, ...) pm_diag((v)->d, PM_ERROR, (loc), __VA_ARGS__)
#define WARN(v, loc, ...) pm_diag((v)->d, PM_WARNING, (loc), __VA_ARGS__)

/* ---- symbols ---- */

/* Words a symbol cannot be: it becomes a C and C++ identifier. */
static const char *const reserved_words[] = {
        "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch",
        "char", "class", "const", "constexpr", "const_cast", "continue", "decltype",
        "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit",
        "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
        "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
        "operator", "or", "private", "protected", "public", "register",
        "reinterpret_cast", "restrict", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this",
        "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union",
        "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while",
        "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic",
        "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
};

static bool is_identifier(const char *s)
{
        if (!*s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
                return false;
        for (s++; *s; s++)
                if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9')))
                        return false;
        return true;
}

static bool is_reserved(const char *s)
{
        for (size_t i = 0; i < sizeof(reserved_words) / sizeof(reserved_words[0]); i++)
                if (strcmp(s, reserved_words[i]) == 0)
                        return true;
        return false;
}

/* what: "provider", "counterset 'X'", "counter 3 (...)"; absent or empty symbols pass. */
static void check_symbol(struct vctx *v, const struct pm_loc *loc, const char *symbol,
                         const char *what)
{
        if (!symbol || !*symbol)
                return;
        if (!is_identifier(symbol))
                ERR(v, loc, "symbol '%s' of %s is not a C identifier", symbol, what);
        else if (is_reserved(symbol))
                ERR(v, loc, "symbol '%s' of %s is a C or C++ keyword", symbol, what);
}

/* ---- counter references ---- */

static const struct pm_counter *find_counter(const struct pm_counterset *cs, uint32_t id)
{
        for (size_t i = 0; i < cs->n_counters; i++)
                if (cs->counters[i].id == id)
                        return &cs->counters[i];
        return NULL;
}

/* The base counter type each fraction or average needs (MS-PCQ 2.2.4.2). */
static uint32_t base_type_for(uint32_t type)
{
        switch (type) {
        case PERF_AVERAGE_TIMER:
        case PERF_AVERAGE_BULK:
                return PERF_AVERAGE_BASE;
        case PERF_LARGE_RAW_FRACTION:
        case PERF_PRECISION_SYSTEM_TIMER:
        case PERF_PRECISION_100NS_TIMER:
                return PERF_LARGE_RAW_BASE;
        case PERF_RAW_FRACTION:
                return PERF_RAW_BASE;
        case PERF_SAMPLE_FRACTION:
                return PERF_SAMPLE_BASE;
        default:
                return 0;
        }
}

static bool needs_time_and_freq(uint32_t type)
{
        return type == PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE || type == PERF_ELAPSED_TIME ||
               type == PERF_OBJ_TIME_TIMER || type == PERF_PRECISION_OBJECT_TIMER;
}

/*
 * MS-PCQ lists PERF_COUNTER_MULTI_TIMER, PERF_100NSEC_MULTI_TIMER and
 * PERF_100NSEC_MULTI_TIMER_INV as needing a MultiId, and its description of
 * PERF_COUNTER_MULTI_TIMER_INV subtracts from "the value of the MultiId
 * counter" too, so all four need one.
 */
static bool needs_multi(uint32_t type)
{
        return type == PERF_COUNTER_MULTI_TIMER || type == PERF_COUNTER_MULTI_TIMER_INV ||
               type == PERF_100NSEC_MULTI_TIMER || type == PERF_100NSEC_MULTI_TIMER_INV;
}

/*
 * MS-PCQ says the MultiId counter MUST be PERF_COUNTER_RAWCOUNT, while
 * winperf.h defines PERF_COUNTER_MULTI_BASE for exactly this divisor (the
 * number of instances a multi timer covers).  Both are accepted: a
 * manifest written either way computes the same value.
 */
static bool valid_multi_type(uint32_t type)
{
        return type == PERF_COUNTER_RAWCOUNT || type == PERF_COUNTER_MULTI_BASE;
}

/* The counter an id attribute names, or NULL after reporting that it names none. */
static const struct pm_counter *resolve_ref(struct vctx *v, const struct pm_counter *c,
                                            const struct pm_u32 *ref, const char *attr)
{
        const struct pm_counter *t = find_counter(v->cs, ref->value);

        if (!t)
                ERR(v, &ref->loc, "%s=\"%u\" of %s in counterset '%s' names no counter",
                    attr, ref->value, ctr_label(c), cs_label(v->cs));
        return t;
}

static void check_base(struct vctx *v, const struct pm_counter *c)
{
        uint32_t want = base_type_for(c->type);

        if (!want) {
                if (c->base_id.set)
                        WARN(v, &c->base_id.loc, "baseID of %s is ignored: %s takes no base counter",
                             ctr_label(c), c->type_name);
                return;
        }
        if (!c->base_id.set) {
                ERR(v, &c->loc, "%s in counterset '%s' is %s, which needs baseID naming a %s counter",
                    ctr_label(c), cs_label(v->cs), c->type_name, pm_counter_type_macro(want));
                return;
        }
        const struct pm_counter *b = resolve_ref(v, c, &c->base_id, "baseID");
        if (b && b->type != want)
                ERR(v, &c->base_id.loc, "baseID of %s names counter %u of type %s; %s needs %s",
                    ctr_label(c), b->id, b->type_name, c->type_name, pm_counter_type_macro(want));
}

static void check_time_ref(struct vctx *v, const struct pm_counter *c, const struct pm_u32 *ref,
                           const char *attr)
{
        if (!needs_time_and_freq(c->type)) {
                if (ref->set)
                        WARN(v, &ref->loc, "%s of %s is ignored: %s does not use it",
                             attr, ctr_label(c), c->type_name);
                return;
        }
        if (!ref->set) {
                ERR(v, &c->loc, "%s in counterset '%s' is %s, which needs %s naming a "
                    "perf_counter_large_rawcount counter", ctr_label(c), cs_label(v->cs),
                    c->type_name, attr);
                return;
        }
        const struct pm_counter *t = resolve_ref(v, c, ref, attr);
        if (t && t->type != PERF_COUNTER_LARGE_RAWCOUNT)
                ERR(v, &ref->loc, "%s of %s names counter %u of type %s; it must be "
                    "perf_counter_large_rawcount", attr, ctr_label(c), t->id, t->type_name);
}

static void check_multi(struct vctx *v, const struct pm_counter *c)
{
        const struct pm_u32 *ref = &c->multi_counter_id;

        if (!needs_multi(c->type)) {
                if (ref->set)
                        WARN(v, &ref->loc, "multiCounterID of %s is ignored: %s does not use it",
                             ctr_label(c), c->type_name);
                return;
        }
        if (!ref->set) {
                ERR(v, &c->loc, "%s in counterset '%s' is %s, which needs multiCounterID naming a "
                    "perf_counter_rawcount or perf_counter_multi_base counter", ctr_label(c),
                    cs_label(v->cs), c->type_name);
                return;
        }
        const struct pm_counter *t = resolve_ref(v, c, ref, "multiCounterID");
        if (t && !valid_multi_type(t->type))
                ERR(v, &ref->loc, "multiCounterID of %s names counter %u of type %s; it must be "
                    "perf_counter_rawcount or perf_counter_multi_base", ctr_label(c), t->id,
                    t->type_name);
}

/* ---- attributes ---- */

/* Bit index of each PERF_ATTRIB_* flag in attrib_loc, and its manifest name. */
enum { A_REFERENCE, A_NO_DISPLAY, A_NO_GROUPING, A_REAL, A_HEX };
static const char *const attrib_names[] = {
        "reference", "noDisplay", "noDigitGrouping", "displayAsReal", "displayAsHex",
};

static bool has(const struct pm_counter *c, int bit)
{
        return c->attrib & (UINT64_C(1) << bit);
}

static void check_attributes(struct vctx *v, const struct pm_counter *c)
{
        static const int display[] = { A_NO_GROUPING, A_REAL, A_HEX };

        if (has(c, A_NO_DISPLAY))
                for (size_t i = 0; i < 3; i++)
                        if (has(c, display[i]))
                                ERR(v, &c->attrib_loc[display[i]],
                                    "%s has both noDisplay and %s: a counter that is not "
                                    "displayed has no display format", ctr_label(c),
                                    attrib_names[display[i]]);
        if (has(c, A_HEX) && has(c, A_REAL))
                ERR(v, &c->attrib_loc[A_REAL], "%s has both displayAsReal and displayAsHex",
                    ctr_label(c));
        /* A MUST that Microsoft's own user-mode example breaks: a warning. */
        if (has(c, A_HEX) && has(c, A_NO_GROUPING))
                WARN(v, &c->attrib_loc[A_NO_GROUPING],
                     "%s has both noDigitGrouping and displayAsHex; MS-PCQ forbids the "
                     "combination, hexadecimal is never grouped", ctr_label(c));
}

/* ---- structs and fields ---- */

static uint32_t find_struct(const struct pm_counterset *cs, const char *name)
{
        for (size_t i = 0; i < cs->n_structs; i++)
                if (cs->structs[i].name && strcmp(cs->structs[i].name, name) == 0)
                        return (uint32_t) i + 1;
        return 0;
}

/* A counter whose struct is not one of its counterset's several: which it meant. */
static void undeclared_struct(struct vctx *v, const struct pm_counter *c)
{
        struct sg_suggest sg;

        sg_begin(&sg, c->struct_name);
        for (size_t i = 0; c->struct_name && i < v->cs->n_structs; i++)
                if (v->cs->structs[i].name)
                        sg_offer(&sg, v->cs->structs[i].name, strlen(v->cs->structs[i].name));
        ERR(v, &c->loc, "%s has field '%s' but %s; counterset '%s' declares %zu%s",
            ctr_label(c), c->field, c->struct_name ? "names an undeclared struct" :
            "no struct attribute", cs_label(v->cs), v->cs->n_structs, sg_hint(&sg));
}

/*
 * A counter's data comes from a field of a declared struct.  Microsoft's
 * tool accepts a counter without `struct` when its counterset declares one
 * struct, and even a `struct` naming a field (OpenZFS); both resolve to the
 * only struct, the latter with a warning.
 */
static void resolve_struct(struct vctx *v, struct pm_counter *c)
{
        if (!c->field && !c->struct_name)
                return;
        if (!c->field) {
                ERR(v, &c->loc, "%s names struct '%s' but no field", ctr_label(c), c->struct_name);
                return;
        }
        if (c->struct_name)
                c->struct_ref = find_struct(v->cs, c->struct_name);
        if (c->struct_ref)
                return;
        if (v->cs->n_structs == 1) {
                c->struct_ref = 1;
                if (c->struct_name)
                        WARN(v, &c->loc, "%s names struct '%s', which counterset '%s' does not "
                             "declare; using its only struct '%s'", ctr_label(c), c->struct_name,
                             cs_label(v->cs), v->cs->structs[0].name);
        } else if (v->cs->n_structs == 0) {
                ERR(v, &c->loc, "%s has field '%s' but counterset '%s' declares no <structs>",
                    ctr_label(c), c->field, cs_label(v->cs));
        } else {
                undeclared_struct(v, c);
        }
}

/* Kernel-mode counters are laid out by a struct; every counter needs its field. */
static void check_layout(struct vctx *v)
{
        size_t with_field = 0;

        for (size_t i = 0; i < v->cs->n_counters; i++)
                with_field += v->cs->counters[i].field != NULL;
        if (!v->p->kernel_mode || with_field == v->cs->n_counters)
                return;
        for (size_t i = 0; i < v->cs->n_counters; i++)
                if (!v->cs->counters[i].field)
                        ERR(v, &v->cs->counters[i].loc, "%s in kernel-mode counterset '%s' has no "
                            "field: kernel-mode counters are laid out by a struct",
                            ctr_label(&v->cs->counters[i]), cs_label(v->cs));
}

/* ---- per counterset ---- */

static void check_counter(struct vctx *v, struct pm_counter *c)
{
        check_symbol(v, &c->loc, c->symbol, ctr_label(c));
        /* The schema lists it, but winperf.h gives it no value (unknown types are the schema's). */
        if (c->type_name && strcmp(c->type_name, "perf_counter_composite") == 0)
                ERR(v, &c->loc, "%s has type perf_counter_composite, which has no counter type "
                    "value in winperf.h and cannot be published", ctr_label(c));
        check_base(v, c);
        check_time_ref(v, c, &c->perf_time_id, "perfTimeID");
        check_time_ref(v, c, &c->perf_freq_id, "perfFreqID");
        check_multi(v, c);
        check_attributes(v, c);
        resolve_struct(v, c);
}

static void check_duplicate_counters(struct vctx *v)
{
        for (size_t i = 0; i < v->cs->n_counters; i++) {
                const struct pm_counter *c = &v->cs->counters[i];
                for (size_t j = 0; j < i; j++) {
                        const struct pm_counter *o = &v->cs->counters[j];
                        if (c->id == o->id)
                                ERR(v, &c->loc, "counter id %u appears twice in counterset '%s' "
                                    "(first at line %u)", c->id, cs_label(v->cs), o->loc.line);
                        if (c->symbol && o->symbol && *c->symbol &&
                            strcmp(c->symbol, o->symbol) == 0)
                                ERR(v, &c->loc, "counter symbol '%s' appears twice in counterset "
                                    "'%s' (first at line %u)", c->symbol, cs_label(v->cs),
                                    o->loc.line);
                }
        }
}

static void check_counterset(struct vctx *v)
{
        char what[600];

        snprintf(what, sizeof(what), "counterset '%s'", cs_label(v->cs));
        check_symbol(v, &v->cs->loc, v->cs->symbol, what);
        for (size_t i = 0; i < v->cs->n_structs; i++) {
                check_symbol(v, &v->cs->structs[i].loc, v->cs->structs[i].name, "a struct");
                check_symbol(v, &v->cs->structs[i].loc, v->cs->structs[i].type, "a struct type");
        }
        check_duplicate_counters(v);
        for (size_t i = 0; i < v->cs->n_counters; i++)
                check_counter(v, &v->cs->counters[i]);
        check_layout(v);
}

/* ---- document-wide ---- */

struct seen {
        const GUID *guid;
        const char *symbol;
        const char *label;
        const struct pm_loc *loc;
};

static void check_unique_counterset(struct vctx *v, const struct seen *all, size_t n,
                                    const struct seen *s)
{
        for (size_t i = 0; i < n; i++) {
                if (memcmp(all[i].guid, s->guid, sizeof(GUID)) == 0)
                        ERR(v, s->loc, "counterset '%s' has the GUID of counterset '%s' "
                            "(line %u); counterset GUIDs must be unique", s->label,
                            all[i].label, all[i].loc->line);
                if (s->symbol && all[i].symbol && *s->symbol &&
                    strcmp(s->symbol, all[i].symbol) == 0)
                        ERR(v, s->loc, "counterset symbol '%s' is used twice (first at line %u)",
                            s->symbol, all[i].loc->line);
        }
}

static void check_unique_countersets(struct vctx *v, const struct pm_manifest *m)
{
        size_t n = 0, total = 0;

        for (size_t i = 0; i < m->n_providers; i++)
                total += m->providers[i].n_countersets;
        struct seen *all = calloc(total ? total : 1, sizeof(*all));
        if (!all) {
                ERR(v, NULL, "out of memory");
                return;
        }
        for (size_t i = 0; i < m->n_providers; i++)
                for (size_t j = 0; j < m->providers[i].n_countersets; j++) {
                        const struct pm_counterset *cs = &m->providers[i].countersets[j];
                        struct seen s = { &cs->guid, cs->symbol, cs_label(cs), &cs->loc };
                        check_unique_counterset(v, all, n, &s);
                        all[n++] = s;
                }
        free(all);
}

static void check_providers(struct vctx *v, const struct pm_manifest *m)
{
        for (size_t i = 0; i < m->n_providers; i++) {
                const struct pm_provider *p = &m->providers[i];
                check_symbol(v, &p->loc, p->symbol, "the provider");
                for (size_t j = 0; j < i; j++)
                        if (memcmp(&m->providers[j].guid, &p->guid, sizeof(GUID)) == 0)
                                ERR(v, &p->loc, "provider GUID %s is used twice (first at line %u)",
                                    p->guid_text ? p->guid_text : "?", m->providers[j].loc.line);
                if (!p->kernel_mode && (!p->symbol || !*p->symbol))
                        WARN(v, &p->loc, "user-mode provider has no symbol; the generated "
                             "header names its handle and GUID after the provider name");
        }
}

void pm_validate(struct pm_manifest *m, struct pm_diags *d)
{
        struct vctx v = { .d = d };

        check_providers(&v, m);
        check_unique_countersets(&v, m);
        for (size_t i = 0; i < m->n_providers; i++) {
                v.p = &m->providers[i];
                for (size_t j = 0; j < v.p->n_countersets; j++) {
                        v.cs = &m->providers[i].countersets[j];
                        check_counterset(&v);
                }
        }
}
