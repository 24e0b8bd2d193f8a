/* SPDX-License-Identifier: MIT */
/*
 * expo-opts.h: perflib-exporter's command line (expo-opts.c), as
 * perflib-exporter(1) has it, and its log: one line a message on standard
 * error, "perflib-exporter: LEVEL: message".  Hidden symbols, expo_
 * prefix.
 */
#ifndef EXPO_OPTS_H
#define EXPO_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/* Exit statuses, perflib-exporter(1). */
#define EXPO_EXIT_USAGE         1
#define EXPO_EXIT_CONFIG        2       /* bad --counters or --web.config.file */
#define EXPO_EXIT_LISTEN        3

enum expo_level { EXPO_DEBUG, EXPO_INFO, EXPO_WARN, EXPO_ERROR };

struct expo_opts {
        const char *listen;             /* "[HOST]:PORT", from argv */
        const char *path;               /* telemetry path, starts with '/' */
        const char *web_config;         /* NULL: plain HTTP, no auth */
        unsigned max_connections;
        unsigned max_per_address;       /* connections from one client address */
        unsigned request_bytes;         /* memory one connection may hold */
        unsigned timeout_s;
        const char *counters;           /* NULL: every counterset */
        const char **exclude;           /* owned array of argv strings */
        size_t n_exclude;
        bool with_total;
        const char *server;             /* NULL: the local perflibd */
};

/*
 * Parses argv into *ret (its strings point into argv; ret->exclude is the
 * caller's, expo_opts_done).  -1 to go on, or the status to exit with at
 * once: 0 after --help or --version, EXPO_EXIT_USAGE with the reason said.
 */
int expo_opts_parse(int argc, char **argv, struct expo_opts *ret);
void expo_opts_done(struct expo_opts *o);

void expo_log_set_level(enum expo_level l);
bool expo_log_enabled(enum expo_level l);
void expo_log(enum expo_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* EXPO_OPTS_H */
