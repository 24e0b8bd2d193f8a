/* SPDX-License-Identifier: MIT */
/*
 * lodctr: installs a counter manifest's providers into the registry
 * directory, so that perflibd serves their countersets whether or not a
 * provider runs.  The command line is Windows' "lodctr /M:manifest [path]";
 * the work is reg-admin.c's.  See lodctr(8).
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reg-admin.h"

struct args {
        const char *manifest;           /* /M: */
        const char *app_dir;            /* the applicationIdentityDirectory */
};

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: lodctr [--registry-dir DIR] [--owner USER] /M:MANIFEST\n"
                "              [APPLICATION-IDENTITY-DIRECTORY]\n"
                "Validate a performance counter manifest and install its providers, so that\n"
                "perflibd lists their countersets.\n"
                "\n"
                "  /M:MANIFEST             the manifest to install (also -M:, /m:)\n"
                "  APPLICATION-IDENTITY-DIRECTORY\n"
                "                          where the provider's binary (applicationIdentity) lives\n"
                "      --registry-dir DIR  the registry (default: $PERFLIB_REGISTRY_DIR, else\n"
                "                          %s)\n"
                "      --owner USER        USER's providers may publish its countersets (besides\n"
                "                          root's); default: the user running lodctr.  Only root\n"
                "                          may name another user\n"
                "  -h, --help, /?          show this help and exit\n"
                "      --version           show the version and exit\n"
                "\n"
                "A provider or counterset GUID that is installed already is refused: remove it\n"
                "first with unlodctr.  Exit status: 0 installed, 1 not installed (bad manifest,\n"
                "already installed, system error), 2 usage error.  See lodctr(8).\n",
                PERFLIB_REGISTRY_DIR_DEFAULT);
}

static int take_switch(struct regadm *a, const char *arg, char letter, const char *value,
                       void *userdata)
{
        struct args *o = userdata;

        if (letter != 'M')
                return regadm_usage_error(a, "option '%s' is not supported: Perflib for Linux "
                                          "installs counter manifests (/M:) only", arg);
        if (o->manifest)
                return regadm_usage_error(a, "one manifest at a time, please");
        if (!*value)
                return regadm_usage_error(a, "'%s' needs a manifest: /M:FILE", arg);
        o->manifest = value;
        return 0;
}

static int take_other(struct regadm *a, const char *arg, void *userdata)
{
        struct args *o = userdata;

        if (o->app_dir)
                return regadm_usage_error(a, "one applicationIdentityDirectory, please "
                                          "('%s' and '%s')", o->app_dir, arg);
        o->app_dir = arg;
        return 0;
}

/* 0: go on; 1: exit 0 now (help, version); -EINVAL: usage error (reported). */
static int parse_args(struct regadm *a, int argc, char **argv, struct args *o)
{
        static const struct regadm_arg_handlers h = { take_switch, take_other };
        int r = regadm_parse_args(a, argc, argv, &h, o);

        if (r != 0 || o->manifest)
                return r;
        if (o->app_dir)
                return regadm_usage_error(a, "'%s': counters version 1 (.ini files) are not "
                                          "supported; install a manifest with /M:MANIFEST",
                                          o->app_dir);
        return regadm_usage_error(a, "no manifest given (/M:MANIFEST)");
}

int main(int argc, char **argv)
{
        struct regadm a = { .prog = "lodctr", .usage = usage, .lock_fd = -1, .takes_owner = true };
        struct args o = { 0 };
        int r = parse_args(&a, argc, argv, &o);

        if (r == 1)
                return REGADM_EXIT_OK;
        if (r < 0)
                return REGADM_EXIT_USAGE;
        return regadm_exit_status(regadm_install(&a, o.manifest, o.app_dir));
}
