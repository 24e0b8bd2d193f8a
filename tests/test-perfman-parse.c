/* SPDX-License-Identifier: MIT */
/*
 * libperfman's parser: the model it builds from real manifests, and the
 * diagnostics (with their lines) it gives for broken ones.
 *
 * The semantic rules (validate.c) have tests of their own, so this test
 * brings its own pm_validate: the linker then leaves the library's out, and
 * whatever is reported here comes from the parser and the schema alone.
 *
 * One file, because that stand-in must be the only pm_validate linked and
 * every case depends on it.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfman.h"

static unsigned validate_calls;

void pm_validate(struct pm_manifest *m, struct pm_diags *d)
{
        (void) m;
        (void) d;
        validate_calls++;
}

/* ---- helpers ---- */

#define NS "http://schemas.microsoft.com/win/2005/12/counters"

/* Lines 1-5; a counterSet start tag follows on line 6. */
#define HEAD \
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" \
        "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n" \
        "<instrumentation>\n" \
        "<counters xmlns=\"" NS "\" schemaVersion=\"2.0\">\n" \
        "<provider symbol=\"P\" applicationIdentity=\"t.exe\" providerType=\"userMode\" " \
        "providerGuid=\"{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}\">\n"

#define SET6 \
        "<counterSet guid=\"{11111111-2222-3333-4444-555555555555}\" uri=\"T.S\" symbol=\"SET1\" " \
        "name=\"Set\" description=\"d\" instances=\"multiple\">\n"

#define TAIL "</counterSet>\n</provider>\n</counters>\n</instrumentation>\n</instrumentationManifest>\n"

/* Counter lines start at line 7. */
#define GOOD_COUNTER(id) \
        "<counter id=\"" #id "\" uri=\"T.C" #id "\" symbol=\"C" #id "\" name=\"Counter\" " \
        "description=\"d\" type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>\n"

static const char *top_srcdir(void)
{
        const char *s = getenv("top_srcdir");

        return s && *s ? s : "..";
}

static char *src_path(const char *rel)
{
        char *p;

        assert_true(asprintf(&p, "%s/%s", top_srcdir(), rel) > 0);
        return p;
}

static struct pm_manifest *parse_text(const char *text, struct pm_diags **ret_d, int *ret_r)
{
        struct pm_diags *d = pm_diags_new();
        struct pm_manifest *m = NULL;

        assert_non_null(d);
        *ret_r = pm_parse_memory("test.man", text, strlen(text), d, &m);
        *ret_d = d;
        return m;
}

static void print_diags(struct pm_diags *d)
{
        pm_diags_print(d, stdout);
}

static const struct pm_diag *find_diag(const struct pm_diags *d, enum pm_severity sev,
                                       unsigned line, const char *needle)
{
        for (size_t i = 0; i < d->n; i++)
                if (d->items[i].severity == sev && d->items[i].loc.line == line &&
                    strstr(d->items[i].message, needle))
                        return &d->items[i];
        return NULL;
}

/* 1-based column of needle on 1-based line of text. */
static unsigned col_of(const char *text, unsigned line, const char *needle)
{
        const char *l = text, *f, *eol;

        for (unsigned i = 1; i < line; i++) {
                l = strchr(l, '\n');
                assert_non_null(l);
                l++;
        }
        eol = strchr(l, '\n');
        f = strstr(l, needle);
        assert_non_null(f);
        assert_true(!eol || f < eol);
        return (unsigned) (f - l) + 1;
}

/* One error at line (and at col when nonzero) that mentions needle. */
static void expect_error(const char *text, unsigned line, unsigned col, const char *needle)
{
        struct pm_diags *d;
        const struct pm_diag *g;
        int r;
        struct pm_manifest *m = parse_text(text, &d, &r);

        g = find_diag(d, PM_ERROR, line, needle);
        if (!g)
                print_diags(d);
        assert_non_null(g);
        assert_string_equal(g->loc.file, "test.man");
        if (col)
                assert_int_equal(g->loc.col, col);
        /* A schema error still leaves a model for the semantic rules. */
        assert_int_equal(r, 0);
        assert_non_null(m);
        pm_manifest_free(m);
        pm_diags_free(d);
}

static struct pm_manifest *parse_clean_file(const char *rel)
{
        char *path = src_path(rel);
        struct pm_diags *d = pm_diags_new();
        struct pm_manifest *m = NULL;
        int r = pm_parse_file(path, d, &m);

        if (r != 0 || d->n_errors)
                print_diags(d);
        assert_int_equal(r, 0);
        assert_int_equal(d->n_errors, 0);
        assert_non_null(m);
        assert_string_equal(m->file, path);
        pm_diags_free(d);
        free(path);
        return m;
}

