/* SPDX-License-Identifier: MIT */
/*
 * typeperf's command line.  Windows users type `-si 5 -sc 10 -cf list.txt`
 * (one dash, long names, any case, options and counter paths in any
 * order); Linux users type `--sample-interval=5`.  Both are accepted, so
 * getopt_long, which reads `-si` as `-s i`, is not used.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcq.h"
#include "typeperf.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

enum opt_id {
        OPT_COUNTER_FILE,
        OPT_INTERVAL,
        OPT_COUNT,
        OPT_FORMAT,
        OPT_OUTPUT,
        OPT_QUERY,
        OPT_QUERY_INSTANCES,
        OPT_SERVER,
        OPT_USER,
        OPT_YES,
        OPT_HELP,
        OPT_VERSION,
};

enum opt_arg {
        ARG_NONE,
        ARG_REQUIRED,
        ARG_OPTIONAL,           /* taken when the next word is not an option or a path */
};

struct opt {
        const char *windows;    /* after one dash, any case; NULL: none */
        const char *gnu;        /* after two dashes */
        enum opt_id id;
        enum opt_arg arg;
};

static const struct opt opts[] = {
        { "cf", "counter-file", OPT_COUNTER_FILE, ARG_REQUIRED },
        { "si", "sample-interval", OPT_INTERVAL, ARG_REQUIRED },
        { "sc", "sample-count", OPT_COUNT, ARG_REQUIRED },
        { "f", "format", OPT_FORMAT, ARG_REQUIRED },
        { "o", "output", OPT_OUTPUT, ARG_REQUIRED },
        { "q", "query", OPT_QUERY, ARG_OPTIONAL },
        { "qx", "query-instances", OPT_QUERY_INSTANCES, ARG_OPTIONAL },
        { "s", "server", OPT_SERVER, ARG_REQUIRED },
        { "u", "user", OPT_USER, ARG_REQUIRED },
        { "y", "yes", OPT_YES, ARG_NONE },
        { "?", "help", OPT_HELP, ARG_NONE },
        { "h", NULL, OPT_HELP, ARG_NONE },
        { NULL, "version", OPT_VERSION, ARG_NONE },
};

static void usage(FILE *f)
{
        fputs("Usage: typeperf COUNTER... [OPTION]...\n"
              "       typeperf -cf FILE [OPTION]...\n"
              "       typeperf -q [OBJECT] [OPTION]...\n"
              "       typeperf -qx [OBJECT] [OPTION]...\n"
              "Write performance counter values, one sample a line, until the sample count\n"
              "is reached or Ctrl-C.  A counter is a path such as \\Object(Instance)\\Counter.\n"
              "\n"
              "  -cf, --counter-file FILE     read counter paths from FILE, one a line\n"
              "  -si, --sample-interval TIME  time between samples, [[hh:]mm:]ss (default 1)\n"
              "  -sc, --sample-count N        stop after N samples (default: until Ctrl-C)\n"
              "  -f,  --format CSV|TSV|JSON   output format (default CSV)\n"
              "  -o,  --output FILE           write to FILE instead of standard output\n"
              "  -q,  --query [OBJECT]        list counter paths (of OBJECT), no instances\n"
              "  -qx, --query-instances [OBJECT]  list counter paths with their instances\n"
              "  -s,  --server HOST[:PORT]    collect from HOST (default: this machine)\n"
              "  -u,  --user USER             authenticate to remote hosts as USER (or\n"
              "                               DOMAIN\\USER, USER@DOMAIN); the password is\n"
              "                               $PERFLIB_PASSWORD, else asked on the terminal\n"
              "                               (PERFLIB_AUTH=kerberos: the ticket, no -u)\n"
              "  -y,  --yes                   overwrite the -o file without asking\n"
              "  -?, -h, --help               show this help and exit\n"
              "       --version               show the version and exit\n"
              "\n"
              "Exit status: 0 success, 1 usage error, 2 bad counter path or counter file,\n"
              "3 cannot connect or access denied, 4 output file error, 5 interrupted before the first\n"
              "sample, 6 collection failed.  See typeperf(1).\n", f);
}

