/* SPDX-License-Identifier: MIT */
/*
 * ctrpp's generators and resource-id numbering, over manifests built by hand
 * (so that they do not depend on the parser): the key lines of each output,
 * and a golden compile: the outputs of a user-mode and a kernel-mode manifest
 * compiled as C and C++ with -Wall -Wextra -Werror, included in several
 * translation units linked into one program, which then checks that there
 * is one provider handle, that CounterInitialize hands perflib the templates
 * it should, and that the self-description reads back right.
 *
 * One file: every case works on the same hand-built manifests, and the
 * golden compile needs all of them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gen.h"
#include "perfman.h"

/* ---- manifests by hand ---- */

#define CAPACITY 16

static char *dup_str(const char *s)
{
        char *r;

        if (!s)
                return NULL;
        r = strdup(s);
        assert_non_null(r);
        return r;
}

static void *zalloc(size_t n, size_t size)
{
        void *p = calloc(n, size);

        assert_non_null(p);
        return p;
}

static struct pm_manifest *manifest_new(const char *file, const char *schema_version)
{
        struct pm_manifest *m = zalloc(1, sizeof(*m));

        m->file = dup_str(file);
        m->schema_version = dup_str(schema_version);
        m->providers = zalloc(CAPACITY, sizeof(*m->providers));
        return m;
}

static struct pm_provider *add_provider(struct pm_manifest *m, const char *guid, const char *symbol,
                                        const char *name, bool custom, bool kernel)
{
        struct pm_provider *p = &m->providers[m->n_providers++];

        p->guid_text = dup_str(guid);
        assert_true(pm_parse_guid(guid, &p->guid));
        p->symbol = dup_str(symbol);
        p->name = dup_str(name ? name : "Counters");
        p->application_identity = dup_str("myprovider.exe");
        p->callback_custom = custom;
        p->kernel_mode = kernel;
        p->countersets = zalloc(CAPACITY, sizeof(*p->countersets));
        return p;
}

static struct pm_counterset *add_counterset(struct pm_provider *p, const char *guid,
                                            const char *symbol, const char *name,
                                            const char *instances, uint32_t instance_type)
{
        struct pm_counterset *cs = &p->countersets[p->n_countersets++];

        cs->guid_text = dup_str(guid);
        assert_true(pm_parse_guid(guid, &cs->guid));
        cs->symbol = dup_str(symbol);
        cs->uri = dup_str("Test.Set");
        cs->name = dup_str(name);
        cs->description = dup_str("A counterset.");
        cs->instances_name = dup_str(instances);
        cs->instance_type = instance_type;
        cs->counters = zalloc(CAPACITY, sizeof(*cs->counters));
        cs->structs = zalloc(CAPACITY, sizeof(*cs->structs));
        return cs;
}

static struct pm_counter *add_counter(struct pm_counterset *cs, uint32_t id, const char *symbol,
                                      const char *name, const char *type_name)
{
        struct pm_counter *c = &cs->counters[cs->n_counters++];

        c->id = id;
        c->symbol = dup_str(symbol);
        c->uri = dup_str("Test.Set.Counter");
        c->name = dup_str(name);
        c->description = name ? dup_str("A counter.") : NULL;
        c->type_name = dup_str(type_name);
        assert_true(pm_counter_type(type_name, &c->type));
        switch (c->type & PERF_SIZE_VARIABLE_LEN) {
        case PERF_SIZE_DWORD:
                c->size = 4;
                break;
        case PERF_SIZE_LARGE:
                c->size = 8;
                break;
        default:
                c->size = 0;
        }
        c->detail_level = PERF_DETAIL_NOVICE;
        c->aggregate = PM_AGG_ABSENT;
        return c;
}

static void add_struct(struct pm_counterset *cs, const char *name, const char *type)
{
        struct pm_struct *s = &cs->structs[cs->n_structs++];

        s->name = dup_str(name);
        s->type = dup_str(type);
}

static void set_field(struct pm_counter *c, uint32_t struct_ref, const char *field)
{
        c->field = dup_str(field);
        c->struct_ref = struct_ref;
}

static struct pm_u32 u32(uint32_t v)
{
        return (struct pm_u32) { .set = true, .value = v };
}

static void set_ids(struct pm_counterset *cs, struct pm_counter *c, uint32_t name_id,
                    uint32_t description_id)
{
        if (c) {
                c->name_id = u32(name_id);
                c->description_id = u32(description_id);
        } else {
                cs->name_id = u32(name_id);
                cs->description_id = u32(description_id);
        }
}

/* The spec's user-mode example, as the parser would give it. */
static struct pm_manifest *usermode_example(void)
{
        struct pm_manifest *m = manifest_new("spec/example-usermode.man", "2.0");
        struct pm_provider *p = add_provider(m, "{ab8e1320-965a-4cf9-9c07-fe25378c2a23}",
                                             "MY_PROVIDER", NULL, true, false);
        struct pm_counterset *cs;
        struct pm_counter *c;