static void assert_guid(const GUID *g, uint32_t d1, uint16_t d2, uint16_t d3, const uint8_t d4[8])
{
        assert_int_equal(g->Data1, d1);
        assert_int_equal(g->Data2, d2);
        assert_int_equal(g->Data3, d3);
        assert_memory_equal(g->Data4, d4, 8);
}

/* ---- tables ---- */

static void test_counter_types(void **state)
{
        static const char *const names[] = {
                "perf_counter_counter", "perf_counter_timer", "perf_counter_queuelen_type",
                "perf_counter_large_queuelen_type", "perf_counter_100ns_queuelen_type",
                "perf_counter_obj_time_queuelen_type", "perf_counter_bulk_count",
                "perf_counter_text", "perf_counter_rawcount", "perf_counter_large_rawcount",
                "perf_counter_rawcount_hex", "perf_counter_large_rawcount_hex",
                "perf_sample_fraction", "perf_sample_counter", "perf_counter_timer_inv",
                "perf_sample_base", "perf_average_timer", "perf_average_base",
                "perf_average_bulk", "perf_obj_time_timer", "perf_100nsec_timer",
                "perf_100nsec_timer_inv", "perf_counter_multi_timer",
                "perf_counter_multi_timer_inv", "perf_counter_multi_base",
                "perf_100nsec_multi_timer", "perf_100nsec_multi_timer_inv",
                "perf_raw_fraction", "perf_large_raw_fraction", "perf_raw_base",
                "perf_large_raw_base", "perf_elapsed_time", "perf_counter_delta",
                "perf_counter_large_delta", "perf_precision_system_timer",
                "perf_precision_100ns_timer", "perf_precision_object_timer",
        };
        uint32_t t = 0;
        (void) state;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char upper[64];
                size_t k;

                assert_true(pm_counter_type(names[i], &t));
                for (k = 0; names[i][k]; k++)
                        upper[k] = (char) (names[i][k] >= 'a' && names[i][k] <= 'z' ?
                                           names[i][k] - 32 : names[i][k]);
                upper[k] = 0;
                assert_string_equal(pm_counter_type_macro(t), upper);
        }
        assert_true(pm_counter_type("perf_counter_rawcount", &t));
        assert_int_equal(t, PERF_COUNTER_RAWCOUNT);
        assert_true(pm_counter_type("perf_precision_object_timer", &t));
        assert_int_equal(t, PERF_PRECISION_OBJECT_TIMER);
        t = 7;
        assert_false(pm_counter_type("perf_counter_composite", &t));
        assert_false(pm_counter_type("PERF_COUNTER_RAWCOUNT", &t));
        assert_false(pm_counter_type("", &t));
        assert_false(pm_counter_type(NULL, &t));
        assert_int_equal(t, 7);
        assert_null(pm_counter_type_macro(0xdeadbeef));
}

static void test_guids(void **state)
{
        static const uint8_t d4[8] = { 0x9c, 0x07, 0xfe, 0x25, 0x37, 0x8c, 0x2a, 0x23 };
        static const char *const bad[] = {
                "", "ab8e1320-965a-4cf9-9c07-fe25378c2a23",
                "{ab8e1320-965a-4cf9-9c07-fe25378c2a2}", "{ab8e1320-965a-4cf9-9c07-fe25378c2a234}",
                "{ab8e1320-965a-4cf9-9c07fe25378c2a23}", "{ab8e1320-965a-4cf9-9c07-fe25378c2a23} ",
                "{ab8e132g-965a-4cf9-9c07-fe25378c2a23}", "{ab8e1320-965a-4cf9-9c07-fe25378c2a23",
                " {ab8e1320-965a-4cf9-9c07-fe25378c2a23}", "{1234}",
        };
        GUID g, untouched = { 1, 2, 3, { 4 } };
        (void) state;

        assert_true(pm_parse_guid("{ab8e1320-965a-4cf9-9c07-fe25378c2a23}", &g));
        assert_guid(&g, 0xab8e1320, 0x965a, 0x4cf9, d4);
        assert_true(pm_parse_guid("{AB8E1320-965A-4CF9-9C07-FE25378C2A23}", &g));
        assert_guid(&g, 0xab8e1320, 0x965a, 0x4cf9, d4);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                g = untouched;
                assert_false(pm_parse_guid(bad[i], &g));
                assert_memory_equal(&g, &untouched, sizeof(g));
        }
        assert_false(pm_parse_guid(NULL, &g));
}

