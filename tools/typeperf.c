/* SPDX-License-Identifier: MIT */
/*
 * typeperf: write performance counter values to standard output or a
 * file, one sample a line, as Windows' typeperf does, through libpcq's
 * query layer (pcq.h).
 *
 * Wildcard paths are expanded once at the start, so the columns of a CSV
 * file stay fixed, as Windows does; an instance that goes away reads as
 * a blank value.  The first collection only primes the rate counters:
 * the first line comes one interval later and every value on it is a
 * real one, as with Windows' typeperf -sc 1.  SIGINT, SIGTERM and SIGHUP
 * are blocked and only waited for between samples, so a sample is either
 * written whole or not at all, and the file is synced before exit.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "pcq.h"
#include "typeperf.h"

/* Each PerflibV2 call may take this long before the host counts as gone. */
#define CALL_TIMEOUT_MS 10000
/* 100 ns intervals between 1601-01-01 and 1970-01-01. */
#define EPOCH_DIFF_100NS 116444736000000000ULL

/* One machine the counters come from, with its own connection and query. */
struct host {
        char *name;                     /* as given, NULL: this machine */
        char *label;                    /* what the column headers show after \\ */
        pcq_conn *conn;
        pcq_query *query;
};

struct column {
        char *label;                    /* \\host\Object(instance)\Counter */
        struct host *host;
        pcq_counter *counter;
        struct pcq_counter_desc desc;
        char text[64];
};

struct run {
        const struct tp_options *o;
        struct host *hosts;
        size_t n_hosts;
        struct column *cols;
        size_t n_cols;
        char **labels;                  /* the columns' labels, for the line builders */
        struct tp_cell *cells;
        struct tp_out out;
        sigset_t stop;                  /* the signals that end the run */
        unsigned long written;          /* sample lines written */
};

static bool is_local(const char *host)
{
        return !host || !*host || strcmp(host, ".") == 0 || strcasecmp(host, "localhost") == 0;
}

static bool same_host(const char *a, const char *b)
{
        if (is_local(a) || is_local(b))
                return is_local(a) && is_local(b);
        return strcasecmp(a, b) == 0;
}

/* The host part as PDH writes it: no leading backslashes. */
static const char *bare_host(const char *host)
{
        while (host && *host == '\\')
                host++;
        return host;
}

static char *host_label(const char *host)
{
        char name[256];

        if (!is_local(host))
                return strdup(host);
        if (gethostname(name, sizeof(name)) < 0)
                strcpy(name, "localhost");
        name[sizeof(name) - 1] = 0;
        return strdup(name);
}

/* The host for name, connected on first use; NULL after printing why. */
static struct host *get_host(struct run *r, const char *name, int *ret_exit)
{
        struct host *h, *v;
        uint32_t st;

        for (size_t i = 0; i < r->n_hosts; i++)
                if (same_host(r->hosts[i].name, name))
                        return &r->hosts[i];
        v = realloc(r->hosts, (r->n_hosts + 1) * sizeof(*v));
        if (!v)
                goto oom;
        r->hosts = v;
        h = &v[r->n_hosts];
        *h = (struct host) { 0 };
        h->label = host_label(name);
        if (!h->label || (!is_local(name) && !(h->name = strdup(name))))
                goto oom_host;
        r->n_hosts++;
        st = pcq_connect(h->name, CALL_TIMEOUT_MS, &h->conn);
        if (st == ERROR_SUCCESS)
                st = pcq_query_new(h->conn, &h->query);
        if (st != ERROR_SUCCESS) {
                fprintf(stderr, "typeperf: cannot connect to %s: %s (0x%08X)\n",
                        is_local(name) ? "the local perflibd" : name, pcq_status_text(st), st);
                *ret_exit = TP_EXIT_CONNECT;
                return NULL;
        }
        return h;
oom_host:
        free(h->label);
        free(h->name);
oom:
        fputs("typeperf: out of memory\n", stderr);
        *ret_exit = TP_EXIT_COUNTER;
        return NULL;
}