        cs = add_counterset(p, "{dd36a036-c923-4794-b696-70577630b5cf}", "MY_LOGICALDISK",
                            "My LogicalDisk", "multiple", PERF_COUNTERSET_MULTI_INSTANCES);
        set_ids(cs, NULL, 100, 102);
        c = add_counter(cs, 1, "MY_LOGICALDISK_FREE_MB", "My Free Megabytes", "perf_counter_rawcount");
        c->default_scale = 1;
        set_ids(cs, c, 104, 106);
        c = add_counter(cs, 2, "MY_LOGICALDISK_SEC_PER_TRANSFER", "My Avg. Disk sec/Transfer",
                        "perf_average_timer");
        c->base_id = u32(3);
        c->detail_level = PERF_DETAIL_ADVANCED;
        c->default_scale = 1;
        c->attrib = PERF_ATTRIB_BY_REFERENCE | PERF_ATTRIB_DISPLAY_AS_REAL;
        set_ids(cs, c, 108, 110);
        c = add_counter(cs, 3, "MY_LOGICALDISK_TRANSFER_COUNT", NULL, "perf_average_base");
        c->detail_level = PERF_DETAIL_ADVANCED;
        c->attrib = PERF_ATTRIB_NO_DISPLAYABLE;

        cs = add_counterset(p, "{f72fdf55-eaa6-45ba-bf6d-4c7cb0d6ef73}", "MY_SYSTEMOBJECTS",
                            "My System Objects", "single", PERF_COUNTERSET_SINGLE_INSTANCE);
        set_ids(cs, NULL, 120, 122);
        c = add_counter(cs, 1, "MY_SYSTEMOBJECTS_PROCESS_COUNT", "Process Count",
                        "perf_counter_rawcount");
        c->attrib = PERF_ATTRIB_NO_GROUP_SEPARATOR | PERF_ATTRIB_DISPLAY_AS_HEX;
        c->default_scale = 1;
        set_ids(cs, c, 124, 126);
        c = add_counter(cs, 2, "MY_SYSTEMOBJECTS_THREAD_COUNT", "Thread Count", "perf_counter_rawcount");
        set_ids(cs, c, 128, 130);
        c = add_counter(cs, 3, "MY_SYSTEMOBJECTS_ELAPSED_TIME", "System Elapsed Time",
                        "perf_elapsed_time");
        c->perf_time_id = u32(4);
        c->perf_freq_id = u32(5);
        c->detail_level = PERF_DETAIL_ADVANCED;
        c->default_scale = -3;
        c->aggregate = PM_AGG_MAX;
        set_ids(cs, c, 132, 134);
        c = add_counter(cs, 4, "MY_SYSTEMOBJECTS_PERFTIME", NULL, "perf_counter_large_rawcount");
        c->attrib = PERF_ATTRIB_NO_DISPLAYABLE;
        c = add_counter(cs, 5, "MY_SYSTEMOBJECTS_PERFFREQ", NULL, "perf_counter_large_rawcount");
        c->attrib = PERF_ATTRIB_NO_DISPLAYABLE;
        return m;
}

/*
 * The spec's kernel-mode example: no provider symbol, no counter symbols,
 * counters laid out by one struct per counterset.  Counterset 2 gets a
 * second struct and a field-less counter to exercise the layout rules.
 */
static struct pm_manifest *kernelmode_example(void)
{
        struct pm_manifest *m = manifest_new("spec/example-kernelmode.man", "2.0");
        struct pm_provider *p = add_provider(m, "{ab8e1320-965a-4cf9-9c07-fe25378c2a24}", NULL,
                                             NULL, false, true);
        struct pm_counterset *cs;
        struct pm_counter *c;

        cs = add_counterset(p, "{dd36a036-c923-4794-b696-70577630b5d0}", "MY_LOGICALDISK",
                            "My LogicalDisk", "multiple", PERF_COUNTERSET_MULTI_INSTANCES);
        add_struct(cs, "LogicalDiskData", "MY_LOGICALDISK_DATA");
        c = add_counter(cs, 1, NULL, "My Free Megabytes", "perf_counter_rawcount");
        set_field(c, 1, "FreeMegabytes");
        c = add_counter(cs, 2, NULL, "My Avg. Disk sec/Transfer", "perf_average_timer");
        c->base_id = u32(3);
        c->attrib = PERF_ATTRIB_BY_REFERENCE;
        set_field(c, 1, "TransferTime");
        c = add_counter(cs, 3, NULL, NULL, "perf_average_base");
        set_field(c, 1, "TransferCount");

        cs = add_counterset(p, "{f72fdf55-eaa6-45ba-bf6d-4c7cb0d6ef74}", "MY_SYSTEMOBJECTS",
                            "My System Objects", "single", PERF_COUNTERSET_SINGLE_INSTANCE);
        add_struct(cs, "SystemObjectsData", "MY_SYSTEMOBJECTS_DATA");
        add_struct(cs, "MoreData", "MY_MORE_DATA");
        c = add_counter(cs, 1, NULL, "Process Count", "perf_counter_rawcount");
        set_field(c, 1, "ProcessCount");
        c = add_counter(cs, 3, NULL, "System Elapsed Time", "perf_counter_large_rawcount");
        set_field(c, 1, "SystemElapsedTime");
        c = add_counter(cs, 7, NULL, "More", "perf_counter_large_rawcount");
        set_field(c, 2, "More");
        c = add_counter(cs, 9, NULL, "Loose", "perf_counter_rawcount");
        return m;
}