/* ---- good manifests ---- */

static void test_spec_usermode(void **state)
{
        static const uint8_t p4[8] = { 0x9c, 0x07, 0xfe, 0x25, 0x37, 0x8c, 0x2a, 0x23 };
        static const uint8_t s4[8] = { 0xb6, 0x96, 0x70, 0x57, 0x76, 0x30, 0xb5, 0xcf };
        unsigned calls = validate_calls;
        struct pm_manifest *m = parse_clean_file("tests/ctrpp/spec/example-usermode.man");
        const struct pm_provider *p;
        const struct pm_counterset *cs;
        const struct pm_counter *c;
        (void) state;

        assert_int_equal(validate_calls, calls + 1);
        assert_string_equal(m->schema_version, "2.0");
        assert_int_equal(m->counters_loc.line, 8);
        assert_int_equal(m->counters_loc.col, 1);
        assert_int_equal(m->n_providers, 1);
        p = &m->providers[0];
        assert_int_equal(p->loc.line, 11);
        assert_ptr_equal(p->loc.file, m->file);
        assert_guid(&p->guid, 0xab8e1320, 0x965a, 0x4cf9, p4);
        assert_string_equal(p->guid_text, "{ab8e1320-965a-4cf9-9c07-fe25378c2a23}");
        assert_string_equal(p->symbol, "MY_PROVIDER");
        assert_string_equal(p->name, "Counters");
        assert_string_equal(p->application_identity, "myprovider.exe");
        assert_true(p->callback_custom);
        assert_false(p->kernel_mode);
        assert_false(p->resource_base.set);
        assert_int_equal(p->n_countersets, 2);

        cs = &p->countersets[0];
        assert_int_equal(cs->loc.line, 17);
        assert_guid(&cs->guid, 0xdd36a036, 0xc923, 0x4794, s4);
        assert_string_equal(cs->symbol, "MY_LOGICALDISK");
        assert_string_equal(cs->uri, "Microsoft.Windows.System.PerfCounters.MyCounterSet1");
        assert_string_equal(cs->name, "My LogicalDisk");
        assert_string_equal(cs->description, "This is a sample counter set with multiple instances.");
        assert_true(cs->name_id.set);
        assert_int_equal(cs->name_id.value, 100);
        assert_int_equal(cs->name_id.loc.line, 22);
        assert_int_equal(cs->name_id.loc.col, 1);
        assert_true(cs->description_id.set);
        assert_int_equal(cs->description_id.value, 102);
        assert_string_equal(cs->instances_name, "multiple");
        assert_int_equal(cs->instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
        assert_int_equal(cs->n_structs, 0);
        assert_int_equal(cs->n_counters, 3);

        c = &cs->counters[0];
        assert_int_equal(c->loc.line, 26);
        assert_int_equal(c->id, 1);
        assert_string_equal(c->symbol, "MY_LOGICALDISK_FREE_MB");
        assert_string_equal(c->name, "My Free Megabytes");
        assert_int_equal(c->name_id.value, 104);
        assert_int_equal(c->description_id.value, 106);
        assert_string_equal(c->type_name, "perf_counter_rawcount");
        assert_int_equal(c->type, PERF_COUNTER_RAWCOUNT);
        assert_int_equal(c->size, 4);
        assert_int_equal(c->detail_level, PERF_DETAIL_NOVICE);
        assert_int_equal(c->default_scale, 1);
        assert_int_equal(c->aggregate, PM_AGG_ABSENT);
        assert_int_equal(c->attrib, 0);
        assert_false(c->base_id.set);
        assert_null(c->struct_name);
        assert_null(c->field);

        c = &cs->counters[1];
        assert_int_equal(c->type, PERF_AVERAGE_TIMER);
        assert_int_equal(c->detail_level, PERF_DETAIL_ADVANCED);
        assert_true(c->base_id.set);
        assert_int_equal(c->base_id.value, 3);
        assert_int_equal(c->base_id.loc.line, 47);
        assert_int_equal(c->attrib, PERF_ATTRIB_BY_REFERENCE | PERF_ATTRIB_DISPLAY_AS_REAL);
        assert_int_equal(c->attrib_loc[0].line, 51);
        assert_int_equal(c->attrib_loc[3].line, 52);
        assert_int_equal(c->attrib_loc[1].line, 0);

        c = &cs->counters[2];
        assert_null(c->name);
        assert_null(c->description);
        assert_false(c->name_id.set);
        assert_int_equal(c->type, PERF_AVERAGE_BASE);
        assert_int_equal(c->default_scale, 0);
        assert_int_equal(c->attrib, PERF_ATTRIB_NO_DISPLAYABLE);

        cs = &p->countersets[1];
        assert_string_equal(cs->symbol, "MY_SYSTEMOBJECTS");
        assert_string_equal(cs->instances_name, "single");
        assert_int_equal(cs->instance_type, PERF_COUNTERSET_SINGLE_INSTANCE);
        assert_int_equal(cs->name_id.value, 120);
        assert_int_equal(cs->n_counters, 5);
        c = &cs->counters[0];
        assert_int_equal(c->attrib, PERF_ATTRIB_NO_GROUP_SEPARATOR | PERF_ATTRIB_DISPLAY_AS_HEX);
        assert_int_equal(c->attrib_loc[2].line, 87);
        assert_int_equal(c->attrib_loc[4].line, 88);
        c = &cs->counters[2];
        assert_int_equal(c->type, PERF_ELAPSED_TIME);
        assert_int_equal(c->size, 8);
        assert_true(c->perf_time_id.set);
        assert_int_equal(c->perf_time_id.value, 4);
        assert_true(c->perf_freq_id.set);
        assert_int_equal(c->perf_freq_id.value, 5);
        assert_false(c->multi_counter_id.set);
        c = &cs->counters[4];
        assert_int_equal(c->id, 5);
        assert_int_equal(c->type, PERF_COUNTER_LARGE_RAWCOUNT);
        assert_int_equal(c->size, 8);
        pm_manifest_free(m);
}

static void test_spec_kernelmode(void **state)
{
        struct pm_manifest *m = parse_clean_file("tests/ctrpp/spec/example-kernelmode.man");
        const struct pm_provider *p = &m->providers[0];
        const struct pm_counterset *cs = &p->countersets[0];
        (void) state;

        assert_true(p->kernel_mode);
        assert_false(p->callback_custom);
        assert_null(p->symbol);
        assert_int_equal(cs->n_structs, 1);
        assert_string_equal(cs->structs[0].name, "LogicalDiskData");
        assert_string_equal(cs->structs[0].type, "MY_LOGICALDISK_DATA");
        assert_int_equal(cs->structs[0].loc.line, 25);
        assert_string_equal(cs->counters[0].field, "FreeMegabytes");
        assert_null(cs->counters[0].symbol);
        assert_null(cs->counters[0].struct_name);
        pm_manifest_free(m);
}

static bool is_manifest(const char *name)
{
        size_t n = strlen(name);

        return n > 4 && strcmp(name + n - 4, ".man") == 0;
}

/* Every manifest of a directory reads without an error; returns how many there were. */
static size_t parse_directory(const char *rel)
{
        char *dir = src_path(rel);
        DIR *dp = opendir(dir);
        struct dirent *e;
        size_t n = 0;

        assert_non_null(dp);
        while ((e = readdir(dp))) {
                char *file;
                struct pm_manifest *m;

                if (!is_manifest(e->d_name))
                        continue;
                assert_true(asprintf(&file, "%s/%s", rel, e->d_name) > 0);
                printf("# %s\n", file);
                m = parse_clean_file(file);
                assert_true(m->n_providers >= 1);
                for (size_t i = 0; i < m->n_providers; i++)
                        for (size_t j = 0; j < m->providers[i].n_countersets; j++)
                                assert_true(m->providers[i].countersets[j].n_counters >= 1);
                pm_manifest_free(m);
                free(file);
                n++;
        }
        closedir(dp);
        free(dir);
        return n;
}

static void test_corpus(void **state)
{
        (void) state;

        assert_true(parse_directory("tests/ctrpp/corpus") >= 17);
        assert_int_equal(parse_directory("tests/ctrpp/spec"), 2);
        assert_true(parse_directory("tests/ctrpp/good") >= 1);
}

/* UTF-8 with a BOM, no schemaVersion, no symbols, $(string.X) names. */
static void test_string_table(void **state)
{
        struct pm_manifest *m = parse_clean_file("tests/ctrpp/corpus/dotnet__corefx__provider.man");
        const struct pm_counterset *cs = &m->providers[0].countersets[0];
        (void) state;

        assert_null(m->schema_version);
        assert_null(m->providers[0].symbol);
        assert_null(cs->symbol);
        assert_int_equal(cs->loc.line, 14);
        assert_int_equal(cs->loc.col, 17);
        assert_string_equal(cs->name, "Typing");
        assert_string_equal(cs->description, "Captures simple typing metrics.");
        assert_int_equal(cs->n_counters, 6);
        assert_string_equal(cs->counters[0].name, "Total Words Typed");
        assert_string_equal(cs->counters[4].description,
                            "The percent of words that contain the letter A in the last interval.");
        assert_int_equal(cs->counters[4].type, PERF_SAMPLE_FRACTION);
        assert_int_equal(cs->counters[4].attrib, PERF_ATTRIB_DISPLAY_AS_REAL);
        assert_null(cs->counters[5].name);
        assert_int_equal(cs->counters[5].type, PERF_SAMPLE_BASE);
        pm_manifest_free(m);
}

static const char vista[] =
        "<instrumentationManifest>\n"
        "  <instrumentation>\n"
        "    <counters>\n"
        "      <provider providerName=\"Sample\" callback = \"custom\"\n"
        "                applicationIdentity=\"s.exe\" providerType=\"userMode\"\n"
        "                providerGuid=\"{ffeeddbb-965a-4cf9-9c07-fe25378c2a23}\">\n"
        "        <counterSet guid=\"{ffeeddbb-c923-4794-b696-70577630b5cf}\" uri=\"T.S\"\n"
        "                    name=\"$(string.Set.name)\" description=\"$(string.Set.description)\"\n"
        "                    instances=\"globalAggregateHistory\">\n"
        "          <counter id=\"0x10\" uri=\"T.S.C\" name=\"$(string.C.name)\"\n"
        "                   description=\"plain\" type=\"perf_raw_base\" aggregate=\"max\"\n"
        "                   detailLevel=\"standard\" defaultScale=\"-3\">\n"
        "            <counterAttributes><counterAttribute name=\"noDisplay\"/></counterAttributes>\n"
        "          </counter>\n"
        "%s"
        "        </counterSet>\n"
        "      </provider>\n"
        "    </counters>\n"
        "  </instrumentation>\n"
        "  <localization>\n"
        "    <resources culture=\"de-DE\"><stringTable>\n"
        "      <string id=\"Set.name\" value=\"Falsch\"/>\n"
        "    </stringTable></resources>\n"
        "    <resources culture=\"en-US\"><stringTable>\n"
        "      <string id=\"Set.name\" value=\"Test Set\"/>\n"
        "      <string id=\"Set.description\" value=\"A set &amp; more\"/>\n"
        "      <string id=\"C.name\" value=\"Base\"/>\n"
        "    </stringTable></resources>\n"
        "  </localization>\n"
        "</instrumentationManifest>\n";

static char *vista_with(const char *extra)
{
        char *t;

        assert_true(asprintf(&t, vista, extra) > 0);
        return t;
}

static void test_no_namespace(void **state)
{
        char *text = vista_with("");
        struct pm_diags *d;
        int r;
        struct pm_manifest *m = parse_text(text, &d, &r);
        const struct pm_provider *p;
        const struct pm_counter *c;
        (void) state;

        if (d->n)
                print_diags(d);
        assert_int_equal(r, 0);
        assert_int_equal(d->n, 0);
        p = &m->providers[0];
        assert_string_equal(p->name, "Sample");
        assert_true(p->callback_custom);
        assert_string_equal(p->countersets[0].name, "Test Set");
        assert_string_equal(p->countersets[0].description, "A set & more");
        assert_int_equal(p->countersets[0].instance_type, PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY);
        c = &p->countersets[0].counters[0];
        assert_int_equal(c->id, 16);
        assert_string_equal(c->name, "Base");
        assert_string_equal(c->description, "plain");
        assert_int_equal(c->aggregate, PM_AGG_MAX);
        assert_int_equal(c->default_scale, -3);
        assert_int_equal(c->attrib, PERF_ATTRIB_NO_DISPLAYABLE);
        assert_int_equal(c->attrib_loc[1].line, 13);
        assert_int_equal(c->attrib_loc[1].col, 32);
        assert_int_equal(c->loc.line, 10);
        assert_int_equal(c->loc.col, 11);
        pm_manifest_free(m);
        pm_diags_free(d);
        free(text);

        /* Without a namespace the schema still applies (line 15). */
        text = vista_with("          <counter id=\"2\" uri=\"T.S.D\" type=\"perf_raw_base\"/>\n");
        expect_error(text, 15, 11, "detailLevel");
        free(text);
}

static void test_bom(void **state)
{
        static const char text[] = "\xEF\xBB\xBF" HEAD SET6 GOOD_COUNTER(1) TAIL;
        struct pm_diags *d;
        int r;
        struct pm_manifest *m = parse_text(text, &d, &r);
        (void) state;

        assert_int_equal(r, 0);
        assert_int_equal(d->n, 0);
        assert_int_equal(m->counters_loc.line, 4);
        assert_int_equal(m->providers[0].countersets[0].counters[0].loc.line, 7);
        assert_string_equal(m->providers[0].countersets[0].counters[0].symbol, "C1");
        pm_manifest_free(m);
        pm_diags_free(d);
}

/* Windows tools save manifests as UTF-16; positions still come out right. */
static void test_utf16(void **state)
{
        static const char text[] =
                "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n"
                "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
                "<instrumentation>\n"
                "<counters xmlns=\"" NS "\" schemaVersion=\"2.0\">\n"
                "<provider symbol=\"P\" applicationIdentity=\"t.exe\" "
                "providerGuid=\"{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}\">\n"
                SET6
                "<counter id=\"1\" uri=\"u\" name=\"Gr\xC3\xB6\xC3\x9F" "e \xF0\x9F\x98\x80\" "
                "type=\"perf_counter_rawcount\" detailLevel=\"standard\" defaultScale=\"11\"/>\n"
                TAIL;
        size_t n = strlen(text);
        unsigned char *le = malloc(2 * n + 8), *w = le;
        struct pm_diags *d = pm_diags_new();
        struct pm_manifest *m = NULL;
        const struct pm_diag *g;
        int r;
        (void) state;

        /* A hand-made UTF-8 to UTF-16LE conversion of the text above. */
        *w++ = 0xFF;
        *w++ = 0xFE;
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char) text[i];
                uint32_t u;
                if (c < 0x80)
                        u = c, i += 1;
                else if (c < 0xE0)
                        u = (uint32_t) (c & 0x1F) << 6 | (text[i + 1] & 0x3F), i += 2;
                else if (c < 0xF0)
                        u = (uint32_t) (c & 0x0F) << 12 | (uint32_t) (text[i + 1] & 0x3F) << 6 |
                            (text[i + 2] & 0x3F), i += 3;
                else
                        u = (uint32_t) (c & 0x07) << 18 | (uint32_t) (text[i + 1] & 0x3F) << 12 |
                            (uint32_t) (text[i + 2] & 0x3F) << 6 | (text[i + 3] & 0x3F), i += 4;
                if (u >= 0x10000) {
                        uint32_t hi = 0xD800 + ((u - 0x10000) >> 10), lo = 0xDC00 + (u & 0x3FF);
                        *w++ = (unsigned char) hi;
                        *w++ = (unsigned char) (hi >> 8);
                        u = lo;
                }
                *w++ = (unsigned char) u;
                *w++ = (unsigned char) (u >> 8);
        }
        r = pm_parse_memory("test.man", le, (size_t) (w - le), d, &m);
        assert_int_equal(r, 0);
        assert_string_equal(m->providers[0].countersets[0].counters[0].name,
                            "Gr\xC3\xB6\xC3\x9F" "e \xF0\x9F\x98\x80");
        g = find_diag(d, PM_ERROR, 7, "defaultScale");
        assert_non_null(g);
        /* Columns count characters: "Größe 😀" is 7 of them. */
        assert_int_equal(g->loc.col, col_of(text, 7, "defaultScale") - 5);
        pm_manifest_free(m);
        pm_diags_free(d);
        free(le);
}