static int usage_error(int *ret_exit, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(int *ret_exit, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fputs("typeperf: ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs("\nTry 'typeperf --help' for more information.\n", stderr);
        *ret_exit = TP_EXIT_USAGE;
        return -1;
}

int tp_add_path(struct tp_options *o, const char *path)
{
        char **v = realloc(o->paths, (o->n_paths + 1) * sizeof(*v));

        if (!v)
                return -1;
        o->paths = v;
        v[o->n_paths] = strdup(path);
        if (!v[o->n_paths])
                return -1;
        o->n_paths++;
        return 0;
}

void tp_options_done(struct tp_options *o)
{
        if (!o)
                return;
        for (size_t i = 0; i < o->n_paths; i++)
                free(o->paths[i]);
        free(o->paths);
        o->paths = NULL;
        o->n_paths = 0;
}

/* A field of an interval: 1 to 6 digits. */
static int interval_field(const char *s, size_t len, unsigned long *ret)
{
        unsigned long v = 0;

        if (len == 0 || len > 6)
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (unsigned long) (s[i] - '0');
        }
        *ret = v;
        return 0;
}

/* Digits after the point, as nanoseconds (at most 9 digits). */
static int interval_fraction(const char *s, uint64_t *ret)
{
        uint64_t ns = 0, scale = 100000000;

        if (!*s || strlen(s) > 9)
                return -1;
        for (; *s; s++, scale /= 10) {
                if (*s < '0' || *s > '9')
                        return -1;
                ns += (uint64_t) (*s - '0') * scale;
        }
        *ret = ns;
        return 0;
}

int tp_parse_interval(const char *s, uint64_t *ret_ns)
{
        unsigned long field[3];
        const char *dot = strchr(s, '.');
        const char *end = dot ? dot : s + strlen(s);
        uint64_t seconds = 0, frac = 0;
        size_t n = 0;

        /* hh:mm:ss, mm:ss or ss; fields after the first stay below 60. */
        for (const char *p = s;;) {
                const char *colon = memchr(p, ':', (size_t) (end - p));
                const char *stop = colon ? colon : end;

                if (n == 3 || interval_field(p, (size_t) (stop - p), &field[n]) < 0)
                        return -1;
                if (n++ > 0 && field[n - 1] > 59)
                        return -1;
                if (!colon)
                        break;
                p = colon + 1;
        }
        if (dot && interval_fraction(dot + 1, &frac) < 0)
                return -1;
        for (size_t i = 0; i < n; i++)
                seconds = seconds * 60 + field[i];
        if (seconds == 0 && frac == 0)
                return -1;
        *ret_ns = seconds * 1000000000ULL + frac;
        return 0;
}

static int parse_count(const char *s, unsigned long *ret)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || v == 0)
                return -1;
        *ret = v;
        return 0;
}

static int parse_format(const char *s, enum tp_format *ret)
{
        if (strcasecmp(s, "csv") == 0)
                *ret = TP_CSV;
        else if (strcasecmp(s, "tsv") == 0)
                *ret = TP_TSV;
        else if (strcasecmp(s, "json") == 0)
                *ret = TP_JSON;
        else
                return -1;
        return 0;
}

/* The option argv[*i] names, or NULL; *ret_value gets an inline "=value". */
static const struct opt *find_opt(const char *word, const char **ret_value)
{
        *ret_value = NULL;
        if (strcmp(word, "/?") == 0)
                word = "-?";
        if (word[0] != '-' || !word[1])
                return NULL;
        if (word[1] == '-') {
                const char *name = word + 2;
                const char *eq = strchr(name, '=');
                size_t len = eq ? (size_t) (eq - name) : strlen(name);

                for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
                        if (opts[k].gnu && strlen(opts[k].gnu) == len &&
                            strncmp(opts[k].gnu, name, len) == 0) {
                                *ret_value = eq ? eq + 1 : NULL;
                                return &opts[k];
                        }
                return NULL;
        }
        for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
                if (opts[k].windows && strcasecmp(opts[k].windows, word + 1) == 0)
                        return &opts[k];
        return NULL;
}

/* Applies one option with its value (NULL when it has none). */
static int apply(const struct opt *op, const char *word, const char *value,
                 struct tp_options *o, const char **counter_file, int *ret_exit)
{
        switch (op->id) {
        case OPT_COUNTER_FILE:
                *counter_file = value;
                break;
        case OPT_INTERVAL:
                if (tp_parse_interval(value, &o->interval_ns) < 0)
                        return usage_error(ret_exit, "invalid sample interval '%s' "
                                           "(want [[hh:]mm:]ss, more than zero)", value);
                break;
        case OPT_COUNT:
                if (parse_count(value, &o->samples) < 0)
                        return usage_error(ret_exit, "invalid sample count '%s' "
                                           "(want a whole number from 1)", value);
                break;
        case OPT_FORMAT:
                if (parse_format(value, &o->format) < 0)
                        return usage_error(ret_exit, "unsupported format '%s' "
                                           "(CSV, TSV or JSON)", value);
                break;
        case OPT_OUTPUT:
                if (!*value)
                        return usage_error(ret_exit, "empty output file name");
                o->output = value;
                break;
        case OPT_QUERY:
        case OPT_QUERY_INSTANCES:
                if (o->query != TP_QUERY_NONE)
                        return usage_error(ret_exit, "%s: only one -q or -qx", word);
                o->query = op->id == OPT_QUERY ? TP_QUERY_PATHS : TP_QUERY_INSTANCES;
                o->query_object = value;
                break;
        case OPT_SERVER:
                if (!*value)
                        return usage_error(ret_exit, "empty host name");
                o->host = value;
                break;
        case OPT_USER:
                if (!*value)
                        return usage_error(ret_exit, "empty user name");
                o->user = value;
                break;
        case OPT_YES:
                o->yes = true;
                break;
        case OPT_HELP:
                usage(stdout);
                return 1;
        case OPT_VERSION:
                printf("typeperf (perflib-linux) %s\n", PACKAGE_VERSION);
                return 1;
        }
        return 0;
}

