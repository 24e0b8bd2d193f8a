/* SPDX-License-Identifier: MIT */
/*
 * From manifest to segment: ctrpp compiles the spec's user-mode example, a
 * provider program is built from its header and resource file against the
 * real libperflib, and the segment that provider publishes must describe
 * the countersets exactly as libperfman reads the manifest: the templates
 * (ids, types, attributes, sizes, detail levels, scales) and the
 * self-description (names, descriptions, resource ids, companions).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfman.h"
#include "testutil.h"

static const char provider_c[] =
        "#include <stdio.h>\n"
        "#include <perflib.h>\n"
        "#include \"example-usermode.h\"\n"
        "static ULONG WINAPI cb(ULONG c, PVOID b, ULONG s) { (void) c; (void) b; (void) s; return 0; }\n"
        "int main(void)\n"
        "{\n"
        "        if (CounterInitialize(cb, NULL, NULL, NULL) != ERROR_SUCCESS)\n"
        "                return 1;\n"
        "        if (!PerfCreateInstanceUtf8(MY_PROVIDER, &MY_LOGICALDISKGuid, \"C:\", 0))\n"
        "                return 2;\n"
        "        puts(\"ready\");\n"
        "        fflush(stdout);\n"
        "        while (getchar() != EOF)\n"
        "                ;\n"
        "        CounterCleanup();\n"
        "        return 0;\n"
        "}\n";

static const char *env_or(const char *name, const char *fallback)
{
        const char *s = getenv(name);

        return s && *s ? s : fallback;
}

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void run(const char *fmt, ...)
{
        char *cmd;
        va_list ap;

        va_start(ap, fmt);
        assert_true(vasprintf(&cmd, fmt, ap) > 0);
        va_end(ap);
        if (system(cmd) != 0)
                fail_msg("failed: %s", cmd);
        free(cmd);
}

static void build_provider(const char *dir, const char *top, const char *builddir)
{
        char *path;
        FILE *f;

        run("cd '%s' && '%s/ctrpp/ctrpp' '%s/tests/ctrpp/spec/example-usermode.man' >/dev/null",
            dir, builddir, top);
        assert_true(asprintf(&path, "%s/provider.c", dir) > 0);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_true(fputs(provider_c, f) >= 0);
        assert_int_equal(fclose(f), 0);
        free(path);
        run("cd '%s' && %s -std=c11 -Wall -Wextra -Werror %s -I'%s/sdk/include/perflib' -I. "
            "provider.c example-usermode_strings.c -o provider -L'%s/sdk/libperflib/.libs' "
            "-Wl,-rpath,'%s/sdk/libperflib/.libs' -lperflib",
            dir, env_or("CC", "cc"), env_or("SAN_CFLAGS", ""), top, builddir, builddir);
}

/* Equal strings, or both absent. */
static void assert_same(const char *a, const char *b)
{
        if (!a || !b)
                assert_ptr_equal(a, b);
        else
                assert_string_equal(a, b);
}

static void check_counter(const struct pm_counter *m, const struct pl_seg_counter *s,
                          const struct ctrpp_counter_desc *d)
{
        assert_int_equal(s->id, m->id);
        assert_int_equal(s->type, m->type);
        assert_int_equal(s->attrib, m->attrib);
        assert_int_equal(s->size, m->size);
        assert_int_equal(s->detail_level, m->detail_level);
        assert_int_equal(s->scale, m->default_scale);
        assert_int_equal(d->id, m->id);
        assert_same(d->name, m->name);
        assert_same(d->description, m->description);
        assert_int_equal(d->name_id, m->res_name_id);
        assert_int_equal(d->description_id, m->res_description_id);
        assert_int_equal(d->base_id, m->base_id.set ? m->base_id.value : CTRPP_NO_ID);
        assert_int_equal(d->perf_time_id, m->perf_time_id.set ? m->perf_time_id.value : CTRPP_NO_ID);
        assert_int_equal(d->perf_freq_id, m->perf_freq_id.set ? m->perf_freq_id.value : CTRPP_NO_ID);
}

/*
 * The provider announces its segment in PerfStartProvider, before
 * CounterInitialize has registered its countersets and description: wait
 * (bounded) until it has published them all.
 */
static void wait_published(struct pl_reader *r, const struct pm_provider *p)
{
        const struct ctrpp_provider_desc *d;
        double end = tu_now() + 10.0;

        while (tu_now() < end && (pl_reader_counterset_count(r) < (int) p->n_countersets ||
                                  pl_reader_description(r, &d) == -ENODATA))
                usleep(1000);
}

static void check_segment(struct pl_reader *r, const struct pm_provider *p)
{
        const struct ctrpp_provider_desc *d;

        assert_int_equal(pl_reader_counterset_count(r), (int) p->n_countersets);
        assert_int_equal(pl_reader_description(r, &d), 0);
        assert_int_equal(d->n_countersets, p->n_countersets);
        assert_memory_equal(&d->guid, &p->guid, sizeof(GUID));
        assert_same(d->application_identity, p->application_identity);
        for (size_t i = 0; i < p->n_countersets; i++) {
                const struct pm_counterset *mc = &p->countersets[i];
                const struct ctrpp_counterset_desc *dc = &d->countersets[i];
                const struct pl_counterset *sc;

                assert_int_equal(pl_reader_find_counterset(r, &mc->guid, &sc), 0);
                assert_int_equal(sc->instance_type, mc->instance_type);
                assert_int_equal(sc->num_counters, mc->n_counters);
                assert_memory_equal(&dc->guid, &mc->guid, sizeof(GUID));
                assert_same(dc->name, mc->name);
                assert_same(dc->description, mc->description);
                assert_int_equal(dc->name_id, mc->res_name_id);
                assert_int_equal(dc->n_counters, mc->n_counters);
                for (size_t k = 0; k < mc->n_counters; k++)
                        check_counter(&mc->counters[k], &sc->counters[k], &dc->counters[k]);
        }
}

static void manifest_to_segment(void **state)
{
        const char *top = env_or("top_srcdir", ".."), *builddir = env_or("top_builddir", "..");
        char dir[] = "/tmp/test-ctrpp-provider.XXXXXX", *man, *exe;
        struct pm_diags *diags = pm_diags_new();
        struct pm_manifest *m = NULL;
        struct pl_reader *r = NULL;
        FILE *child;

        (void) state;
        assert_non_null(mkdtemp(dir));
        build_provider(dir, top, builddir);
        assert_true(asprintf(&man, "%s/tests/ctrpp/spec/example-usermode.man", top) > 0);
        assert_int_equal(pm_parse_file(man, diags, &m), 0);
        assert_false(pm_diags_failed(diags));
        pm_assign_ids(m);

        /* The provider runs until its stdin closes (pclose). */
        assert_true(asprintf(&exe, "cd '%s' && exec ./provider >/dev/null", dir) > 0);
        child = popen(exe, "w");
        assert_non_null(child);
        assert_int_equal(tu_open_only_provider(10.0, &r), 0);
        wait_published(r, &m->providers[0]);
        check_segment(r, &m->providers[0]);
        pl_reader_close(r);
        assert_int_equal(pclose(child), 0);

        run("rm -rf '%s'", dir);
        free(man);
        free(exe);
        pm_manifest_free(m);
        pm_diags_free(diags);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(manifest_to_segment),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