/* node's v0.10 manifest (corpus #12): ten counters, no ids, no resourceBase. */
static struct pm_manifest *node_manifest(void)
{
        struct pm_manifest *m = manifest_new("node_perfctr_provider.man", "1.1");
        struct pm_provider *p = add_provider(m, "{1E2E15D7-3760-470E-8699-B9DB5248EDD5}",
                                             "NodeCounterProvider", NULL, false, false);
        struct pm_counterset *cs = add_counterset(p, "{3A22A8EC-297C-48AC-AB15-33EC93033FD8}",
                                                  "NodeCounterSet", "Node.js", "multipleAggregate",
                                                  PERF_COUNTERSET_MULTI_AGGREGATE);

        for (uint32_t id = 1; id <= 10; id++)
                add_counter(cs, id, NULL, "counter", "perf_counter_rawcount");
        return m;
}

/* ---- running the generators ---- */

typedef int (*generator)(const struct pm_manifest *, const struct gen_options *, FILE *);

static struct gen_options options(void)
{
        return (struct gen_options) {
                .prefix = "",
                .header_name = "provider.h",
                .counters_header_name = "provider_counters.h",
                .resource_name = "provider_strings.c",
        };
}

static char *render(generator gen, const struct pm_manifest *m, const struct gen_options *o)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        assert_non_null(f);
        assert_int_equal(gen(m, o, f), 0);
        assert_int_equal(fclose(f), 0);
        assert_non_null(text);
        return text;
}

#define assert_has(text, what) assert_has_at(text, what, __FILE__, __LINE__)
#define assert_lacks(text, what) assert_lacks_at(text, what, __FILE__, __LINE__)

static void assert_has_at(const char *text, const char *what, const char *file, int line)
{
        if (!strstr(text, what)) {
                fprintf(stderr, "%s:%d: output lacks \"%s\"; it is:\n%s\n", file, line, what, text);
                fail();
        }
}

static void assert_lacks_at(const char *text, const char *what, const char *file, int line)
{
        if (strstr(text, what)) {
                fprintf(stderr, "%s:%d: output has \"%s\"; it is:\n%s\n", file, line, what, text);
                fail();
        }
}

/* ---- resource ids ---- */

/* jxcore's node_perfctr_provider.rc, generated from this manifest by Windows ctrpp. */
static void test_ids_windows_numbering(void **state)
{
        struct pm_manifest *m = node_manifest();
        const struct pm_counterset *cs = &m->providers[0].countersets[0];

        (void) state;
        pm_assign_ids(m);
        assert_int_equal(cs->res_name_id, 1);
        assert_int_equal(cs->res_description_id, 3);
        for (uint32_t i = 0; i < 10; i++) {
                assert_int_equal(cs->counters[i].res_name_id, 5 + 4 * i);
                assert_int_equal(cs->counters[i].res_description_id, 7 + 4 * i);
        }
        assert_int_equal(cs->counters[9].res_name_id, 41);
        pm_manifest_free(m);
}

static void test_ids_explicit(void **state)
{
        struct pm_manifest *m = usermode_example();
        const struct pm_counterset *a = &m->providers[0].countersets[0];
        const struct pm_counterset *b = &m->providers[0].countersets[1];

        (void) state;
        pm_assign_ids(m);
        assert_int_equal(a->res_name_id, 100);
        assert_int_equal(a->res_description_id, 102);
        assert_int_equal(a->counters[1].res_name_id, 108);
        /* No ids after 108/110: the next block. */
        assert_int_equal(a->counters[2].res_name_id, 112);
        assert_int_equal(a->counters[2].res_description_id, 114);
        assert_int_equal(b->res_name_id, 120);
        assert_int_equal(b->counters[2].res_description_id, 134);
        assert_int_equal(b->counters[3].res_name_id, 136);
        assert_int_equal(b->counters[4].res_name_id, 140);
        assert_int_equal(b->counters[4].res_description_id, 142);
        pm_manifest_free(m);
}

static void test_ids_resource_base(void **state)
{
        struct pm_manifest *m = node_manifest();
        struct pm_counterset *cs = &m->providers[0].countersets[0];

        (void) state;
        m->providers[0].resource_base = u32(1000);
        cs->counters[4].name_id = u32(5000);    /* alone: its description is 5002 */
        pm_assign_ids(m);
        assert_int_equal(cs->res_name_id, 1000);
        assert_int_equal(cs->res_description_id, 1002);
        assert_int_equal(cs->counters[0].res_name_id, 1004);
        assert_int_equal(cs->counters[4].res_name_id, 5000);
        assert_int_equal(cs->counters[4].res_description_id, 5002);
        assert_int_equal(cs->counters[5].res_name_id, 5004);
        pm_manifest_free(m);
}

/* ---- the header ---- */