/* ---- broken manifests ---- */

static void test_malformed(void **state)
{
        static const char text[] = HEAD SET6 GOOD_COUNTER(1)
                "<counter id=\"2\" uri=\"x\" type=\"perf_counter_rawcount\" detailLevel=\"standard\"\n"
                TAIL;
        struct pm_diags *d = pm_diags_new();
        struct pm_manifest *m = NULL;
        char *name = strdup("malformed.man");
        const struct pm_diag *g;
        (void) state;

        assert_int_equal(pm_parse_memory(name, text, strlen(text), d, &m), -EBADMSG);
        assert_null(m);
        assert_true(d->n_errors >= 1);
        g = find_diag(d, PM_ERROR, 8, "counter");
        if (!g)
                print_diags(d);
        assert_non_null(g);
        assert_int_equal(g->loc.col, 1);
        /* The diagnostics outlive the parse: they name the caller's string. */
        assert_ptr_equal(g->loc.file, name);
        pm_diags_free(d);
        free(name);
}

static void test_not_a_manifest(void **state)
{
        static const char *const texts[] = {
                "", "not xml at all\n", "<a><b></a>\n",
                "<instrumentationManifest><instrumentation/></instrumentationManifest>\n",
                /* No DTD, so no entities to expand. */
                "<!DOCTYPE instrumentationManifest [ <!ENTITY e SYSTEM \"/etc/passwd\"> ]>\n"
                HEAD SET6 "<counter id=\"1\" uri=\"u\" name=\"&e;\"/>\n" TAIL,
        };
        (void) state;

        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                struct pm_diags *d = pm_diags_new();
                struct pm_manifest *m = NULL;

                assert_int_equal(pm_parse_memory("x.man", texts[i], strlen(texts[i]), d, &m),
                                 -EBADMSG);
                assert_null(m);
                assert_true(d->n_errors >= 1);
                pm_diags_free(d);
        }
}

