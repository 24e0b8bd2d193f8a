/* SPDX-License-Identifier: MIT */
/*
 * reg-cli.c: the command line lodctr and unlodctr share.  Windows spells
 * their switches "/M:file" (any case, '-' for '/' accepted too); the
 * options of our own are GNU-style long options.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "reg-admin.h"

bool regadm_switch(const char *arg, char *ret_letter, const char **ret_value)
{
        if (!arg || (arg[0] != '/' && arg[0] != '-') || !isalpha((unsigned char) arg[1]) ||
            (arg[2] != ':' && arg[2] != '\0'))
                return false;
        if (ret_letter)
                *ret_letter = (char) toupper((unsigned char) arg[1]);
        if (ret_value)
                *ret_value = arg[2] ? arg + 3 : arg + 2;
        return true;
}

int regadm_usage_error(const struct regadm *a, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", a->prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry '%s --help' for more information.\n", a->prog);
        return -EINVAL;
}

int regadm_exit_status(int r)
{
        return r == 0 ? REGADM_EXIT_OK : REGADM_EXIT_FAIL;
}

static const char registry_dir_opt[] = "--registry-dir";
static const char owner_opt[] = "--owner";

/* What one argument is, when it is one of the options both programs take. */
enum { OPT_NOT_MINE, OPT_TAKEN, OPT_EXIT };

/* "--name VALUE" or "--name=VALUE" into *ret; what comes of argv[*i]. */
static int valued_option(struct regadm *a, int argc, char **argv, int *i, const char *name,
                         const char *what, const char **ret)
{
        const char *arg = argv[*i];
        size_t len = strlen(name);

        if (strncmp(arg, name, len) != 0 || (arg[len] != '\0' && arg[len] != '='))
                return OPT_NOT_MINE;
        if (arg[len] == '=')
                *ret = arg + len + 1;
        else if (*i + 1 < argc)
                *ret = argv[++*i];
        else
                return regadm_usage_error(a, "option '%s' needs %s", name, what);
        if (!**ret)
                return regadm_usage_error(a, "option '%s' needs %s", name, what);
        return OPT_TAKEN;
}

static int common_option(struct regadm *a, int argc, char **argv, int *i)
{
        const char *arg = argv[*i];
        int r;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "/?") == 0 ||
            strcmp(arg, "-?") == 0) {
                a->usage(stdout);
                return OPT_EXIT;
        }
        if (strcmp(arg, "--version") == 0) {
                printf("%s (%s) %s\n", a->prog, PACKAGE_NAME, PACKAGE_VERSION);
                return OPT_EXIT;
        }
        r = valued_option(a, argc, argv, i, registry_dir_opt, "a directory", &a->registry_dir);
        if (r != OPT_NOT_MINE || !a->takes_owner)
                return r;
        return valued_option(a, argc, argv, i, owner_opt, "a user", &a->owner);
}

int regadm_parse_args(struct regadm *a, int argc, char **argv,
                      const struct regadm_arg_handlers *h, void *userdata)
{
        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i], *value;
                char letter;
                int r = common_option(a, argc, argv, &i);

                if (r < 0)
                        return r;
                if (r == OPT_EXIT)
                        return 1;
                if (r == OPT_TAKEN)
                        continue;
                if (regadm_switch(arg, &letter, &value))
                        r = h->take_switch(a, arg, letter, value, userdata);
                else if (arg[0] == '-' && arg[1])
                        r = regadm_usage_error(a, "unknown option '%s'", arg);
                else
                        r = h->take_other(a, arg, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}
