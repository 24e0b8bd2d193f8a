/* SPDX-License-Identifier: MIT */
/*
 * typeperf's output: the PDH-CSV 4.0 and PDH-TSV 4.0 layouts that
 * Windows tools and existing log parsers read, NDJSON for pipelines, and
 * the output file.  Every line is built whole in memory and handed to one
 * write loop, so an interrupted run never leaves half a line.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "typeperf.h"

bool tp_out_may_write(const char *path, bool yes)
{
        char answer[16];
        struct stat st;

        if (stat(path, &st) < 0)
                return true;            /* open() will say what is wrong, if anything */
        if (S_ISDIR(st.st_mode)) {
                fprintf(stderr, "typeperf: %s: is a directory\n", path);
                return false;
        }
        if (yes)
                return true;
        if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) {
                fprintf(stderr, "typeperf: %s: the file exists; use -y to overwrite it\n", path);
                return false;
        }
        fprintf(stderr, "typeperf: %s exists.  Overwrite it? [y/N] ", path);
        if (!fgets(answer, sizeof(answer), stdin) ||
            (strcasecmp(answer, "y\n") != 0 && strcasecmp(answer, "yes\n") != 0)) {
                fprintf(stderr, "typeperf: %s: not overwritten\n", path);
                return false;
        }
        return true;
}

int tp_out_open(struct tp_out *o, const char *path)
{
        *o = (struct tp_out) { .fd = STDOUT_FILENO, .name = "standard output" };
        if (!path)
                return 0;
        o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (o->fd < 0) {
                fprintf(stderr, "typeperf: %s: cannot create: %s\n", path, strerror(errno));
                return -1;
        }
        o->name = path;
        o->is_file = true;
        return 0;
}

int tp_out_write(struct tp_out *o, const char *buf, size_t len)
{
        if (o->broken)
                return -1;
        while (len > 0) {
                ssize_t k = write(o->fd, buf, len);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        fprintf(stderr, "typeperf: %s: write failed: %s\n", o->name,
                                k < 0 ? strerror(errno) : "nothing written");
                        o->broken = true;
                        return -1;
                }
                buf += k;
                len -= (size_t) k;
        }
        return 0;
}

int tp_out_close(struct tp_out *o)
{
        struct stat st;
        int ret = 0;

        if (o->fd < 0)
                return 0;
        /* Only a regular file can be synced; a pipe or terminal has nothing to flush. */
        if (!o->broken && fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(o->fd) < 0 &&
            errno != EINVAL) {
                fprintf(stderr, "typeperf: %s: cannot flush to disk: %s\n", o->name,
                        strerror(errno));
                ret = -1;
        }
        if (o->is_file && close(o->fd) < 0) {
                fprintf(stderr, "typeperf: %s: close failed: %s\n", o->name, strerror(errno));
                ret = -1;
        }
        o->fd = -1;
        return ret;
}

/* A CSV/TSV field: in double quotes, quotes inside doubled. */
static void put_quoted(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                if (*s == '"')
                        fputc('"', f);
                fputc(*s, f);
        }
        fputc('"', f);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_json_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;

                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

/* The shortest text that reads back as v: what JSON parsers round-trip. */
static void put_json_number(FILE *f, double v)
{
        char buf[32];

        if (!isfinite(v)) {
                fputs("null", f);
                return;
        }
        for (int prec = 15; prec <= 17; prec++) {
                snprintf(buf, sizeof(buf), "%.*g", prec, v);
                if (strtod(buf, NULL) == v)
                        break;
        }
        fputs(buf, f);
}

/* Windows' name for UTC, which PDH-CSV readers may expect; else the abbreviation. */
static const char *zone_name(const struct tm *tm)
{
        if (tm->tm_gmtoff == 0 && tm->tm_zone &&
            (strcmp(tm->tm_zone, "UTC") == 0 || strcmp(tm->tm_zone, "GMT") == 0))
                return "Coordinated Universal Time";
        return tm->tm_zone ? tm->tm_zone : "";
}

/* Ends a memstream; the text or NULL (and *ret_len 1) on failure. */
static char *finish(FILE *f, char **buf, size_t *size, size_t *ret_len)
{
        bool failed = ferror(f);

        if (fclose(f) != 0 || failed) {
                free(*buf);
                *ret_len = 1;
                return NULL;
        }
        *ret_len = *size;
        return *buf;
}

char *tp_header_line(enum tp_format fmt, char *const *columns, size_t n, time_t when,
                     size_t *ret_len)
{
        char sep = fmt == TP_TSV ? '\t' : ',';
        char *buf = NULL, first[160];
        size_t size = 0;
        struct tm tm;
        FILE *f;

        *ret_len = 0;
        if (fmt == TP_JSON)
                return NULL;
        if (!localtime_r(&when, &tm)) {
                *ret_len = 1;
                return NULL;
        }
        /* Windows' bias is in minutes to add to local time to get UTC. */
        snprintf(first, sizeof(first), "(PDH-%s 4.0) (%s)(%ld)", fmt == TP_TSV ? "TSV" : "CSV",
                 zone_name(&tm), -(long) tm.tm_gmtoff / 60);
        f = open_memstream(&buf, &size);
        if (!f) {
                *ret_len = 1;
                return NULL;
        }
        put_quoted(f, first);
        for (size_t i = 0; i < n; i++) {
                fputc(sep, f);
                put_quoted(f, columns[i]);
        }
        fputc('\n', f);
        return finish(f, &buf, &size, ret_len);
}

static void put_pdh_sample(FILE *f, enum tp_format fmt, const struct tp_cell *cells, size_t n,
                           const struct tm *tm, long ms)
{
        char sep = fmt == TP_TSV ? '\t' : ',';

        fprintf(f, "\"%02d/%02d/%04d %02d:%02d:%02d.%03ld\"", tm->tm_mon + 1, tm->tm_mday,
                tm->tm_year + 1900, tm->tm_hour, tm->tm_min, tm->tm_sec, ms);
        for (size_t i = 0; i < n; i++) {
                fputc(sep, f);
                /* PDH's blank: a value that could not be computed this time. */
                put_quoted(f, cells[i].valid ? cells[i].text : " ");
        }
        fputc('\n', f);
}

static void put_json_sample(FILE *f, char *const *columns, const struct tp_cell *cells,
                            size_t n, const struct tm *tm, long ms)
{
        long off = tm->tm_gmtoff / 60;

        fprintf(f, "{\"timestamp\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ld%c%02ld:%02ld\",\"values\":{",
                tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min,
                tm->tm_sec, ms, off < 0 ? '-' : '+', labs(off) / 60, labs(off) % 60);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        fputc(',', f);
                put_json_string(f, columns[i]);
                fputc(':', f);
                if (cells[i].valid)
                        put_json_number(f, cells[i].value);
                else
                        fputs("null", f);
        }
        fputs("}}\n", f);
}

char *tp_sample_line(enum tp_format fmt, char *const *columns, const struct tp_cell *cells,
                     size_t n, const struct timespec *when, size_t *ret_len)
{
        char *buf = NULL;
        size_t size = 0;
        struct tm tm;
        FILE *f;

        *ret_len = 1;
        if (!localtime_r(&when->tv_sec, &tm))
                return NULL;
        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        if (fmt == TP_JSON)
                put_json_sample(f, columns, cells, n, &tm, when->tv_nsec / 1000000);
        else
                put_pdh_sample(f, fmt, cells, n, &tm, when->tv_nsec / 1000000);
        return finish(f, &buf, &size, ret_len);
}