static void test_header_shape(void **state)
{
        struct pm_manifest *m = usermode_example();
        struct gen_options o = options();
        char *h;

        (void) state;
        h = render(gen_header, m, &o);
        assert_has(h, "generated by ctrpp from example-usermode.man; do not edit.");
        assert_has(h, "#ifndef CTRPP_PROVIDER_H\n#define CTRPP_PROVIDER_H\n");
        assert_has(h, "#include <perflib.h>\n");
        assert_has(h, "#define CTRPP_SELECTANY __attribute__((weak))\n");
        assert_has(h, "#define MY_LOGICALDISK_FREE_MB (1)\n");
        assert_has(h, "#define MY_SYSTEMOBJECTS_PERFFREQ (5)\n");
        /* The self-description: weakly referenced, published once the provider is up. */
        assert_has(h, "extern const struct ctrpp_provider_desc MY_PROVIDER_Description "
                   "__attribute__((weak));\n");
        assert_has(h, "int r = pl_set_provider_description(MY_PROVIDER, &MY_PROVIDER_Description);\n");
        assert_has(h, "CTRPP_SELECTANY GUID MY_PROVIDERGuid =\n        { 0xab8e1320, 0x965a, 0x4cf9, "
                      "{ 0x9c, 0x07, 0xfe, 0x25, 0x37, 0x8c, 0x2a, 0x23 } };\n");
        assert_has(h, "CTRPP_SELECTANY GUID MY_LOGICALDISKGuid =\n");
        assert_has(h, "CTRPP_SELECTANY HANDLE MY_PROVIDER = NULL;\n");
        assert_has(h, "CTRPP_SELECTANY struct {\n        PERF_COUNTERSET_INFO CounterSet;\n"
                      "        PERF_COUNTER_INFO Counter0;\n        PERF_COUNTER_INFO Counter1;\n"
                      "        PERF_COUNTER_INFO Counter2;\n} MY_LOGICALDISKInfo = {\n");
        assert_has(h, "          3, PERF_COUNTERSET_MULTI_INSTANCES },\n");
        assert_has(h, "        { 1, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 1, 0 },\n");
        assert_has(h, "        { 2, PERF_AVERAGE_TIMER, PERF_ATTRIB_BY_REFERENCE | PERF_ATTRIB_DISPLAY_AS_REAL,\n"
                      "          sizeof(ULONG), PERF_DETAIL_ADVANCED, 1, 0 },\n");
        assert_has(h, "{ 3, PERF_ELAPSED_TIME, 0, sizeof(ULONGLONG), PERF_DETAIL_ADVANCED, -3, 0 },\n");
        assert_has(h, "static inline VOID\nCounterCleanup(VOID)\n");
        /* callback="custom": the four-argument form. */
        assert_has(h, "static inline ULONG\nCounterInitialize(PERFLIBREQUEST NotificationCallback, "
                      "PERF_MEM_ALLOC MemoryAllocationFunction,\n                  PERF_MEM_FREE "
                      "MemoryFreeFunction, PVOID MemoryFunctionsContext)\n");
        assert_has(h, "        ProviderContext.ControlCallback = NotificationCallback;\n");
        assert_has(h, "        Status = PerfStartProviderEx(&MY_PROVIDERGuid, &ProviderContext, &MY_PROVIDER);\n");
        assert_has(h, "        Status = PerfSetCounterSetInfo(MY_PROVIDER, &MY_SYSTEMOBJECTSInfo.CounterSet,\n"
                      "                                       sizeof MY_SYSTEMOBJECTSInfo);\n");
        assert_lacks(h, "offsetof(");
        assert_lacks(h, "CTRPP_CHECK_FIELD");
        free(h);
        pm_manifest_free(m);
}

static void test_header_arguments_and_prefix(void **state)
{
        struct pm_manifest *m = usermode_example();
        struct gen_options o = options();
        char *h;

        (void) state;
        m->providers[0].callback_custom = false;
        o.prefix = "Ucs";
        h = render(gen_header, m, &o);
        assert_has(h, "static inline ULONG\nUcsCounterInitialize(VOID)\n");
        assert_has(h, "UcsCounterCleanup(VOID)\n");
        assert_has(h, "CTRPP_SELECTANY GUID UcsMY_PROVIDERGuid =");
        assert_has(h, "CTRPP_SELECTANY GUID UcsMY_LOGICALDISKGuid =");
        assert_has(h, "CTRPP_SELECTANY HANDLE UcsMY_PROVIDER = NULL;");
        assert_has(h, "} UcsMY_SYSTEMOBJECTSInfo = {");
        assert_has(h, "                UcsCounterCleanup();\n");
        /* Counter ids are the author's names: never prefixed. */
        assert_has(h, "#define MY_LOGICALDISK_FREE_MB (1)\n");
        assert_lacks(h, "NotificationCallback");
        free(h);

        o.notification_callback = true;
        h = render(gen_header, m, &o);
        assert_has(h, "UcsCounterInitialize(PERFLIBREQUEST NotificationCallback,");
        free(h);

        o.notification_callback = false;
        o.memory_routines = true;
        h = render(gen_header, m, &o);
        assert_has(h, "        ProviderContext.MemAllocRoutine = MemoryAllocationFunction;\n");
        free(h);
        pm_manifest_free(m);
}