/* Whether the word after an optional-argument option is its argument. */
static bool takes_word(const char *next)
{
        return next && next[0] != '-' && next[0] != '\\' && strcmp(next, "/?") != 0;
}

/* The options and paths of argv; 1 help/version, -1 error, 0 ok. */
static int parse_words(int argc, char **argv, struct tp_options *o,
                       const char **counter_file, int *ret_exit)
{
        bool only_paths = false;

        for (int i = 1; i < argc; i++) {
                const char *word = argv[i], *value;
                const struct opt *op;
                int k;

                if (!only_paths && strcmp(word, "--") == 0) {
                        only_paths = true;
                        continue;
                }
                op = only_paths ? NULL : find_opt(word, &value);
                if (!op && !only_paths && word[0] == '-' && word[1])
                        return usage_error(ret_exit, "unknown option '%s'", word);
                if (!op) {
                        if (tp_add_path(o, word) < 0) {
                                fputs("typeperf: out of memory\n", stderr);
                                *ret_exit = TP_EXIT_COUNTER;
                                return -1;
                        }
                        continue;
                }
                if (value && op->arg == ARG_NONE)
                        return usage_error(ret_exit, "option '%s' takes no argument", word);
                if (!value && op->arg == ARG_REQUIRED) {
                        if (i + 1 >= argc)
                                return usage_error(ret_exit, "option '%s' needs an argument",
                                                   word);
                        value = argv[++i];
                }
                if (!value && op->arg == ARG_OPTIONAL && takes_word(i + 1 < argc ? argv[i + 1] : NULL))
                        value = argv[++i];
                k = apply(op, word, value, o, counter_file, ret_exit);
                if (k != 0)
                        return k;
        }
        return 0;
}

/* Checks one path's syntax; file and line (0: none) name where it came from. */
static int check_path(const char *path, const char *file, unsigned long line)
{
        struct pcq_path p = { 0 };
        size_t pos = 0;
        uint32_t st = pcq_path_parse(path, &p, &pos);

        if (st == ERROR_SUCCESS) {
                pcq_path_done(&p);
                return 0;
        }
        if (file)
                fprintf(stderr, "typeperf: %s:%lu: ", file, line);
        else
                fputs("typeperf: ", stderr);
        fprintf(stderr, "bad counter path '%s' (at byte %zu): %s\n",
                path, pos, pcq_status_text(st));
        return -1;
}

int tp_parse_args(int argc, char **argv, struct tp_options *o, int *ret_exit)
{
        const char *counter_file = NULL;
        size_t from_argv;
        int k;

        *o = (struct tp_options) { .interval_ns = 1000000000ULL, .format = TP_CSV };
        *ret_exit = TP_EXIT_USAGE;
        k = parse_words(argc, argv, o, &counter_file, ret_exit);
        if (k != 0)
                return k;
        if (o->query != TP_QUERY_NONE && (o->n_paths || counter_file))
                return usage_error(ret_exit, "-q and -qx list counters and take no "
                                   "counter path");
        if (o->query == TP_QUERY_NONE && !o->n_paths && !counter_file)
                return usage_error(ret_exit, "no counter path given (a path, -cf, -q "
                                   "or -qx)");
        *ret_exit = TP_EXIT_COUNTER;
        from_argv = o->n_paths;
        for (size_t i = 0; i < from_argv; i++)
                if (check_path(o->paths[i], NULL, 0) < 0)
                        return -1;
        if (counter_file && tp_read_counter_file(counter_file, o) < 0)
                return -1;
        if (o->query == TP_QUERY_NONE && !o->n_paths) {
                fprintf(stderr, "typeperf: %s: no counter path in the file\n", counter_file);
                return -1;
        }
        *ret_exit = TP_EXIT_OK;
        return 0;
}

/* Strips a UTF-8 byte order mark, leading and trailing white space in place. */
static char *trim(char *s, bool first_line)
{
        size_t n;

        if (first_line && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
                s += 3;
        while (*s == ' ' || *s == '\t')
                s++;
        n = strlen(s);
        while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
                     s[n - 1] == '\t'))
                s[--n] = 0;
        return s;
}

int tp_read_counter_file(const char *file, struct tp_options *o)
{
        FILE *f = fopen(file, "re");
        char *line = NULL;
        size_t cap = 0;
        unsigned long lineno = 0;
        int ret = 0;

        if (!f) {
                fprintf(stderr, "typeperf: %s: %s\n", file, strerror(errno));
                return -1;
        }
        while (ret == 0 && getline(&line, &cap, f) >= 0) {
                char *s = trim(line, ++lineno == 1);

                if (!*s || *s == '#')
                        continue;
                if (check_path(s, file, lineno) < 0)
                        ret = -1;
                else if (tp_add_path(o, s) < 0) {
                        fputs("typeperf: out of memory\n", stderr);
                        ret = -1;
                }
        }
        if (ret == 0 && ferror(f)) {
                fprintf(stderr, "typeperf: %s: %s\n", file, strerror(errno));
                ret = -1;
        }
        free(line);
        fclose(f);
        return ret;
}