static void test_bad_guid(void **state)
{
        static const char text[] = HEAD
                "<counterSet guid=\"{1234}\" uri=\"T.S\" symbol=\"SET1\" name=\"S\" description=\"d\">\n"
                GOOD_COUNTER(1) TAIL;
        struct pm_diags *d;
        int r;
        struct pm_manifest *m;
        (void) state;

        expect_error(text, 6, col_of(text, 6, "guid="), "{1234}");
        m = parse_text(text, &d, &r);
        assert_int_equal(d->n_errors, 1);
        assert_string_equal(m->providers[0].countersets[0].guid_text, "{1234}");
        assert_int_equal(m->providers[0].countersets[0].guid.Data1, 0);
        assert_int_equal(m->providers[0].countersets[0].n_counters, 1);
        pm_manifest_free(m);
        pm_diags_free(d);
}

static void test_unknown_type(void **state)
{
        static const char text[] = HEAD SET6
                "<counter id=\"1\" uri=\"u\" symbol=\"C1\" type=\"perf_counter_bogus\" "
                "detailLevel=\"standard\"/>\n" TAIL;
        struct pm_diags *d;
        int r;
        struct pm_manifest *m;
        (void) state;

        expect_error(text, 7, col_of(text, 7, "type="), "perf_counter_bogus");
        m = parse_text(text, &d, &r);
        /* Reported once: libxml2's restatement of the facet is dropped. */
        assert_int_equal(d->n_errors, 1);
        assert_non_null(strstr(d->items[0].message, "counter 1 (C1) in counterset 'SET1'"));
        assert_string_equal(m->providers[0].countersets[0].counters[0].type_name, "perf_counter_bogus");
        assert_int_equal(m->providers[0].countersets[0].counters[0].type, 0);
        pm_manifest_free(m);
        pm_diags_free(d);
}

