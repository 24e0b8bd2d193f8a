/* SPDX-License-Identifier: MIT */
/*
 * typeperf's collection: the hosts and their connections, the columns
 * (wildcards expanded once, so the columns stay fixed as Windows keeps
 * them), one collect of every host, and a sample line built from it.
 * bench-typeperf times exactly these functions.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "pcq.h"
#include "perflib.h"            /* PERF_ATTRIB_* */
#include "typeperf.h"

/* Each PerflibV2 call may take this long before the host counts as gone. */
#define CALL_TIMEOUT_MS 10000
/* 100 ns intervals between 1601-01-01 and 1970-01-01. */
#define EPOCH_DIFF_100NS 116444736000000000ULL

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
const char *tp_bare_host(const char *host)
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

/*
 * Who to be on remote hosts: -u, else $PERFLIB_USER (libpcq's fallback);
 * the password $PERFLIB_PASSWORD, else asked on the terminal the first
 * time a remote host needs it.  -1 after printing why.
 */
static int get_credentials(struct tp_run *r, const char *host, int *ret_exit)
{
        const char *user = r->o->user ? r->o->user : getenv("PERFLIB_USER");
        const char *auth = getenv("PERFLIB_AUTH");
        char prompt[512];
        uint32_t st;

        r->cred.user = r->o->user;
        if (!user || !*user || r->cred.password || getenv("PERFLIB_PASSWORD"))
                return 0;
        if (auth && !strcasecmp(auth, "kerberos"))
                return 0;       /* the ticket logs on: no password to ask */
        snprintf(prompt, sizeof(prompt), "Password for %s on %s: ", user, host);
        st = pcq_password_prompt(prompt, r->password, sizeof(r->password));
        if (st == ERROR_SUCCESS) {
                r->cred.password = r->password;
                return 0;
        }
        if (st == ERROR_NOT_FOUND)
                fprintf(stderr, "typeperf: no terminal to ask the password of %s on: set "
                        "PERFLIB_PASSWORD\n", user);
        else
                fprintf(stderr, "typeperf: no password for %s: %s\n", user, pcq_status_text(st));
        *ret_exit = TP_EXIT_CONNECT;
        return -1;
}

/*
 * The host for name, connected on first use; NULL after printing why.
 * Each host is allocated on its own: columns point at their host, so a
 * host must not move when the next one is added.
 */
struct tp_host *tp_get_host(struct tp_run *r, const char *name, int *ret_exit)
{
        struct tp_host *h, **v;
        uint32_t st;

        for (size_t i = 0; i < r->n_hosts; i++)
                if (same_host(r->hosts[i]->name, name))
                        return r->hosts[i];
        v = realloc(r->hosts, (r->n_hosts + 1) * sizeof(*v));
        if (!v)
                goto oom;
        r->hosts = v;
        h = calloc(1, sizeof(*h));
        if (!h)
                goto oom;
        h->label = host_label(name);
        if (!h->label || (!is_local(name) && !(h->name = strdup(name))))
                goto oom_host;
        v[r->n_hosts++] = h;
        if (!is_local(name) && get_credentials(r, h->label, ret_exit) < 0)
                return NULL;
        st = pcq_connect_as(h->name, &r->cred, CALL_TIMEOUT_MS, &h->conn);
        if (st != ERROR_SUCCESS) {
                /* libpcq's sentence names the socket or port, the error and the remedy. */
                fprintf(stderr, "typeperf: %s\n", pcq_connect_error());
                *ret_exit = TP_EXIT_CONNECT;
                return NULL;
        }
        st = pcq_query_new(h->conn, &h->query);
        if (st != ERROR_SUCCESS) {
                fprintf(stderr, "typeperf: %s: cannot start a query: %s (0x%08X)\n", h->label,
                        pcq_status_text(st), st);
                *ret_exit = TP_EXIT_CONNECT;
                return NULL;
        }
        return h;
oom_host:
        free(h->label);
        free(h->name);
        free(h);
oom:
        fputs("typeperf: out of memory\n", stderr);
        *ret_exit = TP_EXIT_COUNTER;
        return NULL;
}

void tp_run_done(struct tp_run *r)
{
        for (size_t i = 0; i < r->n_cols; i++) {
                free(r->cols[i].label);
                free(r->cols[i].match);
        }
        free(r->cols);
        free(r->labels);
        free(r->cells);
        for (size_t i = 0; i < r->n_hosts; i++) {
                struct tp_host *h = r->hosts[i];

                if (h->query)
                        pcq_query_free(h->query);
                if (h->conn)
                        pcq_conn_free(h->conn);
                free(h->name);
                free(h->label);
                free(h);
        }
        free(r->hosts);
        explicit_bzero(r->password, sizeof(r->password));
}

/*
 * Windows' typeperf writes every value as a number with six decimals
 * (PDH_FMT_DOUBLE: "176361472.000000" for a raw count), whatever the
 * display attributes say, and log parsers expect numbers: so every value
 * is shown as real, never in hexadecimal nor left out.
 */
