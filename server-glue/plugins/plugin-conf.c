/* SPDX-License-Identifier: MIT */
/*
 * The plugins' limits (plugin-conf.h): defaults, the units flags and the
 * configuration file write them in, and the file's per-plugin lines.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin-conf.h"

/* Longer than anyone waits for a plugin, short of overflowing µs. */
#define TIME_MAX_USEC   (UINT64_C(7) * 24 * 3600 * 1000000u)
/* A line of the file; longer ones are an error, not cut. */
#define LINE_MAX_LEN    1024

struct conf_line {
        char *file;
        struct plugin_limits limits;
};

struct plugin_conf {
        struct conf_line *lines;
        size_t n;
};

void plugin_limits_default(struct plugin_limits *ret)
{
        *ret = (struct plugin_limits) {
                .memory_max = PLUGIN_MEMORY_MAX_DEFAULT,
                .start_timeout = PLUGIN_START_TIMEOUT_DEFAULT,
                .stop_timeout = PLUGIN_STOP_TIMEOUT_DEFAULT,
                .cpu_window = PLUGIN_CPU_WINDOW_DEFAULT,
                .cpu_max = PLUGIN_CPU_MAX_DEFAULT,
                .restart_min = PLUGIN_RESTART_MIN_DEFAULT,
                .restart_max = PLUGIN_RESTART_MAX_DEFAULT,
                .healthy = PLUGIN_HEALTHY_DEFAULT,
        };
}

/* A decimal number, then what follows it in *ret_end. */
static int leading_number(const char *s, uint64_t *ret, const char **ret_end)
{
        unsigned long long v;
        char *end;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s)
                return -EINVAL;
        *ret = v;
        *ret_end = end;
        return 0;
}

int plugin_parse_time(const char *s, uint64_t *ret_usec)
{
        static const struct { const char *unit; uint64_t usec; } units[] = {
                { "", 1000000u }, { "ms", 1000u }, { "s", 1000000u }, { "sec", 1000000u },
                { "min", 60000000u }, { "h", UINT64_C(3600000000) },
        };
        const char *end;
        uint64_t v;

        if (leading_number(s, &v, &end) < 0)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                if (strcmp(end, units[i].unit) != 0)
                        continue;
                if (v > TIME_MAX_USEC / units[i].usec)
                        return -EINVAL;
                *ret_usec = v * units[i].usec;
                return 0;
        }
        return -EINVAL;
}

int plugin_parse_size(const char *s, uint64_t *ret_bytes)
{
        const char *end;
        unsigned shift = 0;
        uint64_t v;

        if (leading_number(s, &v, &end) < 0)
                return -EINVAL;
        if (*end && strchr("KMG", *end)) {
                shift = 10u * (unsigned) (strchr("KMG", *end) - "KMG" + 1);
                end++;
        }
        if (*end || v > (UINT64_MAX >> 1) >> shift)
                return -EINVAL;
        *ret_bytes = v << shift;
        return 0;
}

static int set_time(uint64_t *dst, const char *value, uint64_t min)
{
        uint64_t v;

        if (plugin_parse_time(value, &v) < 0 || v < min)
                return -EINVAL;
        *dst = v;
        return 0;
}

int plugin_limits_set(struct plugin_limits *l, const char *key, const char *value)
{
        uint64_t v;

        if (!l || !key || !value)
                return -EINVAL;
        if (strcmp(key, "memory-max") == 0) {
                /* Below a few MiB not even the host and libc start. */
                if (plugin_parse_size(value, &v) < 0 || v < (UINT64_C(8) << 20))
                        return -EINVAL;
                l->memory_max = v;
                return 0;
        }
        if (strcmp(key, "cpu-max") == 0) {
                if (leading_number(value, &v, &(const char *){ NULL }) < 0 || v < 1 || v > 100 ||
                    strspn(value, "0123456789") != strlen(value))
                        return -EINVAL;
                l->cpu_max = (unsigned) v;
                return 0;
        }
        if (strcmp(key, "start-timeout") == 0)
                return set_time(&l->start_timeout, value, 1000);
        if (strcmp(key, "stop-timeout") == 0)
                return set_time(&l->stop_timeout, value, 1000);
        if (strcmp(key, "cpu-window") == 0)
                return set_time(&l->cpu_window, value, 100000);
        if (strcmp(key, "restart-min") == 0)
                return set_time(&l->restart_min, value, 1000);
        if (strcmp(key, "restart-max") == 0)
                return set_time(&l->restart_max, value, 1000);
        if (strcmp(key, "user") == 0) {
                if (!*value || strlen(value) >= sizeof(l->user))
                        return -EINVAL;
                snprintf(l->user, sizeof(l->user), "%s", value);
                return 0;
        }
        return -ENOENT;
}