static void test_scale(void **state)
{
        static const char text[] = HEAD SET6
                "<counter id=\"1\" uri=\"u\" type=\"perf_counter_rawcount\" detailLevel=\"standard\" "
                "defaultScale=\"11\"/>\n" TAIL;
        (void) state;

        expect_error(text, 7, col_of(text, 7, "defaultScale"), "defaultScale");
}

static void test_long_name(void **state)
{
        char name[1025], *text;
        struct pm_diags *d;
        int r;
        struct pm_manifest *m;
        (void) state;

        memset(name, 'N', 1024);
        name[1024] = 0;
        assert_true(asprintf(&text, HEAD SET6 "<counter id=\"1\" uri=\"u\" name=\"%s\" "
                             "type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>\n" TAIL,
                             name) > 0);
        expect_error(text, 7, col_of(text, 7, "name="), "'name'");
        m = parse_text(text, &d, &r);
        assert_int_equal(d->n_errors, 1);
        /* The message quotes the value, but not all of it. */
        assert_true(strlen(d->items[0].message) < 400);
        pm_manifest_free(m);
        pm_diags_free(d);
        free(text);

        /* 1023 characters are allowed. */
        name[1023] = 0;
        assert_true(asprintf(&text, HEAD SET6 "<counter id=\"1\" uri=\"u\" name=\"%s\" "
                             "type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>\n" TAIL,
                             name) > 0);
        m = parse_text(text, &d, &r);
        assert_int_equal(d->n, 0);
        assert_int_equal(strlen(m->providers[0].countersets[0].counters[0].name), 1023);
        pm_manifest_free(m);
        pm_diags_free(d);
        free(text);
}