static void test_header_struct_layout(void **state)
{
        struct pm_manifest *m = kernelmode_example();
        struct gen_options o = options();
        char *h;

        (void) state;
        o.prefix = "Kcs";
        h = render(gen_header, m, &o);
        assert_has(h, "include their declarations before this header.");
        assert_has(h, "#define CTRPP_ALIGN8(n)");
        /* No symbol: the provider is named after providerName. */
        assert_has(h, "CTRPP_SELECTANY GUID KcsCountersGuid =");
        assert_has(h, "CTRPP_SELECTANY HANDLE KcsCounters = NULL;");
        assert_has(h, "KcsCounterInitialize(VOID)");
        assert_has(h, "CTRPP_CHECK_FIELD(MY_LOGICALDISK_DATA, FreeMegabytes, 4);\n");
        assert_has(h, "CTRPP_CHECK_FIELD(MY_SYSTEMOBJECTS_DATA, SystemElapsedTime, 8);\n");
        assert_has(h, "        { 1, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 0,\n"
                      "          offsetof(MY_LOGICALDISK_DATA, FreeMegabytes) },\n");
        assert_has(h, "CTRPP_ALIGN8(sizeof(MY_SYSTEMOBJECTS_DATA)) + offsetof(MY_MORE_DATA, More) },\n");
        assert_has(h, "CTRPP_ALIGN8(sizeof(MY_SYSTEMOBJECTS_DATA)) + CTRPP_ALIGN8(sizeof(MY_MORE_DATA)) + 0 },\n");
        assert_has(h, "static inline ULONG\nKcsUpdateMY_LOGICALDISK(PPERF_COUNTERSET_INSTANCE Instance, "
                      "const MY_LOGICALDISK_DATA *Values)\n");
        assert_has(h, "Status = PerfSetULongCounterValue(KcsCounters, Instance, 1,\n"
                      "                                                  (ULONG) Values->FreeMegabytes);\n");
        /* A reference counter's value comes from its address, not from the struct. */
        assert_lacks(h, "Values->TransferTime");
        assert_has(h, "KcsUpdateMY_SYSTEMOBJECTS(PPERF_COUNTERSET_INSTANCE Instance, "
                      "const MY_SYSTEMOBJECTS_DATA *SystemObjectsData, const MY_MORE_DATA *MoreData)\n");
        assert_has(h, "(ULONGLONG) MoreData->More);\n");
        free(h);
        pm_manifest_free(m);
}

static void test_header_legacy(void **state)
{
        struct pm_manifest *m = usermode_example();
        struct gen_options o = options();
        char *h, *c;

        (void) state;
        o.legacy = true;
        h = render(gen_legacy_header, m, &o);
        assert_has(h, "#define PROVIDER_GUID_example_usermode_1 {");
        assert_has(h, "GUID ProviderGuid_example_usermode_1 = PROVIDER_GUID_example_usermode_1;\n");
        assert_has(h, "#define CTRSET_GUID_example_usermode_1_2 {");
        assert_has(h, "} CTRSET_example_usermode_1_2, *PCTRSET_example_usermode_1_2;\n");
        assert_has(h, "#ifdef __INIT_example_usermode_IMP\nHANDLE hDataSource_example_usermode_1 = NULL;\n");
        assert_has(h, "ULONG PerfAutoInitialize(void);\nULONG PerfAutoCleanup(void);\n");
        assert_lacks(h, "static inline");
        assert_lacks(h, "CounterInitialize");
        c = render(gen_legacy_source, m, &o);
        assert_has(c, "#define __INIT_example_usermode_IMP\n");
        assert_has(c, "ULONG\nPerfAutoInitialize(void)\n");
        assert_has(c, "ULONG\nPerfAutoCleanup(void)\n");
        assert_has(c, "pl_set_provider_description(hDataSource_example_usermode_1, &");
        free(c);
        free(h);
        pm_manifest_free(m);
}

static void test_counters_header(void **state)
{
        struct pm_manifest *m = usermode_example();
        struct gen_options o = options();
        char *h;

        (void) state;
        h = render(gen_counters_header, m, &o);
        assert_has(h, "#ifndef CTRPP_PROVIDER_COUNTERS_H\n");
        assert_has(h, "#define MY_LOGICALDISK_NAME \"My LogicalDisk\"\n");
        assert_has(h, "#define MY_LOGICALDISK_GUID { 0xdd36a036, 0xc923, 0x4794, "
                      "{ 0xb6, 0x96, 0x70, 0x57, 0x76, 0x30, 0xb5, 0xcf } }\n");
        assert_has(h, "#define MY_SYSTEMOBJECTS_ELAPSED_TIME (3)\n");
        assert_lacks(h, "CTRPP_SELECTANY");
        free(h);
        pm_manifest_free(m);
}

/* ---- the resource ---- */

static void test_resource(void **state)
{
        struct pm_manifest *m = usermode_example();
        struct gen_options o = options();
        struct pm_counterset *cs = &m->providers[0].countersets[0];
        char *r;

        (void) state;
        free(cs->counters[0].description);
        cs->counters[0].description = dup_str("Say \"what?\" ?\?= \\ */ end\n");
        pm_assign_ids(m);
        r = render(gen_resource, m, &o);
        /* The struct types come from the SDK, not from every generated file. */
        assert_has(r, "#include <perflib.h>\n");
        assert_lacks(r, "struct ctrpp_counter_desc {");
        assert_has(r, "extern const struct ctrpp_provider_desc MY_PROVIDER_Description;\n");
        assert_has(r, "CTRPP_DESCRIPTION_EXPORT const struct ctrpp_provider_desc MY_PROVIDER_Description = {\n");
        assert_has(r, ".application_identity = \"myprovider.exe\"");
        assert_has(r, ".callback_custom = 1, .kernel_mode = 0, .resource_base = CTRPP_NO_ID");
        assert_has(r, ".name = \"My LogicalDisk\", .name_id = 100,");
        assert_has(r, ".description = \"Say \\\"what?\\\" ?\\?= \\\\ */ end\\n\", .description_id = 106,");
        assert_has(r, ".name = NULL, .name_id = 112,");
        assert_has(r, ".base_id = 3, .perf_time_id = CTRPP_NO_ID,");
        assert_has(r, ".perf_freq_id = 5, .multi_counter_id = CTRPP_NO_ID,");
        assert_has(r, ".default_scale = -3, .aggregate = 4,");
        assert_has(r, ".instance_type = 2, .instances = \"multiple\",");
        free(r);

        o.prefix = "Ucs";
        r = render(gen_resource, m, &o);
        assert_has(r, "const struct ctrpp_provider_desc UcsMY_PROVIDER_Description = {\n");
        free(r);
        pm_manifest_free(m);
}