static void run_done(struct run *r)
{
        for (size_t i = 0; i < r->n_cols; i++)
                free(r->cols[i].label);
        free(r->cols);
        free(r->labels);
        free(r->cells);
        for (size_t i = 0; i < r->n_hosts; i++) {
                if (r->hosts[i].query)
                        pcq_query_free(r->hosts[i].query);
                if (r->hosts[i].conn)
                        pcq_conn_free(r->hosts[i].conn);
                free(r->hosts[i].name);
                free(r->hosts[i].label);
        }
        free(r->hosts);
}

/* Adds one counter path without wildcards (and without host) as a column of h. */
static int add_column(struct run *r, struct host *h, const char *path, int *ret_exit)
{
        struct column *v = realloc(r->cols, (r->n_cols + 1) * sizeof(*v));
        struct column *c;
        uint32_t st;

        if (!v)
                goto oom;
        r->cols = v;
        c = &v[r->n_cols];
        *c = (struct column) { .host = h };
        st = pcq_query_add(h->query, path, &c->counter);
        if (st != ERROR_SUCCESS) {
                const char *why = pcq_query_error(h->query);

                fprintf(stderr, "typeperf: %s: %s\n", path,
                        why && *why ? why : pcq_status_text(st));
                *ret_exit = TP_EXIT_COUNTER;
                return -1;
        }
        pcq_counter_describe(c->counter, &c->desc);
        if (asprintf(&c->label, "\\\\%s%s", h->label, path) < 0)
                goto oom;
        r->n_cols++;
        return 0;
oom:
        fputs("typeperf: out of memory\n", stderr);
        *ret_exit = TP_EXIT_COUNTER;
        return -1;
}

/* Adds path as a column, or every path its wildcards stand for now. */
static int add_path(struct run *r, struct host *h, const char *path, int *ret_exit)
{
        char **v = NULL;
        uint32_t st;
        int ret = 0;

        if (!strchr(path, '*'))
                return add_column(r, h, path, ret_exit);
        st = pcq_expand_path(h->conn, path, &v);
        if (st != ERROR_SUCCESS) {
                fprintf(stderr, "typeperf: %s: %s\n", path, pcq_status_text(st));
                *ret_exit = TP_EXIT_COUNTER;
                return -1;
        }
        if (!v[0])
                fprintf(stderr, "typeperf: warning: %s matches no counter now\n", path);
        for (size_t i = 0; v[i] && ret == 0; i++) {
                struct pcq_path p = { 0 };
                char *bare = NULL;

                /* The expansion may name the host; the column adds it back. */
                if (pcq_path_parse(v[i], &p, NULL) == ERROR_SUCCESS) {
                        free(p.host);
                        p.host = NULL;
                        bare = pcq_path_format(&p);
                        pcq_path_done(&p);
                }
                ret = add_column(r, h, bare ? bare : v[i], ret_exit);
                free(bare);
        }
        pcq_strv_free(v);
        return ret;
}

/* Connects to every host the paths name and adds their counters. */
static int add_counters(struct run *r, int *ret_exit)
{
        const struct tp_options *o = r->o;

        for (size_t i = 0; i < o->n_paths; i++) {
                struct pcq_path p = { 0 };
                struct host *h;
                char *bare;
                int k;

                /* tp_parse_args checked the syntax already. */
                if (pcq_path_parse(o->paths[i], &p, NULL) != ERROR_SUCCESS) {
                        fprintf(stderr, "typeperf: bad counter path '%s'\n", o->paths[i]);
                        *ret_exit = TP_EXIT_COUNTER;
                        return -1;
                }
                /* As on Windows, -s names the machine of paths that name none. */
                h = get_host(r, p.host ? bare_host(p.host) : bare_host(o->host), ret_exit);
                free(p.host);
                p.host = NULL;
                bare = h ? pcq_path_format(&p) : NULL;
                pcq_path_done(&p);
                if (!h)
                        return -1;
                k = bare ? add_path(r, h, bare, ret_exit) : -1;
                if (!bare) {
                        fputs("typeperf: out of memory\n", stderr);
                        *ret_exit = TP_EXIT_COUNTER;
                }
                free(bare);
                if (k < 0)
                        return -1;
        }
        if (r->n_cols == 0) {
                fputs("typeperf: no valid counters: nothing to collect\n", stderr);
                *ret_exit = TP_EXIT_COUNTER;
                return -1;
        }
        r->labels = calloc(r->n_cols, sizeof(*r->labels));
        r->cells = calloc(r->n_cols, sizeof(*r->cells));
        if (!r->labels || !r->cells) {
                fputs("typeperf: out of memory\n", stderr);
                *ret_exit = TP_EXIT_COUNTER;
                return -1;
        }
        for (size_t i = 0; i < r->n_cols; i++)
                r->labels[i] = r->cols[i].label;
        return 0;
}

