/* SPDX-License-Identifier: MIT */
/*
 * ctrpp: compiles a counter manifest into the header and string resources a
 * provider is built with.  The command line mirrors Microsoft's ctrpp; the
 * work is libperfman's (parse, validate) and gen-*.c's (output).
 *
 * Outputs are written to temporary files beside their targets and renamed
 * into place only once every one of them is complete, so an error never
 * leaves a half-written or stale-mixed set behind.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h"
#include "perfman.h"

struct args {
        const char *manifest;
        const char *header;             /* -o */
        const char *resource;           /* -rc */
        const char *counters_header;    /* -ch */
        struct gen_options gen;
        bool werror;
        char *owned[2];                 /* default output paths we made */
};

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: ctrpp [OPTION]... MANIFEST\n"
                "Validate a performance counter manifest and generate the provider's header\n"
                "and string resources.\n"
                "\n"
                "  -o FILE                 the provider header (default: MANIFEST's base name + .h)\n"
                "  -rc FILE                the string resources as C data (default: base name +\n"
                "                          _strings.c)\n"
                "  -ch FILE                also write counterset and counter symbol constants\n"
                "  -prefix PREFIX          prefix the generated function and variable names\n"
                "  -legacy                 write Vista's BASE.h, BASE.c, BASE.rc and BASE_r.h\n"
                "                          beside the manifest (PerfAutoInitialize form)\n"
                "  -MemoryRoutines         CounterInitialize takes memory allocation routines\n"
                "  -NotificationCallback   CounterInitialize takes a notification callback\n"
                "  -Werror                 treat warnings as errors\n"
                "  -h, --help              show this help and exit\n"
                "      --version           show the version and exit\n"
                "\n"
                "Outputs go to the current directory unless a path says otherwise; nothing is\n"
                "written when the manifest has errors.  Exit status: 0 success, 1 errors.\n"
                "See ctrpp(1).\n");
}

/* Microsoft's options are single-dash and case-insensitive. */
static bool opt_is(const char *arg, const char *name)
{
        return arg[0] == '-' && strcasecmp(arg + 1, name) == 0;
}

static int take_value(int argc, char **argv, int *i, const char **ret)
{
        if (*i + 1 >= argc) {
                fprintf(stderr, "ctrpp: option '%s' needs a value\n", argv[*i]);
                return -EINVAL;
        }
        *ret = argv[++*i];
        return 0;
}

/* 0: go on; 1: exit 0 now (help, version); -EINVAL: usage error (reported). */
static int parse_flag(const char *a, struct args *o)
{
        if (opt_is(a, "legacy"))
                o->gen.legacy = true;
        else if (opt_is(a, "MemoryRoutines"))
                o->gen.memory_routines = true;
        else if (opt_is(a, "NotificationCallback"))
                o->gen.notification_callback = true;
        else if (opt_is(a, "backcompat")) {
                /* It makes -km code load PCW at run time on Windows before 7: nothing here. */
                fprintf(stderr, "ctrpp: option '%s' is not supported: it makes kernel-mode (PCW) code "
                        "load its functions at run time on Windows before 7; Linux has no PCW, "
                        "so drop it\n", a);
                return -EINVAL;
        } else if (opt_is(a, "Werror"))
                o->werror = true;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-?") == 0) {
                usage(stdout);
                return 1;
        } else if (strcmp(a, "--version") == 0) {
                printf("ctrpp (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
                return 1;
        } else {
                fprintf(stderr, "ctrpp: unknown option '%s'\n", a);
                return -EINVAL;
        }
        return 0;
}

/* As Windows' ctrpp: -legacy names its files itself and takes no other output options. */
static int check_legacy(const struct args *o)
{
        const char *clash = o->header ? "-o" : o->resource ? "-rc" : o->counters_header ? "-ch" :
                            o->gen.prefix ? "-prefix" : NULL;

        if (!o->gen.legacy || !clash)
                return 0;
        fprintf(stderr, "ctrpp: -legacy writes BASE.h, BASE.c, BASE.rc and BASE_r.h beside the "
                "manifest, as Windows' ctrpp does; it cannot be used with %s\n", clash);
        return -EINVAL;
}