void plugin_conf_free(struct plugin_conf *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < c->n; i++)
                free(c->lines[i].file);
        free(c->lines);
        free(c);
}

static int __attribute__((format(printf, 4, 5)))
conf_error(char **ret_error, const char *path, unsigned line, const char *format, ...)
{
        char text[512];
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        if (asprintf(ret_error, "%s:%u: %s", path, line, text) < 0)
                *ret_error = NULL;
        return -EINVAL;
}

/* One "FILE key=value..." line into c; -EINVAL with *ret_error. */
static int conf_line(struct plugin_conf *c, char *text, const struct plugin_limits *base,
                     const char *path, unsigned no, char **ret_error)
{
        char *save = NULL, *word = strtok_r(text, " \t", &save);
        struct conf_line *v, *e;
        size_t len;

        if (!word)
                return 0;
        len = strlen(word);
        if (len <= 3 || strcmp(word + len - 3, ".so") != 0 || strchr(word, '/'))
                return conf_error(ret_error, path, no, "'%s' is not a plugin file name "
                                  "(NAME.so, as in the plugin directory)", word);
        v = reallocarray(c->lines, c->n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->lines = v;
        e = &v[c->n];
        e->limits = *base;
        e->file = strdup(word);
        if (!e->file)
                return -ENOMEM;
        c->n++;
        while ((word = strtok_r(NULL, " \t", &save))) {
                char *eq = strchr(word, '=');
                int r;

                if (!eq)
                        return conf_error(ret_error, path, no, "'%s' is not KEY=VALUE", word);
                *eq = '\0';
                r = plugin_limits_set(&e->limits, word, eq + 1);
                if (r == -ENOENT)
                        return conf_error(ret_error, path, no, "unknown key '%s' (memory-max, "
                                          "cpu-max, start-timeout or user)", word);
                if (r < 0)
                        return conf_error(ret_error, path, no, "bad value for %s: '%s'", word,
                                          eq + 1);
        }
        return 0;
}

int plugin_conf_load(const char *path, const struct plugin_limits *base,
                     struct plugin_conf **ret, char **ret_error)
{
        struct plugin_conf *c;
        char line[LINE_MAX_LEN + 2];
        unsigned no = 0;
        FILE *f;
        int r = 0;

        if (!path || !base || !ret || !ret_error)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f && errno != ENOENT) {
                r = -errno;
                (void) asprintf(ret_error, "%s: %s", path, strerror(-r));
                plugin_conf_free(c);
                return r;
        }
        while (f && r == 0 && fgets(line, sizeof(line), f)) {
                size_t len = strlen(line);

                no++;
                if (len > LINE_MAX_LEN && line[len - 1] != '\n') {
                        r = conf_error(ret_error, path, no, "line longer than %d bytes",
                                       LINE_MAX_LEN);
                        break;
                }
                line[strcspn(line, "#\r\n")] = '\0';
                r = conf_line(c, line, base, path, no, ret_error);
        }
        if (f)
                fclose(f);
        if (r < 0) {
                plugin_conf_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

void plugin_conf_limits(const struct plugin_conf *c, const struct plugin_limits *base,
                        const char *file, struct plugin_limits *ret)
{
        *ret = *base;
        /* The last line for a file wins, as an override appended to the file would. */
        for (size_t i = 0; c && i < c->n; i++)
                if (strcmp(c->lines[i].file, file) == 0)
                        *ret = c->lines[i].limits;
}