static void text_as_number(struct tp_column *c)
{
        c->text_type = c->desc.type;
        if (c->text_type == PERF_COUNTER_RAWCOUNT_HEX)
                c->text_type = PERF_COUNTER_RAWCOUNT;
        else if (c->text_type == PERF_COUNTER_LARGE_RAWCOUNT_HEX)
                c->text_type = PERF_COUNTER_LARGE_RAWCOUNT;
        c->text_attrib = (c->desc.attrib | PERF_ATTRIB_DISPLAY_AS_REAL) &
                         ~(PERF_ATTRIB_DISPLAY_AS_HEX | PERF_ATTRIB_NO_DISPLAYABLE);
}

/*
 * Whether a path without wildcards names an instance that is live now.
 * Windows' typeperf expands every path first, as PDH consumers do
 * (PdhExpandWildCardPath, then PdhValidatePath); a named instance that is
 * not there expands to nothing and the counter is not a valid one, so it
 * is left out, with a warning that says why.  Other errors are left to
 * pcq_query_add, which names the part at fault.
 */
static bool instance_missing(struct tp_host *h, const char *path)
{
        if (pcq_validate_path(h->conn, path) != PDH_CSTATUS_NO_INSTANCE)
                return false;
        fprintf(stderr, "typeperf: warning: %s left out: %s\n", path, pcq_conn_error(h->conn));
        return true;
}

/*
 * Adds path (its host part removed) to h's query: a column, a wildcard to
 * expand, or nothing when it names an instance that is not live.
 */
static int add_column(struct tp_run *r, struct tp_host *h, const char *path, int *ret_exit)
{
        struct tp_column *v;
        struct tp_column *c;
        uint32_t st;

        if (!strchr(path, '*') && instance_missing(h, path))
                return 0;
        v = realloc(r->cols, (r->n_cols + 1) * sizeof(*v));
        if (!v)
                goto oom;
        r->cols = v;
        c = &v[r->n_cols];
        *c = (struct tp_column) { .host = h, .wildcard = strchr(path, '*') != NULL };
        st = pcq_query_add(h->query, path, &c->counter);
        if (st != ERROR_SUCCESS) {
                const char *why = pcq_query_error(h->query);

                fprintf(stderr, "typeperf: %s: %s\n", path,
                        why && *why ? why : pcq_status_text(st));
                *ret_exit = TP_EXIT_COUNTER;
                return -1;
        }
        pcq_counter_describe(c->counter, &c->desc);
        text_as_number(c);
        if (!c->wildcard && asprintf(&c->label, "\\\\%s%s", h->label, path) < 0)
                goto oom;
        r->n_cols++;
        return 0;
oom:
        fputs("typeperf: out of memory\n", stderr);
        *ret_exit = TP_EXIT_COUNTER;
        return -1;
}

/* \\host and the path of an item as the library names it, without its host part. */
static char *item_label(const struct tp_host *h, const char *path)
{
        struct pcq_path p = { 0 };
        char *bare = NULL, *label;

        if (pcq_path_parse(path, &p, NULL) == ERROR_SUCCESS) {
                free(p.host);
                p.host = NULL;
                bare = pcq_path_format(&p);
                pcq_path_done(&p);
        }
        if (asprintf(&label, "\\\\%s%s", h->label, bare ? bare : path) < 0)
                label = NULL;
        free(bare);
        return label;
}

/* Appends to *v the columns wildcard w matched at the priming collect. */
static int expand_one(const struct tp_column *w, struct tp_column **v, size_t *n)
{
        const struct pcq_value *items;
        struct tp_column *nv;
        size_t k;

        if (pcq_counter_values(w->counter, 0, &items, &k) != ERROR_SUCCESS)
                k = 0;
        if (k == 0) {
                fprintf(stderr, "typeperf: warning: %s matches no counter now\n", w->desc.path);
                return 0;
        }
        nv = realloc(*v, (*n + k) * sizeof(*nv));
        if (!nv)
                return -1;
        *v = nv;
        for (size_t i = 0; i < k; i++) {
                struct tp_column *c = &nv[*n];

                *c = *w;
                c->wildcard = false;
                c->hint = i;
                c->label = item_label(w->host, items[i].path);
                c->match = strdup(items[i].path);
                (*n)++;
                if (!c->label || !c->match)
                        return -1;
        }
        return 0;
}

/*
 * Replaces each wildcard by a column per counter and instance it matched
 * at the priming collect: the columns stay fixed from then on, as on
 * Windows.  One wildcard counter, rather than a counter per instance,
 * keeps a collect of many instances linear.
 */