static int parse_args(int argc, char **argv, struct args *o)
{
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                int r = 0;

                if (a[0] != '-' || !a[1]) {
                        if (o->manifest) {
                                fprintf(stderr, "ctrpp: only one manifest, please ('%s' and '%s')\n",
                                        o->manifest, a);
                                return -EINVAL;
                        }
                        o->manifest = a;
                } else if (opt_is(a, "o"))
                        r = take_value(argc, argv, &i, &o->header);
                else if (opt_is(a, "rc"))
                        r = take_value(argc, argv, &i, &o->resource);
                else if (opt_is(a, "ch"))
                        r = take_value(argc, argv, &i, &o->counters_header);
                else if (opt_is(a, "prefix"))
                        r = take_value(argc, argv, &i, &o->gen.prefix);
                else
                        r = parse_flag(a, o);
                if (r != 0)
                        return r;
        }
        if (!o->manifest) {
                fprintf(stderr, "ctrpp: no manifest given\n");
                return -EINVAL;
        }
        return check_legacy(o);
}

/* "dir/ucs.man" -> "ucs" + suffix, in the current directory; owned by the caller. */
static char *default_output(const char *manifest, const char *suffix)
{
        char *copy = strdup(manifest), *out = NULL;

        if (!copy)
                return NULL;
        char *base = basename(copy);
        char *dot = strrchr(base, '.');
        if (dot && dot != base)
                *dot = '\0';
        if (asprintf(&out, "%s%s", base, suffix) < 0)
                out = NULL;
        free(copy);
        return out;
}

/* "dir/ucs.man" -> "dir/ucs" + suffix: -legacy writes beside the manifest.  Owned by the caller. */
static char *legacy_output(const char *manifest, const char *suffix)
{
        const char *slash = strrchr(manifest, '/');
        const char *dot = strrchr(slash ? slash + 1 : manifest, '.');
        size_t n = dot && dot != (slash ? slash + 1 : manifest) ? (size_t) (dot - manifest)
                                                                 : strlen(manifest);
        char *out = NULL;

        if (asprintf(&out, "%.*s%s", (int) n, manifest, suffix) < 0)
                out = NULL;
        return out;
}

static int fill_defaults(struct args *o)
{
        if (o->gen.legacy)
                return 0;
        if (!o->header) {
                o->header = o->owned[0] = default_output(o->manifest, ".h");
                if (!o->header)
                        return -ENOMEM;
        }
        if (!o->resource) {
                o->resource = o->owned[1] = default_output(o->manifest, "_strings.c");
                if (!o->resource)
                        return -ENOMEM;
        }
        if (!o->gen.prefix)
                o->gen.prefix = "";
        return 0;
}

/* ---- writing ---- */

struct output {
        const char *path;
        char *tmp;                      /* path of the temporary file, owned */
        int (*gen)(const struct pm_manifest *, const struct gen_options *, FILE *);
};

/* Base name of a path, without copying: for guards and #include lines. */
static const char *base_of(const char *path)
{
        const char *s = strrchr(path, '/');
        return s ? s + 1 : path;
}

static int write_one(struct output *out, const struct pm_manifest *m, const struct gen_options *g)
{
        FILE *f = NULL;
        int fd, r;

        if (asprintf(&out->tmp, "%s.XXXXXX", out->path) < 0) {
                out->tmp = NULL;
                return -ENOMEM;
        }
        fd = mkstemp(out->tmp);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                free(out->tmp);
                out->tmp = NULL;
                return r;
        }
        r = out->gen(m, g, f);
        if (fflush(f) != 0 && r == 0)
                r = -errno;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

