/* SPDX-License-Identifier: MIT */
/*
 * plugin-conf.h: the limits a plugin's host runs under, and where they
 * come from: built-in defaults, perflibd's --plugin-* flags over them, and
 * a per-plugin line of the plugin configuration file over those.
 *
 * The file (perflibd(8), PLUGINS), one plugin a line:
 *
 *      # comment
 *      processor.so  memory-max=64M cpu-max=20
 *      smart.so      user=root start-timeout=30s
 *
 * Keys: memory-max=SIZE, cpu-max=PERCENT (of one CPU), start-timeout=TIME,
 * user=USER (the host's user when perflibd runs as root; "root" for a
 * plugin that must read what only root may).  SIZE takes K, M, G; TIME
 * takes ms, s, min, h (a bare number is seconds).
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFLIBD_PLUGIN_CONF_H
#define PERFLIBD_PLUGIN_CONF_H

#include <stddef.h>
#include <stdint.h>

struct plugin_limits {
        uint64_t memory_max;            /* bytes of resident memory (and RLIMIT_DATA) */
        uint64_t start_timeout;         /* µs for start to return */
        uint64_t stop_timeout;          /* µs from SIGTERM to SIGKILL */
        uint64_t cpu_window;            /* µs the CPU bound is averaged over */
        unsigned cpu_max;               /* percent of one CPU over cpu_window */
        uint64_t restart_min;           /* µs before the first restart */
        uint64_t restart_max;           /* µs: the restart delay doubles up to this */
        uint64_t healthy;               /* µs of running that reset the delay */
        char user[64];                  /* the host's user when root; "" for the default */
};

#define PLUGIN_MEMORY_MAX_DEFAULT       (UINT64_C(256) << 20)
#define PLUGIN_START_TIMEOUT_DEFAULT    (UINT64_C(10) * 1000000u)
#define PLUGIN_STOP_TIMEOUT_DEFAULT     (UINT64_C(2) * 1000000u)
#define PLUGIN_CPU_WINDOW_DEFAULT       (UINT64_C(10) * 1000000u)
#define PLUGIN_CPU_MAX_DEFAULT          50u
#define PLUGIN_RESTART_MIN_DEFAULT      (UINT64_C(1) * 1000000u)
#define PLUGIN_RESTART_MAX_DEFAULT      (UINT64_C(300) * 1000000u)
#define PLUGIN_HEALTHY_DEFAULT          (UINT64_C(60) * 1000000u)
/* When perflibd runs as root and nothing else is said. */
#define PLUGIN_USER_DEFAULT             "nobody"

void plugin_limits_default(struct plugin_limits *ret);

/* "250ms", "2s", "5min", "1h", "3" (seconds) into µs; -EINVAL otherwise. */
int plugin_parse_time(const char *s, uint64_t *ret_usec);
/* "64M", "1G", "65536" into bytes; -EINVAL otherwise. */
int plugin_parse_size(const char *s, uint64_t *ret_bytes);

/*
 * Sets one key ("memory-max", "cpu-max", "start-timeout", "stop-timeout",
 * "cpu-window", "restart-min", "restart-max", "user") of l from its text.
 * -EINVAL for a bad value, -ENOENT for an unknown key.
 */
int plugin_limits_set(struct plugin_limits *l, const char *key, const char *value);

/* The per-plugin lines of a configuration file, parsed. */
struct plugin_conf;

/*
 * Reads path over base: each line's plugin gets base with the line's keys
 * set.  A missing file is an empty configuration.  A malformed line is an
 * error naming path, line and cause, written to *ret_error (malloc'd, the
 * caller's) with -EINVAL.  *ret is the caller's (plugin_conf_free).
 */
int plugin_conf_load(const char *path, const struct plugin_limits *base,
                     struct plugin_conf **ret, char **ret_error);
void plugin_conf_free(struct plugin_conf *c);

/* The limits of the plugin in file ("x.so"): its line's, else base's. */
void plugin_conf_limits(const struct plugin_conf *c, const struct plugin_limits *base,
                        const char *file, struct plugin_limits *ret);

#endif /* PERFLIBD_PLUGIN_CONF_H */