/* ---- the golden compile ---- */

struct workdir {
        char path[512];
};

static const char *env_or(const char *name, const char *fallback)
{
        const char *s = getenv(name);

        return s && *s ? s : fallback;
}

static void write_file(const struct workdir *w, const char *name, const char *text)
{
        char *path;
        FILE *f;

        assert_true(asprintf(&path, "%s/%s", w->path, name) > 0);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
        free(path);
}

static void write_output(const struct workdir *w, const char *name, generator gen,
                         const struct pm_manifest *m, const struct gen_options *o)
{
        char *text = render(gen, m, o);

        write_file(w, name, text);
        free(text);
}

/* Runs a shell command in the work directory; on failure shows its output. */
static void run(const struct workdir *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void run(const struct workdir *w, const char *fmt, ...)
{
        char *cmd, *line;
        va_list ap;
        int r;

        va_start(ap, fmt);
        assert_true(vasprintf(&cmd, fmt, ap) > 0);
        va_end(ap);
        assert_true(asprintf(&line, "cd '%s' && { %s; } >log 2>&1", w->path, cmd) > 0);
        r = system(line);
        if (r != 0) {
                char *show;
                fprintf(stderr, "failed (%d): %s\n", r, cmd);
                assert_true(asprintf(&show, "cat '%s/log' >&2", w->path) > 0);
                (void) system(show);
                free(show);
        }
        free(line);
        free(cmd);
        assert_int_equal(r, 0);
}

/* The provider's own struct declarations, which the kernel-mode header needs first. */
static const char structs_h[] =
        "#include <stdint.h>\n"
        "typedef struct { uint32_t FreeMegabytes; uint32_t TransferTime; uint32_t TransferCount; }\n"
        "        MY_LOGICALDISK_DATA;\n"
        "typedef struct { uint32_t ProcessCount; uint64_t SystemElapsedTime; uint16_t Pad; }\n"
        "        MY_SYSTEMOBJECTS_DATA;\n"
        "typedef struct { uint64_t More; } MY_MORE_DATA;\n"
        "HANDLE *tu1_handle(void);\n"
        "ULONG tu1_initialize(void);\n"
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
        "HANDLE *tu2_handle(void);\n"
        "const void *tu2_template(void);\n"
        "ULONG tu2_update(PPERF_COUNTERSET_INSTANCE Instance);\n"
        "#ifdef __cplusplus\n}\n#endif\n";

/* perflib, recording what the generated functions ask of it. */
static const char stubs_c[] =
        "#include <errno.h>\n"
        "#include <string.h>\n"
        "#include <perflib.h>\n"
        "#include \"stubs.h\"\n"
        "struct record rec;\n"
        "static int token;\n"
        "ULONG PerfStartProviderEx(LPGUID g, PPERF_PROVIDER_CONTEXT c, HANDLE *h)\n"
        "{\n"
        "        rec.starts++;\n"
        "        rec.provider = *g;\n"
        "        rec.callback = c->ControlCallback;\n"
        "        *h = &token;\n"
        "        return c->ContextSize == sizeof(*c) ? ERROR_SUCCESS : ERROR_INVALID_PARAMETER;\n"
        "}\n"
        "ULONG PerfStartProvider(LPGUID g, PERFLIBREQUEST cb, HANDLE *h)\n"
        "{\n"
        "        rec.starts++;\n"
        "        rec.provider = *g;\n"
        "        rec.callback = cb;\n"
        "        *h = &token;\n"
        "        return ERROR_SUCCESS;\n"
        "}\n"
        "ULONG PerfStopProvider(HANDLE h)\n"
        "{\n"
        "        rec.stops += h == &token;\n"
        "        return ERROR_SUCCESS;\n"
        "}\n"
        "ULONG PerfSetCounterSetInfo(HANDLE h, PPERF_COUNTERSET_INFO t, ULONG size)\n"
        "{\n"
        "        if (h != &token || rec.sets >= 8)\n"
        "                return ERROR_INVALID_PARAMETER;\n"
        "        rec.set_sizes[rec.sets] = size;\n"
        "        rec.set_templates[rec.sets++] = t;\n"
        "        return ERROR_SUCCESS;\n"
        "}\n"
        "int pl_set_provider_description(HANDLE h, const struct ctrpp_provider_desc *d)\n"
        "{\n"
        "        if (h != &token)\n"
        "                return -EINVAL;\n"
        "        rec.descriptions++;\n"
        "        rec.description = d;\n"
        "        return 0;\n"
        "}\n"
        "ULONG PerfSetULongCounterValue(HANDLE h, PPERF_COUNTERSET_INSTANCE i, ULONG id, ULONG v)\n"
        "{\n"
        "        (void) h; (void) i;\n"
        "        rec.values[id % 16] = v;\n"
        "        return ERROR_SUCCESS;\n"
        "}\n"
        "ULONG PerfSetULongLongCounterValue(HANDLE h, PPERF_COUNTERSET_INSTANCE i, ULONG id, ULONGLONG v)\n"
        "{\n"
        "        (void) h; (void) i;\n"
        "        rec.values[id % 16] = v;\n"
        "        return ERROR_SUCCESS;\n"
        "}\n";

static const char stubs_h[] =
        "struct record {\n"
        "        int starts, stops, sets, descriptions;\n"
        "        const struct ctrpp_provider_desc *description;\n"
        "        GUID provider;\n"
        "        PERFLIBREQUEST callback;\n"
        "        ULONG set_sizes[8];\n"
        "        PPERF_COUNTERSET_INFO set_templates[8];\n"
        "        ULONGLONG values[16];\n"
        "};\n"
        "extern struct record rec;\n";

/* Everything the headers define, in a C translation unit... */
static const char tu1_c[] =
        "#include <perflib.h>\n"
        "#include \"structs.h\"\n"
        "#include \"provider.h\"\n"
        "#include \"kernel.h\"\n"
        "#include \"provider_counters.h\"\n"
        "HANDLE *tu1_handle(void) { return &MY_PROVIDER; }\n"
        "ULONG tu1_initialize(void) { return CounterInitialize(NULL, NULL, NULL, NULL); }\n";

/* ...and in a C++ one. */
static const char tu2_cc[] =
        "#include <perflib.h>\n"
        "#include \"structs.h\"\n"
        "#include \"provider.h\"\n"
        "#include \"kernel.h\"\n"
        "#include \"provider_counters.h\"\n"
        "HANDLE *tu2_handle(void) { return &MY_PROVIDER; }\n"
        "const void *tu2_template(void) { return &KcsMY_SYSTEMOBJECTSInfo; }\n"
        "ULONG tu2_update(PPERF_COUNTERSET_INSTANCE Instance)\n"
        "{\n"
        "        MY_SYSTEMOBJECTS_DATA s = { 7, 0x100000000ULL, 0 };\n"
        "        MY_MORE_DATA more = { 11 };\n"
        "        return KcsUpdateMY_SYSTEMOBJECTS(Instance, &s, &more);\n"
        "}\n";

/* The program: both resource files again, so their weak symbols meet twice. */
static const char main_c[] =
        "#include <stdio.h>\n"
        "#include <string.h>\n"
        "#include <perflib.h>\n"
        "#include \"stubs.h\"\n"
        "#include \"structs.h\"\n"
        "#include \"provider.h\"\n"
        "#include \"kernel.h\"\n"
        "#include \"provider_strings.c\"\n"
        "#include \"kernel_strings.c\"\n"
        "#define CHECK(x) do { if (!(x)) { fprintf(stderr, \"check failed: %s\\n\", #x); return 1; } } while (0)\n"
        "static ULONG WINAPI callback(ULONG code, PVOID buffer, ULONG size)\n"
        "{\n"
        "        (void) code; (void) buffer; (void) size;\n"
        "        return ERROR_SUCCESS;\n"
        "}\n"
        "int main(void)\n"
        "{\n"
        "        static const GUID provider = { 0xab8e1320, 0x965a, 0x4cf9, { 0x9c, 0x07, 0xfe, 0x25, 0x37, 0x8c, 0x2a, 0x23 } };\n"
        "        const PERF_COUNTER_INFO *k;\n"
        "        /* One handle, whichever translation unit looks. */\n"
        "        CHECK(tu1_handle() == &MY_PROVIDER && tu2_handle() == &MY_PROVIDER);\n"
        "        CHECK(tu2_template() == (const void *) &KcsMY_SYSTEMOBJECTSInfo);\n"
        "        CHECK(tu1_initialize() == ERROR_SUCCESS && MY_PROVIDER != NULL);\n"
        "        CHECK(rec.starts == 1 && memcmp(&rec.provider, &provider, sizeof(GUID)) == 0);\n"
        "        CHECK(rec.sets == 2 && rec.set_sizes[0] == 40 + 3 * 32 && rec.set_sizes[1] == 40 + 5 * 32);\n"
        "        CHECK(rec.set_templates[0] == &MY_LOGICALDISKInfo.CounterSet);\n"
        "        /* The resource file is linked in: CounterInitialize published it. */\n"
        "        CHECK(rec.descriptions == 1 && rec.description == &MY_PROVIDER_Description);\n"
        "        CHECK(MY_LOGICALDISKInfo.CounterSet.NumCounters == 3);\n"
        "        CHECK(MY_LOGICALDISKInfo.Counter1.Attrib == (PERF_ATTRIB_BY_REFERENCE | PERF_ATTRIB_DISPLAY_AS_REAL));\n"
        "        CHECK(MY_SYSTEMOBJECTSInfo.Counter2.Size == 8 && MY_SYSTEMOBJECTSInfo.Counter2.Scale == -3);\n"
        "        CounterCleanup();\n"
        "        CHECK(MY_PROVIDER == NULL && rec.stops == 1);\n"
        "        CHECK(KcsCounterInitialize() == ERROR_SUCCESS && rec.sets == 4 && rec.callback == NULL);\n"
        "        k = &KcsMY_SYSTEMOBJECTSInfo.Counter0;\n"
        "        CHECK(k[0].Offset == offsetof(MY_SYSTEMOBJECTS_DATA, ProcessCount));\n"
        "        CHECK(k[1].Offset == offsetof(MY_SYSTEMOBJECTS_DATA, SystemElapsedTime) && k[1].Size == 8);\n"
        "        CHECK(k[2].Offset == 24 && k[3].Offset == 32 && k[3].Size == 4);\n"
        "        CHECK(tu2_update(NULL) == ERROR_SUCCESS && rec.values[1] == 7);\n"
        "        CHECK(rec.values[3] == 0x100000000ULL && rec.values[7] == 11);\n"
        "        KcsCounterCleanup();\n"
        "        /* No UcsMY_PROVIDER_Description is linked: nothing to publish. */\n"
        "        CHECK(UcsCounterInitialize(callback, NULL, NULL, NULL) == ERROR_SUCCESS);\n"
        "        CHECK(rec.descriptions == 2);\n"
        "        CHECK(rec.callback == callback);\n"
        "        /* The self-descriptions. */\n"
        "        CHECK(MY_PROVIDER_Description.version == CTRPP_DESCRIPTION_VERSION);\n"
        "        CHECK(MY_PROVIDER_Description.n_countersets == 2);\n"
        "        CHECK(strcmp(MY_PROVIDER_Description.countersets[1].name, \"My System Objects\") == 0);\n"
        "        CHECK(MY_PROVIDER_Description.countersets[0].counters[1].base_id == 3);\n"
        "        CHECK(MY_PROVIDER_Description.countersets[0].counters[2].name_id == 112);\n"
        "        CHECK(KcsCounters_Description.kernel_mode == 1);\n"
        "        CHECK(KcsCounters_Description.countersets[1].counters[3].id == 9);\n"
        "        return 0;\n"
        "}\n";

static void test_compile_and_link(void **state)
{
        const char *cc = env_or("CC", "cc"), *cxx = env_or("CXX", "c++");
        const char *san = env_or("SAN_CFLAGS", ""), *top = env_or("top_srcdir", "..");
        struct pm_manifest *user = usermode_example(), *kernel = kernelmode_example();
        struct gen_options o = options();
        const char *warn = "-Wall -Wextra -Werror";
        struct workdir w;
        char *cflags, *cxxflags;

        (void) state;
        assert_true((size_t) snprintf(w.path, sizeof(w.path), "%s/test-ctrpp-gen.XXXXXX",
                                      env_or("TMPDIR", "/tmp")) < sizeof(w.path));
        assert_non_null(mkdtemp(w.path));
        pm_assign_ids(user);
        pm_assign_ids(kernel);

        write_output(&w, "provider.h", gen_header, user, &o);
        write_output(&w, "provider_counters.h", gen_counters_header, user, &o);
        write_output(&w, "provider_strings.c", gen_resource, user, &o);
        o.prefix = "Kcs";
        o.header_name = "kernel.h";
        o.resource_name = "kernel_strings.c";
        write_output(&w, "kernel.h", gen_header, kernel, &o);
        write_output(&w, "kernel_strings.c", gen_resource, kernel, &o);
        /* A second provider header with the same names but another prefix. */
        o.prefix = "Ucs";
        o.header_name = "ucs.h";
        write_output(&w, "ucs.h", gen_header, user, &o);
        write_file(&w, "structs.h", structs_h);
        write_file(&w, "stubs.h", stubs_h);
        write_file(&w, "stubs.c", stubs_c);
        write_file(&w, "tu1.c", tu1_c);
        write_file(&w, "tu2.cc", tu2_cc);
        /* main.c sees ucs.h as well: two generated headers in one translation unit. */
        {
                char *text;
                assert_true(asprintf(&text, "#include <perflib.h>\n#include \"ucs.h\"\n%s", main_c) > 0);
                write_file(&w, "main.c", text);
                free(text);
        }

        assert_true(asprintf(&cflags, "-std=c11 %s -Wshadow -Wstrict-prototypes -Wmissing-prototypes "
                             "%s -I'%s/sdk/include/perflib' -I.", warn, san, top) > 0);
        assert_true(asprintf(&cxxflags, "-std=c++11 %s %s -I'%s/sdk/include/perflib' -I.", warn, san,
                             top) > 0);
        run(&w, "%s %s -c provider_strings.c", cc, cflags);
        run(&w, "%s %s -c kernel_strings.c", cc, cflags);
        run(&w, "%s %s -c stubs.c", cc, cflags);
        run(&w, "%s %s -c tu1.c", cc, cflags);
        run(&w, "%s %s -c tu2.cc", cxx, cxxflags);
        run(&w, "%s %s -c main.c", cc, cflags);
        run(&w, "%s %s -o prog main.o tu1.o tu2.o stubs.o provider_strings.o kernel_strings.o",
            cxx, san);
        run(&w, "./prog");
        run(&w, "cd .. && rm -rf '%s'", w.path);
        free(cflags);
        free(cxxflags);
        pm_manifest_free(user);
        pm_manifest_free(kernel);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ids_windows_numbering),
                cmocka_unit_test(test_ids_explicit),
                cmocka_unit_test(test_ids_resource_base),
                cmocka_unit_test(test_header_shape),
                cmocka_unit_test(test_header_arguments_and_prefix),
                cmocka_unit_test(test_header_struct_layout),
                cmocka_unit_test(test_header_legacy),
                cmocka_unit_test(test_counters_header),
                cmocka_unit_test(test_resource),
                cmocka_unit_test(test_compile_and_link),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