/* -q / -qx: the paths of one object or of all, one a line. */
static int list_paths(const struct tp_options *o)
{
        struct run r = { .o = o };
        struct tp_out out;
        char **v = NULL;
        int ret = TP_EXIT_OK;
        struct host *h = get_host(&r, bare_host(o->host), &ret);
        uint32_t st;

        if (!h)
                goto done;
        st = pcq_list_paths(h->conn, o->query_object, o->query == TP_QUERY_INSTANCES, &v);
        if (st != ERROR_SUCCESS) {
                if (o->query_object)
                        fprintf(stderr, "typeperf: %s: %s\n", o->query_object, pcq_status_text(st));
                else
                        fprintf(stderr, "typeperf: cannot list counters: %s\n", pcq_status_text(st));
                ret = st == PDH_CSTATUS_NO_OBJECT ? TP_EXIT_COUNTER : TP_EXIT_COLLECT;
                goto done;
        }
        if (tp_out_open(&out, o->output) < 0) {
                ret = TP_EXIT_OUTPUT;
                goto done;
        }
        for (size_t i = 0; v[i] && !out.broken; i++) {
                size_t len = strlen(v[i]);

                v[i][len] = '\n';       /* the terminator comes back below */
                tp_out_write(&out, v[i], len + 1);
                v[i][len] = 0;
        }
        if (tp_out_close(&out) < 0 || out.broken)
                ret = TP_EXIT_OUTPUT;
done:
        pcq_strv_free(v);
        run_done(&r);
        return ret;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* Sleeps until deadline (CLOCK_MONOTONIC ns); true when a stop signal came first. */
static bool wait_until(struct run *r, uint64_t deadline)
{
        for (;;) {
                uint64_t now = now_ns();
                struct timespec left;

                if (now >= deadline)
                        return false;
                left.tv_sec = (time_t) ((deadline - now) / 1000000000ULL);
                left.tv_nsec = (long) ((deadline - now) % 1000000000ULL);
                if (sigtimedwait(&r->stop, NULL, &left) > 0)
                        return true;
                if (errno == EAGAIN)
                        return false;
        }
}

static bool stop_pending(struct run *r)
{
        struct timespec zero = { 0, 0 };

        return sigtimedwait(&r->stop, NULL, &zero) > 0;
}

/* Collects every host; -1 after printing which one failed. */
static int collect(struct run *r)
{
        for (size_t i = 0; i < r->n_hosts; i++) {
                uint32_t st = pcq_query_collect(r->hosts[i].query);

                if (st != ERROR_SUCCESS) {
                        fprintf(stderr, "typeperf: collecting from %s failed: %s (0x%08X)\n",
                                r->hosts[i].label, pcq_status_text(st), st);
                        return -1;
                }
        }
        return 0;
}

/* The cells of the sample just collected. */
static void fill_cells(struct run *r)
{
        for (size_t i = 0; i < r->n_cols; i++) {
                struct column *c = &r->cols[i];
                struct tp_cell *cell = &r->cells[i];
                const struct pcq_value *items;
                size_t n;

                *cell = (struct tp_cell) { .text = c->text };
                if (pcq_counter_values(c->counter, 0, &items, &n) != ERROR_SUCCESS || n == 0 ||
                    items[0].status != PDH_CSTATUS_VALID_DATA)
                        continue;
                cell->valid = true;
                cell->value = items[0].value;
                if (pcq_value_text(items[0].value, items[0].raw_first, c->desc.type,
                                   c->desc.attrib, 6, 0, c->text, sizeof(c->text)) != ERROR_SUCCESS)
                        snprintf(c->text, sizeof(c->text), "%.6f", items[0].value);
        }
}

/* The sample's time: the server's stamp of the first host, else the clock. */
static struct timespec sample_time(struct run *r)
{
        uint64_t t = r->n_hosts ? pcq_query_sample_time(r->hosts[0].query) : 0;
        struct timespec ts;

        if (t <= EPOCH_DIFF_100NS) {
                clock_gettime(CLOCK_REALTIME, &ts);
                return ts;
        }
        t -= EPOCH_DIFF_100NS;
        ts.tv_sec = (time_t) (t / 10000000ULL);
        ts.tv_nsec = (long) (t % 10000000ULL) * 100;
        return ts;
}

static int write_sample(struct run *r)
{
        struct timespec when = sample_time(r);
        size_t len;
        char *line;
        int k;

        fill_cells(r);
        line = tp_sample_line(r->o->format, r->labels, r->cells, r->n_cols, &when, &len);
        if (!line) {
                fputs("typeperf: out of memory\n", stderr);
                return -1;
        }
        k = tp_out_write(&r->out, line, len);
        free(line);
        if (k == 0)
                r->written++;
        return k;
}

static int write_header(struct run *r)
{
        size_t len;
        char *line = tp_header_line(r->o->format, r->labels, r->n_cols, time(NULL), &len);
        int k;

        if (!line && len) {
                fputs("typeperf: out of memory\n", stderr);
                return -1;
        }
        k = line ? tp_out_write(&r->out, line, len) : 0;
        free(line);
        return k;
}

/* Primes, then writes a sample every interval; the exit code. */
static int sample_loop(struct run *r)
{
        uint64_t interval = r->o->interval_ns, deadline;

        if (collect(r) < 0)
                return TP_EXIT_COLLECT;
        deadline = now_ns() + interval;
        while (!r->o->samples || r->written < r->o->samples) {
                if (wait_until(r, deadline))
                        return r->written ? TP_EXIT_OK : TP_EXIT_INTERRUPTED;
                if (collect(r) < 0)
                        return TP_EXIT_COLLECT;
                if (write_sample(r) < 0)
                        return TP_EXIT_OUTPUT;
                /* A collect slower than the interval skips slots rather than bunching. */
                deadline += interval;
                for (uint64_t now = now_ns(); deadline <= now;)
                        deadline += interval;
        }
        return TP_EXIT_OK;
}

static int collect_counters(const struct tp_options *o, const sigset_t *stop)
{
        struct run r = { .o = o, .stop = *stop, .out = { .fd = -1 } };
        int ret = TP_EXIT_OK;

        if (add_counters(&r, &ret) < 0)
                goto done;
        if (stop_pending(&r)) {
                ret = TP_EXIT_INTERRUPTED;
                goto done;
        }
        if (tp_out_open(&r.out, o->output) < 0 || write_header(&r) < 0) {
                ret = TP_EXIT_OUTPUT;
                goto done;
        }
        ret = sample_loop(&r);
        if (tp_out_close(&r.out) < 0 && ret == TP_EXIT_OK)
                ret = TP_EXIT_OUTPUT;
done:
        tp_out_close(&r.out);
        run_done(&r);
        return ret;
}

int main(int argc, char **argv)
{
        struct tp_options o;
        sigset_t stop;
        int k, code;

        /* Blocked from the start: a stop is only taken between samples. */
        sigemptyset(&stop);
        sigaddset(&stop, SIGINT);
        sigaddset(&stop, SIGTERM);
        sigaddset(&stop, SIGHUP);
        sigprocmask(SIG_BLOCK, &stop, NULL);
        /* A reader that goes away is a write error, not a silent death. */
        signal(SIGPIPE, SIG_IGN);

        k = tp_parse_args(argc, argv, &o, &code);
        if (k != 0) {
                tp_options_done(&o);
                return k > 0 ? TP_EXIT_OK : code;
        }
        if (o.output && !tp_out_may_write(o.output, o.yes))
                code = TP_EXIT_OUTPUT;
        else if (o.query != TP_QUERY_NONE)
                code = list_paths(&o);
        else
                code = collect_counters(&o, &stop);
        tp_options_done(&o);
        return code;
}