static void discard(struct output *outs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (outs[i].tmp) {
                        (void) unlink(outs[i].tmp);
                        free(outs[i].tmp);
                        outs[i].tmp = NULL;
                }
}

static void free_paths(struct output *outs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free((char *) outs[i].path);
}

/* -legacy's four files, in outs[0..3]; their paths are owned by the caller. */
static int legacy_outputs(const char *manifest, struct output *outs)
{
        static const char *const suffix[] = { ".h", ".c", ".rc", "_r.h" };
        int (*const gen[])(const struct pm_manifest *, const struct gen_options *, FILE *) = {
                gen_legacy_header, gen_legacy_source, gen_legacy_rc, gen_legacy_ids,
        };

        for (size_t i = 0; i < 4; i++) {
                outs[i] = (struct output) { .path = legacy_output(manifest, suffix[i]),
                                            .gen = gen[i] };
                if (!outs[i].path) {
                        free_paths(outs, i);
                        return -ENOMEM;
                }
        }
        return 0;
}

static int write_outputs(const struct args *o, const struct pm_manifest *m)
{
        struct output outs[4] = {
                { .path = o->header, .gen = gen_header },
                { .path = o->resource, .gen = gen_resource },
                { .path = o->counters_header, .gen = gen_counters_header },
        };
        size_t n = o->gen.legacy ? 4 : o->counters_header ? 3 : 2;
        struct gen_options g = o->gen;
        int r = 0;

        if (o->gen.legacy && (r = legacy_outputs(o->manifest, outs)) < 0)
                return r;
        g.header_name = base_of(outs[0].path);
        g.resource_name = base_of(outs[1].path);
        g.counters_header_name = o->counters_header ? base_of(o->counters_header) : NULL;
        for (size_t i = 0; i < n && r == 0; i++)
                if ((r = write_one(&outs[i], m, &g)) < 0)
                        fprintf(stderr, "ctrpp: cannot write %s: %s\n", outs[i].path, strerror(-r));
        for (size_t i = 0; i < n && r == 0; i++) {
                /* Mode as the umask says, not mkstemp's 0600. */
                mode_t mask = umask(0);
                umask(mask);
                if (chmod(outs[i].tmp, 0666 & ~mask) < 0 || rename(outs[i].tmp, outs[i].path) < 0) {
                        r = -errno;
                        fprintf(stderr, "ctrpp: cannot write %s: %s\n", outs[i].path, strerror(-r));
                        break;
                }
                free(outs[i].tmp);
                outs[i].tmp = NULL;
                printf("ctrpp: wrote %s\n", outs[i].path);
        }
        discard(outs, n);
        if (o->gen.legacy)
                free_paths(outs, n);
        return r;
}

/* ---- main ---- */

static int compile(struct args *o)
{
        struct pm_diags *d = pm_diags_new();
        struct pm_manifest *m = NULL;
        int r;

        if (!d)
                return -ENOMEM;
        d->werror = o->werror;
        r = pm_parse_file(o->manifest, d, &m);
        pm_diags_print(d, stderr);
        if (r == -EBADMSG || (r == 0 && pm_diags_failed(d)))
                r = -EBADMSG;
        else if (r < 0)
                fprintf(stderr, "ctrpp: %s: %s\n", o->manifest, strerror(-r));
        else {
                pm_assign_ids(m);
                r = write_outputs(o, m);
        }
        pm_manifest_free(m);
        pm_diags_free(d);
        return r;
}

int main(int argc, char **argv)
{
        struct args o = { 0 };
        int r = parse_args(argc, argv, &o);

        if (r == 0)
                r = fill_defaults(&o);
        if (r == 0)
                r = compile(&o);
        else if (r == -EINVAL)
                fprintf(stderr, "Try 'ctrpp --help' for more information.\n");
        free(o.owned[0]);
        free(o.owned[1]);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
