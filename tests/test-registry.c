/* SPDX-License-Identifier: MIT */
/*
 * The registry (server-glue/registry/): reg_load builds, for
 * every installed provider, exactly the description ctrpp generates for it
 * (checked against the golden resource files of tests/ctrpp/golden, which
 * are compiled in here), skips every kind of broken file with a warning,
 * and lodctr's install and unlodctr's removals keep the directory in the
 * format lodctr(8) documents.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "reg-admin.h"
#include "registry.h"
#include "testutil.h"

/* What ctrpp generates for these manifests (see test-ctrpp-golden.sh). */
#include "ctrpp/golden/usermode_strings.c"
#include "ctrpp/golden/kernelmode_strings.c"
#include "ctrpp/golden/ucs_strings.c"
#include "ctrpp/golden/kcs_strings.c"
#include "ctrpp/golden/xdppcw_strings.c"
#include "ctrpp/golden/node-aggregate_strings.c"
#include "ctrpp/golden/ktl-um_strings.c"
#include "ctrpp/golden/vista_strings.c"

struct golden {
        const char *manifest;           /* under tests/ctrpp */
        const struct ctrpp_provider_desc *desc;
};

static const struct golden goldens[] = {
        { "spec/example-usermode.man", &MY_PROVIDER_Description },
        { "spec/example-kernelmode.man", &Counters_Description },
        { "corpus/microsoft__Windows-classic-samples__ucs.cpp.man", &UserModeCountersSample_Description },
        { "corpus/microsoft__Windows-driver-samples__kcs.man", &KernelCountersSample_Description },
        { "corpus/microsoft__xdp-for-windows__xdppcw.man", &XDP_Description },
        { "corpus/nodejs__node__node_perfctr_provider.v0.10-aggregate.man",
          &NodeCounterProvider_Description },
        { "corpus/microsoft__service-fabric__KtlLoggerCounters.um.man", &KTLLogger_Description },
        { "good/vista-no-namespace.man", &VistaStyleSample_Description },
};
#define N_GOLDENS (sizeof(goldens) / sizeof(goldens[0]))

/* ---- helpers ---- */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
        va_list ap;
        char *s;

        va_start(ap, f);
        assert_true(vasprintf(&s, f, ap) > 0);
        va_end(ap);
        return s;
}

static const char *top_srcdir(void)
{
        const char *top = getenv("top_srcdir");

        return top && *top ? top : "..";
}

static char *golden_manifest(size_t i)
{
        return fmt("%s/tests/ctrpp/%s", top_srcdir(), goldens[i].manifest);
}