static int expand_wildcards(struct tp_run *r)
{
        struct tp_column *v = NULL;
        size_t n = 0;
        int k = 0;

        for (size_t i = 0; i < r->n_cols && k == 0; i++) {
                struct tp_column *nv;

                if (r->cols[i].wildcard) {
                        k = expand_one(&r->cols[i], &v, &n);
                        continue;
                }
                nv = realloc(v, (n + 1) * sizeof(*nv));
                if (!nv) {
                        k = -1;
                        break;
                }
                v = nv;
                v[n++] = r->cols[i];
                r->cols[i].label = NULL;        /* moved */
        }
        if (k < 0) {
                for (size_t i = 0; i < n; i++) {
                        free(v[i].label);
                        free(v[i].match);
                }
                free(v);
                fputs("typeperf: out of memory\n", stderr);
                return -1;
        }
        for (size_t i = 0; i < r->n_cols; i++)
                free(r->cols[i].label);
        free(r->cols);
        r->cols = v;
        r->n_cols = n;
        return 0;
}

/* Connects to every host the paths name and adds their counters. */
int tp_add_counters(struct tp_run *r, int *ret_exit)
{
        const struct tp_options *o = r->o;

        for (size_t i = 0; i < o->n_paths; i++) {
                struct pcq_path p = { 0 };
                struct tp_host *h;
                char *bare;
                int k;

                /* tp_parse_args checked the syntax already. */
                if (pcq_path_parse(o->paths[i], &p, NULL) != ERROR_SUCCESS) {
                        fprintf(stderr, "typeperf: bad counter path '%s'\n", o->paths[i]);
                        *ret_exit = TP_EXIT_COUNTER;
                        return -1;
                }
                /* As on Windows, -s names the machine of paths that name none. */
                h = tp_get_host(r, p.host ? tp_bare_host(p.host) : tp_bare_host(o->host), ret_exit);
                free(p.host);
                p.host = NULL;
                bare = h ? pcq_path_format(&p) : NULL;
                pcq_path_done(&p);
                if (!h)
                        return -1;
                k = bare ? add_column(r, h, bare, ret_exit) : -1;
                if (!bare) {
                        fputs("typeperf: out of memory\n", stderr);
                        *ret_exit = TP_EXIT_COUNTER;
                }
                free(bare);
                if (k < 0)
                        return -1;
        }
        /* The first collect primes the rate counters and shows what wildcards match. */
        if (tp_collect(r) < 0) {
                *ret_exit = TP_EXIT_COLLECT;
                return -1;
        }
        if (expand_wildcards(r) < 0) {
                *ret_exit = TP_EXIT_COUNTER;
                return -1;
        }
        if (r->n_cols == 0) {
                /* Windows' words, which scripts written for it look for. */
                fputs("typeperf: Error: No valid counters.\n", stderr);
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

/* Collects every host; -1 after printing which one failed. */
int tp_collect(struct tp_run *r)
{
        for (size_t i = 0; i < r->n_hosts; i++) {
                uint32_t st = pcq_query_collect(r->hosts[i]->query);

                if (st != ERROR_SUCCESS) {
                        fprintf(stderr, "typeperf: collecting from %s failed: %s (0x%08X)\n",
                                r->hosts[i]->label, pcq_status_text(st), st);
                        return -1;
                }
        }
        return 0;
}

/* The item of c among a counter's items: its own, or the instance it was expanded to. */
static const struct pcq_value *column_item(struct tp_column *c, const struct pcq_value *items,
                                           size_t n)
{
        if (!c->match)
                return n ? &items[0] : NULL;
        /* Instances keep their order from one sample to the next: try the last place first. */
        if (c->hint < n && strcmp(items[c->hint].path, c->match) == 0)
                return &items[c->hint];
        for (size_t i = 0; i < n; i++)
                if (strcmp(items[i].path, c->match) == 0) {
                        c->hint = i;
                        return &items[i];
                }
        return NULL;
}

/* The cells of the sample just collected. */
static void fill_cells(struct tp_run *r)
{
        const struct pcq_value *items = NULL;
        const pcq_counter *last = NULL;
        size_t n = 0;

        for (size_t i = 0; i < r->n_cols; i++) {
                struct tp_column *c = &r->cols[i];
                struct tp_cell *cell = &r->cells[i];
                const struct pcq_value *it;

                /* The columns of one wildcard are adjacent: their values are computed once. */
                if (c->counter != last &&
                    pcq_counter_values(c->counter, 0, &items, &n) != ERROR_SUCCESS)
                        n = 0;
                last = c->counter;
                *cell = (struct tp_cell) { .text = c->text };
                it = column_item(c, items, n);
                if (!it || it->status != PDH_CSTATUS_VALID_DATA)
                        continue;
                cell->valid = true;
                cell->value = it->value;
                if (pcq_value_text(it->value, it->raw_first, c->text_type, c->text_attrib, 6, 0,
                                   c->text, sizeof(c->text)) != ERROR_SUCCESS)
                        snprintf(c->text, sizeof(c->text), "%.6f", it->value);
        }
}

/* The sample's time: the server's stamp of the first host, else the clock. */
static struct timespec sample_time(struct tp_run *r)
{
        uint64_t t = r->n_hosts ? pcq_query_sample_time(r->hosts[0]->query) : 0;
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

int tp_write_sample(struct tp_run *r)
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

int tp_write_header(struct tp_run *r)
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
