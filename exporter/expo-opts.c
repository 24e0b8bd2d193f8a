/* SPDX-License-Identifier: MIT */
/*
 * perflib-exporter's command line: the exporter-toolkit spelling
 * (--web.listen-address=...), which Prometheus users already type, with
 * getopt_long; and the log, which everything here writes through.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo-opts.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static enum expo_level log_level = EXPO_INFO;
static const char *const level_names[] = { "debug", "info", "warn", "error" };

void expo_log_set_level(enum expo_level l)
{
        log_level = l;
}

bool expo_log_enabled(enum expo_level l)
{
        return l >= log_level;
}

void expo_log(enum expo_level l, const char *fmt, ...)
{
        char line[1024];
        va_list ap;

        if (!expo_log_enabled(l))
                return;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        /* One write a line, so that the lines of two threads never mix. */
        fprintf(stderr, "perflib-exporter: %s: %s\n", level_names[l], line);
}

enum {
        OPT_LISTEN = 256, OPT_PATH, OPT_WEB_CONFIG, OPT_MAX_CONN, OPT_PER_ADDR, OPT_REQ_BYTES, OPT_TIMEOUT, OPT_COUNTERS,
        OPT_EXCLUDE, OPT_TOTAL, OPT_SERVER, OPT_LOG_LEVEL, OPT_VERSION,
};

static const struct option long_opts[] = {
        { "web.listen-address", required_argument, NULL, OPT_LISTEN },
        { "web.telemetry-path", required_argument, NULL, OPT_PATH },
        { "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
        { "web.max-connections", required_argument, NULL, OPT_MAX_CONN },
        { "web.max-connections-per-address", required_argument, NULL, OPT_PER_ADDR },
        { "web.max-request-bytes", required_argument, NULL, OPT_REQ_BYTES },
        { "web.timeout", required_argument, NULL, OPT_TIMEOUT },
        { "counters", required_argument, NULL, OPT_COUNTERS },
        { "collect.exclude", required_argument, NULL, OPT_EXCLUDE },
        { "collect.total", no_argument, NULL, OPT_TOTAL },
        { "server", required_argument, NULL, OPT_SERVER },
        { "log.level", required_argument, NULL, OPT_LOG_LEVEL },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, OPT_VERSION },
        { NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
        fputs("Usage: perflib-exporter [OPTION]...\n"
              "Serve perflibd's counters to Prometheus and OpenMetrics scrapers.\n"
              "\n"
              "  --web.listen-address=[HOST]:PORT  where to listen (default \":9478\": every address)\n"
              "  --web.telemetry-path=PATH         the metrics' path (default \"/metrics\")\n"
              "  --web.config.file=FILE            web-config.yml: TLS and basic auth\n"
              "  --web.max-connections=N           connections at once (default 64)\n"
              "  --web.max-connections-per-address=N  of them from one address (default 16)\n"
              "  --web.max-request-bytes=N         memory one connection may hold, its\n"
              "                                    request headers included (default 65536)\n"
              "  --web.timeout=SECONDS             a connection's deadline (default 30)\n"
              "  --counters=FILE                   only these counter paths, one a line\n"
              "  --collect.exclude=REGEX           leave out the countersets whose name matches\n"
              "                                    REGEX (POSIX ERE, e.g. '^Process$'); may repeat\n"
              "  --collect.total                   export _Total instances too\n"
              "  --server=HOST[:PORT]              a remote perflibd over TCP\n"
              "  --log.level=LEVEL                 debug, info, warn or error (default info)\n"
              "  -h, --help                        this text\n"
              "      --version                     the version\n"
              "\n"
              "Exit status: 0, 1 usage error, 2 bad --counters or --web.config.file,\n"
              "3 cannot listen.  See perflib-exporter(1).\n", f);
}

static int usage_error(const char *what, const char *arg)
{
        fprintf(stderr, "perflib-exporter: error: %s: '%s'\nTry 'perflib-exporter --help'.\n",
                what, arg);
        return EXPO_EXIT_USAGE;
}

static int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *ret)
{
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || *s == '-' || v < min || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int parse_level(const char *s)
{
        for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
                if (!strcmp(s, level_names[i])) {
                        expo_log_set_level((enum expo_level) i);
                        return 0;
                }
        return -EINVAL;
}

/* One option into o; -1 to go on, else an exit status. */
static int take(int c, const char *arg, struct expo_opts *o)
{
        const char **v;

        switch (c) {
        case OPT_LISTEN: o->listen = arg; break;
        case OPT_PATH:
                if (arg[0] != '/')
                        return usage_error("--web.telemetry-path must start with '/'", arg);
                o->path = arg;
                break;
        case OPT_WEB_CONFIG: o->web_config = arg; break;
        case OPT_MAX_CONN:
                if (parse_unsigned(arg, 1, 65536, &o->max_connections) < 0)
                        return usage_error("--web.max-connections: not a number from 1 to 65536", arg);
                break;
        case OPT_PER_ADDR:
                if (parse_unsigned(arg, 1, 65536, &o->max_per_address) < 0)
                        return usage_error("--web.max-connections-per-address: not a number "
                                           "from 1 to 65536", arg);
                break;
        case OPT_REQ_BYTES:
                if (parse_unsigned(arg, 4096, 16 << 20, &o->request_bytes) < 0)
                        return usage_error("--web.max-request-bytes: not a number from 4096 to "
                                           "16777216", arg);
                break;
        case OPT_TIMEOUT:
                if (parse_unsigned(arg, 1, 86400, &o->timeout_s) < 0)
                        return usage_error("--web.timeout: not a number of seconds from 1 to 86400", arg);
                break;
        case OPT_COUNTERS: o->counters = arg; break;
        case OPT_EXCLUDE:
                v = realloc(o->exclude, (o->n_exclude + 1) * sizeof(*v));
                if (!v)
                        return usage_error("--collect.exclude", "out of memory");
                o->exclude = v;
                o->exclude[o->n_exclude++] = arg;
                break;
        case OPT_TOTAL: o->with_total = true; break;
        case OPT_SERVER: o->server = arg; break;
        case OPT_LOG_LEVEL:
                if (parse_level(arg) < 0)
                        return usage_error("--log.level: not debug, info, warn or error", arg);
                break;
        case 'h': usage(stdout); return 0;
        case OPT_VERSION: printf("perflib-exporter %s\n", PACKAGE_VERSION); return 0;
        default: fputs("Try 'perflib-exporter --help'.\n", stderr); return EXPO_EXIT_USAGE;
        }
        return -1;
}

int expo_opts_parse(int argc, char **argv, struct expo_opts *ret)
{
        struct expo_opts o = {
                .listen = ":9478", .path = "/metrics", .max_connections = 64, .max_per_address = 16,
                .request_bytes = 64 * 1024, .timeout_s = 30,
        };
        int c, r = -1;

        opterr = 1;
        optind = 1;
        while (r < 0 && (c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1)
                r = take(c, optarg, &o);
        if (r < 0 && optind < argc)
                r = usage_error("unexpected argument", argv[optind]);
        if (r >= 0) {
                free(o.exclude);
                return r;
        }
        *ret = o;
        return -1;
}

void expo_opts_done(struct expo_opts *o)
{
        free(o->exclude);
        o->exclude = NULL;
        o->n_exclude = 0;
}