static void test_missing_attribute(void **state)
{
        static const char text[] = HEAD SET6 GOOD_COUNTER(1)
                "  <counter id=\"2\"\n"
                "           uri=\"u\" type=\"perf_counter_rawcount\"/>\n" TAIL;
        (void) state;

        /* At the start of the multi-line start tag, not at its end. */
        expect_error(text, 8, 3, "detailLevel");
}

static void test_unresolved_string(void **state)
{
        static const char text[] = HEAD SET6
                "<counter id=\"1\" uri=\"u\" name=\"$(string.Missing)\" "
                "type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>\n" TAIL;
        (void) state;

        expect_error(text, 7, col_of(text, 7, "name="), "'Missing'");
}

static void test_values(void **state)
{
        static const char text[] = HEAD SET6
                "<counter id=\"0xFFFFFFFF\" uri=\"u\" type=\"perf_counter_text\" "
                "detailLevel=\"advanced\" nameID=\"4294967295\" descriptionID=\"0X1a\" "
                "multiCounterID=\"7\" aggregate=\"undefined\" struct=\"S\" field=\"f\"/>\n"
                "<counter id=\"4294967296\" uri=\"u\" type=\"perf_counter_rawcount\" "
                "detailLevel=\"standard\" baseID=\"0x123456789\" perfTimeID=\"+1\"/>\n" TAIL;
        struct pm_diags *d;
        int r;
        struct pm_manifest *m = parse_text(text, &d, &r);
        const struct pm_counter *c = &m->providers[0].countersets[0].counters[0];
        (void) state;

        assert_null(find_diag(d, PM_ERROR, 7, ""));
        assert_int_equal(c->id, 0xFFFFFFFF);
        assert_int_equal(c->name_id.value, 0xFFFFFFFF);
        assert_int_equal(c->name_id.loc.col, col_of(text, 7, "nameID"));
        assert_int_equal(c->description_id.value, 0x1a);
        assert_int_equal(c->multi_counter_id.value, 7);
        assert_int_equal(c->aggregate, PM_AGG_UNDEFINED);
        assert_int_equal(c->type, PERF_COUNTER_TEXT);
        assert_int_equal(c->size, 0);
        assert_int_equal(c->detail_level, PERF_DETAIL_ADVANCED);
        assert_string_equal(c->struct_name, "S");
        assert_string_equal(c->field, "f");
        /* Out of range: the schema says so, the model holds nothing. */
        c++;
        assert_int_equal(c->id, 0);
        assert_false(c->base_id.set);
        assert_false(c->perf_time_id.set);
        assert_non_null(find_diag(d, PM_ERROR, 8, "'id'"));
        assert_non_null(find_diag(d, PM_ERROR, 8, "'baseID'"));
        assert_non_null(find_diag(d, PM_ERROR, 8, "'+1' is not a valid value of the union type 'UInt32Type'"));
        pm_manifest_free(m);
        pm_diags_free(d);
}

