/* SPDX-License-Identifier: MIT */
/*
 * unlodctr: removes installed providers from the registry directory, named
 * the three ways Windows' unlodctr names them: /M:manifest (every provider
 * of it), /G:{provider-guid}, /P:providerName.  The work is reg-admin.c's.
 * See unlodctr(8).
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reg-admin.h"

struct args {
        char what;                      /* 'M', 'G' or 'P' */
        const char *value;
};

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: unlodctr [--registry-dir DIR] /M:MANIFEST | /G:{PROVIDER-GUID} | /P:NAME\n"
                "Remove installed counter providers, so that perflibd no longer lists their\n"
                "countersets (those of running providers stay listed while they run).\n"
                "\n"
                "  /M:MANIFEST             every provider of this manifest (also -M:, /m:)\n"
                "  /G:{GUID}               the provider with this GUID\n"
                "  /P:NAME                 the provider with this providerName (any case)\n"
                "      --registry-dir DIR  the registry (default: $PERFLIB_REGISTRY_DIR, else\n"
                "                          %s)\n"
                "  -h, --help, /?          show this help and exit\n"
                "      --version           show the version and exit\n"
                "\n"
                "Exit status: 0 removed, 1 not removed (not installed, bad input, system\n"
                "error), 2 usage error.  See unlodctr(8).\n",
                PERFLIB_REGISTRY_DIR_DEFAULT);
}

static int take_switch(struct regadm *a, const char *arg, char letter, const char *value,
                       void *userdata)
{
        struct args *o = userdata;

        if (letter != 'M' && letter != 'G' && letter != 'P')
                return regadm_usage_error(a, "option '%s' is not supported: Perflib for Linux "
                                          "removes manifest providers (/M:, /G:, /P:) only", arg);
        if (o->what)
                return regadm_usage_error(a, "one of /M:, /G: or /P:, once, please");
        if (!*value)
                return regadm_usage_error(a, "'%s' needs a value", arg);
        o->what = letter;
        o->value = value;
        return 0;
}

static int take_other(struct regadm *a, const char *arg, void *userdata)
{
        return regadm_usage_error(a, "'%s': counters version 1 (drivers by name) are not "
                                  "supported; use /M:, /G: or /P:", arg);
}

/* 0: go on; 1: exit 0 now (help, version); -EINVAL: usage error (reported). */
static int parse_args(struct regadm *a, int argc, char **argv, struct args *o)
{
        static const struct regadm_arg_handlers h = { take_switch, take_other };
        int r = regadm_parse_args(a, argc, argv, &h, o);

        if (r == 0 && !o->what)
                return regadm_usage_error(a, "nothing to remove (/M:MANIFEST, /G:{GUID} or "
                                          "/P:NAME)");
        return r;
}

int main(int argc, char **argv)
{
        struct regadm a = { .prog = "unlodctr", .usage = usage, .lock_fd = -1 };
        struct args o = { 0 };
        int r = parse_args(&a, argc, argv, &o);

        if (r == 1)
                return REGADM_EXIT_OK;
        if (r < 0)
                return REGADM_EXIT_USAGE;
        if (o.what == 'M')
                r = regadm_remove_manifest(&a, o.value);
        else if (o.what == 'G')
                r = regadm_remove_guid(&a, o.value);
        else
                r = regadm_remove_name(&a, o.value);
        return regadm_exit_status(r);
}