/* A fresh path (not created) inside the test's temporary directory. */
static char *tmp_path(const char *name)
{
        return fmt("%s/%s", getenv("PERFLIB_RUNTIME_DIR"), name);
}

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path)
{
        FILE *f = fopen(path, "r");
        char *buf = calloc(1, 1 << 20);
        size_t n;

        assert_non_null(f);
        assert_non_null(buf);
        n = fread(buf, 1, (1 << 20) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* A small valid manifest: one provider, one counterset, one counter of type. */
static char *manifest_text(const char *provider, const char *cset, const char *name,
                           const char *type)
{
        return fmt("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
                   "<instrumentation>\n"
                   "<counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\" schemaVersion=\"2.0\">\n"
                   "<provider providerName=\"%s\" symbol=\"TestProvider\" applicationIdentity=\"t.exe\" providerType=\"userMode\"\n"
                   "          providerGuid=\"%s\">\n"
                   "<counterSet guid=\"%s\" uri=\"Test.Registry.Set\" name=\"Set of %s\"\n"
                   "            description=\"A set.\" instances=\"multiple\">\n"
                   "<counter id=\"1\" uri=\"Test.Registry.Count\" name=\"Count\" description=\"How many.\"\n"
                   "         type=\"%s\" detailLevel=\"standard\"/>\n"
                   "</counterSet>\n</provider>\n</counters>\n</instrumentation>\n"
                   "</instrumentationManifest>\n", name, provider, cset, name, type);
}

static void write_manifest(const char *path, const char *provider, const char *cset,
                           const char *name)
{
        char *text = manifest_text(provider, cset, name, "perf_counter_rawcount");

        write_text(path, text);
        free(text);
}

/* Every field of a description, one per line: compared as text, so a failure shows which. */
static void dump_counter(FILE *f, const struct ctrpp_counter_desc *c)
{
        fprintf(f, "  counter %u type=%#x attrib=%#llx size=%u detail=%u scale=%d agg=%d "
                "base=%#x time=%#x freq=%#x multi=%#x name_id=%u desc_id=%u\n", c->id, c->type,
                (unsigned long long) c->attrib, c->size, c->detail_level, c->default_scale,
                c->aggregate, c->base_id, c->perf_time_id, c->perf_freq_id, c->multi_counter_id,
                c->name_id, c->description_id);
        fprintf(f, "    symbol=%s uri=%s\n    name=%s\n    description=%s\n",
                c->symbol ? c->symbol : "(null)", c->uri ? c->uri : "(null)",
                c->name ? c->name : "(null)", c->description ? c->description : "(null)");
}

static void dump_guid(FILE *f, const struct ctrpp_guid *g)
{
        GUID x = { .Data1 = g->data1, .Data2 = g->data2, .Data3 = g->data3 };
        char text[REG_GUID_TEXT_MAX];

        memcpy(x.Data4, g->data4, sizeof(x.Data4));
        reg_guid_format(&x, text);
        fputs(text, f);
}

static void dump_counterset(FILE *f, const struct ctrpp_counterset_desc *cs)
{
        fputs("counterset ", f);
        dump_guid(f, &cs->guid);
        fprintf(f, " instance_type=%u name_id=%u desc_id=%u n=%u\n  symbol=%s uri=%s\n"
                "  name=%s\n  description=%s\n  instances=%s\n", cs->instance_type, cs->name_id,
                cs->description_id, cs->n_counters, cs->symbol ? cs->symbol : "(null)",
                cs->uri ? cs->uri : "(null)", cs->name ? cs->name : "(null)",
                cs->description ? cs->description : "(null)",
                cs->instances ? cs->instances : "(null)");
        for (uint32_t i = 0; i < cs->n_counters; i++)
                dump_counter(f, &cs->counters[i]);
}

static char *dump(const struct ctrpp_provider_desc *d)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        assert_non_null(f);
        fprintf(f, "version=%u size=%u provider ", d->version, d->size);
        dump_guid(f, &d->guid);
        fprintf(f, " custom=%u kernel=%u resource_base=%#x n=%u\nname=%s symbol=%s\n"
                "application_identity=%s schema=%s manifest=%s\n", d->callback_custom,
                d->kernel_mode, d->resource_base, d->n_countersets, d->name ? d->name : "(null)",
                d->symbol ? d->symbol : "(null)",
                d->application_identity ? d->application_identity : "(null)",
                d->schema_version ? d->schema_version : "(null)",
                d->manifest ? d->manifest : "(null)");
        for (uint32_t i = 0; i < d->n_countersets; i++)
                dump_counterset(f, &d->countersets[i]);
        assert_int_equal(fclose(f), 0);
        return text;
}

static void expect_same_desc(const struct ctrpp_provider_desc *got,
                             const struct ctrpp_provider_desc *want)
{
        char *g = dump(got), *w = dump(want);

        assert_string_equal(g, w);
        free(g);
        free(w);
}

/* Warnings collected from reg_load. */
struct warnings {
        char *msg[32];
        size_t n;
};

static void collect(const char *msg, void *userdata)
{
        struct warnings *w = userdata;

        assert_true(w->n < 32);
        w->msg[w->n] = strdup(msg);
        assert_non_null(w->msg[w->n]);
        w->n++;
}

/* Whether one warning contains both a and b. */
static bool warned(const struct warnings *w, const char *a, const char *b)
{
        for (size_t i = 0; i < w->n; i++)
                if (strstr(w->msg[i], a) && strstr(w->msg[i], b))
                        return true;
        return false;
}

static void warnings_free(struct warnings *w)
{
        for (size_t i = 0; i < w->n; i++)
                free(w->msg[i]);
        w->n = 0;
}

static int install(const char *dir, const char *manifest, const char *app_dir)
{
        struct regadm a = { .prog = "test-lodctr", .registry_dir = dir, .lock_fd = -1 };

        return regadm_install(&a, manifest, app_dir);
}

static struct regadm admin(const char *dir)
{
        return (struct regadm) { .prog = "test-unlodctr", .registry_dir = dir, .lock_fd = -1 };
}

static const struct reg_entry *find_entry(const struct reg_entry *e, size_t n,
                                          const struct ctrpp_guid *g)
{
        for (size_t i = 0; i < n; i++)
                if (memcmp(&e[i].desc->guid, g, sizeof(*g)) == 0)
                        return &e[i];
        return NULL;
}

/* A listing of dir (names, sizes, contents), to see that nothing changed. */
static char *snapshot(const char *dir)
{
        struct reg_file *files = NULL;
        size_t n = 0;
        char *all = strdup("");

        assert_int_equal(reg_list(dir, &files, &n), 0);
        for (size_t i = 0; i < n; i++) {
                char *path = fmt("%s/%s", dir, files[i].name), *text = read_text(path), *next;
                next = fmt("%s%s\n%s\n", all, files[i].name, text);
                free(all);
                all = next;
                free(text);
                free(path);
        }
        reg_files_free(files, n);
        return all;
}

/* ---- names ---- */

static void guid_text(void **state)
{
        static const GUID g = { 0xab8e1320, 0x965a, 0x4cf9,
                                { 0x9c, 0x07, 0xfe, 0x25, 0x37, 0x8c, 0x2a, 0x23 } };
        char text[REG_GUID_TEXT_MAX];
        GUID x;

        reg_guid_format(&g, text);
        assert_string_equal(text, "{ab8e1320-965a-4cf9-9c07-fe25378c2a23}");
        assert_true(reg_guid_parse(text, &x));
        assert_memory_equal(&x, &g, sizeof(g));
        assert_true(reg_guid_parse("AB8E1320-965A-4CF9-9C07-FE25378C2A23", &x));
        assert_memory_equal(&x, &g, sizeof(g));
        assert_false(reg_guid_parse("ab8e1320-965a-4cf9-9c07-fe25378c2a2", &x));
        assert_false(reg_guid_parse("{ab8e1320-965a-4cf9-9c07-fe25378c2a23", &x));
        assert_false(reg_guid_parse("ab8e1320x965a-4cf9-9c07-fe25378c2a23", &x));
        assert_false(reg_guid_parse("", &x));
        assert_false(reg_guid_parse(NULL, &x));
}

static void default_dir(void **state)
{
        char *d = NULL;

        assert_int_equal(setenv("PERFLIB_REGISTRY_DIR", "/some/where", 1), 0);
        assert_int_equal(reg_default_dir(&d), 0);
        assert_string_equal(d, "/some/where");
        free(d);
        assert_int_equal(unsetenv("PERFLIB_REGISTRY_DIR"), 0);
        assert_int_equal(reg_default_dir(&d), 0);
        assert_true(d[0] == '/' && strstr(d, "perflib"));
        free(d);
}

/* ---- loading ---- */

static void missing_dir(void **state)
{
        struct reg_entry *e = (struct reg_entry *) 1;
        char *dir = tmp_path("nonexistent"), *file = tmp_path("plain");
        size_t n = 99;

        assert_int_equal(reg_load(dir, NULL, NULL, &e, &n), 0);
        assert_int_equal(n, 0);
        reg_entries_free(e, n);
        /* Nothing was created by looking. */
        assert_int_equal(access(dir, F_OK), -1);
        assert_int_equal(mkdir(dir, 0755), 0);
        assert_int_equal(reg_load(dir, NULL, NULL, &e, &n), 0);
        assert_int_equal(n, 0);
        reg_entries_free(e, n);
        write_text(file, "x");
        assert_int_equal(reg_load(file, NULL, NULL, &e, &n), -ENOTDIR);
        assert_int_equal(reg_load(NULL, NULL, NULL, &e, &n), -EINVAL);
        reg_entries_free(NULL, 0);
        free(dir);
        free(file);
}

/* Each golden manifest alone, installed as lodctr installs it: the same description. */
static void golden_each(void **state)
{
        for (size_t i = 0; i < N_GOLDENS; i++) {
                char *dir = tmp_path(goldens[i].desc->manifest);
                char *man = golden_manifest(i);
                char *src = realpath(man, NULL);
                struct reg_entry *e = NULL;
                struct warnings w = { 0 };
                size_t n = 0;

                assert_int_equal(install(dir, man, NULL), 0);
                assert_int_equal(reg_load(dir, collect, &w, &e, &n), 0);
                assert_int_equal(w.n, 0);
                assert_int_equal(n, 1);
                expect_same_desc(e[0].desc, goldens[i].desc);
                assert_non_null(src);
                assert_string_equal(e[0].source, src);
                assert_null(e[0].app_dir);
                assert_non_null(strstr(e[0].file, dir));
                reg_entries_free(e, n);
                free(src);
                free(man);
                free(dir);
        }
}

/* Every golden that can be installed beside the others, in one registry. */
static void golden_together(void **state)
{
        char *dir = tmp_path("registry"), *app = tmp_path("app");
        struct reg_entry *e = NULL;
        struct warnings w = { 0 };
        size_t n = 0, want = 0;

        assert_int_equal(mkdir(app, 0755), 0);
        for (size_t i = 0; i < N_GOLDENS; i++) {
                char *man = golden_manifest(i);
                /* The kernel-mode example reuses the user-mode example's GUIDs. */
                int r = install(dir, man, i == 2 ? app : NULL);
                assert_int_equal(r, i == 1 ? -EEXIST : 0);
                want += r == 0;
                free(man);
        }
        assert_int_equal(reg_load(dir, collect, &w, &e, &n), 0);
        assert_int_equal(w.n, 0);
        assert_int_equal(n, want);
        for (size_t i = 1; i < n; i++)
                assert_true(strcmp(e[i - 1].file, e[i].file) < 0);
        for (size_t i = 0; i < N_GOLDENS; i++) {
                const struct reg_entry *x = find_entry(e, n, &goldens[i].desc->guid);
                assert_non_null(x);
                if (i == 1)
                        continue;       /* refused; the user-mode example has this GUID */
                expect_same_desc(x->desc, goldens[i].desc);
                if (i == 2)
                        assert_string_equal(x->app_dir, realpath(app, (char[PATH_MAX]) { 0 }));
                else
                        assert_null(x->app_dir);
        }
        reg_entries_free(e, n);
        free(app);
        free(dir);
}

#define P1 "{10000000-0000-4000-8000-000000000001}"
#define P2 "{20000000-0000-4000-8000-000000000002}"
#define P3 "{30000000-0000-4000-8000-000000000003}"
#define P4 "{40000000-0000-4000-8000-000000000004}"
#define P5 "{50000000-0000-4000-8000-000000000005}"
#define P6 "{60000000-0000-4000-8000-000000000006}"
#define P7 "{70000000-0000-4000-8000-000000000007}"
#define P8 "{80000000-0000-4000-8000-000000000008}"
#define C1 "{c1000000-0000-4000-8000-0000000000c1}"
#define C2 "{c2000000-0000-4000-8000-0000000000c2}"
#define C3 "{c3000000-0000-4000-8000-0000000000c3}"

/* Every kind of broken file is skipped with a warning naming it; the good ones load. */
static void corrupt_skipped(void **state)
{
        char *dir = tmp_path("registry"), *outside = tmp_path("outside.man");
        struct reg_entry *e = NULL;
        struct warnings w = { 0 };
        size_t n = 0;
        char *p;
        int fd;

        assert_int_equal(mkdir(dir, 0755), 0);
        assert_int_equal(chdir(dir), 0);
        write_manifest(P1 ".man", P1, C1, "Good");
        /* A second provider with the good one's counterset: the later name loses. */
        write_manifest(P2 ".man", P2, C1, "SameSet");
        /* Not XML, not valid, not the provider of its name. */
        write_text(P3 ".man", "this is not a manifest\n");
        p = manifest_text(P4, C2, "Bad", "perf_counter_nonsense");
        write_text(P4 ".man", p);
        free(p);
        write_manifest(P5 ".man", P6, C3, "Misnamed");
        /* A symbolic link, a directory, a file too large to be a manifest. */
        write_manifest(outside, P6, C3, "Linked");
        assert_int_equal(symlink(outside, P6 ".man"), 0);
        assert_int_equal(mkdir(P7 ".man", 0755), 0);
        assert_true((fd = open(P8 ".man", O_WRONLY | O_CREAT, 0644)) >= 0);
        assert_int_equal(ftruncate(fd, 17 << 20), 0);
        close(fd);
        /* Not entries at all, so no warning either. */
        write_text(".lodctr.abcdef", "partial");
        write_text("README", "hello");
        write_text(P1 ".man.bak", "old");
        write_text("{not-a-guid}.man", "x");
        assert_int_equal(chdir("/"), 0);

        assert_int_equal(reg_load(dir, collect, &w, &e, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(e[0].desc->name, "Good");
        assert_string_equal(e[0].desc->manifest, P1 ".man");    /* no sidecar: its own name */
        assert_null(e[0].source);
        assert_int_equal(w.n, 7);
        assert_true(warned(&w, P2 ".man", C1));
        assert_true(warned(&w, P3 ".man", "not a valid manifest"));
        assert_true(warned(&w, P4 ".man", "not a valid manifest"));
        assert_true(warned(&w, P5 ".man", "no provider " P5));
        assert_true(warned(&w, P6 ".man", "cannot read"));
        assert_true(warned(&w, P7 ".man", "cannot read"));
        assert_true(warned(&w, P8 ".man", "cannot read"));
        warnings_free(&w);
        reg_entries_free(e, n);
        /* No callback: the same, silently. */
        assert_int_equal(reg_load(dir, NULL, NULL, &e, &n), 0);
        assert_int_equal(n, 1);
        reg_entries_free(e, n);
        free(outside);
        free(dir);
}

static void sidecar(void **state)
{
        char *dir = tmp_path("registry"), *path;
        struct reg_entry *e = NULL;
        struct warnings w = { 0 };
        size_t n = 0;

        assert_int_equal(mkdir(dir, 0755), 0);
        path = fmt("%s/%s.man", dir, P1);
        write_manifest(path, P1, C1, "One");
        free(path);
        path = fmt("%s/%s.info", dir, P1);
        write_text(path, "# comment\n\nmanifest=/src/one.man\napplicationIdentityDirectory=/opt/one\n"
                   "someFutureKey=ignored\n");
        free(path);
        path = fmt("%s/%s.man", dir, P2);
        write_manifest(path, P2, C2, "Two");
        free(path);
        path = fmt("%s/%s.info", dir, P2);
        write_text(path, "a line without the sign\n");
        free(path);
        /* A sidecar without its manifest is no entry. */
        path = fmt("%s/%s.info", dir, P3);
        write_text(path, "manifest=/src/three.man\n");
        free(path);

        assert_int_equal(reg_load(dir, collect, &w, &e, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(e[0].source, "/src/one.man");
        assert_string_equal(e[0].app_dir, "/opt/one");
        assert_string_equal(e[0].desc->manifest, "one.man");
        assert_null(e[1].source);
        assert_null(e[1].app_dir);
        assert_string_equal(e[1].desc->name, "Two");
        assert_int_equal(w.n, 1);
        assert_true(warned(&w, P2 ".info", "key=value"));
        warnings_free(&w);
        reg_entries_free(e, n);
        free(dir);
}

/*
 * Whose an installed provider's countersets are: the manifest file's
 * owner's; the sidecar's owner= when root or that user wrote it, else
 * ignored with a warning.  A reload sees a chown.  chown needs root.
 */
static void owner(void **state)
{
        char *dir = tmp_path("registry"), *man[3], *info[3];
        struct reg_entry *e = NULL, *e2 = NULL;
        struct warnings w = { 0 };
        size_t n = 0, n2 = 0;

        if (geteuid() != 0)
                skip();
        assert_int_equal(mkdir(dir, 0755), 0);
        for (int i = 0; i < 3; i++) {
                static const char *const p[] = { P1, P2, P3 }, *const c[] = { C1, C2, C3 };

                man[i] = fmt("%s/%s.man", dir, p[i]);
                info[i] = fmt("%s/%s.info", dir, p[i]);
                write_manifest(man[i], p[i], c[i], "Owned");
        }
        assert_int_equal(chown(man[0], 1000, 1000), 0);
        write_text(info[1], "manifest=/src/two.man\nowner=65534\n");
        write_text(info[2], "owner=0\n");
        assert_int_equal(chown(man[2], 1000, 1000), 0);
        assert_int_equal(chown(info[2], 1000, 1000), 0);

        assert_int_equal(reg_load(dir, collect, &w, &e, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(e[0].owner, 1000);
        assert_int_equal(e[1].owner, 65534);
        assert_int_equal(e[2].owner, 1000);     /* uid 1000 may not make it root's */
        assert_int_equal(w.n, 1);
        assert_true(warned(&w, P3 ".info", "owner=0 ignored"));
        warnings_free(&w);

        assert_int_equal(chown(man[0], 0, 0), 0);
        assert_int_equal(reg_reload(dir, e, n, NULL, NULL, &e2, &n2), 0);
        assert_int_equal(e2[0].owner, 0);
        reg_entries_free(e2, n2);
        for (int i = 0; i < 3; i++) {
                free(man[i]);
                free(info[i]);
        }
        free(dir);
}

/* lodctr --owner: the sidecar names the user; an unknown user installs nothing. */
static void install_owner(void **state)
{
        char *dir = tmp_path("registry"), *dir2 = tmp_path("registry2");
        char *manifest = golden_manifest(0);
        struct regadm a = { .prog = "test-lodctr", .registry_dir = dir, .lock_fd = -1,
                            .owner = "nobody" };
        struct reg_entry *e = NULL;
        size_t n = 0;
        int status;
        pid_t pid;

        if (geteuid() != 0)
                skip();
        assert_int_equal(regadm_install(&a, manifest, NULL), 0);
        assert_int_equal(reg_load(dir, NULL, NULL, &e, &n), 0);
        assert_true(n >= 1);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(e[i].owner, 65534);
        reg_entries_free(e, n);

        /* Anyone but root naming another user than itself is refused. */
        a.owner = "root";
        a.registry_dir = dir2;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0 &&
                      regadm_install(&a, manifest, NULL) == -EPERM ? 0 : 1);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(access(dir2, F_OK), -1);       /* refused before anything was made */
        a.owner = "no-such-user-here";
        a.registry_dir = dir;
        assert_int_equal(regadm_install(&a, manifest, NULL), -ENOENT);
        free(manifest);
        free(dir);
        free(dir2);
}

/* Hundreds of manifests load, in name order, every one. */
static void many(void **state)
{
        char *dir = tmp_path("registry");
        struct reg_entry *e = NULL;
        size_t n = 0;
        enum { N = 300 };

        assert_int_equal(mkdir(dir, 0755), 0);
        for (unsigned i = 0; i < N; i++) {
                char *pg = fmt("{%08x-0000-4000-8000-000000000001}", i);
                char *cg = fmt("{%08x-0000-4000-8000-0000000000c1}", i);
                char *name = fmt("Provider%u", i), *path = fmt("%s/%s.man", dir, pg);
                write_manifest(path, pg, cg, name);
                free(pg);
                free(cg);
                free(name);
                free(path);
        }
        assert_int_equal(reg_load(dir, NULL, NULL, &e, &n), 0);
        assert_int_equal(n, N);
        for (unsigned i = 0; i < N; i++) {
                char *name = fmt("Provider%u", i);
                assert_string_equal(e[i].desc->name, name);
                assert_int_equal(e[i].desc->guid.data1, i);
                assert_int_equal(e[i].desc->n_countersets, 1);
                free(name);
        }
        reg_entries_free(e, n);
        free(dir);
}

/* reg_reload parses only what changed, and keeps prev intact when it fails. */
static void reload(void **state)
{
        char *dir = tmp_path("registry"), *m[4], *plain = tmp_path("plain"), *info;
        const struct ctrpp_provider_desc *old[4];
        static const char *const guids[] = { P1, P2, P3, P4 };
        static const char *const sets[] = { C1, C2, C3, "{c4000000-0000-4000-8000-0000000000c4}" };
        struct regadm a = admin(dir);
        struct reg_entry *e = NULL, *e2 = NULL;
        size_t n = 0, n2 = 0;

        for (int i = 0; i < 4; i++) {
                char *name = fmt("m%d.man", i);
                m[i] = tmp_path(name);
                write_manifest(m[i], guids[i], sets[i], name);
                free(name);
        }
        for (int i = 0; i < 3; i++)
                assert_int_equal(install(dir, m[i], NULL), 0);
        assert_int_equal(reg_load(dir, NULL, NULL, &e, &n), 0);
        assert_int_equal(n, 3);
        for (size_t i = 0; i < n; i++)
                old[i] = e[i].desc;

        /* Nothing changed: the same descriptions, moved. */
        assert_int_equal(reg_reload(dir, e, n, NULL, NULL, &e2, &n2), 0);
        assert_int_equal(n2, 3);
        for (size_t i = 0; i < n2; i++)
                assert_ptr_equal(e2[i].desc, old[i]);
        e = e2;
        n = n2;

        /* P1 reinstalled, P2 removed, P4 new, P3's sidecar rewritten. */
        assert_int_equal(regadm_remove_guid(&a, P1), 0);
        assert_int_equal(install(dir, m[0], NULL), 0);
        assert_int_equal(regadm_remove_guid(&a, P2), 0);
        assert_int_equal(install(dir, m[3], NULL), 0);
        info = fmt("%s/%s.info", dir, P3);
        write_text(info, "manifest=/elsewhere/m2.man\n");
        free(info);
        assert_int_equal(reg_reload(dir, e, n, NULL, NULL, &e2, &n2), 0);
        assert_int_equal(n2, 3);
        assert_true(e2[0].desc != old[0]);
        assert_string_equal(e2[0].desc->name, "m0.man");
        assert_true(e2[1].desc != old[2]);
        assert_string_equal(e2[1].source, "/elsewhere/m2.man");
        assert_string_equal(e2[2].desc->name, "m3.man");

        /* A failed reload leaves prev as it was (ASan sees any double free). */
        write_text(plain, "x");
        assert_int_equal(reg_reload(plain, e2, n2, NULL, NULL, &e, &n), -ENOTDIR);
        assert_string_equal(e2[2].desc->name, "m3.man");
        reg_entries_free(e2, n2);
        for (int i = 0; i < 4; i++)
                free(m[i]);
        free(plain);
        free(dir);
}

/* ---- lodctr and unlodctr ---- */

static void install_refused(void **state)
{
        char *dir = tmp_path("registry"), *one = tmp_path("one.man"), *same_guid = tmp_path("p.man");
        char *same_set = tmp_path("c.man"), *bad = tmp_path("bad.man"), *before, *after;
        char *p;

        write_manifest(one, P1, C1, "One");
        write_manifest(same_guid, P1, C2, "Other");
        write_manifest(same_set, P2, C1, "Another");
        p = manifest_text(P3, C3, "Bad", "perf_counter_nonsense");
        write_text(bad, p);
        free(p);

        /* A bad manifest does not even create the registry. */
        assert_int_equal(install(dir, bad, NULL), -EBADMSG);
        assert_int_equal(access(dir, F_OK), -1);
        assert_int_equal(install(dir, one, "/nonexistent/app/dir"), -ENOENT);
        assert_int_equal(access(dir, F_OK), -1);

        assert_int_equal(install(dir, one, NULL), 0);
        before = snapshot(dir);
        assert_int_equal(install(dir, one, NULL), -EEXIST);
        assert_int_equal(install(dir, same_guid, NULL), -EEXIST);
        assert_int_equal(install(dir, same_set, NULL), -EEXIST);
        assert_int_equal(install(dir, bad, NULL), -EBADMSG);
        after = snapshot(dir);
        assert_string_equal(after, before);
        free(before);
        free(after);
        free(one);
        free(same_guid);
        free(same_set);
        free(bad);
        free(dir);
}

static size_t count_installed(const char *dir)
{
        struct reg_file *f = NULL;
        size_t n = 0;

        assert_int_equal(reg_list(dir, &f, &n), 0);
        reg_files_free(f, n);
        return n;
}

static void removal(void **state)
{
        char *dir = tmp_path("registry"), *m1 = tmp_path("one.man"), *m2 = tmp_path("two.man");
        char *m3 = tmp_path("three.man"), *info;
        struct regadm a = admin(dir);

        write_manifest(m1, P1, C1, "One");
        write_manifest(m2, P2, C2, "Two");
        write_manifest(m3, P3, C3, "two");      /* the same name, another case */

        /* Nothing installed yet, not even a registry: not found, nothing created. */
        assert_int_equal(regadm_remove_guid(&a, P1), -ENOENT);
        assert_int_equal(access(dir, F_OK), -1);
        assert_int_equal(install(dir, m1, NULL), 0);
        assert_int_equal(install(dir, m2, NULL), 0);
        assert_int_equal(install(dir, m3, NULL), 0);
        assert_int_equal(count_installed(dir), 3);

        assert_int_equal(regadm_remove_guid(&a, "not-a-guid"), -EINVAL);
        assert_int_equal(regadm_remove_guid(&a, P4), -ENOENT);
        assert_int_equal(regadm_remove_name(&a, "Nobody"), -ENOENT);
        assert_int_equal(regadm_remove_name(&a, "TWO"), -ENOTUNIQ);
        assert_int_equal(count_installed(dir), 3);

        /* By GUID without braces, upper case; the sidecar goes too. */
        assert_int_equal(regadm_remove_guid(&a, "30000000-0000-4000-8000-000000000003"), 0);
        info = fmt("%s/%s.info", dir, P3);
        assert_int_equal(access(info, F_OK), -1);
        free(info);
        assert_int_equal(count_installed(dir), 2);
        assert_int_equal(regadm_remove_name(&a, "two"), 0);
        assert_int_equal(count_installed(dir), 1);
        assert_int_equal(regadm_remove_manifest(&a, m2), -ENOENT);
        assert_int_equal(regadm_remove_manifest(&a, m1), 0);
        assert_int_equal(count_installed(dir), 0);
        assert_int_equal(regadm_remove_manifest(&a, m1), -ENOENT);
        free(m1);
        free(m2);
        free(m3);
        free(dir);
}

/* What an interrupted lodctr left is cleared by the next run, under the lock. */
static void leftovers(void **state)
{
        char *dir = tmp_path("registry"), *m1 = tmp_path("one.man"), *tmp, *orphan, *lock;

        write_manifest(m1, P1, C1, "One");
        assert_int_equal(mkdir(dir, 0755), 0);
        tmp = fmt("%s/.lodctr.Xy12ab", dir);
        orphan = fmt("%s/%s.info", dir, P2);
        lock = fmt("%s/.lock", dir);
        write_text(tmp, "half");
        write_text(orphan, "manifest=/gone.man\n");
        assert_int_equal(install(dir, m1, NULL), 0);
        assert_int_equal(access(tmp, F_OK), -1);
        assert_int_equal(access(orphan, F_OK), -1);
        assert_int_equal(access(lock, F_OK), 0);
        assert_int_equal(count_installed(dir), 1);
        free(tmp);
        free(orphan);
        free(lock);
        free(m1);
        free(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(guid_text),
                cmocka_unit_test(default_dir),
                TU_TEST(missing_dir),
                TU_TEST(golden_each),
                TU_TEST(golden_together),
                TU_TEST(corrupt_skipped),
                TU_TEST(sidecar),
                TU_TEST(owner),
                TU_TEST(install_owner),
                TU_TEST(many),
                TU_TEST(reload),
                TU_TEST(install_refused),
                TU_TEST(removal),
                TU_TEST(leftovers),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