/* libxml2 must never print: everything it says becomes a diagnostic. */
static void test_quiet(void **state)
{
        static const char *const texts[] = {
                "<a><b></a>\n",
                HEAD SET6 "<counter id=\"x\"/>\n<bogus/>\n" TAIL,
        };
        char path[] = "/tmp/test-perfman-parse.XXXXXX";
        int fd = mkstemp(path), saved = dup(2);
        struct stat st;
        (void) state;

        assert_true(fd >= 0 && saved >= 0);
        fflush(stderr);
        assert_int_equal(dup2(fd, 2), 2);
        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                struct pm_diags *d = pm_diags_new();
                struct pm_manifest *m = NULL;

                pm_parse_memory("q.man", texts[i], strlen(texts[i]), d, &m);
                assert_true(d->n_errors >= 1);
                pm_manifest_free(m);
                pm_diags_free(d);
        }
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 0);
        close(fd);
        unlink(path);
}

static void test_free_null(void **state)
{
        (void) state;
        pm_manifest_free(NULL);
}

static void test_missing_file(void **state)
{
        struct pm_diags *d = pm_diags_new();
        struct pm_manifest *m = NULL;
        (void) state;

        assert_int_equal(pm_parse_file("/nonexistent/x.man", d, &m), -ENOENT);
        assert_null(m);
        pm_diags_free(d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_counter_types),
                cmocka_unit_test(test_guids),
                cmocka_unit_test(test_spec_usermode),
                cmocka_unit_test(test_spec_kernelmode),
                cmocka_unit_test(test_corpus),
                cmocka_unit_test(test_string_table),
                cmocka_unit_test(test_no_namespace),
                cmocka_unit_test(test_bom),
                cmocka_unit_test(test_utf16),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_not_a_manifest),
                cmocka_unit_test(test_bad_guid),
                cmocka_unit_test(test_unknown_type),
                cmocka_unit_test(test_scale),
                cmocka_unit_test(test_long_name),
                cmocka_unit_test(test_missing_attribute),
                cmocka_unit_test(test_unresolved_string),
                cmocka_unit_test(test_values),
                cmocka_unit_test(test_quiet),
                cmocka_unit_test(test_free_null),
                cmocka_unit_test(test_missing_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
